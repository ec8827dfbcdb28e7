"""Export of the corpus (the ``corpus_documents`` view) as parquet or JSONL shards.

Rows come in (dump, docId) order and are cut into shards of ``shard_docs`` documents, so
the same lake and decisions give the same shards. Each shard is written under a temporary
name and renamed into place; ``_manifest.json`` goes last and lists them.
"""
from __future__ import annotations

import json
import os
import posixpath

import duckdb
import pyarrow as pa

from warclake.tasks.corpus.storage.layout import is_url, list_names, remove_file, write_bytes, write_table
from warclake.tasks.lake.catalog import install_views

COLUMNS = ["docId", "url", "lang", "dump", "date", "text"]
FORMATS = ("parquet", "jsonl")


def corpus_connection(lake: str, dump: str | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with the lake's views (and the corpus views) over ``lake``;
    OSError when the corpus stage has not run there."""
    con = duckdb.connect()
    present = install_views(con, lake, dump)
    if not present.get("document_decisions"):
        con.close()
        scope = f"dump {dump}" if dump else "the lake"
        raise FileNotFoundError(f"no corpus decisions for {scope} at {lake}: run `warclake corpus --lake {lake}` first")
    return con


def export_corpus(lake: str, out: str, fmt: str = "parquet", dump: str | None = None,
                  shard_docs: int = 100_000, lang: str | None = None) -> dict:
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: use {' or '.join(FORMATS)}")
    if shard_docs < 1:
        raise ValueError("shard_docs must be at least 1")
    out = out.rstrip("/") if is_url(out) else os.path.abspath(out)   # a folder, or a URL (s3://bucket/corpus)
    manifest = posixpath.join(out, "_manifest.json")
    remove_file(manifest)   # a crash mid-export leaves no manifest that names old shards
    con = corpus_connection(lake, dump)
    where = "WHERE lang = ?" if lang else ""
    reader = con.sql(f"SELECT {', '.join(COLUMNS)} FROM corpus_documents {where} ORDER BY dump, docId",
                     params=[lang] if lang else None).to_arrow_reader(batch_size=8192)
    shards: list[dict] = []
    buf: list[pa.RecordBatch] = []
    n_buf, total = 0, 0

    def flush():
        nonlocal buf, n_buf
        if not n_buf:
            return
        table = pa.Table.from_batches(buf).combine_chunks()
        name = f"corpus-{len(shards):05d}.{fmt}"
        path = posixpath.join(out, name)
        if fmt == "parquet":
            write_table(path, table)
        else:
            lines = (json.dumps({k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()},
                                ensure_ascii=False) for row in table.to_pylist())
            write_bytes(path, ("\n".join(lines) + "\n").encode("utf-8"))
        shards.append({"file": name, "documents": table.num_rows})
        buf, n_buf = [], 0

    for batch in reader:
        while batch.num_rows:
            take = min(batch.num_rows, shard_docs - n_buf)
            buf.append(batch.slice(0, take))
            n_buf += take
            total += take
            batch = batch.slice(take)
            if n_buf == shard_docs:
                flush()
    flush()
    con.close()
    # shards of an earlier, larger export of this folder are not part of this one
    names = {s["file"] for s in shards}
    for f in list_names(out):
        if f.startswith("corpus-") and f.endswith(f".{fmt}") and f not in names:
            remove_file(posixpath.join(out, f))
    info = {"lake": lake, "dump": dump, "format": fmt, "documents": total, "shards": shards,
            "columns": COLUMNS}
    write_bytes(manifest, json.dumps(info, indent=1).encode())
    return info

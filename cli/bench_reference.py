"""The C pipeline people pick for speed, as ``warclake bench``'s reference row.

FastWARC reads the responses, Resiliparse detects each page's encoding, decodes it,
extracts its main content as plain text (``extract_plain_text(main_content=True)``) and
tells its language (``detect_fast``); pyarrow writes one zstd parquet file per archive.
Written from the two libraries' documentation; they come from the ``bench`` extra, never
a runtime dependency. Pages are chosen as extraction chooses them: HTTP 200 responses that
are HTML by their Content-Type (or have none); a page with no text writes no document.

``python -m warclake.cli.bench_reference OUT_DIR INPUT...`` runs it as a process of its
own (``bench --extract-processes``), printing its counts as one JSON line.
"""
from __future__ import annotations

import json
import os
import sys

MODE = "resiliparse"  # the row's name in the bench table
BATCH = 1024  # documents per parquet row group


def load():
    """The libraries, or a one-line error naming the extra that brings them."""
    try:
        from fastwarc.warc import ArchiveIterator, WarcRecordType
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.encoding import bytes_to_str, detect_encoding
        from resiliparse.parse.lang import detect_fast
    except ImportError as e:
        raise SystemExit(f"warclake: error: bench: the {MODE} row needs fastwarc and resiliparse "
                         f"(pip install 'warclake[bench]'): {e}") from None
    return ArchiveIterator, WarcRecordType, extract_plain_text, bytes_to_str, detect_encoding, detect_fast


def is_html_page(rec) -> bool:
    if rec.http_headers is None or rec.http_headers.status_code != 200:
        return False
    ctype = (rec.http_content_type or "").lower()
    return not ctype or "html" in ctype


def run_archive(path: str, out_path: str) -> tuple[int, int]:
    """One archive to one parquet file: (records read, documents written)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ArchiveIterator, WarcRecordType, extract_plain_text, bytes_to_str, detect_encoding, detect_fast = load()
    schema = pa.schema([("url", pa.string()), ("date", pa.string()), ("charset", pa.string()),
                        ("lang", pa.string()), ("lang_rank", pa.int32()), ("text", pa.string())])
    cols: dict[str, list] = {name: [] for name in schema.names}
    records = docs = 0

    def flush(writer):
        writer.write_table(pa.table(cols, schema=schema))
        for v in cols.values():
            v.clear()

    with open(path, "rb") as fh, pq.ParquetWriter(out_path, schema, compression="zstd") as writer:
        for rec in ArchiveIterator(fh, record_types=WarcRecordType.response, parse_http=True):
            records += 1
            if not is_html_page(rec):
                continue
            body = rec.reader.read()
            charset = detect_encoding(body)
            text = extract_plain_text(bytes_to_str(body, charset), main_content=True)
            if not text:
                continue
            lang, rank = detect_fast(text)
            cols["url"].append(rec.headers.get("WARC-Target-URI"))
            cols["date"].append(rec.headers.get("WARC-Date"))
            cols["charset"].append(charset)
            cols["lang"].append(lang)
            cols["lang_rank"].append(rank)
            cols["text"].append(text)
            docs += 1
            if len(cols["text"]) >= BATCH:
                flush(writer)
        flush(writer)
    return records, docs


def run(inputs: list[str], out_dir: str) -> tuple[int, int]:
    """Every archive into ``out_dir`` (one parquet file each): records read, documents written."""
    load()  # fail before any work when the libraries are absent
    records = docs = 0
    for i, path in enumerate(inputs):
        r, d = run_archive(path, os.path.join(out_dir, f"{i:05d}.parquet"))
        records += r
        docs += d
    return records, docs


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        raise SystemExit("usage: python -m warclake.cli.bench_reference OUT_DIR INPUT...")
    records, docs = run(argv[1:], argv[0])
    print(json.dumps({"records": records, "documents": docs}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Repeated-text removal of an in-memory table, through the lake's own steps: the
documents are written as a one-dump lake in a temporary folder and the corpus stage runs
over it. ``paragraph_decisions`` is the entry point evaluations call."""
from __future__ import annotations

import json
import os
import tempfile

import pyarrow as pa
import pyarrow.parquet as pq

from warclake.tasks.corpus.settings import DecisionConfig
from warclake.tasks.corpus.signals.normalise import split_paragraphs
from warclake.tasks.extract.config import SCHEMA_VERSION
from warclake.tasks.lake.schema import DOCUMENTS

DUMP = "in-memory"
RESULT = pa.schema([("docId", pa.string()), ("paragraph", pa.int32()), ("kept", pa.bool_()),
                    ("rule", pa.string())])


def as_lake(docs: pa.Table, root: str, dump: str = DUMP) -> None:
    """Write ``docs`` (documents columns; missing ones null) as one archive of a lake."""
    cols = {}
    for f in DOCUMENTS:
        if f.name in docs.column_names:
            cols[f.name] = docs.column(f.name).cast(f.type)
        else:
            cols[f.name] = pa.nulls(docs.num_rows, f.type)
    cols["dump"] = pa.array([dump] * docs.num_rows)
    cols["warc_file"] = pa.array(["in-memory.warc.gz"] * docs.num_rows)
    table = pa.table(cols, schema=DOCUMENTS)
    path = os.path.join(root, "documents", f"dump={dump}", "in-memory.warc.gz.parquet")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(table, path)
    summary = os.path.join(root, "files", f"dump={dump}", "in-memory.warc.gz.json")
    os.makedirs(os.path.dirname(summary), exist_ok=True)
    with open(summary, "w") as fh:
        json.dump({"status": "complete", "schema_version": SCHEMA_VERSION, "config_fingerprint": "in-memory",
                   "finished": "in-memory"}, fh)


def paragraph_decisions(docs: pa.Table, decide: DecisionConfig | None = None) -> pa.Table:
    """(docId, paragraph index from 0, kept, rule) for every paragraph of ``docs``."""
    from warclake.tasks.corpus.checks import check_inputs
    from warclake.tasks.corpus.stage import StageOptions, run_stage

    with tempfile.TemporaryDirectory(prefix="warclake-repeated-") as tmp:
        as_lake(docs, tmp)
        opts = StageOptions(decide=decide or DecisionConfig())
        run_stage(tmp, [DUMP], check_inputs(tmp, [DUMP]), opts)
        folder = os.path.join(tmp, "corpus", "decisions", "paragraphs", f"dump={DUMP}")
        dropped = {}
        for name in sorted(os.listdir(folder)):
            if name.endswith(".parquet"):
                t = pq.read_table(os.path.join(folder, name), columns=["docId", "idx", "rule"])
                for d, i, r in zip(*(t.column(c).to_pylist() for c in ("docId", "idx", "rule"))):
                    dropped[(d, i - 1)] = r
    ids, idx, kept, rules = [], [], [], []
    for d, text in zip(docs.column("docId").to_pylist(), docs.column("text").to_pylist()):
        for i in range(len(split_paragraphs(text))):
            r = dropped.get((d, i))
            ids.append(d)
            idx.append(i)
            kept.append(r is None)
            rules.append(r)
    return pa.table({"docId": ids, "paragraph": pa.array(idx, pa.int32()), "kept": kept, "rule": rules},
                     schema=RESULT)

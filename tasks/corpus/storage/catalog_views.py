"""The corpus stage's views in the lake's catalogue (sql/corpus_views.sql)."""
from __future__ import annotations

import duckdb

from warclake.tasks.lake.catalog import dump_folder, install_view_file

# view name -> the folder under <lake>/corpus its parquet files are in
CORPUS_SOURCES = {
    "corpus_document_signatures": "docsigs",
    "corpus_paragraph_rows": "paragraphs",
    "paragraph_hosts": "para_hosts",
    "paragraph_paths": "para_paths",
    "paragraph_group_rows": "para_groups",
    "duplicate_pairs": "pairs",
    "distinctive_paragraph_pairs": "para_pairs",
    "document_decisions": "decisions/documents",
    "paragraph_decisions": "decisions/paragraphs",
    "document_model_scores": "model_scores",
    "paragraph_model_scores": "para_model_scores",
}


def corpus_glob(root: str, view: str, dump: str | None = None) -> str:
    return f"{root}/corpus/{CORPUS_SOURCES[view]}/{dump_folder(dump)}/*.parquet"


def _empty(view: str) -> str:
    """The view's columns with no rows, from the writers' schemas (no file to read yet)."""
    from warclake.tasks.corpus.signals.archive_step import DOCSIGS, PARAGRAPHS
    from warclake.tasks.corpus.signals.models import DOC_SCORES, PARA_SCORES
    from warclake.tasks.corpus.steps.decide import DOC_DECISIONS, PARA_DECISIONS

    cols = {
        "corpus_document_signatures": [(f.name, f.type) for f in DOCSIGS if f.name not in ("minhash", "bands")],
        "corpus_paragraph_rows": [(f.name, f.type) for f in PARAGRAPHS],
        "paragraph_hosts": [("text_hash", "BIGINT"), ("host", "VARCHAR"), ("domain", "VARCHAR"),
                            ("dump", "VARCHAR"), ("n_docs", "BIGINT"), ("n_urls", "BIGINT"),
                            ("first_date", "TIMESTAMPTZ"), ("last_date", "TIMESTAMPTZ"),
                            ("sample_doc", "VARCHAR"), ("sample_idx", "INTEGER"), ("simhash", "BIGINT"),
                            ("n_chars", "INTEGER")],
        "paragraph_group_rows": [("text_hash", "BIGINT"), ("group_hash", "BIGINT")],
        "paragraph_paths": [("text_hash", "BIGINT"), ("path", "VARCHAR"), ("dump", "VARCHAR"), ("n", "BIGINT")],
        "duplicate_pairs": [("a", "VARCHAR"), ("b", "VARCHAR"), ("jaccard", "DOUBLE"), ("exact", "BOOLEAN")],
        "distinctive_paragraph_pairs": [("a", "VARCHAR"), ("b", "VARCHAR"), ("para_jaccard", "DOUBLE")],
        "document_decisions": [(f.name, f.type) for f in DOC_DECISIONS],
        "paragraph_decisions": [(f.name, f.type) for f in PARA_DECISIONS],
        "document_model_scores": [(f.name, f.type) for f in DOC_SCORES],
        "paragraph_model_scores": [(f.name, f.type) for f in PARA_SCORES],
    }[view]
    return ", ".join(f"NULL::{_sql_type(t)} AS {name}" for name, t in cols)


def _sql_type(t) -> str:
    import pyarrow as pa

    if isinstance(t, str):
        return t
    if pa.types.is_list(t):
        return _sql_type(t.value_type) + "[]"
    if pa.types.is_struct(t):
        return "STRUCT(" + ", ".join(f"{f.name} {_sql_type(f.type)}" for f in t) + ")"
    if pa.types.is_map(t):
        return f"MAP({_sql_type(t.key_type)}, {_sql_type(t.item_type)})"
    return {pa.string(): "VARCHAR", pa.int64(): "BIGINT", pa.int32(): "INTEGER", pa.float64(): "DOUBLE",
            pa.bool_(): "BOOLEAN", pa.uint32(): "UINTEGER",
            pa.timestamp("us", tz="UTC"): "TIMESTAMPTZ"}[t]


def install_corpus_views(con: duckdb.DuckDBPyConnection, root: str, dump: str | None = None) -> dict[str, bool]:
    """Create the corpus views on ``con`` (after views.sql); returns which tables have files."""
    return install_view_file(con, "corpus_views.sql", {v: corpus_glob(root, v, dump) for v in CORPUS_SOURCES},
                             lambda view: f"SELECT {_empty(view)} LIMIT 0")

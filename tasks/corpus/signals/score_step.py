"""The model-score step: per archive, the user's models' scores of its documents
(``models.score_documents``), written under ``<lake>/corpus``:

    model_scores/dump=<D>/<warc-name>.parquet        per document (models.DOC_SCORES)
    para_model_scores/dump=<D>/<warc-name>.parquet   per paragraph (models.PARA_SCORES)
    state/model_scores/dump=<D>/<warc-name>.json     the key: the archive's and the models'

An archive is scored again only when its per-archive signatures were redone (a new
documents file) or a model's file changed (its SHA-256). The thresholds are the decision
step's: changing one never runs this step. Scores are kept apart from the signatures, so a
new model never redoes a signature.
"""
from __future__ import annotations

import time

import pyarrow.parquet as pq

from warclake.tasks.corpus.signals.archive_step import row_groups
from warclake.tasks.corpus.signals.models import DOC_SCORES, PARA_SCORES, ScoreModels, score_documents
from warclake.tasks.corpus.storage.layout import CorpusLayout, local_tmp, publish_tmp, read_schema
from warclake.tasks.lake.layout import remove_quietly

STEP = "model_scores"
TABLES = ("model_scores", "para_model_scores")
READ_COLUMNS = ["docId", "text", "lang", "paragraph_labels"]


def score_key(archive_key: dict, models: ScoreModels) -> dict:
    return {"archive": archive_key, "models": models.fingerprints()}


def score_archive(layout: CorpusLayout, dump: str, warc: str, archive_key: dict, models: ScoreModels) -> dict:
    """Score one archive's documents unless its state file holds the same key."""
    key = score_key(archive_key, models)
    if layout.is_done(STEP, dump, warc, key):
        return {"archive": warc, "done": "skipped"}
    layout.clear_state(STEP, dump, warc)
    t0 = time.perf_counter()
    src = layout.documents(dump, warc)
    have = set(read_schema(src).names)
    paths = [layout.file(t, dump, warc) for t in TABLES]
    tmps = [local_tmp(p) for p in paths]
    writers = []
    documents = paragraphs = 0
    try:
        writers = [pq.ParquetWriter(t, s, compression="zstd") for t, s in zip(tmps, (DOC_SCORES, PARA_SCORES))]
        for docs in row_groups(src, [c for c in READ_COLUMNS if c in have]):
            doc_rows, para_rows = score_documents(docs, models)
            writers[0].write_table(doc_rows)
            writers[1].write_table(para_rows)
            documents += doc_rows.num_rows
            paragraphs += para_rows.num_rows
        for w in writers:
            w.close()
        writers = []
        for tmp, path in zip(tmps, paths):
            publish_tmp(tmp, path)
    except BaseException:
        for w in writers:
            try:
                w.close()
            except Exception:
                pass
        for tmp in tmps:
            remove_quietly(tmp)
        raise
    seconds = round(time.perf_counter() - t0, 3)
    layout.mark_done(STEP, dump, warc, key, documents=documents, paragraphs=paragraphs, seconds=seconds)
    return {"archive": warc, "done": "scored", "documents": documents, "seconds": seconds}


def score_archives(layout: CorpusLayout, dump: str, entries: dict[str, dict], models: ScoreModels | None,
                   part: int = 0, parts: int = 1) -> int:
    """Score the archives of a dump's manifest ``entries`` (archive -> signature key) of
    partition ``part`` (every ``parts``-th archive in name order); how many were scored."""
    if models is None or not models.any:
        return 0
    names = sorted(entries)[part::parts]
    return sum(score_archive(layout, dump, w, entries[w], models)["done"] == "scored" for w in names)

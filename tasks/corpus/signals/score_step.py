"""The model-score step: per archive, the user's models' scores of its documents
(``models.score_documents``), written under ``<lake>/corpus``:

    model_scores/dump=<D>/<warc-name>.parquet        per document (models.DOC_SCORES)
    para_model_scores/dump=<D>/<warc-name>.parquet   per paragraph (models.PARA_SCORES)
    state/model_scores/dump=<D>/<warc-name>.json     the key: the archive's and the models'

An archive is scored again only when its per-archive signatures were redone (a new
documents file) or a model's file changed (its SHA-256). When the per-archive signing pass
runs with the models, it scores the row groups it reads (``scorer_for``), so the documents
are read once; this step then finds those archives done. The thresholds are the decision
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
# the columns whose values repeat (a label, the models' fingerprints) are dictionary-encoded;
# the ids and scores are not (a dictionary of unique values only costs time)
DICTIONARY_COLUMNS = (["fasttext_label", "fasttext_model"], ["lm_model", "word_list"])


def score_key(archive_key: dict, models: ScoreModels) -> dict:
    return {"archive": archive_key, "models": models.fingerprints()}


class ArchiveScorer:
    """The model-score step's outputs of one archive, made one row group of documents at a
    time (the step's own reading of the archive, or the per-archive signing pass's, which
    reads the same documents): temporaries until ``publish`` moves them into place and
    writes the state file last."""

    def __init__(self, layout: CorpusLayout, dump: str, warc: str, models: ScoreModels):
        self.layout, self.dump, self.warc, self.models = layout, dump, warc, models
        self.paths = [layout.file(t, dump, warc) for t in TABLES]
        self.tmps = [local_tmp(p) for p in self.paths]
        self.writers: list[pq.ParquetWriter] = []
        self.documents = self.paragraphs = 0
        self.seconds = 0.0
        try:
            for tmp, schema, repeated in zip(self.tmps, (DOC_SCORES, PARA_SCORES), DICTIONARY_COLUMNS):
                self.writers.append(pq.ParquetWriter(tmp, schema, compression="zstd", use_dictionary=repeated))
        except BaseException:
            self.discard()
            raise

    def add(self, docs) -> None:
        t0 = time.perf_counter()
        doc_rows, para_rows = score_documents(docs, self.models)
        self.writers[0].write_table(doc_rows)
        self.writers[1].write_table(para_rows)
        self.documents += doc_rows.num_rows
        self.paragraphs += para_rows.num_rows
        self.seconds += time.perf_counter() - t0

    def publish(self, archive_key: dict) -> dict:
        """The outputs in place, then the state file (the archive's key and the models')."""
        writers, self.writers = self.writers, []
        for w in writers:
            w.close()
        self.layout.clear_state(STEP, self.dump, self.warc)
        for tmp, path in zip(self.tmps, self.paths):
            publish_tmp(tmp, path)
        self.tmps = []
        seconds = round(self.seconds, 3)
        self.layout.mark_done(STEP, self.dump, self.warc, score_key(archive_key, self.models),
                              documents=self.documents, paragraphs=self.paragraphs, seconds=seconds)
        return {"archive": self.warc, "done": "scored", "documents": self.documents, "seconds": seconds}

    def discard(self) -> None:
        for w in self.writers:
            try:
                w.close()
            except Exception:
                pass
        self.writers = []
        for tmp in self.tmps:
            remove_quietly(tmp)
        self.tmps = []


def scorer_for(layout: CorpusLayout, dump: str, warc: str, archive_key: dict,
               models: ScoreModels | None) -> ArchiveScorer | None:
    """A scorer for the per-archive signing pass to feed, or None: no model, or the archive's
    scores for ``archive_key`` are done."""
    if models is None or not models.any or layout.is_done(STEP, dump, warc, score_key(archive_key, models)):
        return None
    return ArchiveScorer(layout, dump, warc, models)


def score_archive(layout: CorpusLayout, dump: str, warc: str, archive_key: dict, models: ScoreModels) -> dict:
    """Score one archive's documents unless its state file holds the same key."""
    key = score_key(archive_key, models)
    if layout.is_done(STEP, dump, warc, key):
        return {"archive": warc, "done": "skipped"}
    src = layout.documents(dump, warc)
    have = set(read_schema(src).names)
    scorer = ArchiveScorer(layout, dump, warc, models)
    try:
        for docs in row_groups(src, [c for c in READ_COLUMNS if c in have]):
            scorer.add(docs)
        return scorer.publish(archive_key)
    except BaseException:
        scorer.discard()
        raise


def score_archives(layout: CorpusLayout, dump: str, entries: dict[str, dict], models: ScoreModels | None,
                   part: int = 0, parts: int = 1) -> int:
    """Score the archives of a dump's manifest ``entries`` (archive -> signature key) of
    partition ``part`` (every ``parts``-th archive in name order); how many were scored."""
    if models is None or not models.any:
        return 0
    names = sorted(entries)[part::parts]
    return sum(score_archive(layout, dump, w, entries[w], models)["done"] == "scored" for w in names)

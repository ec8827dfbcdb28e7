"""The quality metrics of documents whose kept text repeated-text removal changed.

The per-archive step measures the text the corpus keeps (good paragraphs, all without
labels). The paragraph decisions then drop repeated paragraphs, some of them kept ones; a
document that loses one is measured again here, from its text in the lake, without them,
so every rule judges exactly what ``corpus_documents`` emits; so does a fastText
classifier's score. Only those documents are
read (most repeated paragraphs are boilerplate the kept text never held), and only their
archives' documents files, one row group at a time.
"""
from __future__ import annotations

import pyarrow as pa

from warclake.tasks.corpus.storage.engine import parquet_list
from warclake.tasks.lake.catalog import sql_literal


def touched_documents(con, para_files: dict[str, str], decision_files: list[str]) -> dict[str, dict[str, list[int]]]:
    """Per archive (``para_files``: archive -> its paragraphs file), per document, the
    positions of the kept paragraphs (labelled good, or without a label) that the paragraph
    decisions (``decision_files``) drop."""
    if not para_files or not decision_files:
        return {}
    archive_of = pa.table({"filename": list(para_files.values()), "archive": list(para_files)})
    con.register("archive_of", archive_of)
    try:
        rows = con.execute(f"""
            SELECT a.archive, p.docId, list(p.idx ORDER BY p.idx) AS idx
            FROM read_parquet([{', '.join(sql_literal(f) for f in para_files.values())}], filename = true) p
            JOIN (SELECT DISTINCT docId, idx FROM {parquet_list(decision_files)}) d USING (docId, idx)
            JOIN archive_of a ON a.filename = p.filename
            WHERE p.label = 'good' OR p.label IS NULL
            GROUP BY ALL ORDER BY a.archive, p.docId""").fetchall()
    finally:
        con.unregister("archive_of")
    out: dict[str, dict[str, list[int]]] = {}
    for archive, doc, idx in rows:
        out.setdefault(archive, {})[doc] = idx
    return out


def remeasured(documents: dict[str, str], touched: dict[str, dict[str, list[int]]], models=None) -> pa.Table:
    """(docId, metrics) of each touched document, measured on its kept text less its dropped
    paragraphs; ``documents``: archive -> the lake's documents file. With a fastText model
    (``models.ScoreModels``), also its ``fasttext_score`` of that text."""
    from warclake.tasks.corpus.signals.archive_pass import Metrics
    from warclake.tasks.corpus.signals.archive_step import _values, metrics_column, row_groups
    from warclake.tasks.corpus.signals.quality import kept_metrics
    from warclake.tasks.corpus.storage.layout import read_schema

    ids, rows, scores = [], [], []
    fasttext = models is not None and models.fasttext
    for archive in sorted(touched):
        want = touched[archive]
        have = set(read_schema(documents[archive]).names)
        columns = [c for c in ("docId", "text", "paragraph_labels", "lang") if c in have]
        for group in row_groups(documents[archive], columns):
            doc_ids = group.column("docId").to_pylist()
            at = [i for i, d in enumerate(doc_ids) if d in want]
            if not at:
                continue
            part = group.take(at)
            doc_ids, texts, labels_of, langs = (_values(part, c) for c in ("docId", "text", "paragraph_labels", "lang"))
            for d, text, labels, lang in zip(doc_ids, texts, labels_of, langs):
                ids.append(d)
                rows.append(kept_metrics(text or "", labels, lang, frozenset(want[d])))
            if fasttext:
                scores.extend(kept_fasttext_scores(part.column("text"), doc_ids, texts, labels_of, want, models).to_pylist())
    metrics = Metrics.of(rows)
    out = {"docId": pa.array(ids, pa.string()),
           "metrics": metrics_column(metrics) if rows else pa.array([], pa.map_(pa.string(), pa.float64()))}
    if fasttext:
        out["fasttext_score"] = pa.array(scores, pa.float64())
    return pa.table(out)


def kept_fasttext_scores(text_column, doc_ids: list, texts: list, labels: list,
                         dropped: dict[str, list[int]], models) -> pa.Array:
    """The fastText score of each document (its ``text`` column, and its ids, texts and
    labels as Python values) over its kept paragraphs less those of ``dropped`` (docId ->
    positions from 1): the same scorer, with those paragraphs labelled otherwise than good."""
    from warclake.tasks.corpus.signals.models import document_fasttext_scores, kept_before_repeats

    relabelled = []
    for d, text, labs in zip(doc_ids, texts, labels):
        n = len(text.split("\n\n")) if text else 0
        gone = set(dropped.get(d, ()))
        relabelled.append(["good" if k and i not in gone else "dropped"
                           for i, k in enumerate(kept_before_repeats(labs, n), 1)])
    table = pa.table({"text": text_column, "paragraph_labels": pa.array(relabelled, pa.list_(pa.string()))})
    return document_fasttext_scores(table, models)

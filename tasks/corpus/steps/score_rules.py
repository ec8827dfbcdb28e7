"""The rules over model scores and word-list counts, applied by the document decision
step to the scores the model-score step stored (``signals/score_step.py``): changing a
threshold redoes the decisions only, never a score.

A document's values, each over the paragraphs the corpus keeps (labelled good, or all
without labels, less those a repeated-text rule dropped):

- ``fasttext_score``: the fastText label's probability for those paragraphs' text (measured
  per archive; a document that lost a kept paragraph to a repeated-text rule is scored again
  by the decision step, with the quality metrics, ``steps/kept_metrics.py``);
- ``perplexity``: 10 ** (-sum of the paragraphs' log10 probabilities / their tokens, one
  more per paragraph for its end): the kept text's perplexity, each paragraph weighted by
  its length in tokens, as CCNet computes a document's;
- ``word_list_matches``: matches of the language's word list; ``word_list_ratio``: the
  characters they cover over the kept text's (normalised) characters.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa


@dataclass(frozen=True)
class ScoreRule:
    name: str
    metric: str       # the decisions' column it reads
    op: str           # the document is dropped when value <op> threshold
    low: float
    high: float
    option: str       # the command line's
    needs: str        # the model it needs: fasttext, lm or word_lists
    doc: str


SCORE_RULES = (
    ScoreRule("model_fasttext", "fasttext_score", "<", 0.0, 1.0, "--min-fasttext-score", "fasttext",
              "drop a document whose fastText label probability is below this"),
    ScoreRule("model_perplexity", "perplexity", ">", 1.0, 1e12, "--max-perplexity", "lm",
              "drop a document whose kept text's perplexity under the language model is above this"),
    ScoreRule("word_list_matches", "word_list_matches", ">", 0.0, 1e9, "--max-word-list-matches", "word_lists",
              "drop a document with more matches of its language's word list than this"),
    ScoreRule("word_list_ratio", "word_list_ratio", ">", 0.0, 1.0, "--max-word-list-ratio", "word_lists",
              "drop a document whose word-list matches cover more than this share of its characters"),
)
BY_NAME = {r.name: r for r in SCORE_RULES}
SCORE_COLUMNS = pa.schema([
    ("fasttext_score", pa.float64()), ("perplexity", pa.float64()), ("word_list_matches", pa.int64()),
    ("word_list_ratio", pa.float64()), ("fasttext_model", pa.string()), ("lm_model", pa.string()),
    ("word_list", pa.string()),
])


def check_score_thresholds(thresholds: dict, models) -> None:
    """ValueError (one line) for an unknown rule, a threshold out of range, or a rule
    whose model is not given."""
    for name, v in thresholds.items():
        r = BY_NAME.get(name)
        if r is None:
            raise ValueError(f"unknown model-score rule {name!r} (known: {', '.join(BY_NAME)})")
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not r.low <= v <= r.high:
            raise ValueError(f"{r.option} {v!r} out of range [{r.low:g}, {r.high:g}]")
        if models is None or not getattr(models, r.needs):
            what = {"fasttext": "--fasttext-model", "lm": "--lm-model", "word_lists": "--word-list"}[r.needs]
            raise ValueError(f"{r.option} needs {what}")


def score_rules_table(thresholds: dict, first_ord: int) -> pa.Table:
    """The rules with a threshold, as the decision step's rule rows (after the quality
    rules' ``first_ord`` rows)."""
    rules = [r for r in SCORE_RULES if r.name in thresholds]
    return pa.table({
        "ord": pa.array(range(first_ord, first_ord + len(rules)), pa.int32()),
        "rule": pa.array([r.name for r in rules], pa.string()),
        "metric": pa.array([r.metric for r in rules], pa.string()),
        "op": pa.array([r.op for r in rules], pa.string()),
        "threshold": pa.array([float(thresholds[r.name]) for r in rules], pa.float64()),
    })


# Every score rule that fires on a document of ``scores_in`` (a NULL score: no model for
# the document, or no kept text; it fires no rule).
SCORE_HITS_SQL = " UNION ALL ".join(
    f"""SELECT s.docId, r.rule, s.{c}::DOUBLE AS value, r.threshold, r.ord FROM scores_in s
        JOIN score_rules r ON r.metric = '{c}'
        WHERE s.{c} IS NOT NULL AND CASE r.op WHEN '<' THEN s.{c} < r.threshold ELSE s.{c} > r.threshold END"""
    for c in ("fasttext_score", "perplexity", "word_list_matches", "word_list_ratio"))

NO_SCORES = "SELECT NULL::VARCHAR AS docId, " + ", ".join(
    f"NULL::{t} AS {f.name}" for f, t in zip(SCORE_COLUMNS, ("DOUBLE", "DOUBLE", "BIGINT", "DOUBLE", "VARCHAR",
                                                            "VARCHAR", "VARCHAR"))) + " WHERE false"


def _files(paths: list[str]) -> str:
    # DuckDB's module: the command line's parser needs SCORE_RULES only
    from warclake.tasks.lake.catalog import sql_literal

    return "[" + ", ".join(sql_literal(p) for p in paths) + "]"


def document_scores_sql(doc_files: list[str], para_files: list[str], para_decision_files: list[str]) -> str:
    """Per document of the model-score files: its scores over the text the corpus keeps."""
    if not doc_files:
        return NO_SCORES
    dropped = (f"SELECT docId, idx FROM read_parquet({_files(para_decision_files)})" if para_decision_files
               else "SELECT NULL::VARCHAR AS docId, NULL::INT AS idx WHERE false")
    return f"""
        WITH kept AS (
            SELECT s.* FROM read_parquet({_files(para_files)}) s
            WHERE s.good AND NOT EXISTS (SELECT 1 FROM ({dropped}) d WHERE d.docId = s.docId AND d.idx = s.idx)
        ), per_doc AS (
            SELECT docId, sum(lm_log10) AS log10, sum(lm_tokens) AS tokens, sum(word_matches) AS matches,
                   sum(word_match_chars) AS matched, sum(n_chars) AS chars,
                   any_value(lm_model) AS lm_model, any_value(word_list) AS word_list
            FROM kept GROUP BY docId
        )
        SELECT d.docId, d.fasttext_score,
               CASE WHEN p.tokens > 0 THEN pow(10, -p.log10 / p.tokens) END AS perplexity,
               p.matches::BIGINT AS word_list_matches,
               CASE WHEN p.chars > 0 THEN p.matched / p.chars END AS word_list_ratio,
               d.fasttext_model, p.lm_model, p.word_list
        FROM read_parquet({_files(doc_files)}) d LEFT JOIN per_doc p USING (docId)"""

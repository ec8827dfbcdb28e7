"""The document decisions (``doc_decisions``) of one dump, as tasks whose memory does not
grow with the dump: one row per document of the dump (``decide.DOC_DECISIONS``), the
rules of ``decide.document_decisions`` applied the same way.

    remeasure (per group of archives; not with ``judge_whole_pages``) the metrics of the
              group's documents whose kept text the paragraph decisions cut
              (``kept_metrics.py``), and their fastText score with a model
    clusters  (pairs only) the components of the pairs that reach the similarity: per
              document of this dump in a pair, its cluster (smallest docId), the cluster's
              size, its smallest earlier-dump document and the document's strongest link
    ranks     (per partition of the clusters' ids) the order of each cluster's documents of
              this dump (fewest rules fired, longest text, earliest date, URL hash, docId):
              its first is the survivor
    decisions (per range of docIds) one row per document of the range
    write     (one task, streamed a range at a time) the ranges' rows, in docId order, as
              the dump's decisions file

A document in no pair is its own cluster and is decided in its range's task alone. The
work files go to ``<lake>/corpus/work/doc_decisions/dump=<D>/``; the step's table is
``decisions/documents/dump=<D>/decisions.parquet``, its state ``decisions``.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from warclake.tasks.corpus.settings import DecisionConfig
from warclake.tasks.corpus.steps.components import docid_clusters
from warclake.tasks.corpus.steps.decide import (
    DOC_DECISIONS,
    DOC_STEP,
    QUALITY_HITS_SQL,
    quality_rules_table,
)
from warclake.tasks.corpus.steps.kept_metrics import remeasured, touched_documents
from warclake.tasks.corpus.steps.score_rules import NO_SCORES, SCORE_COLUMNS, SCORE_HITS_SQL, score_rules_table
from warclake.tasks.corpus.steps.phased import PhasedStep
from warclake.tasks.corpus.storage.engine import copy_query, parquet_list, query_table
from warclake.tasks.corpus.storage.layout import CorpusLayout, local_tmp, publish_tmp, read_table, write_table
from warclake.tasks.lake.catalog import sql_literal
from warclake.tasks.lake.layout import remove_quietly

STEP = DOC_STEP
# (phase, its tasks: "archives" per group of archives, "parts" per partition, None one)
PHASES = (("remeasure", "archives"), ("clusters", None), ("ranks", "parts"), ("decisions", "parts"),
          ("write", None))
STATE = "decisions"    # the state file of the last phase: the step's
RANGE_DIGITS = 4       # the docId ranges are cut at hexadecimal prefixes of this length (docIds are UUIDs)
# The step's partitions: one per this many of the dump's work partitions (``stage.DumpContext.work_parts``).
# A range's and a cluster partition's tasks read every docsigs file for their rows, so fewer,
# larger partitions cost less CPU; a task's rows stay bounded (about 4 x 24 MB of paragraph files' documents).
WORK_PARTS_PER_RANGE = 4


def parts_for(work_parts: int) -> int:
    return max(1, -(-work_parts // WORK_PARTS_PER_RANGE))


def docid_bounds(parts: int) -> list[str]:
    """The ``parts - 1`` docIds at which the ranges are cut: even over random UUIDs; any
    other docId falls in one range too, so the decisions never depend on the cut."""
    return [format(i * 16 ** RANGE_DIGITS // parts, f"0{RANGE_DIGITS}x") for i in range(1, parts)]


def in_range(col: str, part: int, parts: int) -> str:
    bounds = docid_bounds(parts)
    lo = f"{col} >= {sql_literal(bounds[part - 1])}" if part > 0 else "true"
    hi = f"{col} < {sql_literal(bounds[part])}" if part < parts - 1 else "true"
    return f"({lo} AND {hi})"


@dataclass
class DocDecisions(PhasedStep):
    """The step of one dump: its inputs, settings and partitions. ``run`` does one task of
    one phase unless done."""
    STEP = STEP
    LAST, LAST_STATE = "write", STATE
    layout: CorpusLayout
    dump: str
    archives: list[str]               # this dump's archives, in order
    docsig_files: list[str]           # theirs, in the same order
    para_files: list[str]
    pair_files: list[str]             # this dump's verified pairs
    para_pairs_file: str              # its distinctive-paragraph pairs
    para_decision_files: list[str]    # its paragraph decisions
    cfg: DecisionConfig
    run_id: str
    key: dict
    parts: int
    whole_pages: bool = False         # judge_whole_pages: no remeasure
    scores: str | None = None         # the documents' model scores (score_rules.document_scores_sql)
    models: object = None             # signals/models.ScoreModels, for the kept text's fastText score

    def phases(self) -> list[tuple[str, str | None]]:
        return [(n, per) for n, per in PHASES if n != "remeasure" or not self.whole_pages]

    def tasks(self, phase: str) -> list[int | None]:
        per = dict(self.phases()).get(phase, "none")
        if per == "none":
            return []
        if per == "archives":
            return list(range(min(self.parts, len(self.archives)))) or [None]
        return list(range(self.parts)) if per == "parts" else [None]

    def run_all(self, con) -> int:
        return sum(self.run(con, phase, t) for phase, _ in self.phases() for t in self.tasks(phase))

    @property
    def fasttext(self) -> bool:
        return bool(self.models is not None and getattr(self.models, "fasttext", None))

    # -- the inputs, as SQL ----------------------------------------------------------------
    def _remeasured(self) -> str | None:
        if self.whole_pages or not self.archives:
            return None
        return parquet_list([self.work("remeasured", p) for p in self.tasks("remeasure") if p is not None])

    def _docs(self, where: str) -> str:
        """The dump's documents that ``where`` (over ``docId``) picks, their metrics those of
        the kept text where the paragraph decisions cut it."""
        docs = f"""SELECT docId, dump, lang, date, url_hash, n_chars, clean_hash, metrics
                   FROM {parquet_list(self.docsig_files)} WHERE {where}"""
        again = self._remeasured()
        if again is None:
            return docs
        return f"""SELECT d.docId, d.dump, d.lang, d.date, d.url_hash, d.n_chars, d.clean_hash,
                          coalesce(r.metrics, d.metrics) AS metrics
                   FROM ({docs}) d LEFT JOIN (SELECT docId, metrics FROM {again} WHERE {where}) r USING (docId)"""

    def _judge(self, con, where: str) -> None:
        """Temp tables ``docs``, ``scores_in`` and ``q`` (per document, the rules that fired
        and how many) of the documents ``where`` picks."""
        con.execute(f"CREATE OR REPLACE TEMP TABLE docs AS {self._docs(where)}")
        scores = NO_SCORES if self.scores is None else f"SELECT * FROM ({self.scores}) WHERE {where}"
        again = self._remeasured()
        if self.scores is not None and again is not None and self.fasttext:
            # the fastText score of the text the corpus emits, for documents the paragraph decisions cut
            scores = f"""SELECT s.* REPLACE (CASE WHEN r.docId IS NULL THEN s.fasttext_score
                                                  ELSE r.fasttext_score END AS fasttext_score)
                         FROM ({scores}) s LEFT JOIN (SELECT docId, fasttext_score FROM {again} WHERE {where}) r
                         USING (docId)"""
        con.execute(f"CREATE OR REPLACE TEMP TABLE scores_in AS {scores}")
        rules = quality_rules_table(self.cfg)
        con.register("quality_rules", rules)
        con.register("score_rules", score_rules_table(self.cfg.scores, rules.num_rows))
        try:
            con.execute(f"""CREATE OR REPLACE TEMP TABLE q AS
                SELECT docId, list({{'rule': rule, 'value': value, 'threshold': threshold}} ORDER BY ord) AS rules,
                       count(*) AS n_fails
                FROM ({QUALITY_HITS_SQL} UNION ALL {SCORE_HITS_SQL}) GROUP BY docId""")
        finally:
            con.unregister("quality_rules")
            con.unregister("score_rules")

    @staticmethod
    def _drop(con, *tables: str) -> None:
        for t in tables:
            con.execute(f"DROP TABLE IF EXISTS {t}")

    # -- the phases --------------------------------------------------------------------
    def _remeasure(self, con, part: int | None) -> dict:
        mine = self.archives if part is None else self.archives[part::len(self.tasks("remeasure"))]
        para = dict(zip(self.archives, self.para_files))
        touched = touched_documents(con, {a: para[a] for a in mine}, self.para_decision_files)
        table = remeasured({a: self.layout.documents(self.dump, a) for a in touched}, touched, self.models)
        write_table(self.work("remeasured", 0 if part is None else part), table, work=True)
        return {"documents": table.num_rows}

    def _clusters(self, con, part=None) -> dict:
        sim = repr(self.cfg.similarity)
        pairs = (f"SELECT a, b, jaccard, exact FROM {parquet_list(self.pair_files)}" if self.pair_files
                 else "SELECT ''::VARCHAR AS a, ''::VARCHAR AS b, 0.0::DOUBLE AS jaccard, false AS exact WHERE false")
        con.execute(f"""CREATE OR REPLACE TEMP TABLE edges AS
            SELECT a, b, max(jaccard) AS jaccard, bool_or(exact) AS exact FROM (
                SELECT a, b, jaccard, exact FROM ({pairs}) WHERE exact OR jaccard >= {sim}
                UNION ALL
                SELECT a, b, para_jaccard, false FROM {parquet_list([self.para_pairs_file])}
                WHERE para_jaccard >= {sim})
            GROUP BY a, b""")
        con.register("cl_arrow", docid_clusters(con, "SELECT a, b FROM edges"))
        # which of the pairs' documents are this dump's: its documents read against the pairs' only
        con.execute(f"""CREATE OR REPLACE TEMP TABLE cl AS
            SELECT c.docId, c.label AS cluster_id, cur.docId IS NOT NULL AS is_cur
            FROM cl_arrow c LEFT JOIN (SELECT docId FROM {parquet_list(self.docsig_files)}
                                       WHERE docId IN (SELECT docId FROM cl_arrow)) cur USING (docId)""")
        con.unregister("cl_arrow")
        n = copy_query(con, """
            WITH best AS (   -- each document's strongest link: its measured similarity
                SELECT docId, max(jaccard) AS jaccard, bool_or(exact_earlier) AS exact_earlier FROM (
                    SELECT e.a AS docId, e.jaccard, e.exact AND NOT o.is_cur AS exact_earlier
                    FROM edges e JOIN cl o ON o.docId = e.b
                    UNION ALL
                    SELECT e.b, e.jaccard, e.exact AND NOT o.is_cur FROM edges e JOIN cl o ON o.docId = e.a)
                GROUP BY docId
            ), sized AS (
                SELECT docId, is_cur, cluster_id, count(*) OVER (PARTITION BY cluster_id) AS cluster_size,
                       min(CASE WHEN NOT is_cur THEN docId END) OVER (PARTITION BY cluster_id) AS earlier
                FROM cl)
            SELECT s.docId, s.cluster_id, s.cluster_size, s.earlier, b.jaccard, b.exact_earlier
            FROM sized s JOIN best b USING (docId) WHERE s.is_cur""", self.work("clusters"))
        self._drop(con, "edges", "cl")
        return {"clustered": n}

    def _in_cluster_part(self, part: int) -> str:
        return f"hash(cluster_id) % {int(self.parts)} = {int(part)}"

    def _ranks(self, con, part: int) -> dict:
        clusters = f"SELECT * FROM {parquet_list([self.work('clusters')])} WHERE {self._in_cluster_part(part)}"
        con.execute(f"CREATE OR REPLACE TEMP TABLE members AS {clusters}")
        self._judge(con, "docId IN (SELECT docId FROM members)")
        n = copy_query(con, """
            WITH ranked AS (
                SELECT m.*, d.clean_hash,
                       row_number() OVER (PARTITION BY m.cluster_id
                           ORDER BY coalesce(q.n_fails, 0), d.n_chars DESC, d.date NULLS LAST,
                                    d.url_hash, d.docId) AS rnk
                FROM docs d JOIN members m USING (docId) LEFT JOIN q USING (docId))
            SELECT r.*, first_value(docId) OVER w AS first_doc, first_value(clean_hash) OVER w AS first_hash
            FROM ranked r WINDOW w AS (PARTITION BY cluster_id ORDER BY rnk)""", self.work("ranks", part))
        self._drop(con, "members", "docs", "scores_in", "q")
        return {"ranked": n}

    def _decisions(self, con, part: int) -> dict:
        where = in_range("docId", part, self.parts)
        self._judge(con, where)
        ranks = parquet_list([self.work("ranks", p) for p in range(self.parts)])
        con.execute(f"""CREATE OR REPLACE TEMP TABLE ranks AS
            SELECT docId, cluster_id, cluster_size, earlier, jaccard, exact_earlier, rnk, first_doc, first_hash
            FROM {ranks} WHERE {where}""")
        drop_all = "true" if self.cfg.drop_all_copies else "false"
        sim = repr(self.cfg.similarity)
        table = query_table(con, f"""
            WITH dup AS (
                SELECT d.docId, d.dump, d.lang, coalesce(q.rules, []) AS qrules,
                       coalesce(k.cluster_id, d.docId) AS cluster_id, coalesce(k.cluster_size, 1) AS cluster_size,
                       k.earlier, k.jaccard, coalesce(k.first_doc, d.docId) AS first_doc,
                       coalesce(k.cluster_size, 1) > 1 AND k.earlier IS NULL AND coalesce(k.rnk, 1) = 1
                           AND NOT {drop_all} AS survivor,
                       CASE WHEN coalesce(k.cluster_size, 1) = 1 THEN NULL
                            WHEN k.earlier IS NOT NULL THEN
                                 CASE WHEN k.exact_earlier THEN 'exact_duplicate_earlier_dump'
                                      ELSE 'near_duplicate_earlier_dump' END
                            WHEN {drop_all} THEN 'duplicate_all_copies'
                            WHEN k.rnk = 1 THEN NULL
                            WHEN d.clean_hash = k.first_hash THEN 'exact_duplicate'
                            ELSE 'near_duplicate' END AS dup_rule
                FROM docs d LEFT JOIN q USING (docId) LEFT JOIN ranks k USING (docId)
            )
            SELECT docId, dump, lang,
                   len(rules) = 0 AS kept,
                   rules[1].rule AS rule, rules[1].value AS value, rules[1].threshold AS threshold,
                   rules, CASE WHEN cluster_size > 1 THEN cluster_id END AS cluster_id,
                   cluster_size::BIGINT AS cluster_size, survivor,
                   CASE WHEN earlier IS NOT NULL THEN earlier
                        WHEN cluster_size > 1 AND NOT survivor AND NOT {drop_all} THEN first_doc END AS duplicate_of,
                   ? AS run_id, ? AS config_fingerprint,
                   {", ".join(SCORE_COLUMNS.names)}
            FROM (
                SELECT *, list_concat(qrules, CASE WHEN dup_rule IS NULL THEN []
                      ELSE [{{'rule': dup_rule,
                              'value': CASE WHEN dup_rule LIKE 'exact%' THEN 1.0 ELSE jaccard END,
                              'threshold': CASE WHEN dup_rule LIKE 'exact%' THEN 1.0 ELSE {sim} END}}] END) AS rules
                FROM dup) LEFT JOIN scores_in USING (docId)
            ORDER BY docId""", [self.run_id, self.cfg.fingerprint()]).cast(DOC_DECISIONS)
        self._drop(con, "docs", "scores_in", "q", "ranks")
        write_table(self.work("decisions", part), table, work=True)
        kept = pa.compute.sum(table.column("kept").cast(pa.int64())).as_py() or 0
        return {"documents": table.num_rows, "kept": kept}

    def _write(self, con, part=None) -> dict:
        """The ranges' files, in order, as one file: a range in memory at a time."""
        path = self.layout.file("decisions/documents", self.dump, "decisions")
        tmp = local_tmp(path)
        documents = kept = 0
        try:
            with pq.ParquetWriter(tmp, DOC_DECISIONS, compression="zstd") as out:
                for p in range(self.parts):
                    table = read_table(self.work("decisions", p)).cast(DOC_DECISIONS)
                    out.write_table(table, row_group_size=1 << 17)
                    documents += table.num_rows
                    kept += pa.compute.sum(table.column("kept").cast(pa.int64())).as_py() or 0
            publish_tmp(tmp, path)
        except BaseException:
            remove_quietly(tmp)
            raise
        remeasured_docs = sum((self.layout.read_state(STEP, self.dump, self.state_name("remeasure", p)) or {})
                              .get("documents", 0) for p in self.tasks("remeasure"))
        return {"documents": documents, "kept": kept, "run_id": self.run_id, "remeasured": remeasured_docs}

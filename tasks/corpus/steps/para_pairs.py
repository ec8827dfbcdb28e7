"""The distinctive-paragraph pairs (``para_pairs``): document pairs confirmed on their
distinctive paragraphs, what a page says once its sites' templates are set aside.

A document's MinHash is made from one page alone, so it cannot tell the page's own text
from a template the boilerplate model took for content; the same article under another
site's header and footer then falls under the similarity threshold. The lake knows more:
a text that appears in at least ``TEMPLATE_MIN_CLUSTERS`` documents which are not
near-duplicates of each other (distinct clusters of the MinHash pairs at
``CLUSTER_SIMILARITY``) is template, notice or widget text, whatever its label. The rest
of a document's paragraphs is its distinctive text.

Per dump, after the MinHash pairs:

1. clusters of this dump's documents and of the earlier-dump documents sharing a text with
   them, by the MinHash pairs of this and the earlier dumps;
2. template texts: those in ``TEMPLATE_MIN_CLUSTERS`` or more clusters;
3. candidate pairs: the MinHash pairs, and documents sharing a distinctive paragraph of at
   least ``MIN_CANDIDATE_CHARS`` characters (in each text's bucket, in docId order, every
   document paired with the first and with the one before it: linear in the bucket);
4. per candidate pair, the Jaccard of their distinctive texts weighted by characters:
   the characters of the paragraphs both hold over those either holds.

The decision step joins a pair whose MinHash estimate or paragraph Jaccard reaches the
similarity threshold, so a threshold change redoes nothing here. Different pages of one
site share only their template, so their distinctive texts stay apart. An earlier-dump
document in a candidate pair is read whole, and its texts that no document of this dump
holds are counted over the earlier dumps' paragraphs as well (the clusters and template
texts are then found again over those rows).

How it runs: as phases (``PHASES``), each either one task per text-hash partition, whose
rows are the partition's paragraphs (memory follows the partition, not the dump), or one
task over document pairs only (the clusters, and the final sum). The phases' files go to
``<lake>/corpus/work/para_pairs/dump=<D>/``; the step's table is
``para_pairs/dump=<D>/para_pairs.parquet``.

    rows        (per partition) the (docId, text, characters) rows of this dump's texts
    clusters    (pairs only)    clusters of the MinHash pairs among those rows' documents
    candidates  (per partition) template texts, and the pairs sharing a distinctive text
    extend      (per partition; with earlier dumps) the rows of the candidates' earlier documents
    clusters_again (pairs only; with earlier dumps) the clusters over the extended rows
    overlap     (per partition) the characters each candidate pair shares, each document's total
    merge       (pairs only)    the sums over the partitions, the Jaccard
"""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from warclake.tasks.corpus.steps.components import docid_clusters
from warclake.tasks.corpus.steps.phased import PhasedStep
from warclake.tasks.corpus.storage.engine import copy_query, parquet_list, part_expr, query_table
from warclake.tasks.corpus.storage.layout import CorpusLayout, write_table

STEP = "para_pairs"
TEMPLATE_MIN_CLUSTERS = 3
CLUSTER_SIMILARITY = 0.6
MIN_CANDIDATE_CHARS = 40
SETTINGS = {"template_min_clusters": TEMPLATE_MIN_CLUSTERS, "cluster_similarity": CLUSTER_SIMILARITY,
            "min_candidate_chars": MIN_CANDIDATE_CHARS, "version": 2}

PARA_PAIRS = pa.schema([("a", pa.string()), ("b", pa.string()), ("para_jaccard", pa.float64())])
# (phase, whether it is one task per partition), in order
PHASES = (("rows", True), ("clusters", False), ("candidates", True), ("extend", True),
          ("clusters_again", False), ("overlap", True), ("merge", False))
EARLIER_ONLY = ("extend", "clusters_again")   # phases with nothing to do for a dump without earlier ones

_NO_PAIRS = "SELECT NULL::VARCHAR AS a, NULL::VARCHAR AS b, NULL::DOUBLE AS jaccard, NULL::BOOLEAN AS exact WHERE false"


@dataclass
class ParaPairs(PhasedStep):
    """The step of one dump: its inputs, partitions and files. ``run`` does one phase (one
    partition of it, for a partitioned phase) unless done."""
    STEP = STEP
    LAST, LAST_STATE = "merge", STEP
    layout: CorpusLayout
    dump: str
    para_files: list[str]          # this dump's paragraphs
    prev_para_files: list[str]     # every earlier dump's
    pair_files: list[str]          # this dump's MinHash pairs
    prev_pair_files: list[str]     # every earlier dump's
    key: dict                      # the step's inputs and settings
    parts: int

    def phases(self) -> list[tuple[str, bool]]:
        """The phases this dump needs, in order."""
        if not self.para_files:
            return [("merge", False)]
        return [(n, per) for n, per in PHASES if self.prev_para_files or n not in EARLIER_ONLY]

    def run_all(self, con) -> int:
        """Every phase in order, in this process: how many calls did work."""
        return sum(self.run(con, phase, p) for phase, per in self.phases()
                   for p in (range(self.parts) if per else [None]))

    # -- the inputs, as SQL ----------------------------------------------------------------
    def _in_part(self, part: int) -> str:
        return f"n_chars > 0 AND {part_expr('text_hash', self.parts)} = {int(part)}"

    def _minhash_pairs(self) -> str:
        return f"SELECT a, b, jaccard, exact FROM {parquet_list(self.pair_files)}" if self.pair_files else _NO_PAIRS

    def _all_candidates(self) -> str:
        """Every candidate pair: the partitions' and the MinHash pairs."""
        cands = parquet_list([self.work("candidates", p) for p in range(self.parts)])
        return f"SELECT DISTINCT a, b FROM (SELECT a, b FROM {cands} UNION ALL SELECT a, b FROM ({self._minhash_pairs()}))"

    def _rows_file(self, part: int) -> str:
        return self.work("rows_extended" if self.prev_para_files else "rows", part)

    # -- the phases --------------------------------------------------------------------
    def _rows(self, con, part: int) -> dict:
        cur = parquet_list(self.para_files)
        sql = f"""WITH cur AS (
                SELECT docId, text_hash, max(n_chars)::BIGINT AS w FROM {cur} WHERE {self._in_part(part)}
                GROUP BY docId, text_hash)
            SELECT docId, text_hash, w, true AS is_cur FROM cur"""
        if self.prev_para_files:
            sql += f"""
            UNION ALL SELECT docId, text_hash, max(n_chars)::BIGINT, false FROM {parquet_list(self.prev_para_files)}
            WHERE {self._in_part(part)} AND text_hash IN (SELECT text_hash FROM cur) GROUP BY docId, text_hash"""
        return {"rows": copy_query(con, sql, self.work("rows", part))}

    def _clusters(self, con, part=None, rows: str = "rows") -> dict:
        """Clusters (docId, label: its cluster's smallest docId) of the documents of the
        MinHash pairs that pass ``CLUSTER_SIMILARITY``: this dump's, and the earlier dumps'
        that touch a document of the rows. A document in no such pair is its own cluster."""
        passing = f"(exact OR jaccard >= {CLUSTER_SIMILARITY!r})"
        links = f"SELECT a, b FROM ({self._minhash_pairs()}) WHERE {passing}"
        if self.prev_pair_files:
            files = [self.work(rows, p) for p in range(self.parts)]
            links += f"""
            UNION ALL SELECT a, b FROM {parquet_list(self.prev_pair_files)} WHERE {passing}
              AND (a IN (SELECT docId FROM {parquet_list(files)}) OR b IN (SELECT docId FROM {parquet_list(files)}))"""
        table = docid_clusters(con, links)
        write_table(self.work(f"clusters_{rows}"), table)
        return {"documents": table.num_rows}

    def _clusters_again(self, con, part=None) -> dict:
        return self._clusters(con, part, "rows_extended")

    def _template(self, rows: str, clusters: str) -> str:
        """The texts of ``rows`` in ``TEMPLATE_MIN_CLUSTERS`` or more clusters."""
        return f"""SELECT r.text_hash FROM {rows} r LEFT JOIN read_parquet({_lit(clusters)}) c USING (docId)
                   GROUP BY r.text_hash HAVING count(DISTINCT coalesce(c.label, r.docId)) >= {TEMPLATE_MIN_CLUSTERS}"""

    def _candidates(self, con, part: int) -> dict:
        rows = f"read_parquet({_lit(self.work('rows', part))})"
        sql = f"""WITH template AS ({self._template(rows, self.work('clusters_rows'))}
            ), shared AS (
                SELECT docId, text_hash, is_cur FROM {rows}
                WHERE w >= {MIN_CANDIDATE_CHARS} AND text_hash NOT IN (SELECT text_hash FROM template)
            ), ordered AS (
                SELECT docId AS y, is_cur AS y_cur,
                       first_value(docId) OVER w AS x1, first_value(is_cur) OVER w AS x1_cur,
                       lag(docId) OVER w AS x2, lag(is_cur) OVER w AS x2_cur
                FROM shared WINDOW w AS (PARTITION BY text_hash ORDER BY docId)
            )
            SELECT DISTINCT least(x, y) AS a, greatest(x, y) AS b FROM (
                SELECT x1 AS x, y FROM ordered WHERE x1 <> y AND (x1_cur OR y_cur)
                UNION ALL
                SELECT x2, y FROM ordered WHERE x2 IS NOT NULL AND x2 <> x1 AND (x2_cur OR y_cur))"""
        return {"pairs": copy_query(con, sql, self.work("candidates", part))}

    def _extend(self, con, part: int) -> dict:
        """The partition's rows, with the rows of every text of the candidates' earlier
        documents (a row of this dump or of such a document: the rows whose
        distinctive texts are compared: ``compared``)."""
        prev = parquet_list(self.prev_para_files)
        rows = f"read_parquet({_lit(self.work('rows', part))})"
        sql = f"""WITH docs AS (SELECT a AS docId FROM ({self._all_candidates()}) UNION SELECT b FROM ({self._all_candidates()})
            ), their_texts AS (
                SELECT DISTINCT text_hash FROM {prev} WHERE {self._in_part(part)} AND docId IN (SELECT docId FROM docs)
            ), extra AS (
                SELECT docId, text_hash, max(n_chars)::BIGINT AS w FROM {prev}
                WHERE {self._in_part(part)} AND text_hash IN (SELECT text_hash FROM their_texts)
                  AND text_hash NOT IN (SELECT text_hash FROM {rows})
                GROUP BY docId, text_hash)
            SELECT docId, text_hash, w, is_cur, is_cur OR docId IN (SELECT docId FROM docs) AS compared FROM (
                SELECT docId, text_hash, w, is_cur FROM {rows}
                UNION ALL SELECT docId, text_hash, w, false FROM extra)"""
        return {"rows": copy_query(con, sql, self.work("rows_extended", part))}

    def _overlap(self, con, part: int) -> dict:
        extended = bool(self.prev_para_files)
        rows = f"read_parquet({_lit(self._rows_file(part))})"
        clusters = self.work("clusters_rows_extended" if extended else "clusters_rows")
        con.execute(f"""CREATE OR REPLACE TEMP TABLE pp_dist AS
            SELECT docId, text_hash, w FROM {rows}
            WHERE {'compared' if extended else 'is_cur'} AND text_hash NOT IN ({self._template(rows, clusters)})""")
        con.execute(f"CREATE OR REPLACE TEMP TABLE pp_cand AS {self._all_candidates()}")
        shared = copy_query(con, """
            SELECT c.a, c.b, sum(least(x.w, y.w))::BIGINT AS sw FROM pp_cand c
            JOIN pp_dist x ON x.docId = c.a JOIN pp_dist y ON y.docId = c.b AND y.text_hash = x.text_hash
            GROUP BY c.a, c.b""", self.work("shared", part))
        copy_query(con, """SELECT docId, sum(w)::BIGINT AS tw FROM pp_dist
            WHERE docId IN (SELECT a FROM pp_cand UNION SELECT b FROM pp_cand) GROUP BY docId""",
                   self.work("totals", part))
        con.execute("DROP TABLE pp_dist")
        con.execute("DROP TABLE pp_cand")
        return {"pairs": shared}

    def _merge(self, con, part=None) -> dict:
        if not self.para_files:
            table = PARA_PAIRS.empty_table()
        else:
            shared = parquet_list([self.work("shared", p) for p in range(self.parts)])
            totals = parquet_list([self.work("totals", p) for p in range(self.parts)])
            table = query_table(con, f"""
                WITH common AS (SELECT a, b, sum(sw) AS sw FROM {shared} GROUP BY a, b),
                tot AS (SELECT docId, sum(tw) AS tw FROM {totals} GROUP BY docId)
                SELECT c.a, c.b, (c.sw / (ta.tw + tb.tw - c.sw))::DOUBLE AS para_jaccard
                FROM common c JOIN tot ta ON ta.docId = c.a JOIN tot tb ON tb.docId = c.b
                ORDER BY c.a, c.b""").cast(PARA_PAIRS)
        write_table(self.layout.file(STEP, self.dump, STEP), table)
        return {"pairs": table.num_rows}


def _lit(path: str) -> str:
    from warclake.tasks.lake.catalog import sql_literal

    return sql_literal(path)


def para_pairs_step(con, layout: CorpusLayout, dump: str, para_files: list[str], prev_para_files: list[str],
                    pair_files: list[str], prev_pair_files: list[str], key: dict, parts: int = 1) -> bool:
    """Every phase of the step in this process (``para_pairs/dump=<D>/para_pairs.parquet``:
    a, b, para_jaccard; a < b, one of them a document of ``dump``; pairs with no
    distinctive text in common left out); True when any did work."""
    return ParaPairs(layout, dump, para_files, prev_para_files, pair_files, prev_pair_files, key, parts).run_all(con) > 0

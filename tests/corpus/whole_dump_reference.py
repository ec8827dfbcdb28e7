"""The global steps that were one task per dump, kept whole as the reference the
partitioned steps must equal (tests/corpus/test_corpus_partitioned.py): the
distinctive-paragraph pairs and the near-duplicate paragraph groups of one dump, each
computed in one DuckDB connection and one numpy process over the whole dump."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from warclake.tasks.corpus.settings import DecisionConfig
from warclake.tasks.corpus.steps.components import component_labels
from warclake.tasks.corpus.steps.decide import DOC_DECISIONS, QUALITY_HITS_SQL, quality_rules_table
from warclake.tasks.corpus.steps.para_groups import GROUPS, MIN_CHARS, near_pairs
from warclake.tasks.corpus.steps.para_pairs import CLUSTER_SIMILARITY, MIN_CANDIDATE_CHARS, PARA_PAIRS, TEMPLATE_MIN_CLUSTERS
from warclake.tasks.corpus.steps.score_rules import NO_SCORES, SCORE_COLUMNS, SCORE_HITS_SQL, score_rules_table
from warclake.tasks.corpus.storage.engine import parquet_list, query_table


def groups_of(con, cur_hosts: list[str], prev_hosts: list[str], prev_groups: list[str],
              workers: int = 2) -> pa.Table:
    """(text_hash, group_hash) of every text in a group holding a text of the current dump
    (``cur_hosts``: its para_hosts files), sorted by text_hash."""
    src = f"SELECT text_hash, simhash, n_chars, true AS is_cur FROM {parquet_list(cur_hosts)}"
    if prev_hosts:
        src += f" UNION ALL SELECT text_hash, simhash, n_chars, false FROM {parquet_list(prev_hosts)}"
    texts = con.sql(f"""
        SELECT text_hash, min(simhash) AS simhash, min(n_chars) AS n_chars, bool_or(is_cur) AS is_cur
        FROM ({src}) WHERE n_chars >= {MIN_CHARS} GROUP BY text_hash ORDER BY text_hash""").fetchnumpy()
    th = np.asarray(texts["text_hash"], np.int64)          # sorted
    is_cur = np.asarray(texts["is_cur"], bool)
    i, j = near_pairs(np.asarray(texts["simhash"], np.int64), np.asarray(texts["n_chars"], np.int64),
                      is_cur, workers)
    a, b = th[i], th[j]
    del texts
    if prev_groups:   # earlier groups, as edges member -> group id
        g = con.sql(f"""SELECT text_hash, min(group_hash) AS g FROM {parquet_list(prev_groups)}
                        GROUP BY text_hash""").fetchnumpy()
        a = np.concatenate([a, np.asarray(g["text_hash"], np.int64)])
        b = np.concatenate([b, np.asarray(g["g"], np.int64)])
    if not len(a) or not len(th):
        return GROUPS.empty_table()
    nodes = np.unique(np.concatenate([a, b]))          # sorted: the smallest node is the smallest hash
    labels = component_labels(len(nodes), np.searchsorted(nodes, a), np.searchsorted(nodes, b))
    at = np.minimum(np.searchsorted(th, nodes), len(th) - 1)
    has_cur = np.zeros(len(nodes), bool)
    has_cur[labels[(th[at] == nodes) & is_cur[at]]] = True
    keep = has_cur[labels]
    return pa.table({"text_hash": nodes[keep], "group_hash": nodes[labels[keep]]}, schema=GROUPS)



def distinctive_pairs(con, para_files: list[str], prev_para_files: list[str], pair_files: list[str],
                      prev_pair_files: list[str]) -> pa.Table:
    if not para_files:
        return PARA_PAIRS.empty_table()
    cur = parquet_list(para_files)
    prev = parquet_list(prev_para_files) if prev_para_files else None
    con.execute(f"""CREATE OR REPLACE TEMP TABLE pp_cur AS
        SELECT docId, text_hash, max(n_chars)::BIGINT AS w FROM {cur} WHERE n_chars > 0 GROUP BY docId, text_hash""")
    con.execute("CREATE OR REPLACE TEMP TABLE pp_cur_docs AS SELECT DISTINCT docId FROM pp_cur")
    con.execute(f"""CREATE OR REPLACE TEMP TABLE pp_rows AS SELECT * FROM pp_cur
        {f'''UNION ALL SELECT docId, text_hash, max(n_chars)::BIGINT FROM {prev}
             WHERE n_chars > 0 AND text_hash IN (SELECT text_hash FROM pp_cur) GROUP BY docId, text_hash'''
          if prev else ''}""")
    if pair_files:
        con.execute(f"CREATE OR REPLACE TEMP TABLE pp_mh AS SELECT a, b, jaccard, exact FROM {parquet_list(pair_files)}")
    else:
        con.execute("CREATE OR REPLACE TEMP TABLE pp_mh AS SELECT ''::VARCHAR AS a, ''::VARCHAR AS b, "
                    "0.0::DOUBLE AS jaccard, false AS exact WHERE false")
    earlier_pairs = parquet_list(prev_pair_files) if prev_pair_files else None
    # 1-2. clusters and template texts over the rows of this dump's texts
    _template_texts(con, "pp_rows", earlier_pairs)
    # 3. candidates: the MinHash pairs, and documents sharing a distinctive paragraph
    con.execute(f"""CREATE OR REPLACE TEMP TABLE pp_cand AS
        WITH shared AS (
            SELECT docId, text_hash, docId IN (SELECT docId FROM pp_cur_docs) AS is_cur FROM pp_rows
            WHERE w >= {MIN_CANDIDATE_CHARS} AND text_hash NOT IN (SELECT text_hash FROM pp_template)
        ), ordered AS (
            SELECT docId AS y, is_cur AS y_cur,
                   first_value(docId) OVER w AS x1, first_value(is_cur) OVER w AS x1_cur,
                   lag(docId) OVER w AS x2, lag(is_cur) OVER w AS x2_cur
            FROM shared WINDOW w AS (PARTITION BY text_hash ORDER BY docId)
        )
        SELECT DISTINCT least(x, y) AS a, greatest(x, y) AS b FROM (
            SELECT x1 AS x, y FROM ordered WHERE x1 <> y AND (x1_cur OR y_cur)
            UNION ALL
            SELECT x2, y FROM ordered WHERE x2 IS NOT NULL AND x2 <> x1 AND (x2_cur OR y_cur)
            UNION ALL
            SELECT a, b FROM pp_mh)""")
    # 4. the candidates' earlier documents whole: their other texts' clusters are counted
    # over the earlier dumps too, then the weighted Jaccard of the distinctive texts
    if prev:
        con.execute("""CREATE OR REPLACE TEMP TABLE pp_prev_docs AS
            SELECT DISTINCT docId FROM (SELECT a AS docId FROM pp_cand UNION SELECT b FROM pp_cand)
            WHERE docId NOT IN (SELECT docId FROM pp_cur_docs)""")
        con.execute(f"""CREATE OR REPLACE TEMP TABLE pp_prev_full AS
            SELECT docId, text_hash, max(n_chars)::BIGINT AS w FROM {prev}
            WHERE n_chars > 0 AND docId IN (SELECT docId FROM pp_prev_docs) GROUP BY docId, text_hash""")
        con.execute(f"""CREATE OR REPLACE TEMP TABLE pp_rows2 AS SELECT * FROM pp_rows
            UNION ALL SELECT docId, text_hash, max(n_chars)::BIGINT FROM {prev}
            WHERE n_chars > 0 AND text_hash IN (SELECT text_hash FROM pp_prev_full)
              AND text_hash NOT IN (SELECT text_hash FROM pp_cur)
            GROUP BY docId, text_hash""")
        _template_texts(con, "pp_rows2", earlier_pairs)
        prev_full = "UNION ALL SELECT docId, text_hash, w FROM pp_prev_full"
    else:
        prev_full = ""
    con.execute(f"""CREATE OR REPLACE TEMP TABLE pp_dist AS
        SELECT docId, text_hash, w FROM (SELECT * FROM pp_cur {prev_full})
        WHERE text_hash NOT IN (SELECT text_hash FROM pp_template)""")
    out = query_table(con, """
        WITH tot AS (SELECT docId, sum(w) AS tw FROM pp_dist GROUP BY docId),
        common AS (
            SELECT c.a, c.b, sum(least(x.w, y.w)) AS sw FROM pp_cand c
            JOIN pp_dist x ON x.docId = c.a JOIN pp_dist y ON y.docId = c.b AND y.text_hash = x.text_hash
            GROUP BY c.a, c.b)
        SELECT c.a, c.b, (c.sw / (ta.tw + tb.tw - c.sw))::DOUBLE AS para_jaccard
        FROM common c JOIN tot ta ON ta.docId = c.a JOIN tot tb ON tb.docId = c.b
        ORDER BY c.a, c.b""")
    for t in ("pp_cur", "pp_cur_docs", "pp_rows", "pp_rows2", "pp_mh", "pp_links", "pp_nodes", "pp_template",
              "pp_cand", "pp_prev_docs", "pp_prev_full", "pp_dist"):
        con.execute(f"DROP TABLE IF EXISTS {t}")
    return out.cast(PARA_PAIRS)


def _template_texts(con, rows: str, earlier_pairs: str | None) -> None:
    """``pp_template``: the texts of ``rows`` (docId, text_hash, w) found in at least
    ``TEMPLATE_MIN_CLUSTERS`` clusters of the MinHash pairs that pass ``CLUSTER_SIMILARITY``
    (this dump's, ``pp_mh``, and the earlier dumps' among these documents)."""
    earlier_links = "SELECT NULL::VARCHAR AS a, NULL::VARCHAR AS b WHERE false"
    if earlier_pairs:
        earlier_links = f"""SELECT a, b FROM {earlier_pairs}
            WHERE (exact OR jaccard >= {CLUSTER_SIMILARITY!r})
              AND (a IN (SELECT docId FROM {rows}) OR b IN (SELECT docId FROM {rows}))"""
    con.execute(f"""CREATE OR REPLACE TEMP TABLE pp_links AS
        SELECT a, b FROM pp_mh WHERE exact OR jaccard >= {CLUSTER_SIMILARITY!r}
        UNION ALL {earlier_links}""")
    con.execute(f"""CREATE OR REPLACE TEMP TABLE pp_nodes AS
        SELECT docId, (row_number() OVER (ORDER BY docId) - 1)::BIGINT AS node FROM (
            SELECT docId FROM {rows} UNION SELECT a FROM pp_links UNION SELECT b FROM pp_links)""")
    n = con.execute("SELECT count(*) FROM pp_nodes").fetchone()[0]
    e = con.execute("""SELECT na.node AS a, nb.node AS b FROM pp_links l
                       JOIN pp_nodes na ON na.docId = l.a JOIN pp_nodes nb ON nb.docId = l.b""").fetchnumpy()
    labels = component_labels(n, e["a"], e["b"])
    con.register("pp_labels_in", pa.table({"node": np.arange(n, dtype=np.int64), "label": labels}))
    con.execute(f"""CREATE OR REPLACE TEMP TABLE pp_template AS
        SELECT r.text_hash FROM {rows} r JOIN pp_nodes USING (docId) JOIN pp_labels_in USING (node)
        GROUP BY r.text_hash HAVING count(DISTINCT label) >= {TEMPLATE_MIN_CLUSTERS}""")
    con.unregister("pp_labels_in")


def document_decisions_whole(ctx) -> pa.Table:
    """The document decisions of one dump in one task (``document_decisions`` over the
    whole dump)."""
    from warclake.tasks.corpus import stage
    from warclake.tasks.corpus.steps.kept_metrics import remeasured, touched_documents

    job = stage.doc_decisions_job(ctx)
    with ctx.connect() as con:
        docs = f"""SELECT docId, dump, lang, date, url_hash, n_chars, clean_hash, metrics
                   FROM {parquet_list(job.docsig_files)}"""
        if not job.whole_pages:
            touched = touched_documents(con, dict(zip(job.archives, job.para_files)), job.para_decision_files)
            again = remeasured({a: ctx.layout.documents(ctx.dump, a) for a in touched}, touched, job.models)
            if again.num_rows:
                con.register("remeasured", again)
                docs = f"""SELECT d.docId, d.dump, d.lang, d.date, d.url_hash, d.n_chars, d.clean_hash,
                                  coalesce(r.metrics, d.metrics) AS metrics
                           FROM ({docs}) d LEFT JOIN remeasured r USING (docId)"""
        pairs = f"SELECT a, b, jaccard, exact FROM {parquet_list(job.pair_files)}"
        para = f"SELECT a, b, para_jaccard FROM {parquet_list([job.para_pairs_file])}"
        return document_decisions(con, docs, pairs, job.cfg, job.run_id, job.cfg.fingerprint(), para, job.scores)


def _source(con, name: str, src) -> None:
    """``name`` as a temp table of ``src``: a query (read by DuckDB, within its memory
    limit) or a pyarrow Table."""
    if isinstance(src, str):
        con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {src}")
    else:
        con.register(f"{name}_arrow", src)
        con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM {name}_arrow")
        con.unregister(f"{name}_arrow")


def document_decisions(con, docs, pairs, cfg: DecisionConfig, run_id: str, fingerprint: str,
                       para_pairs=None, scores=None) -> pa.Table:
    """One row per document of ``docs`` (the current dump's docsigs rows); ``pairs`` are
    its verified candidate pairs, whose other side may be a document of an earlier dump,
    and ``para_pairs`` (optional) its pairs with their distinctive-paragraph Jaccard
    (``para_pairs.py``). Each is a query over the stored files or a pyarrow Table. A pair
    is a near-duplicate when either measure reaches the similarity; its value is the
    greater one. ``scores`` (optional): the documents' model scores
    (``score_rules.document_scores_sql``), judged by ``cfg.scores`` after the quality rules.
    In one connection over all of its input; the stage runs the same rules as tasks over
    partitions (``doc_decisions.py``), which must give these rows."""
    _source(con, "docs", docs)
    _source(con, "scores_in", NO_SCORES if scores is None else scores)
    _source(con, "pairs_in", pairs)
    if para_pairs is None:
        para_pairs = "SELECT ''::VARCHAR AS a, ''::VARCHAR AS b, 0.0::DOUBLE AS para_jaccard WHERE false"
    _source(con, "para_in", para_pairs)
    rules = quality_rules_table(cfg)
    con.register("quality_rules", rules)
    con.register("score_rules", score_rules_table(cfg.scores, rules.num_rows))
    con.execute(f"CREATE OR REPLACE TEMP TABLE qhits AS {QUALITY_HITS_SQL} UNION ALL {SCORE_HITS_SQL}")
    # edges that pass the threshold; nodes numbered in docId order, so the smallest
    # number of a component is its smallest docId
    con.execute(f"""CREATE OR REPLACE TEMP TABLE edges AS
        SELECT a, b, max(jaccard) AS jaccard, bool_or(exact) AS exact FROM (
            SELECT a, b, jaccard, exact FROM pairs_in WHERE exact OR jaccard >= {cfg.similarity!r}
            UNION ALL
            SELECT a, b, para_jaccard, false FROM para_in WHERE para_jaccard >= {cfg.similarity!r})
        GROUP BY a, b""")
    con.execute("""CREATE OR REPLACE TEMP TABLE nodes AS
        SELECT docId, (row_number() OVER (ORDER BY docId) - 1)::BIGINT AS node,
               docId IN (SELECT docId FROM docs) AS is_cur
        FROM (SELECT docId FROM docs UNION SELECT a FROM edges UNION SELECT b FROM edges)""")
    n = con.execute("SELECT count(*) FROM nodes").fetchone()[0]
    e = con.execute("""SELECT na.node AS a, nb.node AS b FROM edges
                       JOIN nodes na ON na.docId = edges.a JOIN nodes nb ON nb.docId = edges.b""").fetchnumpy()
    labels = component_labels(n, e["a"], e["b"])
    con.register("labels_in", pa.table({"node": np.arange(n, dtype=np.int64), "label": labels}))
    con.execute("""CREATE OR REPLACE TEMP TABLE comp AS
        SELECT n.docId, n.is_cur, c.docId AS cluster_id,
               count(*) OVER (PARTITION BY l.label) AS cluster_size,
               min(CASE WHEN NOT n.is_cur THEN n.docId END) OVER (PARTITION BY l.label) AS earlier
        FROM nodes n JOIN labels_in l USING (node) JOIN nodes c ON c.node = l.label""")
    drop_all = "true" if cfg.drop_all_copies else "false"
    out = query_table(con, f"""
        WITH q AS (
            SELECT docId, list({{'rule': rule, 'value': value, 'threshold': threshold}} ORDER BY ord) AS rules,
                   count(*) AS n_fails
            FROM qhits GROUP BY docId
        ), best_edge AS (  -- the doc's strongest link: its measured similarity
            SELECT docId, max(jaccard) AS jaccard, bool_or(exact_earlier) AS exact_earlier FROM (
                SELECT a AS docId, jaccard, exact AND b NOT IN (SELECT docId FROM docs) AS exact_earlier FROM edges
                UNION ALL
                SELECT b, jaccard, exact AND a NOT IN (SELECT docId FROM docs) FROM edges)
            GROUP BY docId
        ), ranked AS (
            SELECT d.docId, d.dump, d.lang, d.clean_hash, c.cluster_id, c.cluster_size, c.earlier,
                   coalesce(q.rules, []) AS qrules, coalesce(q.n_fails, 0) AS n_fails,
                   row_number() OVER (PARTITION BY c.cluster_id
                       ORDER BY coalesce(q.n_fails, 0), d.n_chars DESC, d.date NULLS LAST,
                                d.url_hash, d.docId) AS rnk
            FROM docs d JOIN comp c USING (docId) LEFT JOIN q USING (docId)
        ), chosen AS (
            SELECT r.*, first_value(docId) OVER w AS first_doc, first_value(clean_hash) OVER w AS first_hash
            FROM ranked r WINDOW w AS (PARTITION BY cluster_id ORDER BY rnk)
        ), dup AS (
            SELECT c.*, b.jaccard, b.exact_earlier,
                   c.cluster_size > 1 AND c.earlier IS NULL AND c.rnk = 1 AND NOT {drop_all} AS survivor,
                   CASE WHEN c.cluster_size = 1 THEN NULL
                        WHEN c.earlier IS NOT NULL THEN
                             CASE WHEN b.exact_earlier THEN 'exact_duplicate_earlier_dump'
                                  ELSE 'near_duplicate_earlier_dump' END
                        WHEN {drop_all} THEN 'duplicate_all_copies'
                        WHEN c.rnk = 1 THEN NULL
                        WHEN c.clean_hash = c.first_hash THEN 'exact_duplicate'
                        ELSE 'near_duplicate' END AS dup_rule
            FROM chosen c LEFT JOIN best_edge b USING (docId)
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
                          'threshold': CASE WHEN dup_rule LIKE 'exact%' THEN 1.0 ELSE {cfg.similarity!r} END}}] END) AS rules
            FROM dup) LEFT JOIN scores_in USING (docId)
        ORDER BY docId""", [run_id, fingerprint])
    for t in ("labels_in", "quality_rules", "score_rules"):
        con.unregister(t)
    for t in ("docs", "pairs_in", "para_in", "qhits", "edges", "nodes", "comp", "scores_in"):
        con.execute(f"DROP TABLE IF EXISTS {t}")
    return out.cast(DOC_DECISIONS)

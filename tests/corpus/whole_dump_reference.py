"""The global steps that were one task per dump, kept whole as the reference the
partitioned steps must equal (tests/corpus/test_corpus_partitioned.py): the
distinctive-paragraph pairs and the near-duplicate paragraph groups of one dump, each
computed in one DuckDB connection and one numpy process over the whole dump."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from warclake.tasks.corpus.steps.components import component_labels
from warclake.tasks.corpus.steps.para_groups import GROUPS, MIN_CHARS, near_pairs
from warclake.tasks.corpus.steps.para_pairs import CLUSTER_SIMILARITY, MIN_CANDIDATE_CHARS, PARA_PAIRS, TEMPLATE_MIN_CLUSTERS
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
    """The document decisions of one dump in one task (``decide.document_decisions`` over
    the whole dump), as the stage computed them before they were partitioned."""
    from warclake.tasks.corpus import stage
    from warclake.tasks.corpus.steps.decide import document_decisions
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

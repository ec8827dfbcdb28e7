"""The decision step: rules applied to the stored signatures, statistics and pairs.

Cheap by design: it reads what the per-archive and global steps stored and never
recomputes a signature, so changing a threshold redoes only this step. Its outputs carry
the run id (a digest of everything the decisions depend on, so equal inputs and settings
give byte-identical files) and the settings' fingerprint.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from warclake.tasks.corpus.settings import DecisionConfig, fingerprint_of
from warclake.tasks.corpus.steps.components import component_labels
from warclake.tasks.corpus.steps.score_rules import (
    NO_SCORES,
    SCORE_COLUMNS,
    SCORE_HITS_SQL,
    score_rules_table,
)
from warclake.tasks.corpus.storage.engine import parquet_list, part_expr, query_table
from warclake.tasks.lake.catalog import sql_literal

DOC_STEP = "doc_decisions"
PARA_STEP = "para_decisions"
# With no boilerplate label, a paragraph under a page-chrome path (``quality.is_chrome_path``,
# the one definition: whole words, so ``.footnote`` and ``.shareholder`` are not chrome)
# counts as not main content: the lower repeat thresholds apply.
CHROME_SQL = "is_chrome_path"

RULE_STRUCT = pa.struct([("rule", pa.string()), ("value", pa.float64()), ("threshold", pa.float64())])
DOC_DECISIONS = pa.schema([
    ("docId", pa.string()), ("dump", pa.string()), ("lang", pa.string()), ("kept", pa.bool_()),
    ("rule", pa.string()), ("value", pa.float64()), ("threshold", pa.float64()),
    ("rules", pa.list_(RULE_STRUCT)), ("cluster_id", pa.string()), ("cluster_size", pa.int64()),
    ("survivor", pa.bool_()), ("duplicate_of", pa.string()),
    ("run_id", pa.string()), ("config_fingerprint", pa.string()),
    *SCORE_COLUMNS,   # the models' scores and fingerprints (score_rules.py); NULL without a model
])
PARA_DECISIONS = pa.schema([
    ("docId", pa.string()), ("idx", pa.int32()), ("dump", pa.string()), ("lang", pa.string()),
    ("rule", pa.string()), ("value", pa.float64()), ("threshold", pa.float64()),
    ("text_hash", pa.int64()), ("group_hash", pa.int64()), ("run_id", pa.string()),
    ("config_fingerprint", pa.string()),
])


def quality_rules_table(cfg: DecisionConfig) -> pa.Table:
    """The quality rules as rows (ord, rule, metric, op, threshold, langs), with the
    user's threshold overrides applied."""
    from warclake.tasks.corpus.signals.quality import QUALITY_RULES

    for r in QUALITY_RULES:
        if r.op not in ("<", ">"):
            raise ValueError(f"quality rule {r.name}: unknown operator {r.op!r}")
    return pa.table({
        "ord": pa.array(range(len(QUALITY_RULES)), pa.int32()),
        "rule": [r.name for r in QUALITY_RULES], "metric": [r.metric for r in QUALITY_RULES],
        "op": [r.op for r in QUALITY_RULES],
        "threshold": pa.array([float(cfg.quality.get(r.name, r.threshold)) for r in QUALITY_RULES], pa.float64()),
        "langs": pa.array([sorted(r.langs) if r.langs is not None else None for r in QUALITY_RULES],
                          pa.list_(pa.string())),
    })


# Every rule that fires on a document of ``docs``: the metrics map is unnested once and
# joined to the rules. NaN means "does not apply" (a word-length rule on Chinese text);
# DuckDB orders NaN above every number, so it is excluded explicitly.
QUALITY_HITS_SQL = """
    SELECT m.docId, r.rule, m.value, r.threshold, r.ord
    FROM (SELECT docId, lang, unnest(map_keys(metrics)) AS metric, unnest(map_values(metrics)) AS value
          FROM docs) m
    JOIN quality_rules r USING (metric)
    WHERE m.value IS NOT NULL AND NOT isnan(m.value)
      AND CASE r.op WHEN '<' THEN m.value < r.threshold ELSE m.value > r.threshold END
      AND (r.langs IS NULL OR list_contains(r.langs, m.lang))"""


def check_quality_overrides(cfg: DecisionConfig) -> None:
    """ValueError naming the first unknown rule or out-of-range threshold of ``cfg.quality``."""
    from warclake.tasks.corpus.signals.quality import validate_thresholds

    validate_thresholds(cfg.quality)


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
    In one connection over all of its input (the measuring tools' sets); the stage runs the
    same rules as tasks over partitions (``doc_decisions.py``), which give these rows."""
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


def paragraph_decisions(con, para_files: list[str], host_files: list[str], part: int, parts: int,
                        cfg: DecisionConfig, run_id: str, fingerprint: str, groups_file: str | None = None,
                        group_hosts_file: str | None = None) -> pa.Table:
    """Dropped paragraphs of the current dump (``para_files``) in one partition, judged by
    the statistics of this and every earlier dump (``host_files``, the same partition), or,
    for a text in a near-duplicate group (``groups_file``) and not good (below), by its
    group's (``group_hosts_file``): a line that differs from page to page by a date or a
    counter counts as one text. A good paragraph is judged by its own text only: a group is
    a chain of near pairs and can join unrelated texts, which must not cost main content.

    - ``repeated_across_sites``: the text (or group) is on at least ``notice_min_domains``
      registered domains: a notice, a licence, a widget.
    - ``site_template``: the text (or group) is on at least ``template_min_pages`` URLs of
      the paragraph's own host: the site's template.
    A paragraph labelled good (or, without labels, not under a page-chrome path) needs
    the higher ``*_good`` counts; text seen only two or three times is kept (a quotation).
    - ``repeated_in_document``: a kept paragraph (labelled good, or in a document without
      labels) whose text an earlier kept paragraph of its document holds: the corpus emits
      each text once per document (a page's mobile and desktop copies, a forum's quoted
      posts, a title repeated as a heading). ``value``: the copies in the document. Not
      with ``keep_repeats_in_document``.
    """
    if not para_files or not host_files:
        return PARA_DECISIONS.empty_table()
    register_chrome_paths(con)
    good = f"(p.label = 'good' OR (p.label IS NULL AND NOT {CHROME_SQL}(coalesce(p.path, ''))))"
    if groups_file and group_hosts_file:   # written by the groups step, even when empty
        groups = f"""SELECT text_hash, group_hash FROM read_parquet({sql_literal(groups_file)})
                     WHERE text_hash IN (SELECT text_hash FROM mine)"""
        group_rows = f"""UNION ALL
            SELECT 1 AS kind, group_hash AS key, host, domain, n_urls FROM read_parquet({sql_literal(group_hosts_file)})
            WHERE group_hash IN (SELECT key FROM keyed WHERE kind = 1)"""
    else:
        groups = "SELECT NULL::BIGINT AS text_hash, NULL::BIGINT AS group_hash WHERE false"
        group_rows = ""
    # A key is (kind, hash): kind 0 a text, kind 1 a group (a group's hash is one of its
    # texts', so the kind keeps their counts apart).
    out = query_table(con, f"""
        WITH mine AS (
            SELECT docId, idx, dump, lang, text_hash, path, label, host FROM {parquet_list(para_files)}
            WHERE {part_expr('text_hash', parts)} = {part} AND n_chars >= {int(cfg.min_paragraph_chars)}
              AND n_chars > 0
        ), grp AS ({groups}
        ), keyed AS (
            SELECT p.*, {good} AS good,
                   CASE WHEN g.group_hash IS NOT NULL AND NOT {good} THEN 1 ELSE 0 END AS kind,
                   CASE WHEN g.group_hash IS NOT NULL AND NOT {good} THEN g.group_hash ELSE p.text_hash END AS key
            FROM mine p LEFT JOIN grp g USING (text_hash)
        ), hosts AS (   -- per key and host, one row per dump
            SELECT 0 AS kind, text_hash AS key, host, domain, n_urls FROM {parquet_list(host_files)}
            WHERE text_hash IN (SELECT key FROM keyed WHERE kind = 0)
            {group_rows}
        ), per_key AS (
            SELECT kind, key, count(DISTINCT domain) AS n_domains FROM hosts GROUP BY kind, key
        ), per_host AS (
            SELECT kind, key, host, max(n_urls) AS site_pages FROM hosts GROUP BY kind, key, host
        ), judged AS (
            SELECT p.docId, p.idx, p.dump, p.lang, p.text_hash,
                   CASE WHEN p.kind = 1 THEN p.key END AS group_hash, t.n_domains, h.site_pages,
                   CASE WHEN p.good THEN {int(cfg.notice_min_domains_good)} ELSE {int(cfg.notice_min_domains)} END AS t_dom,
                   CASE WHEN p.good THEN {int(cfg.template_min_pages_good)} ELSE {int(cfg.template_min_pages)} END AS t_site
            FROM keyed p
            JOIN per_key t ON t.kind = p.kind AND t.key = p.key
            LEFT JOIN per_host h ON h.kind = p.kind AND h.key = p.key AND h.host IS NOT DISTINCT FROM p.host
        ), repeated AS (
            SELECT docId, idx::INT AS idx, dump, lang,
                   CASE WHEN n_domains >= t_dom THEN 'repeated_across_sites' ELSE 'site_template' END AS rule,
                   (CASE WHEN n_domains >= t_dom THEN n_domains ELSE site_pages END)::DOUBLE AS value,
                   (CASE WHEN n_domains >= t_dom THEN t_dom ELSE t_site END)::DOUBLE AS threshold,
                   text_hash, group_hash
            FROM judged WHERE n_domains >= t_dom OR site_pages >= t_site
        ), in_document AS (   -- a kept text's later copies in its own document
            SELECT docId, idx::INT AS idx, dump, lang, 'repeated_in_document' AS rule, copies::DOUBLE AS value,
                   2.0::DOUBLE AS threshold, text_hash, NULL::BIGINT AS group_hash
            FROM (SELECT *, count(*) OVER (PARTITION BY docId, text_hash) AS copies,
                         row_number() OVER (PARTITION BY docId, text_hash ORDER BY idx) AS nth
                  FROM mine WHERE label = 'good' OR label IS NULL)
            WHERE nth > 1 AND NOT {'true' if cfg.keep_repeats_in_document else 'false'}
        )
        SELECT *, ? AS run_id, ? AS config_fingerprint FROM (
            SELECT * FROM repeated
            UNION ALL
            SELECT i.* FROM in_document i ANTI JOIN repeated USING (docId, idx))
        ORDER BY docId, idx""", [run_id, fingerprint])
    return out.cast(PARA_DECISIONS)


def chrome_paths(paths: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``quality.is_chrome_path`` of each path (a batch of DuckDB's: each distinct path asked once)."""
    import pyarrow.compute as pc

    from warclake.tasks.corpus.signals.quality import is_chrome_path

    enc = pc.dictionary_encode(paths)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks()
    answers = pa.array([is_chrome_path(p) for p in enc.dictionary.to_pylist()], pa.bool_())
    return pc.take(answers, enc.indices)


def register_chrome_paths(con) -> None:
    """``is_chrome_path(VARCHAR)`` on the connection (once)."""
    import duckdb

    try:
        con.create_function(CHROME_SQL, chrome_paths, ["VARCHAR"], "BOOLEAN", type="arrow")
    except duckdb.Error:
        pass   # already there


def repeated_in_document(text: str | None, labels: list[str] | None, min_chars: int = 1) -> frozenset[int]:
    """The positions (from 1) ``repeated_in_document`` drops in one lake text, as the
    paragraph decisions find them: kept paragraphs (labelled good; all without labels) of
    ``min_chars`` normalised characters or more whose normalised text a kept paragraph
    before them holds. The tools measure single pages with it."""
    from warclake.tasks.corpus.signals.normalise import normalise, split_paragraphs

    seen: set[str] = set()
    out = []
    for i, (_, body) in enumerate(split_paragraphs(text), 1):
        if labels is not None and (i > len(labels) or labels[i - 1] != "good"):
            continue
        t = normalise(body)
        if not t or len(t) < min_chars:
            continue
        if t in seen:
            out.append(i)
        seen.add(t)
    return frozenset(out)


def run_id_of(key: dict) -> str:
    return "run-" + fingerprint_of(key)

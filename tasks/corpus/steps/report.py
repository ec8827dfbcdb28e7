"""The corpus report page: removals by rule, language and dump, cluster sizes, the most
repeated paragraphs, and samples of removed and kept text per rule (markdown and HTML),
with charts (``report_charts.py``)."""
from __future__ import annotations

import html
import os

import polars as pl

from warclake.tasks.corpus.steps.export import corpus_connection
from warclake.tasks.corpus.steps.report_charts import chart_queries, write_charts
from warclake.tasks.corpus.storage.layout import write_bytes
from warclake.tasks.lake.catalog import is_remote
from warclake.tasks.reporting.pages import markdown_table

SAMPLE_CHARS = 240


def _q(con, sql: str) -> pl.DataFrame:
    return con.sql(sql).pl()


def corpus_tables(lake: str, dump: str | None = None, samples: int = 3,
                  charts: dict | None = None) -> dict[str, pl.DataFrame]:
    """The page's tables; ``charts`` (optional) is filled with what its charts draw."""
    con = corpus_connection(lake, dump)
    try:
        if charts is not None:
            charts.update(chart_queries(con))
        t = {}
        t["documents"] = _q(con, """
            SELECT dump, count(*) AS documents, count(*) FILTER (WHERE kept) AS kept,
                   round(100.0 * count(*) FILTER (WHERE kept) / count(*), 1) AS kept_pct
            FROM document_decisions GROUP BY dump ORDER BY dump""")
        t["removals"] = _q(con, "SELECT * FROM corpus_removals ORDER BY unit, removed DESC, rule, lang, dump")
        t["per_rule"] = _q(con, """
            SELECT rule, count(DISTINCT docId) AS fired,
                   count(DISTINCT docId) FILTER (WHERE is_first) AS removed,
                   count(DISTINCT docId) FILTER (WHERE alone) AS removed_by_it_alone
            FROM (SELECT docId, r.rule, r.rule = d.rule AS is_first, len(d.rules) = 1 AS alone
                  FROM (SELECT *, unnest(rules) AS r FROM document_decisions) d)
            GROUP BY rule ORDER BY removed DESC, fired DESC, rule""")
        t["rule_hits"] = _q(con, """
            SELECT rule, count(*) AS documents, round(median(value), 3) AS median_value,
                   any_value(threshold) AS threshold
            FROM document_rule_hits GROUP BY rule ORDER BY documents DESC, rule""")
        t["cluster_sizes"] = _q(con, """
            SELECT CASE WHEN cluster_size >= 10 THEN '10+' ELSE cluster_size::VARCHAR END AS cluster_size,
                   count(DISTINCT cluster_id) AS clusters, count(*) AS documents
            FROM document_decisions WHERE cluster_id IS NOT NULL GROUP BY 1 ORDER BY min(cluster_size)""")
        t["repeated_paragraphs"] = _q(con, f"""
            WITH top AS (SELECT * FROM paragraph_stats WHERE occurrences > 1
                         ORDER BY occurrences DESC, text_hash LIMIT 20)
            SELECT top.occurrences, top.hosts, top.domains, top.dumps, top.top_paths[1] AS path,
                   left(paragraph_plain(doc_paragraphs(d.text)[top.sample_idx]), {SAMPLE_CHARS}) AS text
            FROM top JOIN documents d ON d.docId = top.sample_doc
            ORDER BY top.occurrences DESC, top.text_hash""")
        t["removed_paragraphs"] = _q(con, f"""
            WITH one AS (SELECT DISTINCT ON (rule, text_hash) * FROM paragraph_decisions
                         ORDER BY rule, text_hash, docId, idx),
            s AS (SELECT *, row_number() OVER (PARTITION BY rule ORDER BY value DESC, text_hash) AS k FROM one)
            SELECT s.rule, s.value, s.lang, left(paragraph_plain(doc_paragraphs(d.text)[s.idx]), {SAMPLE_CHARS}) AS text
            FROM s JOIN documents d ON d.docId = s.docId WHERE k <= {samples} ORDER BY s.rule, k""")
        t["removed_documents"] = _q(con, f"""
            WITH s AS (SELECT *, row_number() OVER (PARTITION BY rule ORDER BY docId) AS k
                       FROM document_rule_hits)
            SELECT s.rule, round(s.value, 3) AS value, s.lang, d.url,
                   left(clean_text(d.text, d.paragraph_labels), {SAMPLE_CHARS}) AS text
            FROM s JOIN documents d ON d.docId = s.docId WHERE k <= {samples} ORDER BY s.rule, k""")
        t["kept_documents"] = _q(con, f"""
            SELECT lang, url, left(text, {SAMPLE_CHARS}) AS text FROM corpus_documents
            ORDER BY docId LIMIT {samples * 3}""")
        return t
    finally:
        con.close()


TITLES = {
    "documents": "Documents per dump",
    "removals": "Removals by rule, language and dump",
    "per_rule": "Per rule: documents it fired on, removed (the first rule that fired), removed by it alone",
    "rule_hits": "Every rule that fired on a document (a document may have several)",
    "cluster_sizes": "Duplicate clusters by size",
    "repeated_paragraphs": "Most repeated paragraphs",
    "removed_paragraphs": "Samples of removed paragraphs, per rule",
    "removed_documents": "Samples of removed documents, per rule",
    "kept_documents": "Samples of kept documents",
}


def render_markdown(tables: dict[str, pl.DataFrame], scope: str, images: list | None = None) -> str:
    out = [f"# Corpus report: {scope}", ""]
    for title, name in images or []:
        out += [f"![{title}]({name})", ""]
    for name, df in tables.items():
        out += [f"## {TITLES[name]}", "", markdown_table(df) if df.height else "(none)", ""]
    return "\n".join(out)


def render_html(tables: dict[str, pl.DataFrame], scope: str, images: list | None = None) -> str:
    e = html.escape
    parts = [f"<!doctype html><meta charset='utf-8'><title>Corpus report: {e(scope)}</title>",
             "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:2em}"
             "td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top;max-width:50em}</style>",
             f"<h1>Corpus report: {e(scope)}</h1>"]
    for title, name in images or []:
        parts.append(f"<h2>{e(title)}</h2><img src='{e(name)}' alt='{e(title)}'>")
    for name, df in tables.items():
        parts.append(f"<h2>{e(TITLES[name])}</h2>")
        if not df.height:
            parts.append("<p>(none)</p>")
            continue
        parts.append("<table><tr>" + "".join(f"<th>{e(c)}</th>" for c in df.columns) + "</tr>")
        for row in df.iter_rows():
            parts.append("<tr>" + "".join(f"<td>{e('' if v is None else str(v))}</td>" for v in row) + "</tr>")
        parts.append("</table>")
    return "\n".join(parts) + "\n"


def write_corpus_report(lake: str, out_dir: str | None = None, dump: str | None = None) -> tuple[str, str]:
    """Write corpus.md and corpus.html; returns their paths."""
    if out_dir is None:   # as the extraction's report: a remote lake's goes under ./reports
        base = "reports" if is_remote(lake) else os.path.join(lake, "reports")
        out_dir = os.path.join(base, "corpus", dump or "all-dumps")
    charts: dict = {}
    tables = corpus_tables(lake, dump, charts=charts)
    images = write_charts(charts, out_dir)
    scope = dump or "all dumps"
    md, page = os.path.join(out_dir, "corpus.md"), os.path.join(out_dir, "corpus.html")
    write_bytes(md, render_markdown(tables, scope, images).encode())
    write_bytes(page, render_html(tables, scope, images).encode())
    return md, page

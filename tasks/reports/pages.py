"""The report as pages: markdown (report.md, the tables printed by the CLI, the Prefect
artifact summary) and HTML from templates/report.html.j2, each report's chart and table."""
from __future__ import annotations

import functools
import os
from datetime import date, datetime

import jinja2
import polars as pl

from .queries import REPORTS, ReportResult


def _fmt(col: str, v) -> str:
    if v is None:
        return "—" if col != "month" else "(no date)"
    if col == "share":
        return f"{100 * v:.1f} %"
    if col == "ratio":
        return f"{100 * v:.4f} %"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (date, datetime)):
        return v.isoformat()
    return str(v)


def _rows(df: pl.DataFrame, limit: int | None = None) -> list[list[str]]:
    rows = df.head(limit).iter_rows() if limit else df.iter_rows()
    return [[_fmt(c, v) for c, v in zip(df.columns, r)] for r in rows]


def markdown_table(df: pl.DataFrame, limit: int | None = None) -> str:
    def cell(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in _rows(df, limit)]
    if limit and df.height > limit:
        lines.append(f"\n_{df.height - limit} more rows in the report folder._")
    return "\n".join(lines)


def _scope(dump: str | None) -> str:
    return f"dump {dump}" if dump else "all dumps"


def render_markdown(res: ReportResult, lake: str) -> str:
    out = [f"# warclake report — {_scope(res.dump)}", "",
           f"Lake: `{lake}`", ""]
    for r in REPORTS:
        if r.name not in res.tables:
            continue
        out += [f"## {r.title}", "", r.what, ""]
        if r.name in res.charts:
            out += [f"![{r.title}]({res.charts[r.name].name})", ""]
        out += [markdown_table(res.tables[r.name]), ""]
    return "\n".join(out)


@functools.cache
def _templates() -> jinja2.Environment:
    # Autoescape on: dump names, labels and URLs in the tables come from crawled data.
    return jinja2.Environment(loader=jinja2.PackageLoader("warclake.tasks.reports", "templates"),
                              autoescape=True, trim_blocks=True, lstrip_blocks=True,
                              undefined=jinja2.StrictUndefined)


def render_html(res: ReportResult, lake: str) -> str:
    sections = []
    for r in REPORTS:
        if r.name not in res.tables:
            continue
        df = res.tables[r.name]
        chart = res.charts.get(r.name)
        sections.append({
            "report": r, "chart": chart.name if chart else None, "columns": df.columns,
            # numbers right-aligned, text left
            "rows": [[(c, isinstance(v, (int, float))) for v, c in zip(raw, row)]
                     for raw, row in zip(df.iter_rows(), _rows(df))],
        })
    return _templates().get_template("report.html.j2").render(
        scope=_scope(res.dump), lake=lake, sections=sections)


def artifact_summary(tables: dict[str, pl.DataFrame], dump: str | None = None,
                     out_dir: str | os.PathLike | None = None,
                     max_rows: int = 25) -> tuple[str, list[dict]]:
    """The report as a markdown summary and one table row per dump (for Prefect artifacts).

    Rows: files, salvaged/failed inputs, records, documents, bytes in and out, the size
    ratio in percent and the leading encodings.
    """
    per_dump = tables["documents_per_dump"]
    ratio = {r["dump"]: r for r in tables["size_ratio"].iter_rows(named=True)}
    enc = tables["encoding_share"]
    rows = []
    for r in per_dump.iter_rows(named=True):
        top = enc.filter(pl.col("dump") == r["dump"]).head(3)
        rt = ratio.get(r["dump"], {})
        rows.append({
            "dump": r["dump"], "files": r["files"], "salvaged": r["salvaged"],
            "failed": r["failed"], "records": r["records"], "documents": r["documents"],
            "input_bytes": rt.get("input_bytes"), "output_bytes": rt.get("output_bytes"),
            "ratio_percent": None if rt.get("ratio") is None else round(100 * rt["ratio"], 4),
            "top_encodings": ", ".join(f"{c} {100 * s:.1f} %"
                                       for c, s in zip(top["charset"], top["share"])),
        })
    md = [f"# warclake report — {_scope(dump)}", ""]
    if out_dir is not None:
        md += [f"Charts and full tables: `{out_dir}`", ""]
    for r in REPORTS:
        if r.name in tables:
            md += [f"## {r.title}", "", markdown_table(tables[r.name], max_rows), ""]
    return "\n".join(md), rows

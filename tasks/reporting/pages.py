"""The report as pages: markdown (report.md, the tables printed by the CLI, the Prefect
artifact summary) and HTML from templates/report.html.j2, each report's chart and table."""
from __future__ import annotations

import base64
import functools
import os
from datetime import date, datetime
from pathlib import Path

import jinja2
import polars as pl

from warclake.tasks.reporting.queries import REPORTS, ReportResult


def _fmt(col: str, v) -> str:
    """A cell for people: 12,345; 14.9 %; 2024-05 (CSV files keep the raw values)."""
    if v is None:
        return "—" if col != "month" else "(no date)"
    if col in ("share", "ratio"):
        return f"{100 * v:.1f} %"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"
    if col == "month" and isinstance(v, (date, datetime)):
        return v.strftime("%Y-%m")
    if isinstance(v, (date, datetime)):
        return v.isoformat()
    return str(v)


def human_bytes(n: float | None) -> str:
    if n is None:
        return "—"
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return str(n)


def headline(tables: dict[str, pl.DataFrame]) -> list[tuple[str, str]]:
    """The run in one glance: what a reader looks for before any table."""
    per_dump, ratio = tables["documents_per_dump"], tables["size_ratio"]
    if per_dump.height == 0:
        return [("documents", "none yet")]
    files, salvaged, failed = (int(per_dump[c].sum()) for c in ("files", "salvaged", "failed"))
    in_b = int(ratio["input_bytes"].sum() or 0) if ratio.height else 0
    out_b = int(ratio["output_bytes"].sum() or 0) if ratio.height else 0
    return [
        ("dumps", f"{per_dump.height:,}"),
        ("archives", f"{files:,} ({files - salvaged - failed:,} complete, {salvaged:,} salvaged, "
                     f"{failed:,} failed)"),
        ("records", f"{int(per_dump['records'].sum() or 0):,}"),
        ("documents", f"{int(per_dump['documents'].sum() or 0):,}"),
        ("input → output", f"{human_bytes(in_b)} → {human_bytes(out_b)}"
                           + (f" ({100 * out_b / in_b:.1f} %)" if in_b else "")),
    ]


def _headline_markdown(tables: dict[str, pl.DataFrame]) -> list[str]:
    return [" · ".join(f"**{k}** {v}" for k, v in headline(tables)), ""]


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
           f"Lake: `{lake}`", "", *_headline_markdown(res.tables)]
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
    return jinja2.Environment(loader=jinja2.PackageLoader("warclake.tasks.reporting", "templates"),
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
        scope=_scope(res.dump), lake=lake, sections=sections, headline=headline(res.tables))


def artifact_summary(tables: dict[str, pl.DataFrame], dump: str | None = None,
                     out_dir: str | os.PathLike | None = None,
                     max_rows: int = 25, charts: dict | None = None) -> tuple[str, list[dict]]:
    """The report as a markdown summary and one table row per dump (for Prefect artifacts).

    ``charts`` (report name -> PNG path) are embedded in the markdown as data URIs: the
    Prefect UI shows an artifact's markdown, not files on the server that made it.

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
            "ratio_percent": None if rt.get("ratio") is None else round(100 * rt["ratio"], 1),
            "top_encodings": ", ".join(f"{c} {100 * s:.1f} %"
                                       for c, s in zip(top["charset"], top["share"])),
        })
    md = [f"# warclake report — {_scope(dump)}", "", *_headline_markdown(tables)]
    if out_dir is not None:
        md += [f"Charts and full tables: `{out_dir}`", ""]
    for report in REPORTS:
        if report.name in tables:
            md += [f"## {report.title}", ""]
            if charts and report.name in charts:
                png = base64.b64encode(Path(charts[report.name]).read_bytes()).decode("ascii")
                md += [f"![{report.title}](data:image/png;base64,{png})", ""]
            md += [markdown_table(tables[report.name], max_rows), ""]
    return "\n".join(md), rows

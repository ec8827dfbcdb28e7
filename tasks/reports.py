"""Reports over the lake: the sql/report_*.sql queries, PNG charts, and one HTML and one
markdown page that show tables and charts together.

The queries run on an in-memory DuckDB connection with the views of sql/views.sql, so a
report never waits on (or locks) the catalogue file, and a one-dump report reads only
that dump's folders.
"""
from __future__ import annotations

import html
import os
import time
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import duckdb
import polars as pl

from warclake.tasks.catalog import dump_folder, install_views, is_remote, lake_root, read_sql


@dataclass(frozen=True)
class Report:
    name: str           # sql/report_<name>.sql, <name>.png, <name>.csv
    title: str
    what: str           # one line under the title
    category: str = ""  # share reports: the column that is shared out
    value: str = ""     # share reports: the count behind the share


REPORTS: tuple[Report, ...] = (
    Report("documents_per_dump", "Documents per dump",
           "Documents extracted from the finished inputs of each dump."),
    Report("size_ratio", "Output/input size ratio",
           "Documents parquet (zstd) bytes over WARC.gz bytes; failed inputs left out."),
    Report("encoding_share", "Encoding share", "Documents by the encoding they were decoded with.",
           category="charset", value="documents"),
    Report("language_share", "Language share",
           "Records whose language was looked at (kept or rejected for language), by language.",
           category="lang", value="records"),
    Report("outcome_share", "Outcome share", "Every WARC record: kept, or why it was skipped.",
           category="outcome", value="records"),
    Report("charset_source_share", "Charset source share",
           "Where each document's encoding came from.",
           category="charset_source", value="documents"),
    Report("documents_per_month", "Documents per month",
           "Documents by the month of their date (UTC)."),
)
BY_NAME = {r.name: r for r in REPORTS}


@dataclass
class ReportResult:
    out_dir: Path
    dump: str | None
    tables: dict[str, pl.DataFrame]
    charts: dict[str, Path] = field(default_factory=dict)
    markdown_path: Path | None = None
    html_path: Path | None = None
    seconds: float = 0.0


# ---------------------------------------------------------------------------- queries

def report_connection(lake: str | os.PathLike, dump: str | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with the lake's views (over one dump, or all)."""
    con = duckdb.connect()
    # Every report reads the same parquet footers: parse them once.
    con.execute("SET parquet_metadata_cache = true")
    install_views(con, lake, dump)
    # One snapshot of the finished inputs for all reports: an input finishing while the
    # reports run cannot make one table disagree with another, and the JSON summaries
    # are parsed once instead of once per query.
    con.execute("CREATE TABLE files_snapshot AS SELECT * FROM files")
    con.execute("CREATE OR REPLACE VIEW files AS SELECT * FROM files_snapshot")
    return con


def run_reports(lake: str | os.PathLike, dump: str | None = None,
                names: list[str] | None = None) -> dict[str, pl.DataFrame]:
    """Run the report queries; returns one polars table per report name."""
    con = report_connection(lake, dump)
    try:
        return {r.name: con.sql(read_sql(f"report_{r.name}.sql")).pl()
                for r in REPORTS if names is None or r.name in names}
    finally:
        con.close()


# ---------------------------------------------------------------------------- charts

MAX_CATEGORIES = 8   # the rest of a share chart is lumped into "other"
DPI = 100


def _figure(width: float = 8.0, height: float = 4.5):
    # The object API with an Agg canvas: no pyplot state, no GUI backend, safe in threads.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot(1, 1, 1)


def _no_data(ax, msg: str = "no data") -> None:
    ax.text(0.5, 0.5, msg, ha="center", va="center", transform=ax.transAxes, fontsize=14,
            color="grey")
    ax.set_xticks([])
    ax.set_yticks([])


def _width_for(n: int) -> float:
    return min(40.0, max(8.0, 2.0 + 0.4 * n))


def _dump_bars(ax, dumps: list[str], values: list[float], fmt: str, ylabel: str) -> None:
    bars = ax.bar(range(len(dumps)), values, color="#4878a8")
    ax.set_xticks(range(len(dumps)), dumps, rotation=45 if len(dumps) > 3 else 0,
                  ha="right" if len(dumps) > 3 else "center", fontsize=8)
    ax.set_ylabel(ylabel)
    if len(dumps) <= 30:
        ax.bar_label(bars, labels=[fmt.format(v) for v in values], fontsize=8, padding=2)
    ax.margins(y=0.15)
    ax.grid(axis="y", alpha=0.3)


def _chart_documents_per_dump(df: pl.DataFrame, ax, fig) -> None:
    if df.height == 0:
        return _no_data(ax)
    fig.set_figwidth(_width_for(df.height))
    _dump_bars(ax, df["dump"].to_list(), df["documents"].to_list(), "{:,}", "documents")


def _chart_size_ratio(df: pl.DataFrame, ax, fig) -> None:
    if df.height == 0:
        return _no_data(ax)
    fig.set_figwidth(_width_for(df.height))
    pct = [0.0 if v is None else 100.0 * v for v in df["ratio"].to_list()]
    _dump_bars(ax, df["dump"].to_list(), pct, "{:.3g} %", "output / input bytes (%)")


def _chart_share(report: Report, df: pl.DataFrame, ax, fig) -> None:
    if df.height == 0:
        return _no_data(ax)
    cat, val = report.category, report.value
    totals = df.group_by(cat).agg(pl.col(val).sum()).sort([val, cat], descending=[True, False])
    top = totals[cat].to_list()[:MAX_CATEGORIES]
    lumped = df.with_columns(
        pl.when(pl.col(cat).is_in(top)).then(pl.col(cat)).otherwise(pl.lit("other")).alias(cat))
    lumped = lumped.group_by(["dump", cat]).agg(pl.col(val).sum())
    order = top + (["other"] if lumped[cat].eq("other").any() else [])
    dumps = sorted(lumped["dump"].unique().to_list())
    import matplotlib

    colors = matplotlib.colormaps["tab10" if len(order) <= 10 else "tab20"].colors
    if len(dumps) == 1:
        # One dump: one bar per category reads better than a single stacked bar.
        total = lumped[val].sum()
        counts = {r[cat]: r[val] for r in lumped.iter_rows(named=True)}
        shares = [100.0 * counts.get(c, 0) / total for c in order]
        y = list(range(len(order)))[::-1]
        bars = ax.barh(y, shares, color=[colors[i % len(colors)] for i in range(len(order))])
        ax.set_yticks(y, order)
        ax.bar_label(bars, labels=[f"{s:.1f} % ({counts.get(c, 0):,})"
                                   for s, c in zip(shares, order)], fontsize=8, padding=2)
        ax.set_xlabel(f"share of {val} (%)")
        ax.set_xlim(0, max(shares) * 1.3 if shares else 1)
        ax.set_title(f"{report.title} — {dumps[0]}")
        return
    fig.set_figwidth(_width_for(len(dumps)) + 2)
    pivot = {(r["dump"], r[cat]): r[val] for r in lumped.iter_rows(named=True)}
    dump_totals = {d: sum(pivot.get((d, c), 0) for c in order) or 1 for d in dumps}
    bottom = [0.0] * len(dumps)
    for i, c in enumerate(order):
        part = [100.0 * pivot.get((d, c), 0) / dump_totals[d] for d in dumps]
        ax.bar(range(len(dumps)), part, bottom=bottom, label=c, color=colors[i % len(colors)])
        bottom = [b + p for b, p in zip(bottom, part)]
    ax.set_xticks(range(len(dumps)), dumps, rotation=45 if len(dumps) > 3 else 0,
                  ha="right" if len(dumps) > 3 else "center", fontsize=8)
    ax.set_ylabel(f"share of {val} (%)")
    ax.set_ylim(0, 100)
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)


def _chart_documents_per_month(df: pl.DataFrame, ax, fig) -> None:
    dated = df.filter(pl.col("month").is_not_null())
    undated = int(df.filter(pl.col("month").is_null())["documents"].sum() or 0)
    if dated.height == 0:
        return _no_data(ax, f"no dated documents ({undated:,} without a date)")
    import matplotlib
    from matplotlib.ticker import MaxNLocator

    if dated["dump"].n_unique() > MAX_CATEGORIES:
        # Too many lines to tell apart: show the sum over the dumps instead.
        dated = dated.with_columns(pl.lit("all dumps").alias("dump"))
    step, unit = "1mo", "month"
    if (dated["month"].max() - dated["month"].min()).days > 5 * 366:
        # Last-Modified dates reach back years: monthly points would be mostly zeros.
        dated = dated.with_columns(pl.col("month").dt.truncate("1y"))
        step, unit = "1y", "year"
    dated = dated.group_by(["dump", "month"]).agg(pl.col("documents").sum())
    months = pl.date_range(dated["month"].min(), dated["month"].max(), step, eager=True).to_list()
    series = sorted(dated["dump"].unique().to_list())
    pivot = {(r["dump"], r["month"]): r["documents"] for r in dated.iter_rows(named=True)}
    colors = matplotlib.colormaps["tab10"].colors
    # One line per dump, every month of the range (0 where none): cheap to draw for long
    # date ranges, and dumps stay comparable.
    for i, s in enumerate(series):
        ax.plot(months, [pivot.get((s, m), 0) for m in months], label=s,
                color=colors[i % len(colors)], marker="." if len(months) <= 60 else None,
                linewidth=1.2)
    ax.set_title(f"Documents per {unit} of their date")
    ax.set_ylabel(f"documents per {unit}")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(axis="y", alpha=0.3)
    if len(series) > 1:
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)
        fig.set_figwidth(10)
    ax.set_xlabel(f"{unit} of the document's date"
                  + (f" ({undated:,} documents without a date)" if undated else ""))
    fig.autofmt_xdate()


def write_chart(report: Report, df: pl.DataFrame, path: Path) -> Path:
    fig, ax = _figure()
    if report.category:
        _chart_share(report, df, ax, fig)
    else:
        {"documents_per_dump": _chart_documents_per_dump,
         "size_ratio": _chart_size_ratio,
         "documents_per_month": _chart_documents_per_month}[report.name](df, ax, fig)
    if not ax.get_title():
        ax.set_title(report.title)
    fig.tight_layout()
    fig.savefig(path, format="png")
    return path


# ---------------------------------------------------------------------------- pages

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


def render_html(res: ReportResult, lake: str) -> str:
    e = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>warclake report — {e(_scope(res.dump))}</title>",
        "<style>body{font-family:sans-serif;margin:2em;max-width:70em}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
        "padding:2px 8px;text-align:left}th{background:#eee}td.n{text-align:right}"
        "img{max-width:100%;border:1px solid #eee}</style></head><body>",
        f"<h1>warclake report — {e(_scope(res.dump))}</h1>",
        f"<p>Lake: <code>{e(lake)}</code></p>"]
    for r in REPORTS:
        if r.name not in res.tables:
            continue
        df = res.tables[r.name]
        parts += [f"<h2 id='{r.name}'>{e(r.title)}</h2>", f"<p>{e(r.what)}</p>"]
        if r.name in res.charts:
            parts.append(f"<img src='{e(res.charts[r.name].name)}' alt='{e(r.title)}'>")
        parts.append("<table><tr>" + "".join(f"<th>{e(c)}</th>" for c in df.columns) + "</tr>")
        for raw, row in zip(df.iter_rows(), _rows(df)):
            # numbers right-aligned, text left
            parts.append("<tr>" + "".join(
                f"<td class='n'>{e(c)}</td>" if isinstance(v, (int, float)) else f"<td>{e(c)}</td>"
                for v, c in zip(raw, row)) + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


# ---------------------------------------------------------------------------- entry points

def default_out_dir(lake: str | os.PathLike, dump: str | None = None) -> Path:
    """``<lake>/reports/<dump>``; for a remote lake ``./reports/<dump>`` (charts are
    local files, and the lake may not be writable as a folder)."""
    base = Path("reports") if is_remote(lake) else Path(lake_root(lake)) / "reports"
    return base / (dump or "all-dumps")


def write_report(lake: str | os.PathLike, out_dir: str | os.PathLike | None = None,
                 dump: str | None = None, charts: bool = True) -> ReportResult:
    """Run every report and write ``<name>.csv``, ``<name>.png``, ``report.md`` and
    ``report.html`` into ``out_dir`` (default ``<lake>/reports/<dump or all-dumps>``)."""
    t0 = time.perf_counter()
    dump_folder(dump)  # validates the name before anything is written
    out = Path(out_dir) if out_dir is not None else default_out_dir(lake, dump)
    out.mkdir(parents=True, exist_ok=True)
    res = ReportResult(out_dir=out, dump=dump, tables=run_reports(lake, dump))
    for r in REPORTS:
        df = res.tables[r.name]
        df.write_csv(out / f"{r.name}.csv")
        if charts:
            res.charts[r.name] = write_chart(r, df, out / f"{r.name}.png")
    root = lake_root(lake)
    # Pages go in last, each under a temporary name, so a reader never sees a half page.
    for name, text in (("report.md", render_markdown(res, root)),
                       ("report.html", render_html(res, root))):
        tmp = out / f".{name}.tmp"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out / name)
    res.markdown_path, res.html_path = out / "report.md", out / "report.html"
    res.seconds = time.perf_counter() - t0
    return res


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

"""A report folder: every report's table as CSV and chart as PNG, and the two pages."""
from __future__ import annotations

import os
import time
from pathlib import Path

from warclake.tasks.catalog import dump_folder, is_remote, lake_root

from .charts import write_chart
from .pages import render_html, render_markdown
from .queries import REPORTS, ReportResult, run_reports


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
        chart = out / f"{r.name}.png"
        if charts and write_chart(r, df, chart) is not None:
            res.charts[r.name] = chart
        elif chart.exists():  # left by an earlier report of this folder
            chart.unlink()
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

"""A report folder: every report's table as CSV and chart as PNG, and the two pages.

Every file is written under a temporary name tagged with its writer (``owners``) and
renamed into place, so a reader never sees half a file and two reports writing one folder
at once never write into one temporary (the last rename wins, with a whole file). What a
killed report left is removed by the next report into that folder.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable

from warclake.tasks.lake.catalog import dump_folder, is_remote, lake_root
from warclake.tasks.lake.owners import remove_dead_tmp, tmp_name
from warclake.tasks.reporting.charts import write_chart
from warclake.tasks.reporting.pages import render_html, render_markdown
from warclake.tasks.reporting.queries import REPORTS, ReportResult, run_reports


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
    remove_dead_tmp(str(out), report_files())  # a killed report's leftovers
    res = ReportResult(out_dir=out, dump=dump, tables=run_reports(lake, dump))
    for r in REPORTS:
        df = res.tables[r.name]
        _publish(out / f"{r.name}.csv", df.write_csv)
        chart = out / f"{r.name}.png"
        if charts and _publish(chart, lambda tmp: write_chart(r, df, tmp)):
            res.charts[r.name] = chart
        else:  # left by an earlier report of this folder
            chart.unlink(missing_ok=True)
    root = lake_root(lake)
    # Pages go in last, so a page never links a file not yet there.
    _publish(out / "report.md", lambda tmp: tmp.write_text(render_markdown(res, root), encoding="utf-8"))
    _publish(out / "report.html", lambda tmp: tmp.write_text(render_html(res, root), encoding="utf-8"))
    res.markdown_path, res.html_path = out / "report.md", out / "report.html"
    res.seconds = time.perf_counter() - t0
    return res


def report_files() -> list[str]:
    """The names of the files a report writes into its folder."""
    return ([f"{r.name}.{ext}" for r in REPORTS for ext in ("csv", "png")]
            + ["report.md", "report.html"])


def _publish(path: Path, write: Callable[[Path], object]) -> bool:
    """``write`` into a temporary of this process, then rename it to ``path``; False (and
    nothing changed) when ``write`` wrote no file. A failed write removes its temporary."""
    tmp = path.with_name(tmp_name(path.name))
    try:
        write(tmp)
        if not tmp.exists():
            return False
        os.replace(tmp, path)
        return True
    finally:
        tmp.unlink(missing_ok=True)

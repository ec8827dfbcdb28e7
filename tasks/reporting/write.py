"""A report folder: every report's table as CSV and chart as PNG, the two pages, and
``report.json``, which says what the report was made from.

Every file is written under a temporary name tagged with its writer (``owners``) and
renamed into place, so a reader never sees half a file and two reports writing one folder
at once never write into one temporary (the last rename wins, with a whole file). What a
killed report left is removed by the next report into that folder. ``report.json`` is
removed before the first file and written after the last: a folder whose report.json
names the rollups' current version holds that report whole, and a report asked for only if
something changed (``only_if_changed``, the flow's report step) is then not written again.
A remote lake's rollup is made anew from every archive's files for each report, so a run
that found nothing new (``nothing_new``) leaves a whole report there as it stands.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable

from warclake.tasks.lake.catalog import dump_folder, is_remote, lake_root
from warclake.tasks.lake.owners import remove_dead_tmp, tmp_name
from warclake.tasks.reporting.charts import write_chart
from warclake.tasks.reporting.pages import render_html, render_markdown
from warclake.tasks.reporting.queries import REPORTS, ReportResult, query_reports, report_version, rollups

MARKER = "report.json"


def default_out_dir(lake: str | os.PathLike, dump: str | None = None) -> Path:
    """``<lake>/reports/<dump>``; for a remote lake ``./reports/<dump>`` (charts are
    local files, and the lake may not be writable as a folder)."""
    base = Path("reports") if is_remote(lake) else Path(lake_root(lake)) / "reports"
    return base / (dump or "all-dumps")


def write_report(lake: str | os.PathLike, out_dir: str | os.PathLike | None = None,
                 dump: str | None = None, charts: bool = True,
                 only_if_changed: bool = False, nothing_new: bool = False) -> ReportResult:
    """Run every report and write ``<name>.csv``, ``<name>.png``, ``report.md`` and
    ``report.html`` into ``out_dir`` (default ``<lake>/reports/<dump or all-dumps>``).

    With ``only_if_changed``, a folder that already holds the report of what the rollups
    hold now is left as it is (``rebuilt`` False; the tables are still returned). With
    ``nothing_new`` on a remote lake, a folder holding a whole report is left as it is
    without reading the lake (``rebuilt`` False, no tables)."""
    t0 = time.perf_counter()
    dump_folder(dump)  # validates the name before anything is written
    out = Path(out_dir) if out_dir is not None else default_out_dir(lake, dump)
    standing = _whole_report(out, charts) if nothing_new and is_remote(lake) else None
    if standing is not None:
        res = ReportResult(out_dir=out, dump=dump, tables={}, version=str(standing.get("version", "")),
                           markdown_path=out / "report.md", html_path=out / "report.html", rebuilt=False)
        res.charts = {r.name: out / f"{r.name}.png" for r in REPORTS if (out / f"{r.name}.png").exists()}
        res.seconds = time.perf_counter() - t0
        return res
    with rollups(lake, dump) as states:
        version = report_version(states)
        res = ReportResult(out_dir=out, dump=dump, tables=query_reports(lake, dump, states), version=version)
    res.markdown_path, res.html_path = out / "report.md", out / "report.html"
    if only_if_changed and is_current(out, version, charts):
        res.rebuilt = False
        res.charts = {r.name: out / f"{r.name}.png" for r in REPORTS if (out / f"{r.name}.png").exists()}
        res.seconds = time.perf_counter() - t0
        return res
    out.mkdir(parents=True, exist_ok=True)
    remove_dead_tmp(str(out), report_files())  # a killed report's leftovers
    (out / MARKER).unlink(missing_ok=True)     # the folder is not a whole report until the end
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
    _publish(res.markdown_path, lambda tmp: tmp.write_text(render_markdown(res, root), encoding="utf-8"))
    _publish(res.html_path, lambda tmp: tmp.write_text(render_html(res, root), encoding="utf-8"))
    files = sorted([f"{r.name}.csv" for r in REPORTS] + [p.name for p in res.charts.values()]
                   + ["report.md", "report.html", MARKER])
    marker = {"version": version, "dump": dump, "charts": charts, "files": files}
    _publish(out / MARKER, lambda tmp: tmp.write_text(json.dumps(marker, indent=1), encoding="utf-8"))
    res.seconds = time.perf_counter() - t0
    return res


def is_current(out: Path, version: str, charts: bool = True) -> bool:
    """Whether ``out`` holds a whole report of ``version`` (with charts, when asked)."""
    marker = _whole_report(out, charts)
    return marker is not None and marker.get("version") == version


def _whole_report(out: Path, charts: bool) -> dict | None:
    """``out``'s marker when the folder holds a whole report (with charts, when asked)."""
    try:
        marker = json.loads((out / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(marker, dict) or (charts and not marker.get("charts")):
        return None
    whole = all((out / name).is_file() for name in marker.get("files") or ["report.html"])
    return marker if whole else None


def report_files() -> list[str]:
    """The names of the files a report writes into its folder."""
    return ([f"{r.name}.{ext}" for r in REPORTS for ext in ("csv", "png")]
            + ["report.md", "report.html", MARKER])


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

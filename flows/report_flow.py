"""The report step of a dump's flow: catalogue + report files + Prefect artifacts.

``build_dump_report`` is a plain function, so it runs anywhere: inside a flow or task
run it also attaches the summary to that run as a markdown and a table artifact; outside
one it only writes files (creating an artifact there would start a temporary Prefect
server for nothing to attach to).
"""
from __future__ import annotations

import logging
import os
import re

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.context import FlowRunContext, TaskRunContext

from warclake.tasks.lake.catalog import build_catalog, catalog_path, is_remote
from warclake.tasks.reporting import artifact_summary, write_report

log = logging.getLogger(__name__)


def artifact_key(dump: str | None) -> str:
    """Prefect artifact keys allow lower-case letters, digits and dashes only."""
    slug = re.sub(r"[^a-z0-9]+", "-", (dump or "all-dumps").lower()).strip("-")
    return f"warclake-report-{slug or 'dump'}"


def in_prefect_run() -> bool:
    return FlowRunContext.get() is not None or TaskRunContext.get() is not None


def build_dump_report(lake: str | os.PathLike, dump: str | None = None,
                      out_dir: str | os.PathLike | None = None, nothing_new: bool = False) -> str:
    """Bring the dump's rollup up to date, write the report (tables, PNG charts, report.md,
    report.html) and ``<lake>/warclake.duckdb`` when something changed since the last
    report, and, inside a Prefect run, attach its summary as artifacts.

    A run that extracted nothing finds the rollup as it was and the report folder holding
    its report: nothing is written again. On a remote lake, whose rollup each report makes
    anew (reading every archive's files), a run that says ``nothing_new`` leaves a whole
    report as it is without reading the lake. Returns the path of the HTML page.
    ``dump=None`` reports on every dump.
    """
    res = write_report(lake, out_dir, dump, only_if_changed=True, nothing_new=nothing_new)
    if not res.tables:
        log.info("report for %s: nothing new on a remote lake, the report stands: %s",
                 dump or "all dumps", res.html_path)
        return str(res.html_path)
    if is_remote(lake):
        # its views would need DuckDB's httpfs; reports read it through fsspec instead
        log.warning("remote lake: the catalogue file is not rebuilt")
    elif res.rebuilt or not catalog_path(lake).exists():
        build_catalog(lake)
    if in_prefect_run():
        markdown, rows = artifact_summary(res.tables, dump, res.out_dir, charts=res.charts)
        key = artifact_key(dump)
        scope = f"dump {dump}" if dump else "all dumps"
        create_markdown_artifact(markdown=markdown, key=key,
                                 description=f"warclake report, {scope}")
        create_table_artifact(table=rows, key=f"{key}-table",
                              description=f"warclake documents, bytes and encodings, {scope}")
    if res.rebuilt:
        log.info("report for %s in %.2fs: %s", dump or "all dumps", res.seconds, res.html_path)
    else:
        log.info("report for %s unchanged, nothing new since it was written (%.2fs): %s",
                 dump or "all dumps", res.seconds, res.html_path)
    return str(res.html_path)


build_dump_report_task = task(name="build-dump-report", persist_result=False)(build_dump_report)


def _run_name() -> str:
    from prefect.runtime import flow_run

    return f"report {flow_run.parameters.get('dump') or 'all dumps'}"


@flow(name="warclake-report", flow_run_name=_run_name, persist_result=False)
def report_flow(lake: str, dump: str | None = None, out_dir: str | None = None) -> str:
    """A report on its own, as a flow run (e.g. for a deployment that refreshes reports)."""
    return build_dump_report_task(lake, dump, out_dir)

"""Reports over the lake: the sql/report_*.sql queries over the per-dump rollup, PNG charts,
and one HTML and one markdown page that show tables and charts together.

Modules by job: queries (the report definitions, their SQL, the rollups they read), charts
(matplotlib), pages (markdown and the HTML template), write (a report folder: CSV, PNG,
pages and report.json).
"""
from warclake.tasks.reporting.charts import write_chart
from warclake.tasks.reporting.pages import artifact_summary, markdown_table, render_html, render_markdown
from warclake.tasks.reporting.queries import (
                                       BY_NAME,
                                       REPORTS,
                                       Report,
                                       ReportResult,
                                       query_reports,
                                       report_connection,
                                       report_version,
                                       rollups,
                                       run_reports,
)
from warclake.tasks.reporting.write import default_out_dir, is_current, write_report

__all__ = [
    "BY_NAME", "REPORTS", "Report", "ReportResult", "artifact_summary", "default_out_dir",
    "is_current", "markdown_table", "query_reports", "render_html", "render_markdown",
    "report_connection", "report_version", "rollups", "run_reports", "write_chart", "write_report",
]

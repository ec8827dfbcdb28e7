"""The reports: what each one shows, and its sql/report_<name>.sql query run over the lake.

The queries run on an in-memory DuckDB connection with the views of sql/views.sql, so a
report never waits on (or locks) the catalogue file, and a one-dump report reads only
that dump's folders.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from warclake.tasks.lake.catalog import install_views, read_sql


@dataclass(frozen=True)
class Report:
    name: str           # sql/report_<name>.sql, <name>.png, <name>.csv
    title: str
    what: str           # one line under the title
    category: str = ""  # share reports: the column that is shared out
    value: str = ""     # share reports: the count behind the share
    # share reports whose query already lumps its tail into one row: that row's label, and
    # how many categories the query lists before it (the chart shows the same rows)
    other: str = ""
    top: int = 0


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
    Report("domain_share", "Top domains",
           "Documents by registered domain (Public Suffix List): the first 25, then the others together.",
           category="domain", value="documents", other="(other domains)", top=25),
    Report("documents_per_month", "Documents per month",
           "Documents by the month of their date (UTC)."),
    Report("stage_seconds", "Where the time went",
           "Seconds per stage of the extractor over the dump's archives (workers' time): read, charset, "
           "language, parse (HTML parse and paragraph walk), boilerplate, write, other.",
           category="stage", value="seconds"),
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

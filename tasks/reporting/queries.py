"""The reports: what each one shows, and its sql/report_<name>.sql query run over the lake.

The queries read the per-dump rollup (tasks/lake/rollup.py), brought up to date first: a
report reads a few small files whatever the number of archives, and every table of one
report comes from one committed state of the rollup, so they agree with each other. They
run on an in-memory DuckDB connection, so a report never waits on (or locks) the catalogue
file, and a one-dump report reads only that dump's rollup.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import duckdb
import polars as pl

from warclake.tasks.lake import rollup
from warclake.tasks.lake.catalog import dump_folder, install_views, read_sql, sql_literal
from warclake.tasks.lake.layout import Lake


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
    version: str = ""       # what the report was made from (report_version)
    rebuilt: bool = True    # False: the folder already held the report of this version


def report_version(states: list[rollup.RollupState]) -> str:
    """A digest of what a report shows: the rollups' versions and the report queries."""
    h = hashlib.sha256()
    for st in sorted(states, key=lambda s: s.dump):
        h.update(f"{st.dump}\t{st.version}\n".encode())
    for r in REPORTS:
        h.update(read_sql(f"report_{r.name}.sql").encode())
    return h.hexdigest()[:32]


@contextmanager
def rollups(lake: str | os.PathLike, dump: str | None = None) -> Iterator[list[rollup.RollupState]]:
    """Bring the rollup of each dump in scope up to date, and hold it (shared) while the
    caller reads it. A lake that cannot hold its rollup (remote, read-only) is rolled up into
    a temporary folder for the time of the report."""
    dump_folder(dump)  # validates the name
    lk = Lake(os.fspath(lake))
    known = lk.dumps()
    dumps = [d for d in known if dump is None or d == dump]
    with ExitStack() as stack:
        scratch: str | None = None
        folders = {}
        for d in dumps:
            if lk.is_local and rollup.can_hold(rollup.lake_folder(lake, d)):
                rollup.refresh(lake, d)
                folders[d] = rollup.lake_folder(lake, d)
                continue
            # a remote or read-only lake: the report rolls it up for itself
            if scratch is None:
                scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="warclake-rollup-"))
            folder = os.path.join(scratch, f"dump={d}")
            rollup.refresh(lake, d, folder=folder)
            folders[d] = folder
        stack.enter_context(rollup.locked(list(folders.values()), exclusive=False))
        # the state as committed now: a refresh of another process may have come between
        yield [rollup.state(folder, d) for d, folder in sorted(folders.items())]


def report_connection(lake: str | os.PathLike, dump: str | None,
                      states: list[rollup.RollupState]) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with the lake's macros and views (over one dump, or all), whose
    rollup views read exactly the committed files of ``states``."""
    archives = [st.archives_path for st in states if st.archives_path]
    parts = [p for st in states for p in st.parts]

    def over(paths: list) -> str | None:
        if not paths:
            return None
        return f"SELECT * FROM read_parquet([{', '.join(sql_literal(p) for p in paths)}])"

    con = duckdb.connect()
    # the reports read the rollup only: the lake's own sources are left empty (binding a view
    # over them would list every archive's files)
    install_views(con, lake, dump, sources={"documents": None, "ledger": None, "files": None,
                                            "rollup_archives": over(archives), "rollup_counts": over(parts)},
                  corpus=False, suffixes=False)
    return con


def query_reports(lake: str | os.PathLike, dump: str | None, states: list[rollup.RollupState],
                  names: list[str] | None = None) -> dict[str, pl.DataFrame]:
    """The report tables over the committed rollups ``states`` (hold them)."""
    con = report_connection(lake, dump, states)
    try:
        return {r.name: con.sql(read_sql(f"report_{r.name}.sql")).pl()
                for r in REPORTS if names is None or r.name in names}
    finally:
        con.close()


def run_reports(lake: str | os.PathLike, dump: str | None = None,
                names: list[str] | None = None) -> dict[str, pl.DataFrame]:
    """Run the report queries; returns one polars table per report name."""
    with rollups(lake, dump) as states:
        return query_reports(lake, dump, states, names)

"""DuckDB connections of the global steps: a memory limit, spilling to a folder of the
lake, and the lake's corpus tables as views over their parquet files."""
from __future__ import annotations

import duckdb

from warclake.tasks.catalog import sql_literal

from .layout import CorpusLayout

DEFAULT_MEMORY_LIMIT = "2GB"


def connect(layout: CorpusLayout, memory_limit: str = DEFAULT_MEMORY_LIMIT,
            threads: int | None = None) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    layout.attach(con)   # the spill folder, and a remote lake's filesystem
    con.execute(f"SET memory_limit = {sql_literal(memory_limit)}")
    con.execute("SET preserve_insertion_order = false")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    return con


def parquet_list(paths: list[str]) -> str:
    """A read_parquet() call over exactly these files (never a glob: a step reads the files
    its key names, not whatever a concurrent writer has added since)."""
    return "read_parquet([" + ", ".join(sql_literal(p) for p in paths) + "], union_by_name = true)"


def part_expr(col: str, parts: int) -> str:
    """The partition of a 64-bit hash column: its low bits, which the hashes spread evenly."""
    return f"(({col}) & 1023) % {int(parts)}"


def query_table(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None):
    """A query's result as one pyarrow Table (``to_arrow_table`` in duckdb 2, the older
    ``fetch_arrow_table`` before)."""
    rel = con.sql(sql, params=params) if params else con.sql(sql)
    fetch = getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table
    return fetch()

"""DuckDB connections of the global steps: a memory limit, spilling to a folder of the
lake, and the lake's corpus tables as views over their parquet files."""
from __future__ import annotations

import duckdb

from warclake.tasks.corpus.settings import DEFAULT_MEMORY_LIMIT
from warclake.tasks.corpus.storage.layout import CorpusLayout, local_tmp, publish_tmp
from warclake.tasks.lake.layout import remove_quietly
from warclake.tasks.lake.catalog import sql_literal


def connect(layout: CorpusLayout, memory_limit: str = DEFAULT_MEMORY_LIMIT,
            threads: int | None = None) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    layout.attach(con)   # the spill folder, and a remote lake's filesystem
    con.execute(f"SET memory_limit = {sql_literal(memory_limit)}")
    con.execute("SET preserve_insertion_order = false")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    return con


def check_engine_options(memory_limit: str, threads: int | None) -> None:
    """ValueError (one line) for a memory limit DuckDB does not read as a size, or a thread
    count below 1; asked of DuckDB itself, so every form it accepts (2GB, 512MiB, 80%) is."""
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads {threads!r} is not a positive number (leave it out for all cores)")
    if not isinstance(memory_limit, str) or not memory_limit.strip():
        raise ValueError(f"memory limit {memory_limit!r} is not a size such as 2GB or 512MiB")
    with duckdb.connect() as con:
        try:
            con.execute(f"SET memory_limit = {sql_literal(memory_limit)}")
        except duckdb.Error as exc:
            detail = " ".join(str(exc).split())
            raise ValueError(f"memory limit {memory_limit!r} is not a size such as 2GB or 512MiB ({detail})") from None


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


def copy_query(con: duckdb.DuckDBPyConnection, sql: str, path: str) -> int:
    """A query's rows written to ``path`` by DuckDB itself (streamed, within its memory
    limit; for the steps' intermediate files, whose row order is not fixed), atomically as
    ``write_table`` writes; how many rows."""
    tmp = local_tmp(path)
    try:
        row = con.execute(f"COPY ({sql}) TO {sql_literal(tmp)} (FORMAT parquet, COMPRESSION zstd)").fetchone()
        publish_tmp(tmp, path)
    except BaseException:
        remove_quietly(tmp)
        raise
    return int(row[0]) if row else 0

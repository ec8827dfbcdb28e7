"""The lake's DuckDB catalogue: ``<lake>/warclake.duckdb`` holding the views of sql/views.sql.

The views hold the lake's absolute path (or URL), so the file can be opened from any
working directory (``duckdb LAKE/warclake.duckdb``). It is built under a temporary name
and renamed into place: a reader that has the old file open keeps reading it, and nobody
ever opens a half-built file.
"""
from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path

import duckdb

from warclake.tasks.extract.charset import report_labels
from warclake.tasks.extract.config import SCHEMA_VERSION
from warclake.tasks.lake.layout import check_dump_name
from warclake.tasks.lake.owners import remove_dead_tmp, tmp_name
from warclake.tasks.lake.public_suffix import install_table as install_public_suffixes

CATALOG_NAME = "warclake.duckdb"
# The catalogue file's storage format: the one duckdb 1.0 and later read (storage number 64).
STORAGE_VERSION = "v1.0.0"
SOURCES = ("documents", "ledger", "files", "rollup_archives", "rollup_counts")
# the file pattern of each source inside its dump's folder
_SOURCE_FILES = {"documents": "documents/{dumps}/*.parquet", "ledger": "ledger/{dumps}/*.parquet",
                 "files": "files/{dumps}/*.json", "rollup_archives": "rollup/{dumps}/archives.parquet",
                 "rollup_counts": "rollup/{dumps}/part-*.parquet"}

# Dump names become a folder in a glob: letters, digits, '.', '_' and '-' only.
_URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_VIEW_RE = re.compile(r"^\s*CREATE\s+OR\s+REPLACE\s+VIEW\s+(\w+)", re.IGNORECASE | re.MULTILINE)
# The characters stripped around a charset label (WHATWG, and normalize_label); SQL's
# trim() without a second argument strips spaces only.
_LABEL_SPACE = "chr(9) || chr(10) || chr(12) || chr(13) || ' '"


def sql_literal(value: str) -> str:
    """A SQL string literal for ``value`` (standard quoting: DuckDB strings have no
    backslash escapes, so doubling single quotes is all that is needed)."""
    if "\x00" in value:
        raise ValueError("NUL character in a SQL string")
    return "'" + value.replace("'", "''") + "'"


def lake_root(lake: str | os.PathLike) -> str:
    """The lake's absolute path, or its URL unchanged, without a trailing slash."""
    s = os.fspath(lake)
    if s.startswith("file://"):
        s = s[len("file://"):]
    if _URL_RE.match(s):
        root = s.rstrip("/")
    else:
        root = os.path.abspath(os.path.expanduser(s))
    # The root is the start of a glob pattern; these would be read as wildcards.
    if any(ch in root for ch in "*?[]{}"):
        raise ValueError(f"lake path must not contain glob characters (*?[]{{}}): {root!r}")
    return root


def is_remote(lake: str | os.PathLike) -> bool:
    return bool(_URL_RE.match(os.fspath(lake))) and not os.fspath(lake).startswith("file://")


def register_filesystem(con: duckdb.DuckDBPyConnection, lake: str | os.PathLike) -> None:
    """Let DuckDB read a remote lake through fsspec (any protocol fsspec knows), so no
    DuckDB extension has to be downloaded. Lasts for this connection only."""
    import fsspec

    fs = fsspec.core.url_to_fs(os.fspath(lake))[0]
    protocols = fs.protocol if isinstance(fs.protocol, (tuple, list)) else (fs.protocol,)
    if not set(protocols) & set(con.list_filesystems()):
        con.register_filesystem(fs)


def dump_folder(dump: str | None) -> str:
    """The partition folder pattern for one dump, or for all of them."""
    if dump is None:
        return "dump=*"
    return f"dump={check_dump_name(dump)}"


def read_sql(name: str) -> str:
    """A file of the package's ``sql/`` folder (package data, so it ships in the wheel)."""
    return resources.files("warclake").joinpath("sql", name).read_text(encoding="utf-8")


def split_statements(sql: str) -> list[str]:
    """Statements of a file whose statements end with ';' at the end of a line."""
    out = []
    for chunk in re.split(r";[ \t]*$", sql, flags=re.MULTILINE):
        body = "\n".join(line for line in chunk.splitlines() if not line.lstrip().startswith("--"))
        if body.strip():
            out.append(chunk.strip())
    return out


def charset_label_sql() -> list[str]:
    """Statements defining the macro ``charset_label(label)``: an encoding label as the
    extractor reports it, 'unknown' for NULL or blank, any other label trimmed and lower-cased.

    Written from the extractor's own label table (``report_labels``), so reports bucket
    labels exactly as the decoder names them. The lake already holds canonical names, which
    the first lookup finds as they are; only other spellings pay for trimming and lower-casing
    (a CASE over every label ran over 20 times slower than this map lookup).
    """
    entries = ", ".join(f"{sql_literal(label)}: {sql_literal(name)}"
                        for label, name in sorted(report_labels().items()))
    key = f"lower(trim(label, {_LABEL_SPACE}))"
    # map_extract(...)[1]: a list of the value (empty when absent) in every DuckDB since 1.1,
    # while map[key] changed from that list to the value itself.
    return [
        f"CREATE OR REPLACE MACRO charset_label_map() AS MAP {{{entries}}}",
        "CREATE OR REPLACE MACRO charset_label(label) AS\n"
        "    coalesce(map_extract(charset_label_map(), label)[1],\n"
        f"             CASE WHEN label IS NULL OR trim(label, {_LABEL_SPACE}) = '' THEN 'unknown'\n"
        f"                  ELSE coalesce(map_extract(charset_label_map(), {key})[1], {key}) END)",
    ]


def source_glob(root: str, source: str, dump: str | None = None) -> str:
    return f"{root}/" + _SOURCE_FILES[source].format(dumps=dump_folder(dump))


def install_views(con: duckdb.DuckDBPyConnection, lake: str | os.PathLike,
                  dump: str | None = None, sources: dict[str, str | None] | None = None,
                  corpus: bool = True, suffixes: bool = True) -> dict[str, bool]:
    """Create the views of sql/views.sql on ``con`` over ``lake`` (one dump, or all).

    Returns, per source, whether it has files: a source without any is defined from its
    empty macro, so queries give zero rows instead of failing (rebuild once files exist).
    ``sources`` defines some sources otherwise: view name -> the query it is instead (None:
    no rows), e.g. the report's exact rollup files or one batch of archives. Without
    ``suffixes`` the Public Suffix List is left empty (a connection that asks no domain).
    """
    root = lake_root(lake)
    if is_remote(lake):
        register_filesystem(con, lake)
    sources = sources or {}
    con.execute(f"CREATE OR REPLACE MACRO warclake_root() AS {sql_literal(root)}")
    con.execute(f"CREATE OR REPLACE MACRO warclake_dumps() AS {sql_literal(dump_folder(dump))}")
    mixed = "documents" not in sources and mixed_schemas(con, root, dump)
    con.execute(f"CREATE OR REPLACE MACRO warclake_mixed_schemas() AS {'true' if mixed else 'false'}")
    for stmt in charset_label_sql():
        con.execute(stmt)
    if suffixes:
        install_public_suffixes(con)
    else:
        con.execute("CREATE OR REPLACE TABLE public_suffix (suffix VARCHAR, kind VARCHAR)")
    globs = {s: source_glob(root, s, dump) for s in SOURCES}
    present = install_view_file(con, "views.sql", globs, lambda view: f"SELECT * FROM empty_{view}()",
                                absent=set(sources))
    for view, query in sources.items():
        con.execute(f"CREATE OR REPLACE VIEW {view} AS {query or f'SELECT * FROM empty_{view}()'}")
        present[view] = query is not None
    if corpus:
        from warclake.tasks.corpus.storage.catalog_views import install_corpus_views  # the corpus stage's tables
        present.update(install_corpus_views(con, root, dump))
    return present


def mixed_schemas(con: duckdb.DuckDBPyConnection, root: str, dump: str | None = None) -> bool:
    """Whether the lake's summaries, as the rollup holds them, were written with more than one
    schema version, or with one other than this extractor's (whose runs write files of its
    own): the parquet sources must then bind by name. A lake without a rollup is taken as
    written by this version."""
    pattern = source_glob(root, "rollup_archives", dump)
    if not has_files(con, pattern):
        return False
    versions = {v for (v,) in con.execute(
        "SELECT DISTINCT schema_version FROM read_parquet(?) WHERE schema_version IS NOT NULL",
        [pattern]).fetchall()}
    return bool(versions - {SCHEMA_VERSION})


def has_files(con: duckdb.DuckDBPyConnection, pattern: str) -> bool:
    """Whether a glob pattern matches any file (through the connection's filesystems)."""
    row = con.execute("SELECT count(*) FROM (SELECT 1 FROM glob(?) LIMIT 1)", [pattern]).fetchone()
    return row is not None and row[0] > 0


def install_view_file(con: duckdb.DuckDBPyConnection, sql_file: str, globs: dict[str, str],
                      placeholder, absent: set[str] | frozenset[str] = frozenset()) -> dict[str, bool]:
    """Run the statements of ``sql/<sql_file>``; a view named in ``globs`` whose pattern
    matches no file (or named in ``absent``) is defined as ``placeholder(view)`` (a query of
    its columns with no rows), so queries give zero rows instead of failing. Returns, per
    view of ``globs``, whether it has files."""
    present = {view: view not in absent and has_files(con, pattern) for view, pattern in globs.items()}
    for stmt in split_statements(read_sql(sql_file)):
        m = _VIEW_RE.search(stmt)
        if m and m.group(1) in present and not present[m.group(1)]:
            stmt = f"CREATE OR REPLACE VIEW {m.group(1)} AS {placeholder(m.group(1))}"
        con.execute(stmt)
    return present


def catalog_path(lake: str | os.PathLike) -> Path:
    if is_remote(lake):
        raise ValueError("a remote lake needs an explicit local catalogue path")
    return Path(lake_root(lake)) / CATALOG_NAME


def build_catalog(lake: str | os.PathLike, path: str | os.PathLike | None = None) -> Path:
    """(Re)build the catalogue file and return its path.

    ``path`` defaults to ``<lake>/warclake.duckdb``; for a remote lake give a local path
    (the views then need DuckDB's httpfs extension when queried).
    """
    final = Path(path) if path is not None else catalog_path(lake)
    final = final.resolve()
    final.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(final)
    tmp = final.with_name(tmp_name(final.name))
    try:
        con = duckdb.connect()
        try:
            # Written in the oldest storage format the dependency range reads, so an analyst
            # whose duckdb is older than the extractor's can still open it.
            try:
                con.execute(f"ATTACH {sql_literal(str(tmp))} AS catalogue "
                            f"(STORAGE_VERSION {sql_literal(STORAGE_VERSION)})")
            except duckdb.IOException as exc:  # a read-only lake, a full disk: an OSError to callers
                raise OSError(f"cannot write the catalogue {final}: {' '.join(str(exc).split())}") from exc
            con.execute("USE catalogue")
            present = install_views(con, lake)
            con.execute(
                "CREATE TABLE warclake_catalog AS SELECT ? AS lake, ?::TIMESTAMPTZ AS built, "
                "? AS schema_version, ? AS sources_present",
                [lake_root(lake), datetime.now(timezone.utc).isoformat(), SCHEMA_VERSION,
                 [s for s, ok in present.items() if ok]])
            con.execute("CHECKPOINT catalogue")
            con.execute("USE memory")
            con.execute("DETACH catalogue")
        finally:
            con.close()
        os.replace(tmp, final)
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            if leftover.exists():
                leftover.unlink()
    return final


def clean_leftovers(final: Path) -> int:
    """Remove the temporaries (and DuckDB's .wal beside them) of catalogue builds that were
    killed; those of a build still running stay."""
    return remove_dead_tmp(str(final.parent), [final.name])


def _missed_sources(path: Path, lake: str | os.PathLike) -> bool:
    """True when the catalogue was built while a source had no file and it has one now
    (that view is the empty placeholder until rebuilt)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        row = con.execute("SELECT sources_present FROM warclake_catalog").fetchone()
        built = set(row[0]) if row else set()
        root = lake_root(lake)
        from warclake.tasks.corpus.storage.catalog_views import CORPUS_SOURCES, corpus_glob

        globs = {**{s: source_glob(root, s) for s in SOURCES},
                 **{v: corpus_glob(root, v) for v in CORPUS_SOURCES}}
        return any(has_files(con, pattern) for s, pattern in globs.items() if s not in built)
    except duckdb.Error:
        return True   # not a catalogue we can read: build a fresh one
    finally:
        con.close()


def connect_catalog(lake: str | os.PathLike, rebuild: bool = False,
                    read_only: bool = True) -> duckdb.DuckDBPyConnection:
    """Open the lake's catalogue, (re)building it first when missing, when a source has
    appeared since it was built, or when asked.

    A remote lake gets the same views on an in-memory database that reads the lake through
    fsspec: a catalogue file holding remote paths would need a DuckDB extension to query."""
    if is_remote(lake):
        return _in_memory(lake)
    path = catalog_path(lake)
    if rebuild or not path.exists() or _missed_sources(path, lake):
        try:
            build_catalog(lake)
        except OSError:  # a read-only lake: the same views, held in memory by this connection
            return _in_memory(lake)
    return duckdb.connect(str(path), read_only=read_only)


def _in_memory(lake: str | os.PathLike) -> duckdb.DuckDBPyConnection:
    """The catalogue's views on an in-memory database (a lake that holds no catalogue file)."""
    con = duckdb.connect()
    install_views(con, lake)
    return con

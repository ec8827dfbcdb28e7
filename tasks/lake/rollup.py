"""The per-dump rollup: what the reports need of a dump's finished archives, kept as they
finish, so a report reads a few small files instead of every archive's.

    <lake>/rollup/dump=<DUMP>/archives.parquet    one row per summary rolled up: ``archive``,
                                                  ``tag``, ``part``, ``valid`` and the summary's
                                                  fields (the ``files`` view's columns)
    <lake>/rollup/dump=<DUMP>/part-<id>.parquet   the counts of sql/rollup_counts.sql over the
                                                  documents and ledgers of the archives naming it
    <lake>/rollup/dump=<DUMP>/refresh.lock        held (flock) while the rollup changes or is read

An archive's tag names the versions of its summary, documents and ledger files (size and
mtime in nanoseconds; on an object store the listing's ETag or size and time). ``refresh``
lists the dump's three folders once and rolls up only what is not in archives.parquet with
that tag: new archives, and those redone, removed or edited since. An archive whose files
changed drops the part holding its counts; that part's other archives are counted again.
Archives are read in batches bounded by their records, and counts fill one open part at
a time up to ``PART_ARCHIVES`` archives, so memory stays flat however large the dump.

archives.parquet is the commit point: parts are written first, then archives.parquet
replaces the old one by a rename. A part no row names is not part of the rollup; a crash
leaves the last commit whole, and the next refresh goes on from it. A summary that is not
valid JSON is recorded with ``valid`` false (not done, as in ``files``), a ``failed`` one
without a part (its files are not counted, as in ``done_documents``).
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import posixpath
import time
import uuid
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Iterator

import duckdb
import pyarrow.parquet as pq

from warclake.tasks.lake.catalog import install_views, read_sql, sql_literal
from warclake.tasks.lake.layout import Lake, check_dump_name
from warclake.tasks.lake.owners import remove_dead_tmp, tmp_name

FOLDER = "rollup"
ARCHIVES = "archives.parquet"
LOCK = "refresh.lock"
PART_ARCHIVES = 2000          # archives per part at most (what an archive redone costs to count again)
BATCH_ROWS = 2_000_000        # records and documents read per batch at most (the memory bound)
SUMMARY_CHUNK = 1000          # summaries parsed at a time
ORPHAN_GRACE = 600            # seconds an unnamed part stays (a refresh being committed names it)
_EXT = {"files": ".json", "documents": ".parquet", "ledger": ".parquet"}
# What makes the rollup: a change to its counts or its files (a new warclake) counts every
# archive again (every tag ends with it).
FORMAT = "1"
COUNTS_VERSION = hashlib.sha256((FORMAT + read_sql("rollup_counts.sql")).encode()).hexdigest()[:8]


@dataclass
class RollupState:
    """A dump's rollup as committed: its files, and a version that changes whenever what it
    counts changes (an archive added, redone or removed)."""
    dump: str
    folder: str
    archives: int = 0
    parts: list[str] = field(default_factory=list)
    version: str = ""
    rolled: int = 0            # archives read by this refresh

    @property
    def archives_path(self) -> str | None:
        path = os.path.join(self.folder, ARCHIVES)
        return path if self.archives else None


def lake_folder(lake: str | os.PathLike, dump: str) -> str:
    """The rollup's folder in a local lake."""
    lk = Lake(os.fspath(lake))
    return os.path.join(lk.url, FOLDER, f"dump={check_dump_name(dump)}")


def can_hold(folder: str) -> bool:
    """Whether a rollup can be kept in ``folder`` (False: a read-only lake)."""
    try:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, LOCK), "a+b"):
            return True
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return False
        raise


@contextmanager
def locked(folders: list[str], exclusive: bool) -> Iterator[None]:
    """Hold the refresh locks of rollup folders: exclusive to change one, shared to read
    (a refresh never removes a part a report is reading). Released when the process dies."""
    with ExitStack() as stack:
        for folder in sorted(folders):
            os.makedirs(folder, exist_ok=True)
            fh = stack.enter_context(open(os.path.join(folder, LOCK), "a+b"))
            fcntl.flock(fh, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield


def _tag(info: dict) -> str:
    """A version of a listed file: what changes when it is rewritten."""
    etag = info.get("ETag") or info.get("etag") or info.get("md5Hash")
    when = info.get("mtime_ns") or info.get("LastModified") or info.get("mtime") or info.get("created")
    return f"{info.get('size')}-{etag or when}"


def list_archives(lake: Lake, dump: str) -> dict[str, str]:
    """Each archive of the dump that has a summary, and its tag: one listing per folder."""
    tags: dict[str, dict[str, str]] = {}
    for kind, ext in _EXT.items():
        found = tags.setdefault(kind, {})
        folder = lake.dir(kind, dump)
        if lake.is_local:
            try:
                with os.scandir(folder) as it:
                    for e in it:
                        if e.name.endswith(ext) and not e.name.startswith("."):
                            st = e.stat()
                            found[e.name[:-len(ext)]] = f"{st.st_size}-{st.st_mtime_ns}"
            except FileNotFoundError:
                pass
            continue
        try:
            entries = lake.fs.ls(folder, detail=True, refresh=True)
        except FileNotFoundError:
            entries = []
        for info in entries:
            name = posixpath.basename(info["name"].rstrip("/"))
            if info.get("type", "file") != "directory" and name.endswith(ext) and not name.startswith("."):
                found[name[:-len(ext)]] = _tag(info)
    return {name: "/".join([tag, tags["documents"].get(name, "-"), tags["ledger"].get(name, "-"),
                            COUNTS_VERSION])
            for name, tag in tags["files"].items()}


def refresh(lake: str | os.PathLike, dump: str, folder: str | None = None,
            batch_rows: int = BATCH_ROWS, part_archives: int = PART_ARCHIVES) -> RollupState:
    """Bring the dump's rollup up to date with the lake and return its state.

    ``folder`` defaults to the lake's own ``rollup/dump=<DUMP>`` (a local lake); a lake that
    cannot hold it (remote, read-only) is rolled up into a folder the caller gives."""
    lk = Lake(os.fspath(lake))
    check_dump_name(dump)
    folder = folder or lake_folder(lake, dump)
    with locked([folder], exclusive=True):
        remove_dead_tmp(folder)  # what a killed refresh was writing
        return _Refresh(lk, dump, folder, batch_rows, part_archives).run()


def state(folder: str, dump: str) -> RollupState:
    """The committed state of a rollup folder (hold its lock): from archives.parquet's footer."""
    st = RollupState(dump, folder)
    try:
        meta = pq.read_metadata(os.path.join(folder, ARCHIVES))
    except FileNotFoundError:
        return st
    kv = {k.decode(): v.decode() for k, v in (meta.metadata or {}).items()}
    st.archives, st.version = meta.num_rows, kv.get("warclake_version", "")
    st.parts = [os.path.join(folder, f"part-{p}.parquet") for p in kv.get("warclake_parts", "").split(",") if p]
    return st


def _version(rows: dict[str, tuple[str, str | None]]) -> str:
    """A digest of the archives rolled up and their tags: what the counts are of."""
    h = hashlib.sha256()
    for archive in sorted(rows):
        h.update(f"{archive}\t{rows[archive][0]}\n".encode())
    return h.hexdigest()[:32]


class _Refresh:
    def __init__(self, lake: Lake, dump: str, folder: str, batch_rows: int, part_archives: int):
        self.lake, self.dump, self.folder = lake, dump, folder
        self.batch_rows, self.part_archives = batch_rows, part_archives
        self.path = os.path.join(folder, ARCHIVES)
        self.con: duckdb.DuckDBPyConnection | None = None
        self.committed = os.path.exists(self.path)
        self.rolled = 0
        self.open_part: str | None = None
        self.open_size = 0
        self.acc_archives: list[str] = []
        self.remap: tuple[str | None, str | None] = (None, None)

    @property
    def db(self) -> duckdb.DuckDBPyConnection:
        assert self.con is not None
        return self.con

    def run(self) -> RollupState:
        try:
            return self._run()
        finally:
            if self.con is not None:
                self.con.close()

    def _run(self) -> RollupState:
        listed = list_archives(self.lake, self.dump)
        old: dict[str, tuple[str, str | None]] = {}
        if self.committed:
            t = pq.read_table(self.path, columns=["archive", "tag", "part"]).to_pydict()
            old = {a: (tg, p) for a, tg, p in zip(t["archive"], t["tag"], t["part"])}
        same = {a for a, (t, _) in old.items() if listed.get(a) == t}
        dirty = {p for a, (_, p) in old.items() if a not in same and p is not None}
        keep = {a for a in same if old[a][1] not in dirty}
        todo = sorted(a for a in listed if a not in keep)
        # what is committed once this refresh commits: archive -> (tag, part)
        self.rows = {a: old[a] for a in keep}
        if todo or len(keep) != len(old):
            self.con = duckdb.connect()
            # files are read once: caching them would keep every archive read in memory
            self.con.execute("SET enable_external_file_cache = false")
            # the views of the counts, each source empty until a batch defines it
            empty: dict[str, str | None] = {"documents": None, "ledger": None, "files": None,
                                            "rollup_archives": None, "rollup_counts": None}
            install_views(self.con, self.lake.url, self.dump, sources=empty, corpus=False)
            sizes: dict[str, int] = {}
            for a in keep:
                part = old[a][1]
                if part is not None:
                    sizes[part] = sizes.get(part, 0) + 1
            # new counts fill the smallest part that has room, instead of making a new part
            self.open_part = min((p for p, k in sizes.items() if k < self.part_archives),
                                 key=lambda p: sizes[p], default=None)
            self.open_size = sizes.get(self.open_part, 0) if self.open_part else 0
            self.db.execute("CREATE TEMP TABLE keep AS SELECT unnest(?::VARCHAR[]) AS archive", [sorted(keep)])
            self.listed = listed
            self._roll(todo, listed)
        self._remove_orphans({p for _, p in self.rows.values() if p is not None} if self.committed else None)
        st = state(self.folder, self.dump)
        st.rolled = self.rolled
        return st

    # -- reading the archives ----------------------------------------------------------
    def _roll(self, todo: list[str], listed: dict[str, str]) -> None:
        # rows to commit (with their part), and rows counted into the part being filled
        for table in ("fresh", "pending", "acc"):
            self._empty(table)
        for i in range(0, len(todo), SUMMARY_CHUNK):
            chunk = todo[i:i + SUMMARY_CHUNK]
            self._read_summaries(chunk, listed)
            counted = self.db.execute(
                "SELECT archive, coalesce(records, 0) + coalesce(documents, 0) FROM chunk"
                " WHERE coalesce(valid AND status <> 'failed', false) ORDER BY archive").fetchall()
            self.db.execute("INSERT INTO fresh BY NAME SELECT * FROM chunk "
                             "WHERE NOT coalesce(valid AND status <> 'failed', false)")
            batch: list[str] = []
            rows = 0
            for archive, n in counted:
                if batch and (rows + n > self.batch_rows or self._room() <= len(batch)):
                    self._count(batch, listed)
                    batch, rows = [], 0
                batch.append(archive)
                rows += n
            if batch:
                self._count(batch, listed)
            self.rolled += len(chunk)
        self._write_part()
        self._commit()

    def _empty(self, table: str) -> None:
        """A work table made anew, empty (rows deleted from a table keep their memory)."""
        source = "* EXCLUDE (part) FROM empty_rollup_counts()" if table == "acc" else "* FROM empty_rollup_archives()"
        self.db.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT {source}")

    def _room(self) -> int:
        """How many more archives the part being filled takes."""
        return self.part_archives - self.open_size - len(self.acc_archives)

    def _read_summaries(self, chunk: list[str], listed: dict[str, str]) -> None:
        urls = [self.lake.file_url("files", self.dump, a) for a in chunk]
        query = ("CREATE OR REPLACE TEMP TABLE chunk AS SELECT archive, tag, NULL::VARCHAR AS part, valid, "
                 "unnest(fields) FROM (SELECT regexp_replace(parse_filename(filename), '[.]json$', '') AS archive, "
                 "json_valid(content) AS valid, CASE WHEN json_valid(content) THEN summary_fields(content) END AS fields "
                 "FROM read_text(?)) JOIN tags USING (archive)")
        self.db.execute("CREATE OR REPLACE TEMP TABLE tags AS SELECT unnest(?::VARCHAR[]) AS archive, "
                         "unnest(?::VARCHAR[]) AS tag", [chunk, [listed[a] for a in chunk]])
        try:
            self.db.execute(query, [urls])
        except duckdb.IOException:  # a summary removed since the listing (redone): next time
            there = [u for u in urls if self.lake.fs.exists(u)]
            if there:
                self.db.execute(query, [there])
            else:
                self.db.execute("CREATE OR REPLACE TEMP TABLE chunk AS SELECT * FROM empty_rollup_archives()")

    def _count(self, batch: list[str], listed: dict[str, str]) -> None:
        """Count a batch of done archives into the part being filled."""
        if self._room() <= 0:
            self._write_part()
            self._commit()
        docs = [self.lake.file_url("documents", self.dump, a) for a in batch if listed[a].split("/")[1] != "-"]
        ledger = [self.lake.file_url("ledger", self.dump, a) for a in batch if listed[a].split("/")[2] != "-"]
        con = self.db
        self._source("documents", docs, "dump, warc_file, url, charset, charset_source, date")
        self._source("ledger", ledger, "dump, warc_file, outcome, lang, bytes_in")
        con.execute("CREATE OR REPLACE TEMP TABLE batch AS SELECT * FROM chunk "
                    "WHERE archive IN (SELECT unnest(?::VARCHAR[]))", [batch])
        con.execute("CREATE OR REPLACE VIEW files AS SELECT * EXCLUDE (archive, tag, part, valid) FROM batch")
        con.execute("INSERT INTO acc " + read_sql("rollup_counts.sql"))
        con.execute("INSERT INTO pending BY NAME SELECT * FROM batch")
        self.acc_archives += batch

    def _source(self, view: str, urls: list[str], columns: str) -> None:
        """``view`` over the columns the counts need of these files, read once."""
        con = self.db
        con.execute(f"DROP TABLE IF EXISTS batch_{view}")
        if urls:
            try:
                con.execute(f"CREATE TEMP TABLE batch_{view} AS SELECT {columns} "
                            "FROM read_parquet(?, hive_partitioning = false)", [urls])
            except duckdb.InvalidInputException:  # files of several schema versions
                con.execute(f"CREATE TEMP TABLE batch_{view} AS SELECT {columns} "
                            "FROM read_parquet(?, hive_partitioning = false, union_by_name = true)", [urls])
        else:
            con.execute(f"CREATE TEMP TABLE batch_{view} AS SELECT {columns} FROM empty_{view}()")
        con.execute(f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM empty_{view}() "
                    f"UNION ALL BY NAME SELECT * FROM batch_{view}")

    # -- writing -----------------------------------------------------------------------
    def _write_part(self) -> None:
        """Write the part being filled (with the open part's counts, which it replaces)."""
        if not self.acc_archives:
            return
        part = uuid.uuid4().hex[:16]
        sources = ["SELECT * FROM acc"]
        if self.open_part is not None:
            sources.append("SELECT * EXCLUDE (part) FROM read_parquet("
                           f"{sql_literal(self._part_path(self.open_part))})")
        self._publish(f"part-{part}.parquet", (
            f"SELECT {sql_literal(part)} AS part, dump, fact, key, key2, month, sum(n)::BIGINT AS n, "
            f"sum(bytes)::BIGINT AS bytes FROM ({' UNION ALL '.join(sources)}) "
            "GROUP BY dump, fact, key, key2, month ORDER BY ALL"))
        con = self.db
        con.execute("INSERT INTO fresh BY NAME SELECT * REPLACE (?::VARCHAR AS part) FROM pending", [part])
        self._empty("pending")
        if self.open_part is not None:
            self.remap = (self.open_part, part)
        self.open_part, self.open_size = part, self.open_size + len(self.acc_archives)
        if self.open_size >= self.part_archives:
            self.open_part, self.open_size = None, 0
        self._empty("acc")
        self.acc_archives = []

    def _commit(self) -> None:
        """Replace archives.parquet: the rows kept, and those read since the last commit."""
        con = self.db
        old_part, new_part = self.remap
        if old_part is not None:
            self.rows = {a: (t, new_part if p == old_part else p) for a, (t, p) in self.rows.items()}
        for a, p in con.execute("SELECT archive, part FROM fresh").fetchall():
            self.rows[a] = (self.listed[a], p)
        sources = ["SELECT * FROM fresh"]
        if self.committed:
            sources.insert(0, f"SELECT * REPLACE (CASE WHEN part = {sql_literal(old_part or '')} "
                              f"THEN {sql_literal(new_part or '')} ELSE part END AS part) "
                              f"FROM read_parquet({sql_literal(self.path)}) SEMI JOIN keep USING (archive)")
        parts = sorted({p for _, p in self.rows.values() if p is not None})
        meta = {"warclake_version": _version(self.rows), "warclake_parts": ",".join(parts)}
        self._publish(ARCHIVES, f"{' UNION ALL BY NAME '.join(sources)} ORDER BY archive", meta)
        self.committed = True
        self.remap = (None, None)
        # what is committed is kept from now on
        con.execute("INSERT INTO keep SELECT archive FROM fresh")
        self._empty("fresh")

    def _publish(self, name: str, query: str, meta: dict[str, str] | None = None) -> None:
        final = os.path.join(self.folder, name)
        tmp = os.path.join(self.folder, tmp_name(name))
        kv = ""
        if meta:
            kv = ", KV_METADATA {" + ", ".join(f"{k}: {sql_literal(v)}" for k, v in meta.items()) + "}"
        try:
            self.db.execute(f"COPY ({query}) TO {sql_literal(tmp)} (FORMAT parquet, COMPRESSION zstd{kv})")
            with open(tmp, "rb") as fh:  # on disk before it is named
                os.fsync(fh.fileno())
            os.replace(tmp, final)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def _part_path(self, part: str) -> str:
        return os.path.join(self.folder, f"part-{part}.parquet")

    def _remove_orphans(self, named: set[str] | None) -> None:
        """Parts no committed row names (replaced, or left by a killed refresh), once old
        enough that no refresh of another host is about to name them."""
        if named is None:
            return
        now = time.time()
        for entry in os.scandir(self.folder):
            n = entry.name
            if n.startswith("part-") and n.endswith(".parquet") and n[5:-8] not in named:
                try:
                    if now - entry.stat().st_mtime > ORPHAN_GRACE:
                        os.unlink(entry.path)
                except FileNotFoundError:
                    pass

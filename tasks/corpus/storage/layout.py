"""Where the corpus stage keeps its tables, and how it writes them (atomically).

    <lake>/corpus/paragraphs/dump=<D>/<warc-name>.parquet      per-archive step
    <lake>/corpus/docsigs/dump=<D>/<warc-name>.parquet         per-archive step
    <lake>/corpus/para_hosts/dump=<D>/part=<P>.parquet         paragraph statistics, per dump
    <lake>/corpus/para_paths/dump=<D>/part=<P>.parquet
    <lake>/corpus/pairs/dump=<D>/part=<P>.parquet              verified candidate pairs
    <lake>/corpus/decisions/documents/dump=<D>/decisions.parquet
    <lake>/corpus/decisions/paragraphs/dump=<D>/part=<P>.parquet
    <lake>/corpus/state/<step>/dump=<D>/<name>.json            written last: the step's key

Every file is written under a temporary name beside its place and renamed into it, and a
step's state file goes last, so a killed run never leaves a step that looks done. A step is
done when its state file holds the same key (its inputs' identity and the settings'
fingerprint); anything else is redone.

On a remote (fsspec) lake, paths are URLs (``s3://bucket/lake/corpus/...``), which DuckDB
reads through the filesystem ``attach`` registers on its connection; files are written to
a local temporary and uploaded once complete (an object store's PUT is all-or-nothing).
"""
from __future__ import annotations

import json
import os
import posixpath
import secrets
import shutil
import tempfile
import threading

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from warclake.tasks.corpus.storage.listed_fs import ListedFileSystem, forget
from warclake.tasks.lake.layout import Lake, check_dump_name, is_url, read_bytes, remove_quietly, upload_dir
from warclake.tasks.lake.owners import owner_gone, owner_tag, remove_dead_tmp, tmp_name

ROOT = "corpus"
# The per-archive step's tables and step name (its state folder: state/<step>), which
# extraction writes too (corpus_signatures): its cleaning of temporaries asks ``archive_dirs``.
ARCHIVE_TABLES = ("paragraphs", "docsigs")
ARCHIVE_STEP = "signatures"


class CorpusLayout:
    def __init__(self, lake: str | Lake):
        self.lake = lake if isinstance(lake, Lake) else Lake(lake)
        self.is_local = self.lake.is_local
        self.fs = self.lake.fs
        if not self.is_local:
            # Another process (a Dask worker) may have written since this process listed a
            # folder: fsspec's listings cache must not hide that.
            self.fs.invalidate_cache()
        self.root = posixpath.join(self.lake.url, ROOT)
        self._cached_steps: frozenset[str] = frozenset()
        self._states: dict[str, bytes | None] = {}   # state path -> its bytes (None: not there)
        self._listed: ListedFileSystem | None = None
        self._listed_lock = threading.Lock()

    def cache_states(self, steps) -> "CorpusLayout":
        """Keep the state files of ``steps`` in memory once read or written through this
        layout, so a run reads each at most once: for a run holding the lake's corpus lock,
        whose own writes are the only ones (a state file written by another process, such
        as a per-archive step, must not be of a step cached here)."""
        self._cached_steps = self._cached_steps | frozenset(steps)
        return self

    def known_states(self) -> dict[str, bytes | None]:
        """The state files this layout holds (``cache_states``): path -> bytes (None: not there)."""
        return dict(self._states)

    def know_states(self, states: dict[str, bytes | None], newer: bool = False) -> "CorpusLayout":
        """Hold these state files as read (of the run's own steps, whose writes the caller
        has seen: the run's coordinating process passes them to a task in another process).
        ``newer``: they replace what this layout holds (the tasks' results, gathered by the
        run's process after they ended), but for a missing one that another task wrote
        (tasks of one phase start from the same snapshot)."""
        for path, data in states.items():
            if path.split("/state/")[-1].split("/")[0] in self._cached_steps:
                if newer and (data is not None or self._states.get(path) is None):
                    self._states[path] = data   # a task that ended gives no None for a state it wrote
                else:
                    self._states.setdefault(path, data)
        return self

    def dir(self, table: str, dump: str | None = None) -> str:
        d = posixpath.join(self.root, *table.split("/"))
        return posixpath.join(d, f"dump={check_dump_name(dump)}") if dump is not None else d

    def file(self, table: str, dump: str, name: str, ext: str = ".parquet") -> str:
        return posixpath.join(self.dir(table, dump), name + ext)

    def archive_dirs(self, dump: str) -> list[str]:
        """The folders of a dump the per-archive step writes into: its outputs and its state."""
        return [self.dir(t, dump) for t in ARCHIVE_TABLES] + [self.dir(f"state/{ARCHIVE_STEP}", dump)]

    def documents(self, dump: str, warc: str) -> str:
        """The lake's documents file of an archive, as a path or URL DuckDB and ``read_parquet`` open."""
        return self.lake.file_url("documents", dump, warc)

    # -- files of a folder ---------------------------------------------------------
    def names(self, folder: str) -> list[str]:
        return list_names(folder if self.is_local else self.fs.unstrip_protocol(folder))

    def listing(self, folder: str, ext: str) -> dict[str, dict]:
        """{name less ``ext``: the store's entry (size, ETag or modification time)} of the
        files of a folder of the lake (a path as ``Lake.dir`` gives it): one listing."""
        try:
            self.fs.invalidate_cache(folder)
            entries = self.fs.ls(folder, detail=True)
        except (FileNotFoundError, NotADirectoryError):
            return {}
        out = {}
        for e in entries:
            name = posixpath.basename(e["name"].rstrip("/"))
            if name.endswith(ext) and not name.startswith(".") and e.get("type", "file") == "file":
                out[name[: -len(ext)]] = e
        return out

    def attach(self, con) -> None:
        """Prepare a DuckDB connection for this lake: its spill folder (local: under the
        lake's corpus folder; remote: a local temporary folder) and, for a remote lake, the
        lake's fsspec filesystem, so DuckDB reads its parquet without an extension."""
        from warclake.tasks.lake.catalog import sql_literal

        if not self.is_local:
            # what DuckDB asks of each file answered from a listing of its folder, not a HEAD each
            con.register_filesystem(self.listed_fs())
            con.execute("SET autoinstall_known_extensions = false")   # never a download at run time
        base = self.spill_base()
        os.makedirs(base, exist_ok=True)
        # one folder per connection, named by its owner, made by DuckDB when it first spills
        # and removed when the connection closes (older duckdb versions name the spill files
        # of every connection alike); a killed run's is removed by the next run
        spill = os.path.join(base, f"{owner_tag()}~{secrets.token_hex(4)}")
        con.execute(f"SET temp_directory = {sql_literal(spill)}")

    def listed_fs(self) -> ListedFileSystem:
        """The filesystem this layout's DuckDB connections read a remote lake through: each
        folder listed once for all of them (again after this process writes into it)."""
        with self._listed_lock:
            if self._listed is None:
                self._listed = ListedFileSystem(self.fs)
            return self._listed

    def spill_base(self) -> str:
        if self.is_local:
            return posixpath.join(self.root, ".spill")
        return os.path.join(tempfile.gettempdir(), f"warclake-spill-{os.getuid()}")

    def clean_dead_spill(self) -> int:
        """Remove the spill folders of connections whose process is gone."""
        base, n = self.spill_base(), 0
        for name in list_names(base) if os.path.isdir(base) else []:
            path = os.path.join(base, name)
            if os.path.isdir(path) and owner_gone(f".{name}.tmp", path):   # the tag as temporaries carry it
                shutil.rmtree(path, ignore_errors=True)
                n += 1
        return n

    def part_name(self, part: int) -> str:
        return f"part={part:03d}"

    # -- state of steps ----------------------------------------------------------
    def state_path(self, step: str, dump: str, name: str) -> str:
        return self.file(f"state/{step}", dump, name, ".json")

    def read_state(self, step: str, dump: str, name: str) -> dict | None:
        """The step's state file, None when there is none (or it does not parse: the step
        is redone); an error of the storage is raised."""
        path = self.state_path(step, dump, name)
        cached = step in self._cached_steps
        if cached and path in self._states:
            data = self._states[path]
        else:
            try:
                data = read_bytes(path)
            except FileNotFoundError:
                data = None
            # any other error (the network's, a refusal) is raised, not taken for "not
            # done": the step's retry (retries.STEP) reads it again instead of redoing it
            if cached:   # a write of another thread meanwhile (mark_done) is the newer
                data = self._states.setdefault(path, data)
        try:
            return json.loads(data) if data is not None else None
        except ValueError:
            return None

    def is_done(self, step: str, dump: str, name: str, key: dict) -> bool:
        st = self.read_state(step, dump, name)
        # compared as stored: JSON turns tuples into lists
        return st is not None and st.get("key") == json.loads(json.dumps(key, sort_keys=True, default=str))

    def mark_done(self, step: str, dump: str, name: str, key: dict, **info) -> None:
        path = self.state_path(step, dump, name)
        data = json.dumps({"key": key, **info}, indent=1, sort_keys=True, default=str).encode()
        self._states.pop(path, None)   # unknown until written: a failed write is read again
        write_bytes(path, data)
        if step in self._cached_steps:
            self._states[path] = data

    def once(self, step: str, dump: str, name: str, key: dict, work, *args) -> bool:
        """The protocol of every global step, written once: done when its state file holds
        ``key`` (False); otherwise its state is cleared, ``work(*args)`` writes its outputs
        and returns what the state file should say besides the key, and the state file is
        written last (True). A killed task leaves no state, so it is redone.

        A DuckDB connection goes in ``args``, never in a closure ``work`` holds: a failed
        task's exception outlives the task (the flow's failed state), and clearing its
        frames (flows/corpus_flow.py: ``frames_freed``) drops their locals but not the
        functions they ran, so a captured connection would stay referenced until exit."""
        if self.is_done(step, dump, name, key):
            return False
        self.clear_state(step, dump, name)
        info = work(*args) or {}
        self.mark_done(step, dump, name, key, **info)
        return True

    def clear_state(self, step: str, dump: str, name: str) -> None:
        path = self.state_path(step, dump, name)
        self._states.pop(path, None)
        remove_file(path)
        if step in self._cached_steps:
            self._states[path] = None

    def clean_stale_tmp(self) -> int:
        """Remove temporaries of killed runs (never those of a process still running); a
        remote lake's are local files awaiting upload."""
        n = self.clean_dead_spill()
        if not self.is_local:
            return n + remove_dead_tmp(upload_dir())
        for d, _, files in os.walk(self.root):
            if any(f.endswith((".tmp", ".tmp.wal")) for f in files):
                n += remove_dead_tmp(d)
        return n


def list_names(folder: str) -> list[str]:
    """Names of the files in a local folder or under a URL (none when it is not there),
    sorted, without temporaries (their names start with a dot)."""
    try:
        if is_url(folder):
            fs, p = fsspec.core.url_to_fs(folder)
            fs.invalidate_cache(p)
            found = [posixpath.basename(e.rstrip("/")) for e in fs.ls(p, detail=False)]
        else:
            found = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(n for n in found if not n.startswith("."))


def remove_file(path: str) -> None:
    """Remove a file if it is there (a local path or a URL)."""
    if not is_url(path):
        remove_quietly(path)
        return
    fs, p = fsspec.core.url_to_fs(path)
    try:
        fs.rm_file(p)
    except FileNotFoundError:
        pass
    finally:
        forget(path)


def read_schema(path: str) -> pa.Schema:
    if not is_url(path):
        return pq.read_schema(path)
    fs, p = fsspec.core.url_to_fs(path)
    return pq.read_schema(p, filesystem=fs)


def read_table(path: str, columns: list[str] | None = None) -> pa.Table:
    """A whole parquet file as a table; from an object store with one GET (a filesystem
    handed to pyarrow asks about the file first: a HEAD each time a step reads it; and
    s3fs's whole-object read asks its size first, a ranged one from 0 does not)."""
    if not is_url(path):
        return pq.read_table(path, columns=columns)
    fs, p = fsspec.core.url_to_fs(path)
    return pq.read_table(pa.BufferReader(fs.cat_file(p, start=0)), columns=columns)


def file_size(path: str) -> int:
    if not is_url(path):
        return os.path.getsize(path)
    fs, p = fsspec.core.url_to_fs(path)
    return fs.size(p)


def _upload(tmp: str, url: str) -> None:
    """Put a finished local file at ``url`` and remove the local copy, uploaded or not."""
    fs, p = fsspec.core.url_to_fs(url)
    try:
        fs.put_file(tmp, p)
    finally:
        remove_quietly(tmp)
        forget(url)   # the listings DuckDB's connections hold of its folder


def local_tmp(path: str) -> str:
    """A temporary beside ``path`` (local), or in the upload folder (URL)."""
    d = upload_dir() if is_url(path) else os.path.dirname(path)
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, tmp_name(posixpath.basename(path)))


def write_bytes(path: str, data: bytes) -> None:
    tmp = local_tmp(path)
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if is_url(path):
            _upload(tmp, path)
        else:
            os.replace(tmp, path)
    except BaseException:
        remove_quietly(tmp)
        raise


def write_table(path: str, table: pa.Table, work: bool = False) -> int:
    """Write ``table`` to ``path`` atomically (zstd); returns its size. The writer's output
    depends only on the rows, so equal tables give byte-identical files. ``work``: a step's
    intermediate file, read once by the next phase: lz4, no dictionaries or statistics
    (hashes do not compress; writing them is the cost)."""
    tmp = local_tmp(path)
    try:
        if work:
            pq.write_table(table, tmp, compression="lz4", use_dictionary=False, write_statistics=False,
                           row_group_size=1 << 20)
        else:
            pq.write_table(table, tmp, compression="zstd", row_group_size=1 << 17)
        size = os.path.getsize(tmp)
        publish_tmp(tmp, path)
    except BaseException:
        remove_quietly(tmp)
        raise
    return size


def publish_tmp(tmp: str, path: str) -> None:
    """Put a finished local temporary (``local_tmp``) at ``path``: uploaded to a URL, or
    synced to disk and renamed into place."""
    if is_url(path):
        _upload(tmp, path)
        return
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)

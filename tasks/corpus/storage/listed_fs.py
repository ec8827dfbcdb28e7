"""A remote lake's filesystem as the DuckDB connections of one corpus run see it.

DuckDB asks its filesystem, for every file of every query, whether it exists, its size and
its modification time, and opens it: on an object store through fsspec, each of those is a
HEAD request of its own (3,909 on a first run over two dumps of three archives in all).
Here they are answered from one listing of the file's folder, taken when a connection first
asks about a file in it (a listing gives each object's size, ETag and time); a file the
listing does not hold is asked about as before. One is made per run (``CorpusLayout.
listed_fs``), whose writes are the only ones while it runs (the lake's corpus lock keeps
other runs out) and whose steps read only files complete before they start; a file this
process writes or removes drops its folder's listing (``forget``), so a step that reads
what an earlier step (or itself) wrote lists that folder afresh. A step run in another
process (a Dask worker) has its own run context there, hence its own listings.
"""
from __future__ import annotations

import posixpath
import threading
import weakref

from fsspec import AbstractFileSystem

_LIVE: "weakref.WeakSet[ListedFileSystem]" = weakref.WeakSet()
_MAGIC = set("*?[")   # what makes a path a pattern to fsspec's glob


def forget(path: str) -> None:
    """A file of the lake was written or removed by this process: the listings of its folder
    are stale."""
    for fs in list(_LIVE):
        fs.forget(path)


class ListedFileSystem(AbstractFileSystem):
    """``fs`` with its answers about files taken from listings of their folders."""

    cachable = False   # one per run, never shared through fsspec's instance cache
    __hash__ = object.__hash__   # fsspec's hash and equality are of a cached instance's token
    __eq__ = object.__eq__

    def __init__(self, fs: AbstractFileSystem):
        super().__init__()
        self.fs = fs
        self.protocol = fs.protocol
        self._folders: dict[str, dict[str, dict]] = {}   # folder -> {path: its listing entry}
        self._lock = threading.Lock()   # DuckDB reads files on several threads
        self.listings = 0
        _LIVE.add(self)

    # -- the listings ------------------------------------------------------------------
    def _path(self, path: str) -> str:
        return self.fs._strip_protocol(path).rstrip("/")

    def _folder(self, folder: str) -> dict[str, dict]:
        with self._lock:
            found = self._folders.get(folder)
            if found is None:
                try:
                    self.fs.invalidate_cache(folder)   # fsspec's own cache may be older
                    entries = self.fs.ls(folder, detail=True)
                except (FileNotFoundError, NotADirectoryError):
                    entries = []
                self.listings += 1
                found = {e["name"].rstrip("/"): e for e in entries if e.get("type", "file") == "file"}
                self._folders[folder] = found
            return found

    def entry(self, path: str) -> dict | None:
        """The listing's entry of a file, or None when its folder's listing does not hold it."""
        p = self._path(path)
        return self._folder(posixpath.dirname(p)).get(p)

    def forget(self, path: str) -> None:
        with self._lock:
            self._folders.pop(posixpath.dirname(self._path(path)), None)

    # -- what DuckDB asks --------------------------------------------------------------
    def info(self, path, **kwargs):
        e = self.entry(path)
        return dict(e) if e is not None else self.fs.info(path, **kwargs)

    def size(self, path):
        return self.info(path)["size"]

    def modified(self, path):
        e = self.entry(path)
        if e is not None and e.get("LastModified") is not None:   # s3fs's listing entries
            return e["LastModified"]
        return self.fs.modified(path)

    def exists(self, path, **kwargs):
        return self.entry(path) is not None or self.fs.exists(path, **kwargs)

    def isfile(self, path):
        return self.entry(path) is not None or self.fs.isfile(path)

    def glob(self, path, **kwargs):
        """A pattern as the filesystem finds it; a plain path (what a step names) is itself
        when the listing holds it."""
        if not _MAGIC & set(path) and self.entry(path) is not None:
            return [self._path(path)]
        return self.fs.glob(path, **kwargs)

    def _open(self, path, mode="rb", **kwargs):
        e = self.entry(path) if mode == "rb" else None
        if e is None:
            return self.fs._open(self._path(path), mode=mode, **kwargs)
        f = self.fs._open(self._path(path), mode=mode, **dict(kwargs, size=e["size"]))
        f.details = dict(e)   # what a file object asks of the store before each read
        if e.get("ETag") and isinstance(getattr(f, "read_kw", None), dict):
            # s3fs: each read names the listed version, so a file replaced since the
            # listing fails to read instead of giving other bytes
            f.read_kw = {**f.read_kw, "IfMatch": e["ETag"]}
        return f

    # -- the rest as the filesystem does it ------------------------------------------
    def ls(self, path, detail=True, **kwargs):
        return self.fs.ls(path, detail=detail, **kwargs)

    def isdir(self, path):
        return self.fs.isdir(path)

    def unstrip_protocol(self, name: str) -> str:
        return self.fs.unstrip_protocol(name)

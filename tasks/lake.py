"""The lake's layout and its atomic writes, on a local folder or any fsspec URL.

    <lake>/documents/dump=<DUMP>/<warc-name>.parquet
    <lake>/ledger/dump=<DUMP>/<warc-name>.parquet
    <lake>/files/dump=<DUMP>/<warc-name>.json      written last: its presence means done

Local files are written under a temporary name and renamed into place. On object
stores a PUT is already all-or-nothing, so files are uploaded once complete. Either
way the summary JSON goes last, so a crash never leaves an input that looks done.
"""
from __future__ import annotations

import json
import os
import posixpath
import tempfile
import uuid
from dataclasses import dataclass

import fsspec
from fsspec.implementations.local import LocalFileSystem

KINDS = ("documents", "ledger", "files")
_EXT = {"documents": ".parquet", "ledger": ".parquet", "files": ".json"}


def archive_name(input_path: str) -> str:
    """The base name of an input path or URL (query strings dropped)."""
    return posixpath.basename(input_path.split("?", 1)[0].rstrip("/"))


@dataclass
class Lake:
    root: str

    def __post_init__(self):
        self.fs, self._root = fsspec.core.url_to_fs(self.root)
        self.is_local = isinstance(self.fs, LocalFileSystem)
        if self.is_local:
            self._root = os.path.abspath(self._root)

    @property
    def url(self) -> str:
        """The lake root as a string other tools (DuckDB) can open."""
        if self.is_local:
            return self._root
        return self.fs.unstrip_protocol(self._root)

    def path(self, kind: str, dump: str, warc_name: str) -> str:
        return posixpath.join(self._root, kind, f"dump={dump}", warc_name + _EXT[kind])

    def dir(self, kind: str, dump: str | None = None) -> str:
        p = posixpath.join(self._root, kind)
        return posixpath.join(p, f"dump={dump}") if dump else p

    # -- reading -----------------------------------------------------------------
    def read_summary(self, dump: str, warc_name: str) -> dict | None:
        path = self.path("files", dump, warc_name)
        try:
            with self.fs.open(path, "rb") as fh:
                return json.loads(fh.read())
        except FileNotFoundError:
            return None
        except (ValueError, OSError):
            return None  # unreadable summary: treat as not done

    # -- writing -----------------------------------------------------------------
    def publish_file(self, local_tmp: str, kind: str, dump: str, warc_name: str) -> int:
        """Move a finished local file into its place in the lake; returns its size."""
        size = os.path.getsize(local_tmp)
        dest = self.path(kind, dump, warc_name)
        if self.is_local:
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            os.replace(local_tmp, dest)  # atomic within one filesystem (tmp is made beside it)
        else:
            self.fs.makedirs(posixpath.dirname(dest), exist_ok=True)
            self.fs.put_file(local_tmp, dest)
            os.unlink(local_tmp)
        return size

    def write_summary(self, dump: str, warc_name: str, summary: dict) -> None:
        data = json.dumps(summary, indent=1, sort_keys=True, default=str).encode()
        tmp = self.tmp_file("files", dump, warc_name)
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        self.publish_file(tmp, "files", dump, warc_name)

    def remove_summary(self, dump: str, warc_name: str) -> None:
        """Un-mark an input as done before redoing it, so a crash mid-redo is not 'done'."""
        try:
            self.fs.rm(self.path("files", dump, warc_name))
        except FileNotFoundError:
            pass

    def tmp_file(self, kind: str, dump: str, warc_name: str) -> str:
        """A fresh local temporary path; beside the destination when the lake is local."""
        if self.is_local:
            d = os.path.dirname(self.path(kind, dump, warc_name))
            os.makedirs(d, exist_ok=True)
        else:
            d = tempfile.gettempdir()
        return os.path.join(d, f".{warc_name}.{uuid.uuid4().hex[:12]}.tmp")

    def clean_stale_tmp(self, dump: str) -> int:
        """Remove temporaries a killed run left behind (local lakes only)."""
        if not self.is_local:
            return 0
        n = 0
        for kind in KINDS:
            d = self.dir(kind, dump)
            if os.path.isdir(d):
                for name in os.listdir(d):
                    if name.startswith(".") and name.endswith(".tmp"):
                        os.unlink(os.path.join(d, name))
                        n += 1
        return n


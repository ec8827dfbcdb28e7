"""The lake's layout and its atomic writes, on a local folder or any fsspec URL.

    <lake>/documents/dump=<DUMP>/<warc-name>.parquet
    <lake>/ledger/dump=<DUMP>/<warc-name>.parquet
    <lake>/files/dump=<DUMP>/<warc-name>.json      written last: its presence means done
    <lake>/done/dump=<DUMP>/<warc-name>/<mark>     after it: what the plan needs of it (done_marks.py)

Local files are written under a temporary name and renamed into place. On object
stores a PUT is already all-or-nothing, so files are uploaded once complete. Either
way the summary JSON goes last, so a crash never leaves an input that looks done.
"""
from __future__ import annotations

import json
import os
import posixpath
import re
import shutil
import tempfile
from dataclasses import dataclass

import fsspec
from fsspec.implementations.local import LocalFileSystem

from warclake.tasks.lake import done_marks
from warclake.tasks.lake.owners import remove_dead_tmp, tmp_name

KINDS = ("documents", "ledger", "files")
# A dump name becomes a folder (dump=<DUMP>) and a glob pattern: no separators, no "..".
_DUMP_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def check_dump_name(dump: str) -> str:
    """``dump`` if it is a safe partition name (``CC-MAIN-2024-22``, ``test_1``), else ValueError."""
    if not isinstance(dump, str) or not _DUMP_NAME.match(dump) or ".." in dump:
        raise ValueError(f"invalid dump name {dump!r}: use letters, digits, '.', '_' and '-' "
                         "(e.g. CC-MAIN-2024-22), no '..' or path separators")
    return dump
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
        return posixpath.join(self._root, kind, f"dump={check_dump_name(dump)}", warc_name + _EXT[kind])

    def dir(self, kind: str, dump: str | None = None) -> str:
        p = posixpath.join(self._root, kind)
        return posixpath.join(p, f"dump={check_dump_name(dump)}") if dump is not None else p

    # -- checks before any work ----------------------------------------------------
    def exists(self) -> bool:
        """Whether anything was ever written here (a summary, documents or ledger folder)."""
        return any(self.fs.isdir(self.dir(kind)) for kind in KINDS)

    def require(self) -> "Lake":
        """The lake for reading: FileNotFoundError naming it when there is none."""
        if not self.exists():
            raise FileNotFoundError(f"no lake at {self.url} (it has no files/, documents/ or ledger/ folder)")
        return self

    def dumps(self) -> list[str]:
        """The dumps with at least one summary."""
        try:
            entries = self.fs.ls(self.dir("files"), detail=False)
        except FileNotFoundError:
            return []
        names = (posixpath.basename(e.rstrip("/")) for e in entries)
        return sorted(n[len("dump="):] for n in names if n.startswith("dump="))

    def require_dump(self, dump: str) -> None:
        """FileNotFoundError naming the dumps there are when ``dump`` is not one of them."""
        known = self.dumps()
        if check_dump_name(dump) not in known:
            raise FileNotFoundError(f"no dump {dump!r} in the lake at {self.url}; dumps: "
                                    f"{', '.join(known) or 'none yet'}")

    def check_writable(self) -> None:
        """One clear error before any work when the lake cannot be written (local lakes:
        a probe file; object stores answer on the first write)."""
        if not self.is_local:
            return
        if os.path.exists(self._root) and not os.path.isdir(self._root):
            raise NotADirectoryError(f"lake {self._root} is a file, not a folder")
        try:
            os.makedirs(self._root, exist_ok=True)
            fd, probe = tempfile.mkstemp(prefix=".warclake-write-check.", suffix=".tmp", dir=self._root)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise PermissionError(f"lake {self._root} is not writable: {exc.strerror or exc}") from exc

    # -- reading -----------------------------------------------------------------
    def file_url(self, kind: str, dump: str, warc_name: str) -> str:
        """An archive's file (``path``) as a path or URL that ``read_bytes`` and DuckDB open."""
        path = self.path(kind, dump, warc_name)
        return path if self.is_local else self.fs.unstrip_protocol(path)

    def read_summary(self, dump: str, warc_name: str) -> dict | None:
        """An archive's summary; None when there is none or it does not parse (being written
        by hand, damaged): not done. Any other error (the store's 500 or 403, a local file
        that may not be read) is raised: taken for "not done", it would have the archive
        extracted again; the caller's retry reads it again, or the run ends with its line."""
        try:
            summary = json.loads(read_bytes(self.file_url("files", dump, warc_name)))
        except (FileNotFoundError, ValueError):
            return None
        return summary if isinstance(summary, dict) else None

    # -- writing -----------------------------------------------------------------
    def publish_file(self, local_tmp: str, kind: str, dump: str, warc_name: str) -> int:
        """Move a finished local file into its place in the lake; returns its size."""
        size = os.path.getsize(local_tmp)
        dest = self.path(kind, dump, warc_name)
        if self.is_local:
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            os.replace(local_tmp, dest)  # atomic within one filesystem (tmp is made beside it)
        else:
            try:
                self.fs.makedirs(posixpath.dirname(dest), exist_ok=True)
                self.fs.put_file(local_tmp, dest)
            finally:  # uploaded or not, the local copy is of no further use
                os.unlink(local_tmp)
        return size

    def marks_dir(self, dump: str, warc_name: str | None = None) -> str:
        """The folder of a dump's done marks, or of one archive's."""
        d = posixpath.join(self._root, done_marks.FOLDER, f"dump={check_dump_name(dump)}")
        return posixpath.join(d, warc_name) if warc_name is not None else d

    def listing(self, dump: str) -> dict[str, done_marks.Listed]:
        """Every summary of the dump with its marks, from one listing of each folder (an
        error of the store is raised naming the folder)."""
        summaries, marks = self.dir("files", dump), self.marks_dir(dump)
        if self.is_local:
            return done_marks.list_local(summaries, marks)
        try:
            return done_marks.list_remote(self.fs, summaries, marks)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise naming(exc, self.fs.unstrip_protocol(summaries) + "/") from exc

    def write_summary(self, dump: str, warc_name: str, summary: dict) -> None:
        """The summary, then its done mark when it says done (a crash between the two leaves
        a summary the next plan reads instead)."""
        data = json.dumps(summary, indent=1, sort_keys=True, default=str).encode()
        tmp = self.tmp_file("files", dump, warc_name)
        try:
            with open(tmp, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        except BaseException:  # a full disk: no half-written temporary left behind
            remove_quietly(tmp)
            raise
        self.publish_file(tmp, "files", dump, warc_name)
        if summary.get("status") in done_marks.DONE_STATUSES:
            self._mark(dump, warc_name, summary, data)

    def _mark(self, dump: str, warc_name: str, summary: dict, data: bytes) -> None:
        if self.is_local:
            tag = done_marks.local_tag(self.path("files", dump, warc_name))
            d = self.marks_dir(dump, warc_name)
            os.makedirs(d, exist_ok=True)
            open(posixpath.join(d, done_marks.mark_name(summary, tag)), "wb").close()   # empty: whole at once
        else:
            tag = done_marks.summary_md5(data)
            self.fs.pipe_file(posixpath.join(self.marks_dir(dump, warc_name), done_marks.mark_name(summary, tag)), b"")

    def remove_summary(self, dump: str, warc_name: str) -> None:
        """Un-mark an input as done before redoing it, so a crash mid-redo is not 'done'."""
        try:
            self.fs.rm(self.path("files", dump, warc_name))
        except FileNotFoundError:
            pass
        self.remove_marks(dump, warc_name)

    def remove_marks(self, dump: str, warc_name: str) -> None:
        """An archive's done marks (a mark left behind is harmless: its tag no longer matches)."""
        d = self.marks_dir(dump, warc_name)
        if self.is_local:
            shutil.rmtree(d, ignore_errors=True)
            return
        try:
            self.fs.rm(d, recursive=True)
        except FileNotFoundError:
            pass

    def tmp_file(self, kind: str, dump: str, warc_name: str) -> str:
        """A fresh local temporary path; beside the destination when the lake is local."""
        if self.is_local:
            d = os.path.dirname(self.path(kind, dump, warc_name))
            os.makedirs(d, exist_ok=True)
        else:
            d = upload_dir()
            os.makedirs(d, exist_ok=True)
        return os.path.join(d, tmp_name(warc_name))

    def clean_stale_tmp(self, dump: str) -> int:
        """Remove temporaries that killed runs left behind: the dump's, and the catalogue's
        at the lake's root (for a remote lake: the local files a killed run did not upload).
        A temporary whose process still runs is another run's work in progress and is left alone."""
        if not self.is_local:   # its temporaries are local files awaiting upload, in one folder
            return remove_dead_tmp(upload_dir())
        # imported here: the corpus stage's layout is built on this module
        from warclake.tasks.corpus.storage.layout import CorpusLayout

        # with the corpus stage's per-archive folders, which extraction writes with corpus_signatures
        folders = [self.dir(kind, dump) for kind in KINDS] + CorpusLayout(self).archive_dirs(dump) + [self._root]
        return sum(remove_dead_tmp(d) for d in folders)


def upload_dir() -> str:
    """Where files for a remote lake are written before their upload (one folder per user)."""
    return os.path.join(tempfile.gettempdir(), f"warclake-uploads-{os.getuid()}")


def is_url(path: str) -> bool:
    return "://" in path


def read_bytes(path: str) -> bytes:
    """A whole file of a local path or URL. An error of the storage is raised naming the
    file; FileNotFoundError when it is not there."""
    if not is_url(path):
        with open(path, "rb") as fh:
            return fh.read()
    fs, p = fsspec.core.url_to_fs(path)
    try:
        # one GET, no cached listing involved: a read of a range from 0 (s3fs asks an
        # object's size with a HEAD before reading it whole)
        return fs.cat_file(p, start=0)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if is_range_past_end(exc):
            return b""   # "bytes=0-" lies past the end only of an empty object
        raise naming(exc, path) from exc


def naming(exc: OSError, url: str) -> OSError:
    """The same error (its class decides whether it is retried) with the object it was
    about: an object store's error reply names only its code (``SlowDown``)."""
    said = exc.strerror if exc.errno is not None and exc.strerror else str(exc)
    text = f"{' '.join(said.split()) or type(exc).__name__} (reading {url})"
    return type(exc)(exc.errno, text) if exc.errno is not None else type(exc)(text)


def is_range_past_end(exc: BaseException) -> bool:
    """Whether an error is S3's 416 (InvalidRange): s3fs raises it as an OSError whose cause
    is botocore's ClientError, which holds the reply's code and status."""
    reply = getattr(exc.__cause__, "response", None)
    if not isinstance(reply, dict):
        return False
    return (reply.get("Error", {}).get("Code") == "InvalidRange"
            or reply.get("ResponseMetadata", {}).get("HTTPStatusCode") == 416)


def remove_quietly(path: str) -> int:
    """Remove a file if it is there; 1 if it was removed."""
    try:
        os.unlink(path)
        return 1
    except FileNotFoundError:
        return 0


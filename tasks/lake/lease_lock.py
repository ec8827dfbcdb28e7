"""A lease lock on a lake, local or remote: one writer at a time for what it guards.

The extraction of a dump (``dump_lock.py``) and the corpus stage of a lake
(``corpus/run_lock.py``) each hold one. The lock is a small file or object created only if
absent: on S3 by a conditional PUT (``If-None-Match: *``), locally by ``O_EXCL``; two runs
that start together cannot both get it. It names its holder (host, pid, start time) and is
a lease: the holder rewrites it every ``ttl / 3`` seconds, each rewrite conditional on the
version it wrote last (S3: ``If-Match`` on its ETag; locally: under a ``flock`` guard), so a
holder that lost it learns so at its next renewal and stops before its next step.

A lock is taken over when its holder is gone: a process of this host that no longer runs
(at once), or, for a holder on another host, a lock not renewed for ``ttl`` seconds (the
store's own modification time against this host's clock: a clock far behind the store's
delays a takeover, one far ahead hastens it). The takeover is itself conditional on the
version judged stale, so of two runs taking over one lock, one wins.

Other object stores (no conditional write through fsspec here) get the same lease by
check-then-write and a read-back: best effort (tasks/lake/README.md).
"""
from __future__ import annotations

import errno
import json
import logging
import os
import posixpath
import secrets
import threading
import time
from datetime import datetime, timezone

from warclake.tasks.lake.layout import Lake, remove_quietly
from warclake.tasks.lake.owners import host, pid_alive, process_start, remove_dead_tmp, tmp_name

log = logging.getLogger(__name__)

STAMP_GRACE = 2.0   # an object store's modification times are to the second


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# -- where the lock lives: a local file, an S3 object, or any other fsspec store --------

class _LocalStore:
    """The lock as a local file; its version is (inode, mtime, size); conditional changes
    happen under a flock on a guard file beside it. A renewal writes a temporary beside it
    and renames it into place; one a kill left there (its writer gone) is removed when the
    lock is next taken."""

    def __init__(self, path: str):
        self.path = path

    def _version(self):
        st = os.stat(self.path)
        return (st.st_ino, st.st_mtime_ns, st.st_size), st.st_mtime

    def create(self, meta: dict):
        folder = os.path.dirname(self.path)
        os.makedirs(folder, exist_ok=True)
        remove_dead_tmp(folder, [os.path.basename(self.path)])
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return None
        with os.fdopen(fd, "w") as fh:
            json.dump(meta, fh)
        return self._version()[0]

    def head(self):
        try:
            version, mtime = self._version()
            with open(self.path) as fh:
                meta = json.load(fh)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            meta = {}
        return version, mtime, meta

    def _guarded(self, version, action):
        import fcntl

        with open(self.path + ".guard", "a") as guard:
            fcntl.flock(guard, fcntl.LOCK_EX)
            try:
                if self._version()[0] != version:
                    return None
            except FileNotFoundError:
                return None
            return action()

    def replace(self, version, meta: dict):
        def write():
            tmp = os.path.join(os.path.dirname(self.path), tmp_name(os.path.basename(self.path)))
            try:
                with open(tmp, "w") as fh:
                    json.dump(meta, fh)
                os.replace(tmp, self.path)
            except BaseException:
                remove_quietly(tmp)
                raise
            return self._version()[0]
        return self._guarded(version, write)

    def delete(self, version) -> None:
        self._guarded(version, lambda: os.unlink(self.path))


def _precondition_failed(exc: OSError) -> bool:
    """A conditional write refused (s3fs: If-None-Match -> FileExistsError; If-Match -> an
    OSError(EINVAL) caused by the PreconditionFailed reply; S3's 409 for two conditional
    writes at once)."""
    if isinstance(exc, FileExistsError):
        return True
    code = (getattr(exc.__cause__, "response", None) or {}).get("Error", {}).get("Code")
    return code in ("PreconditionFailed", "ConditionalRequestConflict") or \
        (exc.errno == errno.EINVAL and "condition" in str(exc).lower())


class _S3Store:
    """The lock as an S3 object, its holder in the object's metadata (one HEAD reads a
    version's ETag, modification time and holder together)."""

    def __init__(self, fs, path: str):
        self.fs = fs
        self.bucket, self.key, _ = fs.split_path(path)

    def _put(self, meta: dict, **cond):
        try:
            out = self.fs.call_s3("put_object", Bucket=self.bucket, Key=self.key, Metadata=meta,
                                  Body=json.dumps(meta).encode(), ContentType="application/json", **cond)
        except FileNotFoundError:
            return None   # If-Match on an object that is gone
        except OSError as exc:
            if _precondition_failed(exc):
                return None
            raise
        self.fs.invalidate_cache(f"{self.bucket}/{self.key}")
        return out["ETag"]

    def create(self, meta: dict):
        return self._put(meta, IfNoneMatch="*")

    def head(self):
        try:
            h = self.fs.call_s3("head_object", Bucket=self.bucket, Key=self.key)
        except FileNotFoundError:
            return None
        return h["ETag"], h["LastModified"].timestamp(), dict(h.get("Metadata") or {})

    def replace(self, version, meta: dict):
        return self._put(meta, IfMatch=version)

    def delete(self, version) -> None:
        try:
            self.fs.call_s3("delete_object", Bucket=self.bucket, Key=self.key, IfMatch=version)
        except OSError:
            pass   # gone already, or taken over meanwhile: not ours to remove


class _OtherStore:
    """Any other fsspec store: check, write, read back (best effort: two runs that write
    within the same moment can both believe they hold it)."""

    def __init__(self, fs, path: str):
        self.fs, self.path = fs, path

    def head(self):
        try:
            self.fs.invalidate_cache(self.path)
            info = self.fs.info(self.path)
            meta = json.loads(self.fs.cat_file(self.path))
        except FileNotFoundError:
            return None
        mtime = info.get("mtime") or info.get("LastModified") or info.get("updated") or time.time()
        mtime = mtime.timestamp() if hasattr(mtime, "timestamp") else float(mtime)
        return meta.get("owner"), mtime, meta

    def _write_and_check(self, meta: dict):
        self.fs.pipe_file(self.path, json.dumps(meta).encode())
        time.sleep(0.5)
        h = self.head()
        return meta["owner"] if h and h[2].get("owner") == meta["owner"] else None

    def create(self, meta: dict):
        return None if self.head() is not None else self._write_and_check(meta)

    def replace(self, version, meta: dict):
        h = self.head()
        return self._write_and_check(meta) if h and h[0] == version else None

    def delete(self, version) -> None:
        h = self.head()
        if h and h[0] == version:
            self.fs.rm_file(self.path)


def _store(lake: Lake, path: str):
    if lake.is_local:
        return _LocalStore(path)
    if hasattr(lake.fs, "call_s3"):
        return _S3Store(lake.fs, path)
    return _OtherStore(lake.fs, path)


# -- the lock ---------------------------------------------------------------------------

_held: dict[str, "LeaseLock"] = {}      # by URL: a run's nested steps share a re-entrant lock
_held_guard = threading.Lock()


class LeaseLock:
    """``with SomeLock(...): ...`` -- ``locked_error`` when another live run holds the lock.

    A subclass names the lock (its place under the lake's root, its errors, its messages),
    given the lake as a ``Lake`` or its URL or path. A
    ``reentrant`` lock is shared by every ``acquire`` of its process (nested steps of one
    run); otherwise a second ``acquire`` in the same process is refused like another run's.
    """

    locked_error: type[OSError] = OSError
    lost_error: type[OSError] = OSError
    reentrant = False

    def __init__(self, lake: str | Lake, where: str, ttl: float):
        self.lake = lake if isinstance(lake, Lake) else Lake(lake)
        self.path = posixpath.join(self.lake._root, where)
        self.url = self.path if self.lake.is_local else self.lake.fs.unstrip_protocol(self.path)
        self.ttl = float(ttl)
        self.store = _store(self.lake, self.path)
        self.version = None
        self.lost: str | None = None
        self._depth = 0
        self._shared: LeaseLock | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.meta = {"owner": secrets.token_hex(8), "host": host(), "pid": str(os.getpid()),
                     "pid_start": str(process_start(os.getpid()) or ""), "started": _now(),
                     "ttl": str(int(self.ttl))}

    # what a subclass says
    def describe_locked(self, holder: dict, modified: float) -> str:
        return f"{self.url} is held by another run ({who(holder, modified)})"

    def describe_lost(self) -> str:
        return f"{self.url} was taken over by another run (not renewed in time)"

    def took_over(self, holder: dict, modified: float) -> None:
        log.warning("%s: taken over from a run that is gone (%s)", self.url, who(holder, modified))

    @property
    def held(self) -> bool:
        return self._shared is not None or self.version is not None

    # taking and keeping it
    def acquire(self, wait: float = 0) -> "LeaseLock":
        """Take the lock; while another live run holds it, look again every few seconds
        for up to ``wait`` seconds, then raise ``locked_error``."""
        deadline = time.monotonic() + wait
        while True:
            try:
                return self._acquire()
            except self.locked_error:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise
                time.sleep(min(5.0, left))

    def _acquire(self) -> "LeaseLock":
        with _held_guard:
            other = _held.get(self.url) if self.reentrant else None
            if other is not None and other is not self:
                other._depth += 1
                self._shared = other
                return self
            self._shared = None
            if self._depth == 0:
                self._take()
                _held[self.url] = self
                self._start_renewing()
            self._depth += 1
        return self

    def _take(self) -> None:
        for _ in range(5):
            self.version = self.store.create(self._fresh())
            if self.version is not None:
                return
            h = self.store.head()
            if h is None:
                continue          # released meanwhile: create again
            version, modified, holder = h
            if not self._gone(holder, modified):
                raise self.locked_error(self.describe_locked(holder, modified))
            self.version = self.store.replace(version, self._fresh())
            if self.version is not None:
                self.took_over(holder, modified)
                return
        raise self.locked_error(f"the lock {self.url} keeps changing hands; try again")

    def check_free(self) -> None:
        """``locked_error`` if a live run holds the lock now (a look before starting
        Prefect, or before reading what the lock guards); a re-entrant lock this process
        holds counts as free."""
        if self.reentrant and self.url in _held:
            return
        h = self.store.head()
        if h is not None and not self._gone(h[2], h[1]):
            raise self.locked_error(self.describe_locked(h[2], h[1]))

    def _fresh(self) -> dict:
        return {**self.meta, "renewed": _now()}

    def _gone(self, holder: dict, modified: float) -> bool:
        if holder.get("host") == host() and holder.get("pid"):
            try:
                return not pid_alive(int(holder["pid"]), holder.get("pid_start") or None)
            except (TypeError, ValueError):
                pass
        try:
            ttl = float(holder.get("ttl") or self.ttl)
        except (TypeError, ValueError):
            ttl = self.ttl
        return time.time() - modified > ttl + STAMP_GRACE

    def _start_renewing(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._renew_loop, name=f"lease {self.url}", daemon=True)
        self._thread.start()

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                self.renew()
            except Exception as exc:  # a storage error: try again at the next beat
                log.warning("%s: renewal failed (%s)", self.url, exc)
            if self.lost:
                return

    def renew(self) -> None:
        version = self.store.replace(self.version, self._fresh())
        if version is None:
            self.lost = self.describe_lost()
        else:
            self.version = version

    def check(self) -> None:
        """``lost_error`` when this run no longer holds the lock (call between steps)."""
        owner = self._shared or self
        if owner.lost:
            raise self.lost_error(owner.lost)

    def release(self) -> None:
        with _held_guard:
            if self._shared is not None:
                self._shared._depth -= 1
                self._shared = None
                return
            if self._depth == 0:
                return    # never taken (or released already)
            self._depth -= 1
            if self._depth > 0:
                return
            _held.pop(self.url, None)
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if not self.lost and self.version is not None:
            self.store.delete(self.version)
        self.version = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()


def who(holder: dict, modified: float) -> str:
    """The holder as a message names it: pid, host, start, last renewal."""
    if not holder.get("pid"):
        return "holder unknown: the lock is empty or unreadable"
    renewed = datetime.fromtimestamp(modified, timezone.utc).isoformat(timespec="seconds")
    return f"pid {holder.get('pid')} on {holder.get('host')}, since {holder.get('started')}, renewed {renewed}"

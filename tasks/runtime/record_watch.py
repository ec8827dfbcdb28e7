"""Where an extraction worker is, readable by its parent while the worker runs or after it died.

A small file mapped into memory by both sides: the worker writes its pid, the offset of the
record it is working on (-1 between records), when that record began and the input bytes
read so far; the parent reads them to show byte progress, to stop a record that runs too
long or grows too large, and, when the worker dies, to know which record killed it. One
write is a ``struct.pack_into`` into shared memory (no system call), cheap enough for every
record.
"""
from __future__ import annotations

import mmap
import os
import struct
import tempfile
import time
from dataclasses import dataclass

from warclake.tasks.lake.owners import remove_dead_tmp, tmp_name

WATCH_BASE = "warclake-watch"   # watch files are owner-tagged temporaries of this base name

# pid, record offset (-1: between records), input bytes read, record start (CLOCK_MONOTONIC,
# the same clock in every process of the machine), terminated (1: stopped by its pool, not
# by its own record)
_FMT = struct.Struct("<qqqdq")


@dataclass(frozen=True)
class WatchState:
    pid: int
    offset: int
    bytes_read: int
    started: float
    terminated: bool

    @property
    def busy(self) -> bool:
        return self.offset >= 0


class RecordWatch:
    """``RecordWatch.create()`` in the parent, ``RecordWatch(path)`` in the worker."""

    def __init__(self, path: str):
        self.path = path
        with open(path, "r+b") as fh:
            self._map = mmap.mmap(fh.fileno(), _FMT.size)
        self._pid = os.getpid()
        self.killed_for: str | None = None   # set by the parent when it stopped the worker

    @classmethod
    def create(cls) -> "RecordWatch":
        path = os.path.join(tempfile.gettempdir(), tmp_name(WATCH_BASE))
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, _FMT.pack(0, -1, 0, 0.0, 0))
        os.close(fd)
        return cls(path)

    @staticmethod
    def remove_left_by_dead_runs() -> None:
        """Remove the watch files of parents that were killed (their names carry the owner)."""
        remove_dead_tmp(tempfile.gettempdir(), [WATCH_BASE])

    # worker side
    def record(self, offset: int, bytes_read: int) -> None:
        _FMT.pack_into(self._map, 0, self._pid, offset, bytes_read, time.monotonic(), 0)

    def idle(self, bytes_read: int) -> None:
        _FMT.pack_into(self._map, 0, self._pid, -1, bytes_read, 0.0, 0)

    def terminated(self) -> None:
        pid, offset, read, started, _ = _FMT.unpack_from(self._map)
        _FMT.pack_into(self._map, 0, pid, offset, read, started, 1)

    # parent side
    def read(self) -> WatchState:
        pid, offset, read, started, term = _FMT.unpack_from(self._map)
        return WatchState(pid, offset, read, started, bool(term))

    def close(self, remove: bool = False) -> None:
        self._map.close()
        if remove:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass

    def __enter__(self) -> "RecordWatch":
        return self

    def __exit__(self, *exc) -> None:
        self.close(remove=True)

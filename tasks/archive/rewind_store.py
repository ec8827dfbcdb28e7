"""The bytes read since a mark, kept so that reading can go back to the mark.

A plain WARC record whose Content-Length is too large is only known to be wrong once that
many bytes have been read, and the records it ran over must then be read again from just
past its start. The input cannot seek (it may be an HTTP body), so what was read is kept:
in memory up to ``MEMORY_CAP``, then in an anonymous temporary file, so memory stays flat
whatever length a record declares (the file holds at most what the input had left).
"""
from __future__ import annotations

import tempfile
from typing import IO, Iterator

MEMORY_CAP = 16 << 20   # bytes kept in memory; past this they go to a temporary file
REPLAY_STEP = 1 << 20   # bytes per read when they are read back from the file


class RewindStore:
    """Append-only bytes (the last ones can be taken back), read back once."""

    __slots__ = ("_parts", "_file", "size")

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._file: IO[bytes] | None = None
        self.size = 0

    def add(self, data: bytes) -> None:
        self.size += len(data)
        if self._file is not None:
            self._file.write(data)
            return
        self._parts.append(data)
        if self.size > MEMORY_CAP:
            self._file = tempfile.TemporaryFile(prefix="warclake-rewind-")
            for part in self._parts:
                self._file.write(part)
            self._parts = []

    def drop(self, n: int) -> None:
        """Forget the last ``n`` bytes (they were put back, to be read and added again)."""
        n = min(n, self.size)
        self.size -= n
        if self._file is not None:
            self._file.truncate(self.size)
            self._file.seek(self.size)
            return
        while n:
            last = self._parts.pop()
            if n < len(last):
                self._parts.append(last[:len(last) - n])
                break
            n -= len(last)

    def in_memory(self) -> bytes | None:
        """All of it, unless it went to disk."""
        return None if self._file is not None else b"".join(self._parts)

    def tail(self, n: int, before: int = 0) -> Iterator[bytes]:
        """The ``n`` bytes that end ``before`` bytes before the end, in pieces (read from
        the file when they are on disk)."""
        stop = max(self.size - before, 0)
        n = min(n, stop)
        if self._file is None:
            yield b"".join(self._parts)[stop - n:stop]
            return
        f, end = self._file, self.size
        f.flush()
        f.seek(stop - n)
        try:
            while n > 0:
                chunk = f.read(min(n, REPLAY_STEP))
                if not chunk:
                    break
                n -= len(chunk)
                yield chunk
        finally:
            if not f.closed:
                f.seek(end)  # later bytes are appended

    def replay(self) -> Iterator[bytes]:
        """All of it from the start, in pieces; the store is used up (its file closed)."""
        if self._file is None:
            yield b"".join(self._parts)
            self._parts = []
            return
        f, self._file = self._file, None
        try:
            f.flush()
            f.seek(0)
            while chunk := f.read(REPLAY_STEP):
                yield chunk
        finally:
            f.close()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._parts = []

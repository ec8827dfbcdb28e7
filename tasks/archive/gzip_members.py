"""The gzip members of a per-record gzip archive, inflated one at a time and checked.

warcio inflates members itself but swallows inflate errors and never checks a member's
CRC32 or length, so a damaged member reads as a short record or as the end of the archive.
Here every member is inflated with ISA-L, which checks the trailer, and a member either
ends cleanly (``damage`` is None) or with the reason it is damaged. After damage,
:meth:`MemberReader.find_member` scans forward for the next member that starts a record.

Only forward reads of the underlying stream are used; the compressed bytes of the current
member are kept (up to a cap) so the scan can start right after a damaged member's start.
"""
from __future__ import annotations

from typing import Callable, cast

from isal import isal_zlib

from warclake.tasks.archive.lines import starts_record

# ISA-L's inflate error (isal's stubs declare ``error`` an Exception instance, not a class)
IsalError = cast(type[Exception], isal_zlib.error)


def gzip_decompressor():
    """An inflater of gzip data (one member), ISA-L's: about twice zlib's speed."""
    return isal_zlib.decompressobj(16 + isal_zlib.MAX_WBITS)

MAGIC = b"\x1f\x8b\x08"    # gzip id and the deflate method: how every member starts
RESERVED_FLAGS = 0xE0      # FLG bits 5-7 (RFC 1952): zlib refuses them, ISA-L reads past them
READ_SIZE = 32 << 10       # compressed bytes per read: the inflated output stays small
KEEP_CAP = 16 << 20        # compressed bytes of one member kept for a rescan (records are far smaller)
PEEK = 4096                # compressed bytes inflated to judge a candidate member
SCAN_STEP = 1 << 20


def _inflates_to_record(data: bytes) -> bool:
    """Whether a gzip member starting these bytes opens with a WARC or ARC record."""
    d = gzip_decompressor()
    try:
        head = d.decompress(data, 1024)
    except IsalError:
        return False
    return bool(head.lstrip(b"\r\n")) and starts_record(head)


class MemberReader:
    """Members of the stream ``read(n)``, one after another.

    ``begin(pos)`` starts the member at ``pos``; ``read()`` gives its inflated bytes and
    b"" once it has ended, then ``damage`` says why it is unusable (None: ended cleanly
    with a good CRC and length, ``end`` is where the next member starts).
    """

    def __init__(self, read: Callable[[int], bytes]):
        self._read = read
        self._chunks: list[bytes] = []  # compressed bytes read and not yet dropped
        self._base = 0                  # offset of _chunks[0][0]
        self._front = 0                 # offset just past the last byte read
        self._eof = False
        self.start = 0
        self.end: int | None = None     # where the current member ended (cleanly or not)
        self.damage: str | None = None
        self.reserved_flags = 0         # of the current member's header
        self._d = None
        self._fed = 0                   # offset of the next byte to inflate
        self._keep = True

    # ---- the compressed bytes

    def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = self._read(READ_SIZE)
        if not chunk:
            self._eof = True
            return False
        self._chunks.append(chunk)
        self._front += len(chunk)
        return True

    def _drop_before(self, pos: int) -> None:
        while self._chunks and self._base + len(self._chunks[0]) <= pos:
            self._base += len(self._chunks.pop(0))

    def _bytes(self, a: int, b: int) -> bytes:
        """Compressed bytes [a, b) (fewer at the end of the input); a >= what is kept."""
        while self._front < b and self._fill():
            pass
        out, at = [], self._base
        for c in self._chunks:
            lo, hi = max(a - at, 0), min(b - at, len(c))
            if lo < hi:
                out.append(c[lo:hi] if (lo, hi) != (0, len(c)) else c)
            at += len(c)
            if at >= b:
                break
        return b"".join(out)

    def at_end(self, pos: int) -> bool:
        """Nothing left at ``pos``."""
        while self._front <= pos and self._fill():
            pass
        return self._front <= pos

    @property
    def size(self) -> int:
        """Bytes read so far (the input's size once it ended)."""
        return self._front

    # ---- one member

    def begin(self, pos: int) -> bool:
        """Start the member at ``pos``; False when no gzip member starts there."""
        self._drop_before(pos)
        self.start, self.end, self.damage = pos, None, None
        head = self._chunks[0] if self._chunks else b""
        at = pos - self._base
        if not (head.startswith(MAGIC, at) if at + 4 <= len(head) else self._bytes(pos, pos + 3) == MAGIC):
            return False
        flags = head[at + 3] if at + 4 <= len(head) else (self._bytes(pos + 3, pos + 4) or b"\0")[0]
        self.reserved_flags = flags & RESERVED_FLAGS
        self._d = gzip_decompressor()
        self._fed = pos
        self._keep = True
        return True

    def read(self) -> bytes:
        """The next inflated bytes of the member; b"" once it has ended."""
        d = self._d
        while d is not None:
            if self._fed >= self._front and not self._fill():
                return self._finish("archive ends inside this gzip member (truncated)")
            chunk, at = self._chunk_at(self._fed)
            fed = len(chunk) - (self._fed - at)
            try:
                out = d.decompress(memoryview(chunk)[self._fed - at:] if at != self._fed else chunk)
            except IsalError as exc:
                return self._finish(_gzip_error(exc))
            if d.eof:
                self._fed += fed - len(d.unused_data)
                self.end = self._fed
                self._d = None
                if not self._keep:
                    self._drop_before(self.end)
                return out
            self._fed += fed
            if self._fed - self.start > KEEP_CAP and self._keep:
                self._keep = False  # a huge member: a rescan starts where inflating stopped
            if not self._keep:
                self._drop_before(self._fed)
            if out:
                return out
        return b""

    def _chunk_at(self, pos: int) -> tuple[bytes, int]:
        at = self._base
        for c in self._chunks:
            if pos < at + len(c):
                return c, at
            at += len(c)
        raise AssertionError("position not kept")  # pragma: no cover

    def _finish(self, reason: str) -> bytes:
        self.damage = reason
        self.end = self._fed
        self._d = None
        return b""

    def drain(self) -> None:
        """Inflate the rest of the member (to check its CRC and length)."""
        while self.read():
            pass

    # ---- resynchronisation

    def find_member(self, pos: int) -> int | None:
        """Offset of the first member at or after ``pos`` that inflates to a record
        (None: none before the end of the input). Bytes before it are dropped."""
        pos = max(pos, self._base)
        while True:
            data = self._bytes(pos, pos + SCAN_STEP + PEEK)
            last = len(data) < SCAN_STEP + PEEK
            limit = len(data) if last else SCAN_STEP
            i = data.find(MAGIC, 0, limit + len(MAGIC) - 1)
            while i != -1:
                if _inflates_to_record(data[i:i + PEEK]):
                    self._drop_before(pos + i)
                    return pos + i
                i = data.find(MAGIC, i + 1, limit + len(MAGIC) - 1)
            if last:
                self._drop_before(pos + len(data))
                return None
            pos += limit
            self._drop_before(pos)


def _gzip_error(exc: Exception) -> str:
    text = str(exc)
    if "checksum" in text.lower() or "length" in text.lower():
        return f"gzip member fails its CRC/length check ({text})"
    return f"gzip member does not inflate ({text})"


def has_member(data: bytes) -> bool:
    """Whether a gzip member that starts a record begins anywhere in ``data``."""
    i = data.find(MAGIC)
    while i != -1:
        if _inflates_to_record(data[i:i + PEEK]):
            return True
        i = data.find(MAGIC, i + 1)
    return False

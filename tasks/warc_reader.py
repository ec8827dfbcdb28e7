"""Streaming reader for WARC / WET / WAT (and ARC) archives, plain or per-record gzip.

Wraps warcio so that:
- every record comes out with its byte offset (compressed offset for .gz),
- a truncated or corrupted archive ends the iteration with a recorded break
  (offset + error) instead of an exception, keeping every record before it; in a
  seekable per-record gzip archive, reading resumes at the next intact member,
- an error raised by the *underlying stream* (network, storage) is re-raised as
  :class:`TransientInputError`, because retrying those can help while retrying
  corrupt bytes cannot.

Memory stays flat: payloads are read only for candidate records and capped.
"""
from __future__ import annotations

import logging
import threading
import zlib
from dataclasses import dataclass, field
from typing import BinaryIO, Iterator

from isal import isal_zlib
from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import BufferedReader

log = logging.getLogger(__name__)


_members = threading.local()  # the gzip decompressor of the member being read, per thread


def _gzip_decompressor():
    """Inflate with ISA-L (about twice zlib's speed on WARC.gz) and remember the member's
    decompressor: warcio ends silently at a truncated last member, and its ``eof`` flag is
    how we notice."""
    d = isal_zlib.decompressobj(16 + isal_zlib.MAX_WBITS)
    if not getattr(_members, "in_payload", False):  # not an HTTP Content-Encoding: gzip body
        _members.last = d
    return d


BufferedReader.DECOMPRESSORS["gzip"] = _gzip_decompressor


class TransientInputError(IOError):
    """Reading the input stream itself failed (network/storage): worth a retry."""


class _GuardedStream:
    """Passes reads through; tags exceptions of the underlying stream as transient."""

    def __init__(self, raw: BinaryIO):
        self._raw = raw
        self.bytes_read = 0
        self.head = self._read(4096)  # peeked: tells gzip from plain, and an archive from anything else
        self._pending = self.head

    def _read(self, size: int) -> bytes:
        try:
            return self._raw.read(size)
        except Exception as exc:  # anything the stream raises is an I/O problem, not bad bytes
            raise TransientInputError(f"reading input failed after {self.bytes_read} bytes: {exc!r}") from exc

    def read(self, size: int = -1) -> bytes:
        if self._pending:
            if size is None or size < 0:
                data = self._pending + self._read(-1)
                self._pending = b""
            else:
                data, self._pending = self._pending[:size], self._pending[size:]
        else:
            data = self._read(size)
        self.bytes_read += len(data)
        return data

    def close(self) -> None:
        self._raw.close()


@dataclass(slots=True)
class RawRecord:
    offset: int
    rec_type: str
    url: str | None
    record_id: str | None
    warc_date: str | None
    truncated: str | None           # value of WARC-Truncated, if any
    content_type: str | None        # WARC Content-Type (e.g. application/http; msgtype=response)
    length: int = 0                 # WARC Content-Length: the record block's size
    http_status: int | None = None
    http_headers: dict[str, str] | None = None  # lower-cased names, first value wins
    http_error: str | None = None   # HTTP head could not be parsed
    _record: object = field(default=None, repr=False)
    _max_payload: int = 0
    _complete: bool | None = None

    def read_payload(self) -> tuple[bytes, int | None]:
        """The decoded HTTP payload (chunked and content encodings undone): at most
        max_payload bytes of it, and the whole payload's length (see :func:`_read_capped`).

        Raises on decoding errors within the first max_payload bytes.
        """
        _members.in_payload = True
        try:
            return _read_capped(self._record.content_stream(), self._max_payload)
        finally:
            _members.in_payload = False

    def complete(self) -> bool:
        """Drain what is left of the record; False when the archive ended inside it."""
        if self._complete is None:
            rest = self._record.raw_stream
            while rest.read(1 << 16):
                pass
            self._complete = not getattr(rest, "limit", 0)
        return self._complete

    def read_raw(self) -> tuple[bytes, int | None]:
        """The record block (WET/WAT records have no HTTP layer): at most max_payload bytes
        of it, and its whole length (see :func:`_read_capped`)."""
        return _read_capped(self._record.raw_stream, self._max_payload)


def _read_capped(stream, cap: int) -> tuple[bytes, int | None]:
    """At most ``cap`` bytes of ``stream``, and the length of all of it: a longer stream is
    read to its end and counted, not kept, so memory stays flat. The data is shorter than
    the length exactly when the stream is longer than ``cap``; the length is None when the
    part past ``cap`` could not be read (its length is unknown, only that it is over)."""
    data = stream.read(cap + 1)
    size = len(data)
    if size <= cap:
        return data, size
    try:
        while chunk := stream.read(1 << 20):
            size += len(chunk)
    except TransientInputError:
        raise
    except Exception:  # bad chunking or encoding, or a corrupt member, past the cap
        return data[:cap], None
    return data[:cap], size


@dataclass
class ArchiveBreak:
    """Where and why an archive stopped being readable."""
    offset: int
    error: str


class ArchiveReader:
    """Iterate the records of one archive; after iteration, ``broken`` tells if it ended early.

    A record whose block is shorter than its Content-Length (the archive was cut inside
    it) is still yielded, with ``complete`` False on the reader for that last record, so
    the caller can account for it as ``record_broken``.
    """

    def __init__(self, raw: BinaryIO, max_payload: int = 8 << 20):
        self._raw = raw
        self._stream = _GuardedStream(raw)
        self._max_payload = max_payload
        self.broken: ArchiveBreak | None = None  # the first break
        self.resumed: list[tuple[int, int]] = []  # (broken at, reading resumed at) per skipped region
        self.records = 0
        self._bytes_before = 0  # read by earlier segments (before a resync)
        self._arc = False

    @property
    def bytes_read(self) -> int:
        return self._bytes_before + self._stream.bytes_read

    def __iter__(self) -> Iterator[RawRecord]:
        problem = not_an_archive(self._stream.head)
        # warcio gives converted ARC records a random WARC-Record-ID: left out, so the
        # document id is derived from the archive and offset and stays the same per run
        self._arc = is_arc(self._stream.head)
        if problem:
            self.broken = ArchiveBreak(0, problem)
            return
        base = 0
        while True:
            resume = yield from self._segment(base)
            if resume is None:
                return
            self._bytes_before += self._stream.bytes_read
            self._raw.seek(resume)
            self._stream = _GuardedStream(self._raw)
            base = resume

    def _segment(self, base: int):
        """Read records from the current stream position (archive offset ``base``).

        Returns where to resume after corruption in a gzip archive (the next gzip member
        that starts a WARC record), or None when the archive is done or cannot resume.
        """
        _members.last = None  # before the iterator: it creates the first member's decompressor
        it = ArchiveIterator(self._stream, arc2warc=True, check_digests=False)
        offset = base
        try:
            for rec in it:
                offset = base + it.offset  # record start (get_record_offset() would read it to the end)
                self.records += 1
                raw = self._wrap(rec, offset)
                yield raw
                if not raw.complete():
                    self._break(offset, "archive ends inside this record")
                    return None
            last = getattr(_members, "last", None)
            gzipped = self._stream.head[:2] == b"\x1f\x8b"
            if gzipped and last is not None and not last.eof:
                self._break(offset, "archive ends inside a gzip member (truncated file)")
            return None
        except TransientInputError:
            raise
        except Exception as exc:  # warcio's ArchiveLoadFailed, zlib errors, bad headers...
            at = max(base + _safe_offset(it, 0), offset)
            self._break(at, _describe(exc))
            log.warning("archive broken at %s: %s", at, _describe(exc))
            resume = self._next_member(at)
            if resume is not None:
                self.resumed.append((at, resume))
            return resume

    def _break(self, offset: int, error: str) -> None:
        if self.broken is None:
            self.broken = ArchiveBreak(offset, error)

    def _next_member(self, after: int) -> int | None:
        """Offset of the next gzip member after ``after`` that inflates to a WARC record.

        Common Crawl writes one gzip member per record, so after a corrupt member the
        following records are still readable; this needs a seekable input.
        """
        if self._stream.head[:2] != b"\x1f\x8b" or not _seekable(self._raw):
            return None
        try:
            self._raw.seek(after + 1)
            pos, carry = after + 1, b""
            while True:
                chunk = self._raw.read(1 << 20)
                if not chunk:
                    return None
                data = carry + chunk
                i = data.find(b"\x1f\x8b\x08")
                while i != -1:
                    try:
                        head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[i:i + 65536], 8)
                    except zlib.error:
                        head = b""
                    if head.startswith(b"WARC/"):
                        return pos - len(carry) + i
                    i = data.find(b"\x1f\x8b\x08", i + 1)
                carry = data[-65536:]  # a member header may straddle chunks
                pos += len(chunk)
        except Exception as exc:  # stream errors: a retry of the whole archive may help
            raise TransientInputError(f"resync after a corrupt member failed: {exc!r}") from exc

    def _wrap(self, rec, offset: int) -> RawRecord:
        h: dict[str, str] = {}
        for k, v in rec.rec_headers.headers:  # one pass; get_header() rescans the list per call
            h.setdefault(k.lower(), v)
        raw = RawRecord(
            offset=offset,
            rec_type=rec.rec_type or "",
            url=h.get("warc-target-uri"),
            record_id=None if self._arc else h.get("warc-record-id"),
            warc_date=h.get("warc-date"),
            truncated=h.get("warc-truncated"),
            content_type=h.get("content-type"),
            length=_int(h.get("content-length")),
            _record=rec,
            _max_payload=self._max_payload,
        )
        if rec.http_headers is not None and rec.rec_type in ("response", "revisit"):
            try:
                raw.http_status = int(rec.http_headers.get_statuscode())
            except (TypeError, ValueError):
                raw.http_error = f"bad status line: {rec.http_headers.statusline!r}"[:200]
            hdrs: dict[str, str] = {}
            for k, v in rec.http_headers.headers:
                hdrs.setdefault(k.lower(), v)
            raw.http_headers = hdrs
        return raw


def _describe(exc: Exception) -> str:
    """A one-line, printable error text (warcio quotes raw garbage bytes in its messages)."""
    text = f"{type(exc).__name__}: {exc}"
    text = " ".join(text.split())
    text = "".join(ch if ch.isascii() and ch.isprintable() else "?" for ch in text)
    return text[:300]


def iter_responses(path: str) -> Iterator[tuple[str | None, bytes, str | None]]:
    """(url, HTTP payload, Content-Type) of every response record of a local archive."""
    with open(path, "rb") as fh:
        for rec in ArchiveReader(fh):
            if rec.rec_type == "response" and rec.http_headers is not None:
                body, _ = rec.read_payload()
                yield rec.url, body, rec.http_headers.get("content-type")


def _leading_text(head: bytes) -> bytes:
    """The first bytes of the archive's content (inflated if gzip), leading newlines off;
    empty when a gzip member is too long to peek into."""
    text = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 64) if head[:2] == b"\x1f\x8b" else head
    return text.lstrip(b"\r\n")


def is_arc(head: bytes) -> bool:
    """An ARC file (its first record is the ``filedesc://`` header)."""
    try:
        return _leading_text(head).startswith(b"filedesc://")
    except zlib.error:
        return False


def not_an_archive(head: bytes) -> str | None:
    """Why these first bytes cannot start a WARC or ARC file (None when they can).

    warcio is lenient: text lines may parse as ARC records. A real archive starts with
    ``WARC/`` or an ARC ``filedesc://`` header, possibly inside a gzip member.
    """
    if not head:
        return None  # empty file: no records, nothing wrong
    try:
        text = _leading_text(head)
    except zlib.error as exc:
        return f"not an archive: bad gzip header ({exc})"
    if text.startswith((b"WARC/", b"filedesc://")) or not text:
        return None
    shown = "".join(chr(b) if 32 <= b < 127 else "?" for b in text[:40])
    return f"not a WARC/ARC archive: starts with {shown!r}"


def _seekable(raw) -> bool:
    try:
        return bool(raw.seekable())
    except Exception:
        return False


def _int(value: str | None) -> int:
    try:
        return int(value) if value else 0
    except ValueError:
        return 0


def _safe_offset(it, fallback: int) -> int:
    """Where reading stopped: warcio's next-record offset, never before the last record read."""
    try:
        return max(int(it.offset), fallback)
    except Exception:
        return fallback

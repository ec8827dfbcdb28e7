"""Streaming reader for WARC / WET / WAT (and ARC) archives, plain or per-record gzip.

Wraps warcio's record parser so that:
- every record comes out with its byte offset (compressed offset of its member for .gz),
- damage never ends the reading early: a gzip member that does not inflate or fails its
  CRC/length check, a record cut inside its header or block, a Content-Length that does
  not match the bytes, garbage between records -- each is one entry of ``skipped``
  (offset, length, reason), and reading resumes at the next gzip member, or the next line,
  that starts a record. Only forward reads are used, so this holds on HTTP streams too,
- ``clean`` is True only when the whole input was read to its end without damage,
- an error raised by the *underlying stream* (network, storage) is re-raised as
  :class:`TransientInputError`, because retrying those can help while retrying
  corrupt bytes cannot.

Memory stays flat: payloads are read only for candidate records and capped; what is kept
in memory for resynchronising is bounded (see ``archive_lines``, ``rewind_store`` and
``gzip_members``).
"""
from __future__ import annotations

import logging
import re
import zlib
from dataclasses import dataclass, field
from typing import BinaryIO, Callable, Iterator

from warcio.bufferedreaders import BufferedReader
from warcio.recordloader import ArcWarcRecord, ArcWarcRecordLoader

from warclake.tasks.archive.block_digest import block_digest_ok
from warclake.tasks.archive.content_encoding import payload_stream
from warclake.tasks.archive.gzip_members import IsalError, MemberReader, gzip_decompressor, has_member
from warclake.tasks.archive.lines import (
    QUIRK_LINE_ENDS,
    LineReader,
    has_warc_line,
    is_arc_line,
    is_blank,
    is_record_line,
    is_warc_line,
    line_end,
    line_end_quirk,
    starts_record,
)

log = logging.getLogger(__name__)

READ_SIZE = 64 << 10     # plain archives: bytes per read
HEADER_CAP = 1 << 20     # a WARC header longer than this is damage, not a header
LINE_CAP = 1 << 16       # what is read looking for the blank lines after a block
PROBE = 256 << 10        # how far an input that starts with neither gzip nor a record is probed for members
_CONTENT_LENGTH = re.compile(r"\s*\d+\s*", re.ASCII)
_SINGLE_FIELDS = frozenset({"content-length", "content-type", "warc-type", "warc-record-id", "warc-date"})
_BAD_FIELD = re.compile(rb"\n[^:\s][^:\n]*\n")  # a header line that is neither "name: value" nor a continuation


# warcio's own payload streams (content_stream) inflate gzip bodies with ISA-L too
BufferedReader.DECOMPRESSORS["gzip"] = gzip_decompressor


class TransientInputError(IOError):
    """Reading the input stream itself failed (network/storage): worth a retry."""


class _GuardedStream:
    """Passes reads through; tags exceptions of the underlying stream as transient, and
    keeps raising once one happened (a caller may have swallowed the first)."""

    def __init__(self, raw: BinaryIO):
        self._raw = raw
        self.bytes_read = 0
        self._pending = b""
        self._failed: TransientInputError | None = None

    def _read(self, size: int) -> bytes:
        if self._failed is not None:
            raise self._failed
        try:
            return self._raw.read(size)
        except Exception as exc:  # anything the stream raises is an I/O problem, not bad bytes
            self._failed = TransientInputError(f"reading input failed after {self.bytes_read} bytes: {exc!r}")
            raise self._failed from exc

    def peek(self, size: int) -> bytes:
        """The first ``size`` bytes still to read (fewer at the end), without consuming them."""
        if len(self._pending) < size:
            parts = [self._pending]
            have = len(self._pending)
            while have < size:
                chunk = self._read(size - have)
                if not chunk:
                    break
                parts.append(chunk)
                have += len(chunk)
            self._pending = b"".join(parts)
        return self._pending[:size] if len(self._pending) > size else self._pending

    def read(self, size: int = -1) -> bytes:
        """``size`` bytes, fewer only at the end: a stream that gives a few bytes per read
        (a slow HTTP body) still comes in whole pieces."""
        if size is None or size < 0:
            data, self._pending = self._pending + self._read(-1), b""
        else:
            data, self._pending = self.peek(size), self._pending[size:]
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
    _record: ArcWarcRecord = field(default=None, repr=False)   # warcio's record (set by the reader)
    _max_payload: int = 0
    _settle: Callable[[], bool] | None = field(default=None, repr=False)
    _complete: bool | None = None
    # Quirks of the writer that cost nothing (ledger ``quirks``): line ends, a digest that
    # does not match an intact block, reserved gzip flags, how the content encoding read
    quirks: list[str] = field(default_factory=list)

    def read_payload(self) -> tuple[bytes, int | None]:
        """The decoded HTTP payload (chunked and content encodings undone): at most
        max_payload bytes of it, and the whole payload's length (see :func:`_read_capped`).

        Raises on decoding errors within the first max_payload bytes
        (:class:`~.content_encoding.ContentEncodingError` for a content encoding).
        """
        stream = payload_stream(self._record, self.quirks)
        return _read_capped(stream, self._max_payload)

    def all_quirks(self) -> list[str]:
        """The record's quirks, once it is read to its end (some show only there)."""
        self.complete()
        return self.quirks

    def complete(self) -> bool:
        """Drain what is left of the record; False when it is damaged: cut short, not
        ending where its Content-Length says, or in a gzip member that fails its checks."""
        if self._complete is None:
            self._complete = self._settle() if self._settle is not None else True
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
    except Exception:  # bad chunking or encoding past the cap
        return data[:cap], None
    return data[:cap], size


@dataclass
class ArchiveBreak:
    """Where and why an archive first stopped being readable."""
    offset: int
    error: str


@dataclass
class Skip:
    """A byte range of the input whose records were lost, and why."""
    offset: int
    length: int
    reason: str


@dataclass(slots=True)
class RecordEnd:
    """How a record's bytes ended, settled when its block has been read. ``problem``: the
    record is damaged, and reading goes on from the next record line after its start;
    ``damaged``: an intact record followed by a range to skip (offset, length, reason);
    ``garbage``: the offset where bytes that are no record start after an intact record."""
    problem: str | None = None
    damaged: tuple[int, int, str] | None = None
    garbage: int | None = None


class ArchiveReader:
    """Iterate the records of one archive; afterwards ``skipped`` lists the damaged ranges,
    ``broken`` the first of them, and ``clean`` tells whether there were none.

    A damaged record whose header could be read (cut inside its block, a wrong
    Content-Length, in a member found damaged after its header) is still yielded, with
    ``complete()`` False, so the caller can account for it as ``record_broken``.
    """

    def __init__(self, raw: BinaryIO, max_payload: int = 8 << 20):
        self._stream = _GuardedStream(raw)
        self._max_payload = max_payload
        self._loader = ArcWarcRecordLoader(verify_http=False, arc2warc=True)
        self.broken: ArchiveBreak | None = None
        self.skipped: list[Skip] = []
        self.records = 0
        self._arc: bool | None = None  # plain input: ARC (True) or WARC records seen so far
        self._line_quirk: str | None = None  # of the header read last

    @property
    def bytes_read(self) -> int:
        return self._stream.bytes_read

    @property
    def clean(self) -> bool:
        return not self.skipped

    def __iter__(self) -> Iterator[RawRecord]:
        head = self._stream.peek(4096)
        if not head:
            return  # empty input: no records, nothing wrong
        if head[:2] == b"\x1f\x8b" or (not starts_record(head) and has_member(self._stream.peek(PROBE))):
            yield from self._gzip()
        else:
            yield from self._plain()
        if self.records == 0 and self.skipped:  # nothing in it is an archive: say what it is
            self.broken = ArchiveBreak(0, not_an_archive(head) or self.skipped[0].reason)

    def _skip(self, offset: int, length: int, reason: str) -> None:
        self.skipped.append(Skip(offset, max(length, 0), reason))
        if self.broken is None:
            self.broken = ArchiveBreak(offset, reason)
        log.warning("archive damaged at %d (%d bytes): %s", offset, length, reason)

    # ---- per-record gzip

    def _gzip(self):
        members = MemberReader(self._stream.read)
        pos = 0
        while not members.at_end(pos):
            if not members.begin(pos):
                nxt = members.find_member(pos + 1)
                self._skip(pos, (members.size if nxt is None else nxt) - pos,
                           "bytes that are not a gzip member" if nxt is not None or pos == 0
                           else "trailing bytes after the last gzip member")
                if nxt is None:
                    return
                pos = nxt
                continue
            problem = yield from self._member(members)
            members.drain()
            problem = problem or members.damage
            # a damaged member's true end is unknown: look for the next one right after its start
            nxt = members.end if members.damage is None else members.find_member(members.start + 1)
            if problem:
                self._skip(members.start, (members.size if nxt is None else nxt) - members.start, problem)
            if nxt is None:
                return
            pos = nxt

    def _member(self, members: MemberReader):
        """The record of the current member; returns why the member is damaged, if it is."""
        lines = LineReader(members.read)
        first, _, problem = self._header(lines, "gzip member", checked=False)  # the CRC covers it
        if problem or not first:
            return problem
        rec, h, problem = self._parse(lines)
        if problem:
            return problem
        end = RecordEnd()
        raw = self._wrap(rec, h, members.start, first)
        if members.reserved_flags:
            # RFC 1952 asks a reader to refuse these and zlib does; ISA-L inflates the
            # member, and its CRC and length still prove every byte was read as written.
            raw.quirks.append("gzip_reserved_flags")
        quirks = raw.quirks  # not raw itself: a record that refers to itself waits for the GC
        raw._settle = lambda: self._settle_member(rec, lines, members, first, end, quirks)
        self.records += 1
        yield raw
        raw.complete()
        return end.problem

    def _settle_member(self, rec, lines: LineReader, members: MemberReader, first: bytes, end: RecordEnd,
                       quirks: list[str]) -> bool:
        missing = _drain(rec)
        if missing:
            members.drain()
            end.problem = members.damage or "record runs past the end of its gzip member"
            return False
        # in a member, the block is followed by two blank lines (WARC) or one newline (ARC)
        want, eol = _after_block(first, in_member=True)
        line, _, same = _blank_lines(lines, eol, quirks)
        ok = True
        if line and is_record_line(line):
            end.problem = "gzip member holds more than one record (the rest of it is not read)"
        elif line:
            end.problem = "record is shorter than its gzip member (wrong Content-Length)"
            ok = False
        elif same < want:  # the block ran into the blank lines after it
            end.problem = "record runs into the blank lines after it (wrong Content-Length)"
            ok = False
        members.drain()
        if members.damage:
            end.problem = members.damage
            ok = False
        return ok

    # ---- plain

    def _plain(self):
        lines = LineReader(lambda: self._stream.read(READ_SIZE))
        while True:
            first, start, problem = self._header(lines, "archive", checked=True)
            if not first:
                return
            if not problem:
                lines.mark()  # a wrong Content-Length sends us back here
                rec, h, problem = self._parse(lines)
            if problem:
                if self._resync(lines, start, problem, rewind=False) is None:
                    return
                continue
            if self._arc is None:
                self._arc = not first.startswith(b"WARC/")
            end = RecordEnd()
            raw = self._wrap(rec, h, start, first)
            quirks = raw.quirks  # not raw itself: a record that refers to itself waits for the GC
            raw._settle = lambda: self._settle_plain(rec, lines, first, start, end, quirks)
            self.records += 1
            yield raw
            raw.complete()
            if end.problem is not None:
                if self._resync(lines, start, end.problem, rewind=True) is None:
                    return
            else:
                if end.damaged is not None:
                    self._skip(*end.damaged)
                if end.garbage is not None:
                    nxt = lines.scan(self._arc)
                    self._skip(end.garbage, lines.pos - end.garbage, "bytes between records that are no record")
                    if nxt is None:
                        return
            lines.unmark()

    def _resync(self, lines: LineReader, start: int, problem: str, rewind: bool) -> int | None:
        """Skip from the damaged record at ``start`` to the next line that starts a record
        (looking from just past the record's first line when it can be read again); its
        offset, or None at the end of the input."""
        if rewind and lines.rewind():
            lines.readline()
        nxt = lines.scan(self._arc)
        self._skip(start, lines.pos - start, problem)
        return nxt

    def _settle_plain(self, rec, lines: LineReader, first: bytes, start: int, end: RecordEnd,
                      quirks: list[str]) -> bool:
        if _drain(rec):
            end.problem = "archive ends inside this record (or its Content-Length is too large)"
            return False
        digest = self._block_digest(rec, lines, first)
        want, eol = _after_block(first, in_member=False)
        sep_start = lines.pos
        line, blank, same = _blank_lines(lines, eol, quirks)
        lines.unread(line)
        if line and not is_record_line(line):
            if not (want <= same and blank):
                end.problem = "record does not end where its Content-Length says"
                return False
            end.garbage = lines.pos  # the record ended as it should; what follows is no record
        # A block that fails its digest, or has none and is followed by no record, may be a
        # Content-Length that ran over later records and happened to end before blank lines
        if ((digest is False or (digest is None and end.garbage is not None))
                and self._records_inside(rec, lines, first, lines.pos - sep_start)):
            end.garbage = None
            end.problem = ("record does not end where its Content-Length says"
                                " (a record starts inside its block)")
            return False
        if same < want:  # the block ran into the blank lines after it, or they were cut
            end.damaged = (start, lines.pos - start, "record runs into the blank lines after it"
                                if line else "archive ends inside the blank lines after its last record")
            return False
        if digest is False:
            # The block ends exactly on its blank lines and the next record (or the end) and
            # holds no record: structurally intact. warcio, jwarc and pywb read such records
            # (they check digests only on request), and writers do get digests wrong: the
            # record is kept and the mismatch recorded.
            quirks.append("digest_mismatch")
        if same < blank:  # a writer's quirk or a changed byte: the record itself is all there
            end.damaged = (sep_start, lines.pos - sep_start,
                                "damaged blank lines after a record" if line
                                else "archive ends inside the blank lines after its last record")
        return True

    @staticmethod
    def _block_digest(rec, lines: LineReader, first: bytes) -> bool | None:
        """Whether the block just read matches the record's WARC-Block-Digest (None: no
        digest we can check)."""
        declared = rec.rec_headers.get_header("WARC-Block-Digest") if first.startswith(b"WARC/") else None
        block = _block_since_mark(rec, lines) if declared else None
        return None if block is None else block_digest_ok(declared, block)

    @staticmethod
    def _records_inside(rec, lines: LineReader, first: bytes, after: int) -> bool:
        """Whether a WARC record starts inside the block (read up to ``after`` bytes ago)."""
        block = _block_since_mark(rec, lines, after) if first.startswith(b"WARC/") else None
        return block is not None and has_warc_line(block)

    # ---- both

    def _header(self, lines: LineReader, where: str, checked: bool) -> tuple[bytes, int, str | None]:
        """The first line of the record at the current position and its offset (blank
        lines before it skipped, nothing else consumed); b"" at the end. A problem (the
        offending bytes consumed) when no record starts here or its header is cut short."""
        text, whole = lines.peek_header(HEADER_CAP)
        start = lines.pos
        if not text:
            return b"", start, None
        first = text[:text.find(b"\n") + 1] or text
        warc = is_warc_line(first)
        if not warc and not is_arc_line(first):
            lines.readline(LINE_CAP)
            return first, start, "no WARC/ARC record starts here"
        if warc:  # an ARC header is its one line
            if not whole:
                lines.read(len(text))
                return first, start, (f"{where} ends inside a record header" if len(text) <= HEADER_CAP
                                      else "record header too long")
            # no checksum covers a plain header: one that ran into the HTTP head is damage
            if checked and _BAD_FIELD.search(text, len(first)):
                lines.read(len(text))
                return first, start, "malformed WARC header line (no name: value)"
        self._line_quirk = line_end_quirk(first, text) if warc else None
        return first, start, None

    def _parse(self, lines: LineReader):
        """warcio's record at the current position and its header fields (lower-cased names,
        first value wins); (None, None, problem) when it is unusable."""
        try:
            rec = self._loader.parse_record_stream(lines, None, None, False, False, False)
        except TransientInputError:
            raise
        except Exception as exc:  # headers warcio cannot parse
            return None, None, _describe(exc)
        h: dict[str, str] = {}
        twice = set()
        for k, v in rec.rec_headers.headers:  # one pass; get_header() rescans the list per call
            k = k.lower()
            if k not in h:
                h[k] = v
            elif k in _SINGLE_FIELDS:  # a header that ran into the HTTP head repeats its fields
                twice.add(k)
        if twice:
            return None, None, f"malformed WARC header (repeated {', '.join(sorted(twice))})"
        if not h.get("warc-type"):  # mandatory: without it the record would be one of type ''
            return None, None, "WARC header without WARC-Type"
        length = h.get("content-length")
        # warcio reads a bad Content-Length as 0 and a missing one as "to the end"
        if length is None or not _CONTENT_LENGTH.fullmatch(length):
            return None, None, _describe(ValueError(f"bad Content-Length: {length!r}"))
        return rec, h, None

    def _wrap(self, rec, h: dict[str, str], offset: int, first: bytes) -> RawRecord:
        raw = RawRecord(
            offset=offset,
            rec_type=rec.rec_type or "",
            url=h.get("warc-target-uri"),
            # warcio gives converted ARC records a random WARC-Record-ID: left out, so the
            # document id is derived from the archive and offset and stays the same per run
            record_id=h.get("warc-record-id") if first.startswith(b"WARC/") else None,
            warc_date=h.get("warc-date"),
            truncated=h.get("warc-truncated"),
            content_type=h.get("content-type"),
            length=_int(h.get("content-length")),
            _record=rec,
            _max_payload=self._max_payload,
        )
        if self._line_quirk:
            raw.quirks.append(self._line_quirk)
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


def _block_since_mark(rec, lines: LineReader, after: int = 0):
    """The record's block, in pieces: the Content-Length bytes read since the mark that end
    ``after`` bytes before the current position."""
    return lines.tail_since_mark(int(rec.rec_headers.get_header("Content-Length")), after)


def _after_block(first: bytes, in_member: bool) -> tuple[int, bytes]:
    """How many blank lines follow a record's block, and their line end: two for WARC, with
    the line end of the record's first line; one newline for ARC in a gzip member, none
    required in a plain ARC file (writers differ; some count it in the length)."""
    if first.startswith(b"WARC/"):
        return 2, line_end(first)
    return (1 if in_member else 0), b"\n"


_PLAIN_BLANKS = (b"\r\n", b"\n")


def _blank_lines(lines: LineReader, eol: bytes, quirks: list[str]) -> tuple[bytes, int, int]:
    """Read the blank lines after a block: (the first other line, how many blank lines, how
    many of them end alike: with the header's line end, or else all like the first). A
    block that ran into them leaves too few or mixed ones ("\n\r\n" of "\r\n\r\n"). Blank
    lines that end otherwise than the header, all alike, are a writer's quirk (recorded)."""
    blank = same = first_like = 0
    kind = b""   # the first blank line
    line = lines.readline(LINE_CAP)
    while line == eol or line in _PLAIN_BLANKS or is_blank(line):  # the common cases first
        blank += 1
        kind = kind or line
        same += line == eol
        first_like += line == kind
        line = lines.readline(LINE_CAP)
    if first_like > same:
        quirk = QUIRK_LINE_ENDS.get(kind)
        if quirk and first_like >= 2 and quirk not in quirks:
            quirks.append(quirk)
        same = first_like
    return line, blank, same


def _drain(rec) -> int:
    """Read what is left of the record's block; the bytes missing from it (0: all there)."""
    rest = rec.raw_stream
    while rest.read(1 << 16):
        pass
    return rest.limit


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
    text = gzip_decompressor().decompress(head, 64) if head[:2] == b"\x1f\x8b" else head
    return text.lstrip(b"\r\n")


def not_an_archive(head: bytes) -> str | None:
    """Why these first bytes cannot start a WARC or ARC file (None when they can).

    warcio is lenient: text lines may parse as ARC records. A real archive starts with
    ``WARC/`` or an ARC ``filedesc://`` header, possibly inside a gzip member.
    """
    if not head:
        return None  # empty file: no records, nothing wrong
    try:
        text = _leading_text(head)
    except (zlib.error, IsalError) as exc:
        return f"not an archive: bad gzip header ({exc})"
    if text.startswith((b"WARC/", b"filedesc://")) or not text:
        return None
    shown = "".join(chr(b) if 32 <= b < 127 else "?" for b in text[:40])
    return f"not a WARC/ARC archive: starts with {shown!r}"


def _int(value: str | None) -> int:
    try:
        return int(value) if value else 0
    except ValueError:
        return 0

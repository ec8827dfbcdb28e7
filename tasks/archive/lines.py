"""Line-oriented reading of archive bytes, with push-back, rewind and resynchronisation.

The reader sits between a source of bytes (the plain file, or one inflated gzip member)
and warcio's header parsers: it lets the archive reader look at a record's header before
warcio parses it, go back to a record's start when its Content-Length proved wrong, and
scan forward to the next line that starts a record. It never seeks, so it works on
streams that cannot (HTTP).
"""
from __future__ import annotations

import re
from collections import deque
from typing import Callable, Iterable, Iterator

from warclake.tasks.archive.rewind_store import RewindStore

# A line that starts a record: the WARC version line (WARC/0.17 and 0.18 as ClueWeb09
# writes them), or an ARC header line "URL IP DATE CONTENT-TYPE LENGTH" (the URL may hold
# spaces; warcio splits from the right too). Lines may end in CR LF, a bare LF, or CR CR LF
# as some writers leave them (warcio reads all three).
_WARC = rb"WARC/(?:1\.[01]|0\.1[78])\r*\n"
_ARC = rb"[^\s][^\r\n]* [^ \r\n]+ \d{12,14} [^ \r\n]* \d+\r?\n"
_WARC_LINE = re.compile(_WARC)
_ARC_LINE = re.compile(_ARC)
# The same for resynchronising inside garbage: a WARC version line anywhere (a record cut
# short leaves the next one's first line glued to its last), an ARC line at a line start.
_WARC_AT_LINE = re.compile(_WARC)
_ARC_AT_LINE = re.compile(rb"^" + _ARC, re.M)
_ANY_AT_LINE = re.compile(rb"(?:" + _WARC + rb"|^" + _ARC + rb")", re.M)

_BLANKS = re.compile(rb"(?:\r*\n)*")
_HEADER_END = re.compile(rb"\n\r*\n")

SCAN_STEP = 1 << 20


def is_warc_line(line: bytes) -> bool:
    return _WARC_LINE.fullmatch(line) is not None


def is_arc_line(line: bytes) -> bool:
    return _ARC_LINE.fullmatch(line) is not None


def is_record_line(line: bytes) -> bool:
    """A WARC version line or an ARC header line (complete, with its line end)."""
    return is_warc_line(line) or is_arc_line(line)


def is_blank(line: bytes) -> bool:
    """An empty line, whatever its line end (CR LF, LF, CR CR LF)."""
    return line[-1:] == b"\n" and not line[:-1].strip(b"\r")


def line_end(line: bytes) -> bytes:
    """The line end of a line (b"" when it has none)."""
    return line[len(line.rstrip(b"\r\n")):]


# Quirks of other writers that lose nothing, recorded per record (ledger ``quirks``).
QUIRK_LINE_ENDS = {b"\n": "lf_lines", b"\r\r\n": "cr_cr_lf_lines"}


def line_end_quirk(first: bytes, header: bytes) -> str | None:
    """The quirk of a WARC header's line ends, judged by its first line (writers end every
    line alike) and a CR CR LF anywhere: None for CR LF throughout."""
    end = line_end(first)
    if end == b"\r\n":
        return QUIRK_LINE_ENDS[b"\r\r\n"] if b"\r\r\n" in header else None
    return QUIRK_LINE_ENDS.get(end, QUIRK_LINE_ENDS[b"\r\r\n"])  # LF, or two CRs and more


def has_warc_line(chunks: Iterable[bytes]) -> bool:
    """Whether a WARC version line occurs in these bytes (given in pieces, in order)."""
    carry = b""
    for chunk in chunks:
        text = carry + chunk
        if _WARC_AT_LINE.search(text):
            return True
        carry = text[-16:]  # a version line may straddle two pieces
    return False


def starts_record(text: bytes) -> bool:
    """Whether these bytes (the start of a gzip member's content, possibly cut short)
    begin with a record: leading blank lines allowed."""
    text = text.lstrip(b"\r\n")
    if text.startswith(b"WARC/"):
        return _WARC_LINE.match(text) is not None or len(text) < 10
    line = text.split(b"\n", 1)[0] + b"\n"
    return text.startswith(b"filedesc://") or is_arc_line(line)


class LineReader:
    """Buffered ``read``/``readline`` over ``fill()`` (which returns b"" at the end), with
    ``unread``, a mark to rewind to, and ``pos``: bytes consumed so far.

    A rewind puts what was read since the mark in front of the input again; when that went
    to disk (a long record) it is read back from there piece by piece."""

    def __init__(self, fill: Callable[[], bytes]):
        self._fill = fill
        self._buf = b""
        self._i = 0
        self._base = 0          # bytes consumed before the current buffer
        self._history: RewindStore | None = None  # consumed since the mark
        self._replay: deque[Iterator[bytes]] = deque()  # rewound bytes, read before fill()
        self._done = False      # fill() has ended

    @property
    def _ended(self) -> bool:
        return self._done and not self._replay

    @property
    def pos(self) -> int:
        return self._base + self._i

    def _more(self) -> bytes:
        while self._replay:
            chunk = next(self._replay[0], b"")
            if chunk:
                return chunk
            self._replay.popleft()
        if self._done:
            return b""
        chunk = self._fill()
        if not chunk:
            self._done = True
        return chunk

    def _take(self, data: bytes) -> bytes:
        if self._history is not None and data:
            self._history.add(data)
        return data

    def _set(self, buf: bytes, consumed_before: int) -> None:
        self._buf, self._i, self._base = buf, 0, consumed_before

    def read(self, size: int | None = -1) -> bytes:
        have = len(self._buf) - self._i
        if size is not None and 0 <= size <= have:
            j = self._i + size
            data = self._buf[self._i:j]
            self._i = j
            return self._take(data)
        parts = [self._buf[self._i:]]
        got = have
        start = self.pos
        while size is None or size < 0 or got < size:
            chunk = self._more()
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
        data = b"".join(parts)
        if size is not None and 0 <= size < len(data):
            self._set(data[size:], start + size)
            data = data[:size]
        else:
            self._set(b"", start + len(data))
        return self._take(data)

    def readline(self, size: int | None = -1) -> bytes:
        limit = size if size is not None and size >= 0 else -1
        end = self._buf.find(b"\n", self._i)
        if end != -1 and (limit < 0 or end + 1 - self._i <= limit):  # the common case, kept lean
            data = self._buf[self._i:end + 1]
            self._i = end + 1
            return data if self._history is None else self._take(data)
        start = self.pos
        parts = [self._buf[self._i:]]
        got = len(parts[0])
        while end == -1 and (limit < 0 or got < limit):
            chunk = self._more()
            if not chunk:
                break
            end = chunk.find(b"\n")
            parts.append(chunk)
            got += len(chunk)
        data = b"".join(parts)
        cut = data.find(b"\n") + 1 or len(data)
        if limit >= 0:
            cut = min(cut, limit)
        self._set(data[cut:], start + cut)
        return self._take(data[:cut])

    def _extend(self) -> bool:
        """Append the next piece of input to what is buffered; False at the end."""
        chunk = self._more()
        if chunk:
            self._set(self._buf[self._i:] + chunk, self.pos)
        return bool(chunk)

    def peek_header(self, cap: int) -> tuple[bytes, bool]:
        """Skip blank lines, then return (without consuming) the bytes up to and including
        the next blank line, and whether that blank line was found within ``cap`` bytes
        (if not: what there is, up to the end of the input or past ``cap``). Anything but
        a WARC header is its first line (an ARC header, or no header at all)."""
        while True:
            blanks = _BLANKS.match(self._buf, self._i)
            assert blanks is not None   # (it matches the empty string)
            j = blanks.end()
            n = len(self._buf)
            more = j == n or (n - j <= 2 and not self._buf[j:n].strip(b"\r"))  # a line end may straddle reads
            if not more or not self._extend():
                break
        if j > self._i:
            self._take(self._buf[self._i:j])
            self._i = j
        if self._i >= len(self._buf):
            return b"", False
        while not self._buf.startswith(b"WARC/"[:len(self._buf) - self._i], self._i):
            nl = self._buf.find(b"\n", self._i, self._i + cap)
            if nl != -1:
                return self._buf[self._i:nl + 1], True
            if len(self._buf) - self._i > cap or not self._extend():
                return self._buf[self._i:self._i + cap + 1], False
        frm = self._i
        while True:
            m = _HEADER_END.search(self._buf, frm)
            if m is not None:
                return self._buf[self._i:m.end()], True
            seen = len(self._buf) - self._i
            if seen > cap or not self._extend():
                return self._buf[self._i:], False
            frm = max(seen - 2, 0)

    def unread(self, data: bytes) -> None:
        """Put back the bytes just read (the last ones returned)."""
        if not data:
            return
        self._set(data + self._buf[self._i:], self.pos - len(data))
        if self._history is not None:  # read again later: not twice in the history
            self._history.drop(len(data))

    def mark(self) -> None:
        self.unmark()
        self._history = RewindStore()

    def tail_since_mark(self, n: int, before: int = 0) -> Iterator[bytes] | None:
        """The ``n`` bytes read since the mark that end ``before`` bytes before the current
        position, in pieces (None without a mark)."""
        return None if self._history is None else self._history.tail(n, before)

    def rewind(self) -> bool:
        """Back to the mark (False when there is none)."""
        if self._history is None:
            return False
        history, self._history = self._history, None
        data = history.in_memory()
        if data is not None:
            self._set(data + self._buf[self._i:], self.pos - len(data))
            return True
        # from disk: first the rewound bytes, then what was buffered, then the rest
        self._replay.appendleft(iter((self._buf[self._i:],)))
        self._replay.appendleft(history.replay())
        self._set(b"", self.pos - history.size)
        return True

    def unmark(self) -> None:
        if self._history is not None:
            self._history.close()
            self._history = None

    def scan(self, arc: bool | None) -> int | None:
        """Consume up to the next record start (WARC, ARC when ``arc``, either when None)
        and return its position, or None when the input ends first (all of it consumed).
        The current position must be a line start."""
        pattern = _ANY_AT_LINE if arc is None else _ARC_AT_LINE if arc else _WARC_AT_LINE
        self.unmark()
        mid_line = False  # the buffer starts inside a line longer than a scan step
        while True:
            if len(self._buf) - self._i < SCAN_STEP and not self._ended:
                more = [self._buf[self._i:]]
                got = len(more[0])
                while got < SCAN_STEP:
                    chunk = self._more()
                    if not chunk:
                        break
                    more.append(chunk)
                    got += len(chunk)
                self._set(b"".join(more), self.pos)
            if mid_line:
                nl = self._buf.find(b"\n", self._i)
                self._i, mid_line = (nl + 1, False) if nl != -1 else (len(self._buf), True)
            frm = self._i
            m = pattern.search(self._buf, frm) if not mid_line else None
            if m is not None:
                self._i = m.start()
                return self.pos
            if self._ended:
                self._i = len(self._buf)
                return None
            # keep the last, unfinished line: a record start may straddle two reads
            last = self._buf.rfind(b"\n", frm) + 1
            if last:
                self._i, mid_line = last, False
            else:
                self._i, mid_line = len(self._buf), True

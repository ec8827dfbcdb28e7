"""Fuzz the archive reader with damaged copies of real archives.

    python -m tools.fuzz.archives --cases N --seed S [--timeout T] [--jobs J]

Each case takes one real archive that reads cleanly (plain or per-record gzip WARC, WET,
WAT, gzip ARC), damages it in one record (byte flips, insertions, deletions, a flipped
CRC, a Content-Length that overruns or is malformed, a cut one byte before or after a
record boundary, garbage between records or at the end, the first record hit) and reads
it the way the extractor does: every record through the reader and ``process_record``.
One more archive is made of the largest plain WARC twice around a generated 20 MiB
record, so that a Content-Length can overrun by more than the reader keeps in memory
(``long_overrun``: 16 MiB and more, landing on later records or past the end).
Other cases change no byte that matters but write the archive the way other tools do
(``QUIRKS``): one record's WARC header lines ending in CR CR LF or a bare LF, a
WARC-Block-Digest that does not match an intact block, reserved flag bits in a gzip
member's header, an HTML body stored with a Content-Encoding (gzip, zlib or raw deflate,
br, zstd, two of them in a row, or a body stored decoded with the header kept). Such an
archive must read ``complete`` with every record as undamaged (the re-encoded record: the
same outcome and document) and the quirk recorded on that record.

The result is compared with the undamaged archive's, record by record (offset and
record key), and the case counts as:

- an exception: anything raised out of the reading;
- a hang: over the per-case time limit;
- records / documents lost: a record outside the damaged one that is missing, or reads
  differently (headers, block bytes, outcome, document text);
- damaged reported complete: the archive's status is ``complete`` though what was read
  differs from the undamaged archive. A plain WARC has no checksum over its headers or
  over a block without WARC-Block-Digest: a change there may only be read as it is, and
  is counted apart as ``undetectable``; a changed byte in a block that still ends where
  its Content-Length says is read as written with its ``digest_mismatch`` recorded, counted
  apart as ``digest_flagged``;
- quirks missed: a quirk case not read ``complete``, or without its quirk recorded.

Every case is derived from the seed and its number alone, so a failing case can be run
again alone with ``--case I``. Exit status 1 when any count but ``undetectable`` is not 0.
Plain ARC files are left out: ARC writers disagree on the newline after a record, so a
cut there is not damage the format can show.
"""
from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import io
import os
import random
import re
import signal
import sys
import time
import traceback
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from tools import SHARED_DATA
from warclake.tasks.archive.reader import ArchiveReader
from warclake.tasks.archive.rewind_store import MEMORY_CAP
from warclake.tasks.extract.archive import archive_status
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.extract.record import Context, process_record

DEFAULT_DATA = os.path.join(SHARED_DATA, "warc")
SUFFIXES = (".warc", ".warc.gz", ".arc.gz", ".wet.gz", ".wat.gz")
QUIRKS = ("cr_cr_lf", "lf", "digest", "reserved_flags", "encoding")
KINDS = ("flip", "insert", "delete", "crc", "overrun", "long_overrun", "bad_length", "cut", "first", "garbage",
         "trailing") + QUIRKS
LONG_RECORD = 20 << 20  # the generated record of the long archive
SLOW_STEP_CAP = 4 << 20  # longer archives trickle 4096 bytes per read at least (1 byte per read takes minutes)
COUNTS = ("exceptions", "hangs", "records_lost", "documents_lost", "damaged_complete", "quirks_missed")
CONFIG = ExtractConfig.from_langs("ja")  # the real record path without loading lingua


class _Hang(Exception):
    pass


class _Tee:
    """The record block as the extractor reads it, hashed on the way (so a changed byte the
    outcome does not show still counts)."""

    def __init__(self, stream):
        self._stream, self.sha = stream, hashlib.sha1()

    @property
    def limit(self):
        return self._stream.limit

    def read(self, size=-1):
        data = self._stream.read(size)
        self.sha.update(data)
        return data

    def readline(self, size=-1):
        data = self._stream.readline(size)
        self.sha.update(data)
        return data


class _Trickle(io.RawIOBase):
    """A forward-only stream giving few bytes per read, as a slow HTTP body does."""

    def __init__(self, data: bytes, step: int):
        self._data, self._pos, self._step = data, 0, step

    def readable(self):
        return True

    def seekable(self):
        return False

    def read(self, size=-1):
        n = self._step if size is None or size < 0 else min(size, self._step)
        out = self._data[self._pos:self._pos + n]
        self._pos += len(out)
        return out


@dataclass
class Read:
    status: str
    records: dict[int, tuple]       # offset -> record key
    documents: set[int]             # offsets of records that gave a document
    quirks: dict[int, tuple] = field(default_factory=dict)  # offset -> quirks recorded


def read_archive(data: bytes, step: int = 0) -> Read:
    """Read ``data`` as the extractor does; ``step`` > 0 reads it as a trickling stream."""
    ctx = Context(dump="FUZZ", warc_name="fuzz.warc.gz", config=CONFIG)
    reader = ArchiveReader(_Trickle(data, step) if step else io.BytesIO(data), max_payload=CONFIG.max_payload)
    records, docs, quirks = {}, set(), {}
    for rec in reader:
        tee = rec._record.raw_stream = _Tee(rec._record.raw_stream)
        res = process_record(rec, ctx)
        complete = rec.complete()
        text = res.document["text"] if res.document else None
        records[rec.offset] = (rec.rec_type, rec.url, rec.record_id, rec.http_status, res.outcome.value,
                               hashlib.sha1(text.encode()).hexdigest() if text else None,
                               tee.sha.hexdigest(), complete, res.payload_bytes)
        if res.document is not None:
            docs.add(rec.offset)
        if rec.all_quirks():
            quirks[rec.offset] = tuple(rec.quirks)
    return Read(archive_status(reader)[0], records, docs, quirks)


@dataclass
class Base:
    """An undamaged archive: its bytes, records (start, end) and what reading it gives."""
    name: str
    data: bytes
    gzip: bool
    spans: list[tuple[int, int]]
    read: Read
    headers: list[tuple[int, int, tuple[int, int] | None, bool]] = field(default_factory=list)
    # plain WARC, per record: (header start after the first line, header end,
    # the Content-Length line, whether the block carries a WARC-Block-Digest)


def load_bases(root: str) -> list[Base]:
    paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(SUFFIXES))
    bases = []
    for p in paths:
        data = open(p, "rb").read()
        try:
            got = read_archive(data)
        except Exception:
            continue
        if got.status != "complete" or len(got.records) < 2:
            continue
        bases.append(_base(os.path.relpath(p, root), data, got))
    plain = [b for b in bases if not b.gzip and b.data.startswith(b"WARC/")]
    if plain:
        src = max(plain, key=lambda b: len(b.data))
        data = src.data + _generated_record(LONG_RECORD) + src.data
        got = read_archive(data)
        if got.status == "complete":
            bases.append(_base(f"{src.name} + 20 MiB record + {src.name}", data, got))
    return bases


def _base(name: str, data: bytes, got: Read) -> Base:
    offsets = sorted(got.records)
    spans = list(zip(offsets, offsets[1:] + [len(data)]))
    base = Base(name, data, data[:2] == b"\x1f\x8b", spans, got)
    if not base.gzip:
        base.headers = [_header_parts(data, a, b) for a, b in spans]
    return base


def _generated_record(size: int) -> bytes:
    """A plain WARC resource record of ``size`` bytes, as warcio writes it (with its digest)."""
    from warcio.warcwriter import WARCWriter

    out = io.BytesIO()
    writer = WARCWriter(out, gzip=False)
    writer.write_record(writer.create_warc_record("urn:warclake:fuzz-filler", "resource",
                                                  payload=io.BytesIO(b"\0" * size),
                                                  warc_content_type="application/octet-stream"))
    return out.getvalue()


def _is_long(base: Base) -> bool:
    """A plain archive with more after some record than the reader keeps in memory."""
    return not base.gzip and len(base.data) - base.spans[0][1] > MEMORY_CAP


def _header_parts(data: bytes, a: int, b: int):
    first = data.index(b"\n", a) + 1
    end = data.find(b"\r\n\r\n", a, b)
    end = end + 2 if end != -1 else data.find(b"\n\n", a, b) + 1
    header = data[a:end]
    m = re.search(rb"(?im)^content-length:[^\n]*\n", header)
    cl = (a + m.start(), a + m.end()) if m else None
    return first, end, cl, b"warc-block-digest:" in header.lower()


# ---- damage: (damaged bytes, indexes of the damaged records, (from, shift): how offsets
# from there on moved, the original byte range changed, and the kind of change made)

def _member(base: Base, k: int) -> bytes:
    a, b = base.spans[k]
    return base.data[a:b]


def _rewrite_length(base: Base, k: int, new: bytes) -> tuple[bytes, int]:
    """Record k with its Content-Length value replaced (its member re-compressed for .gz)."""
    a, b = base.spans[k]
    text = gzip.decompress(base.data[a:b]) if base.gzip else base.data[a:b]
    if text.startswith(b"WARC/"):
        text = re.sub(rb"(?im)^(content-length:)[^\r\n]*", lambda m: m.group(1) + b" " + new, text, count=1)
    else:  # an ARC record: the length is the last field of its header line
        text = re.sub(rb"\A([^\n]* )\d+", lambda m: m.group(1) + new, text, count=1)
    piece = gzip.compress(text, mtime=0) if base.gzip else text
    return base.data[:a] + piece + base.data[b:], len(piece) - (b - a)


def damage(base: Base, kind: str, rng: random.Random, cut: int | None = None):
    data, spans, n = base.data, base.spans, len(base.spans)
    k = 0 if kind == "first" else rng.randrange(n)
    if kind == "long_overrun":  # a record with more than the memory cap after it
        k = rng.choice([j for j, (_, b) in enumerate(spans) if len(data) - b > MEMORY_CAP])
    if kind == "first":
        kind = rng.choice(["flip", "insert", "delete"] + (["crc"] if base.gzip else []))
    a, b = spans[k]
    if kind == "crc" and not base.gzip:
        kind = "flip"
    data, hit, shift, changed = _damage(base, kind, k, a, b, rng, cut)
    return data, hit, shift, changed, kind


def _damage(base: Base, kind: str, k: int, a: int, b: int, rng: random.Random, cut: int | None):
    data, spans = base.data, base.spans
    if kind == "flip":
        buf = bytearray(data)
        lo = rng.randrange(a, b)
        hi = min(b, lo + rng.choice([1, 1, 2, 4, 16]))
        flipped = sorted(rng.sample(range(lo, hi), min(hi - lo, rng.randint(1, 4))))
        for i in flipped:
            buf[i] ^= rng.randrange(1, 256)
        # the bytes changed, not the window they were drawn from (which may touch the
        # Content-Length line that no flip reached)
        return bytes(buf), {k}, (b, 0), (flipped[0], flipped[-1] + 1)
    if kind == "crc":
        buf = bytearray(data)
        buf[rng.randrange(b - 8, b)] ^= rng.randrange(1, 256)
        return bytes(buf), {k}, (b, 0), (b - 8, b)
    if kind == "insert":
        p = rng.randrange(a + 1, b) if b - a > 1 else a
        junk = rng.randbytes(rng.randint(1, 64))
        return data[:p] + junk + data[p:], {k}, (p, len(junk)), (p, p)
    if kind == "delete":
        p = rng.randrange(a, b)
        q = min(b, p + rng.randint(1, 80))
        return data[:p] + data[q:], {k}, (q, p - q), (p, q)
    if kind == "overrun":
        value = _length_of(base, k) + rng.choice([1, 2, 7, 100, 5000, 10 ** 6, 10 ** 12])
        out, shift = _rewrite_length(base, k, str(value).encode())
        return out, {k}, (a + 1, shift), (a, a)
    if kind == "long_overrun":  # past the memory cap: onto later records, or past the end
        rest = len(data) - b
        over = rng.choice([MEMORY_CAP + rng.randrange(1, 1 << 20), rng.randrange(MEMORY_CAP, rest),
                           rest + rng.randrange(1, 1 << 20), 10 ** 12])
        out, shift = _rewrite_length(base, k, str(_length_of(base, k) + over).encode())
        return out, {k}, (a + 1, shift), (a, a)
    if kind == "bad_length":
        out, shift = _rewrite_length(base, k, rng.choice([b"abc", b"-5", b"", b"12x", b"0x10"]))
        return out, {k}, (a + 1, shift), (a, a)
    if kind == "cut":
        if cut is None:
            cut = rng.choice([b - 1, b + 1]) if b < len(data) else b - 1
        return data[:cut], {j for j, (_, y) in enumerate(spans) if y > cut}, (len(data) + 1, 0), (cut, cut)
    if kind == "garbage":  # between two records (before record k)
        junk = rng.randbytes(rng.randint(1, 200))
        # in a plain archive the bytes run into record k's first line; a member stays whole
        return data[:a] + junk + data[a:], set() if base.gzip else {k}, (a, len(junk)), (a, a)
    if kind == "trailing":
        junk = rng.randbytes(rng.randint(1, 300))
        return data + junk, set(), (len(data) + 1, 0), (len(data), len(data))
    raise ValueError(kind)


def _length_of(base: Base, k: int) -> int:
    a, b = base.spans[k]
    text = gzip.decompress(base.data[a:b]) if base.gzip else base.data[a:b]
    m = re.search(rb"(?im)^content-length:\s*(\d+)" if text.startswith(b"WARC/") else rb"\A[^\n]* (\d+)", text)
    return int(m.group(1)) if m else 0


def _undetectable(base: Base, k: int, changed: tuple[int, int], kind: str) -> bool:
    """A change in a plain WARC record no checksum covers: its header (not the
    Content-Length line), or a block without WARC-Block-Digest (only a change of its length
    can show there, and not when the block ends in blank lines)."""
    if base.gzip or not base.headers:
        return False
    _, end, cl, digest = base.headers[k]
    lo, hi = changed
    a, b = base.spans[k]
    inside = a <= lo and hi <= b and not (cl and lo < cl[1] and hi > cl[0])
    return inside and (hi <= end or not digest)


# ---- one case

@dataclass
class Outcome:
    kind: str
    base: str
    status: str = ""
    exception: str | None = None
    hang: bool = False
    records_lost: int = 0
    documents_lost: int = 0
    damaged_complete: bool = False
    undetectable: bool = False
    digest_flagged: bool = False
    kind_detail: str = ""
    quirks_missed: bool = False


def run_case(bases: list[Base], seed: int, i: int, timeout: float) -> Outcome:
    rng = random.Random(f"{seed}-{i}")
    base = rng.choice(bases)
    kind = KINDS[i % len(KINDS)]
    if kind == "crc" and not base.gzip:
        base = rng.choice([b for b in bases if b.gzip] or bases)
    if kind == "long_overrun":
        long = [b for b in bases if _is_long(b)]
        base, kind = (rng.choice(long), kind) if long else (base, "overrun")
    if kind in QUIRKS:
        return _quirk_case(bases, kind, rng, timeout)
    cut = None
    if kind == "cut":  # every record boundary of every archive, one byte before and after, in turn
        cuts = [(b, end + d) for b in bases for _, end in b.spans for d in (-1, 1) if end + d < len(b.data)]
        base, cut = cuts[(i // len(KINDS)) % len(cuts)]
    out = Outcome(kind, base.name)
    try:
        data, hit, (frm, shift), changed, done = damage(base, kind, rng, cut)
    except Exception as exc:  # pragma: no cover - a bug of the fuzzer, not the reader
        out.exception = f"making the case: {exc!r}"
        return out
    step = rng.choice([0, 0, 0, 1, 7, 4096])  # some cases read as a trickling forward-only stream
    if 0 < step < 4096 and len(data) > SLOW_STEP_CAP:
        step = 4096
    got = _read_timed(data, step, timeout, out)
    if got is None:
        return out
    out.status = got.status
    want = base.read
    for j, (a, _) in enumerate(base.spans):
        if j in hit:
            continue
        new = a + shift if a >= frm else a
        if got.records.get(new) != want.records[a]:
            out.records_lost += 1
            out.documents_lost += a in want.documents
    if got.status == "complete":
        same = Counter(got.records.values()) == Counter(want.records.values())
        if not same:
            if any(_undetectable(base, k, changed, done) for k in hit):
                out.undetectable = True
            elif all("digest_mismatch" in got.quirks.get(base.spans[k][0], ()) for k in hit):
                out.digest_flagged = True
            else:
                out.damaged_complete = True
    return out


def _read_timed(data: bytes, step: int, timeout: float, out: Outcome) -> Read | None:
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return read_archive(data, step)
    except _Hang:
        out.hang = True
    except Exception:
        out.exception = traceback.format_exc(limit=-3).strip().splitlines()[-1]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return None


# ---- quirks: archives as other tools write them, nothing lost

ENCODINGS = {
    "gzip": lambda b: gzip.compress(b, mtime=0),
    "deflate": zlib.compress,
    "deflate-raw": lambda b: (lambda c: c.compress(b) + c.flush())(zlib.compressobj(6, zlib.DEFLATED, -15)),
    "br": lambda b: __import__("brotli").compress(b),
    "zstd": lambda b: __import__("zstandard").ZstdCompressor().compress(b),
}


def _record_text(base: Base, k: int) -> bytes:
    a, b = base.spans[k]
    return gzip.decompress(base.data[a:b]) if base.gzip else base.data[a:b]


def _split_record(text: bytes):
    """(WARC header with its blank line, block, what follows the block)."""
    end = text.index(b"\r\n\r\n") + 4
    length = int(re.search(rb"(?im)^content-length:\s*(\d+)", text[:end]).group(1))
    return text[:end], text[end:end + length], text[end + length:]


def _set_field(header: bytes, name: bytes, value: bytes | None) -> bytes:
    """The WARC header with one field's value replaced (None: the field removed)."""
    pattern = rb"(?im)^" + name + rb":[^\r\n]*\r\n"
    return re.sub(pattern, b"" if value is None else name + b": " + value + b"\r\n", header, count=1)


def _quirk_targets(bases: list[Base], kind: str) -> list[tuple[Base, int]]:
    """The (archive, record) pairs a quirk can be applied to."""
    out = []
    for base in bases:
        if (kind == "reserved_flags") != base.gzip and kind in ("reserved_flags", "digest"):
            continue  # gzip flags in .gz; the digest only in a plain WARC (the CRC covers a .gz)
        for k, (a, _) in enumerate(base.spans):
            try:
                text = _record_text(base, k)
            except Exception:
                continue
            if not text.startswith(b"WARC/1.") or b"\r\n\r\n" not in text:
                continue
            head = text[:text.index(b"\r\n\r\n")].lower()
            if kind == "digest" and b"warc-block-digest: sha1:" not in head:
                continue
            # a page whose payload was decoded and judged: its length and outcome show a decoding
            if kind == "encoding" and (base.read.records[a][4] not in ("kept", "lang_rejected")
                                       or b"warc-type: response" not in head
                                       or re.search(rb"(?im)^(content|transfer)-encoding:", text)):
                continue  # (a body stored coded already is not coded twice)
            out.append((base, k))
    return out


def _with_quirk(base: Base, k: int, kind: str, rng: random.Random) -> tuple[bytes, str, str]:
    """The archive with record k written with the quirk; (bytes, quirk expected, what was done)."""
    a, b = base.spans[k]
    if kind == "reserved_flags":
        buf = bytearray(base.data)
        bit = rng.choice([0x20, 0x40, 0x80, 0xE0])
        buf[a + 3] |= bit
        return bytes(buf), "gzip_reserved_flags", f"FLG |= {bit:#x}"
    header, block, after = _split_record(_record_text(base, k))
    if kind in ("cr_cr_lf", "lf"):
        eol = b"\r\r\n" if kind == "cr_cr_lf" else b"\n"
        header = header.replace(b"\r\n", eol)
        if rng.random() < 0.5:  # the blank lines after the block too, or not
            after = after.replace(b"\r\n", eol)
        quirk, done = ("cr_cr_lf_lines" if kind == "cr_cr_lf" else "lf_lines"), kind
    elif kind == "digest":
        wrong = base64.b32encode(hashlib.sha1(block + b"x").digest())
        header, quirk, done = _set_field(header, b"WARC-Block-Digest", b"sha1:" + wrong), "digest_mismatch", "digest"
    else:  # encoding: the HTML body stored with a Content-Encoding
        head_end = block.index(b"\r\n\r\n") + 4 if b"\r\n\r\n" in block else block.index(b"\n\n") + 2
        head, body = block[:head_end], block[head_end:]
        names = rng.choice([["gzip"], ["deflate"], ["deflate-raw"], ["br"], ["zstd"], ["gzip", "br"], ["stored"]])
        for name in names:
            if name != "stored":
                body = ENCODINGS[name](body)
        label = ", ".join("gzip" if n == "stored" else "deflate" if n == "deflate-raw" else n for n in names)
        nl = b"\r\n" if head.endswith(b"\r\n\r\n") else b"\n"
        lines = [ln for ln in head.split(nl)[:-2] if not ln.lower().startswith(b"content-encoding:")]
        lines.insert(1, b"Content-Encoding: " + label.encode())
        block = nl.join(lines) + nl + nl + body
        header = _set_field(header, b"Content-Length", str(len(block)).encode())
        digest = b"sha1:" + base64.b32encode(hashlib.sha1(block).digest())
        header = _set_field(header, b"WARC-Block-Digest", digest) if b"warc-block-digest" in header.lower() else header
        quirk = "content_encoding_not_applied" if names == ["stored"] else ""
        done = "encoding " + "+".join(names)
    text = header + block + after
    piece = gzip.compress(text, mtime=0) if base.gzip else text
    return base.data[:a] + piece + base.data[b:], quirk, done


def _quirk_case(bases: list[Base], kind: str, rng: random.Random, timeout: float) -> Outcome:
    targets = _quirk_targets(bases, kind)
    if not targets:
        return Outcome(kind, "-")
    base, k = rng.choice(targets)
    out = Outcome(kind, base.name)
    try:
        data, quirk, out.kind_detail = _with_quirk(base, k, kind, rng)
    except Exception as exc:  # pragma: no cover - a bug of the fuzzer, not the reader
        out.exception = f"making the case: {exc!r}"
        return out
    a, b = base.spans[k]
    shift = len(data) - len(base.data)
    got = _read_timed(data, rng.choice([0, 0, 0, 7, 4096]) if len(data) <= SLOW_STEP_CAP else 0, timeout, out)
    if got is None:
        return out
    out.status = got.status
    want = base.read
    for j, (x, _) in enumerate(base.spans):
        new = x + shift if x > a else x
        have, expect = got.records.get(new), want.records[x]
        if j == k and kind == "encoding" and have is not None:  # its block changed; not its payload
            have, expect = have[:6] + have[7:], expect[:6] + expect[7:]
        if have != expect:
            out.records_lost += 1
            out.documents_lost += x in want.documents
    out.quirks_missed = got.status != "complete" or bool(quirk and quirk not in got.quirks.get(a, ()))
    return out


def _on_alarm(signum, frame):
    raise _Hang()


_BASES: list[Base] = []


def _init(root: str) -> None:
    global _BASES
    signal.signal(signal.SIGALRM, _on_alarm)
    _BASES = load_bases(root)


def _work(args):
    seed, i, timeout = args
    return i, run_case(_BASES, seed, i, timeout)


def run(cases: int, seed: int, timeout: float, root: str, jobs: int = 1, only: int | None = None,
        out=sys.stdout, kinds: tuple[str, ...] = KINDS) -> dict:
    """Run the cases (the first ``cases`` numbers of the given kinds); returns the totals
    (also printed as a table)."""
    import logging

    for name in ("warclake.tasks.archive.reader", "warcio"):
        logging.getLogger(name).setLevel(logging.ERROR)
    numbers = [only] if only is not None else [i for i in range(cases * len(KINDS))
                                               if KINDS[i % len(KINDS)] in kinds][:cases]
    todo = [(seed, i, timeout) for i in numbers]
    started = time.time()
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs, _init, (root,)) as pool:
            results = list(pool.imap_unordered(_work, todo, chunksize=50))
    else:
        _init(root)
        results = [_work(t) for t in todo]
    if not _BASES and jobs <= 1:
        raise SystemExit(f"no readable archive under {root}")
    rows: dict[str, Counter] = defaultdict(Counter)
    bad = []
    for i, o in sorted(results, key=lambda r: r[0]):
        for key in ("all", o.kind):
            r = rows[key]
            r["cases"] += 1
            r[o.status or "-"] += 1
            r["exceptions"] += o.exception is not None
            r["hangs"] += o.hang
            r["records_lost"] += o.records_lost
            r["documents_lost"] += o.documents_lost
            r["damaged_complete"] += o.damaged_complete
            r["undetectable"] += o.undetectable
            r["digest_flagged"] += o.digest_flagged
            r["quirks_missed"] += o.quirks_missed
        if o.exception or o.hang or o.records_lost or o.damaged_complete or o.quirks_missed or only is not None:
            bad.append((i, o))
    cols = ("cases", "complete", "salvaged", "failed", *COUNTS, "undetectable", "digest_flagged")
    print(f"fuzz_archives: {len(results)} cases, seed {seed}, {time.time() - started:.0f} s", file=out)
    print("| damage | " + " | ".join(cols) + " |", file=out)
    print("|---|" + "---:|" * len(cols), file=out)
    for key in [k for k in KINDS if k in rows] + ["all"]:
        print(f"| {key} | " + " | ".join(str(rows[key][c]) for c in cols) + " |", file=out)
    for i, o in bad[:20]:
        print(f"case {i}: {o}", file=out)
    return dict(rows["all"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="fuzz_archives", description=__doc__.split("\n\n")[0],
                                 epilog="damage kinds, taken in turn: " + ", ".join(KINDS))
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per case before it counts as a hang")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--data", default=DEFAULT_DATA, help="folder of real archives (default: ../shared/data/warc)")
    ap.add_argument("--case", type=int, default=None, help="run only this case and show it")
    ap.add_argument("--kinds", default=",".join(KINDS), help="only these damage kinds (comma-separated; "
                    "case numbers stay those of the full run, so --case still reproduces one)")
    args = ap.parse_args(argv)
    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    if unknown := set(kinds) - set(KINDS):
        ap.error(f"unknown damage kinds: {', '.join(sorted(unknown))}")
    totals = run(args.cases, args.seed, args.timeout, args.data, args.jobs, args.case, kinds=kinds)
    return 1 if any(totals.get(c, 0) for c in COUNTS) else 0


if __name__ == "__main__":
    sys.exit(main())

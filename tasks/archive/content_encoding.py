"""An archived HTTP body with its transfer and content encodings undone.

Browsers ask for gzip, deflate, br and zstd, and crawlers that drive a browser store the
bodies as they came. Each coding of ``Content-Encoding`` (a list is undone last first) is
inflated here as a stream, so memory stays flat:

- ``gzip`` / ``x-gzip`` (ISA-L; a body of several members is read to its end),
- ``deflate``: zlib-wrapped as the RFC says, or raw deflate as some servers send it,
- ``br`` (the ``brotli`` package), ``zstd`` (``zstandard``),
- ``identity`` and an empty value: nothing to undo.

Bodies that do not decode:

- a coding none of these knows, or data that breaks off into garbage after decoding began,
  raises :class:`ContentEncodingError` (the ledger's ``content_encoding_failed``);
- a body whose very first block does not decode and holds no control bytes was stored
  already decoded with the header kept (as some writers do; warcio reads it as plain too):
  it is read as it is, with the quirk ``content_encoding_not_applied``;
- a coded body that stops before its end (a response cut short) gives what decoded, with
  the quirk ``content_encoding_truncated``.
"""
from __future__ import annotations

import re
import zlib
from typing import Callable, Protocol

import brotli
import zstandard
from warcio.bufferedreaders import ChunkedDataReader

from warclake.tasks.archive.gzip_members import IsalError, gzip_decompressor

BLOCK = 16 << 10   # coded bytes per decoding step: a step's output stays bounded


class ContentEncodingError(ValueError):
    """The payload's Content-Encoding is unknown, or its data does not decode."""


class _Gzip:
    def __init__(self):
        self._d = gzip_decompressor()
        self.finished = False

    def feed(self, data: bytes) -> bytes:
        out: list[bytes] = []
        while data:
            if self.finished:
                if not data.startswith(b"\x1f\x8b"):
                    return b"".join(out)  # bytes after the last member: nothing a browser shows
                self._d = gzip_decompressor()
                self.finished = False
            out.append(self._d.decompress(data))
            if self._d.eof:
                self.finished = True
                data = self._d.unused_data
            else:
                data = b""
        return b"".join(out)


class _Deflate:
    """zlib-wrapped deflate, or raw deflate when the first bytes are no zlib header."""

    def __init__(self):
        self._d = None
        self.finished = False

    def feed(self, data: bytes) -> bytes:
        if self._d is None:
            self._d = zlib.decompressobj(zlib.MAX_WBITS)
            try:
                out = self._d.decompress(data)
            except zlib.error:
                self._d = zlib.decompressobj(-zlib.MAX_WBITS)
                out = self._d.decompress(data)
        else:
            out = self._d.decompress(data)
        self.finished = self._d.eof
        return out


class _Brotli:
    def __init__(self):
        self._d = brotli.Decompressor()
        self.finished = False

    def feed(self, data: bytes) -> bytes:
        if self.finished:
            return b""
        out = self._d.process(data)
        self.finished = self._d.is_finished()
        return out


class _Zstd:
    def __init__(self):
        self._d = zstandard.ZstdDecompressor().decompressobj()
        self.finished = False

    def feed(self, data: bytes) -> bytes:
        if self.finished:
            return b""
        out = self._d.decompress(data)
        self.finished = self._d.eof
        return out


class _Decoder(Protocol):
    finished: bool   # the coded data has ended

    def feed(self, data: bytes) -> bytes: ...


DECODERS: dict[str, Callable[[], _Decoder]] = {"gzip": _Gzip, "x-gzip": _Gzip, "deflate": _Deflate, "br": _Brotli, "zstd": _Zstd}


_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")


def looks_plain(block: bytes) -> bool:
    """Whether the first bytes of a body that did not decode are text stored as it is (no
    control bytes) rather than coded data that is broken."""
    return not _CONTROL.search(block, 0, 1024)


def codings(value: str | None) -> list[str]:
    """The codings of a Content-Encoding value in the order they were applied, lower case,
    ``identity`` left out."""
    if not value:
        return []
    return [c for c in (part.strip().lower() for part in value.split(",")) if c and c != "identity"]


class DecodedStream:
    """``read(n)`` of the decoded body of ``source`` (a stream of the coded bytes)."""

    def __init__(self, source, names: list[str], quirks: list[str]):
        unknown = [n for n in names if n not in DECODERS]
        self._error = ContentEncodingError(f"unknown content encoding {', '.join(unknown)!r}") if unknown else None
        self._source = source
        self._decoders = [DECODERS[n]() for n in reversed(names)] if not unknown else []
        self._quirks = quirks
        self._parts: list[bytes] = []   # decoded, not yet read
        self._have = 0
        self._started = False   # the first block was read
        self._plain = False     # stored decoded after all: read as it is
        self._ended = False

    def _step(self) -> bool:
        """Decode the next block into the buffer; False at the end."""
        if self._ended:
            return False
        coded = data = self._source.read(BLOCK)
        if not data:
            self._ended = True
            if self._started and not self._plain and not all(d.finished for d in self._decoders):
                self._quirks.append("content_encoding_truncated")
            return False
        if self._plain:
            self._add(data)
            return True
        try:
            for d in self._decoders:
                data = d.feed(data)
        except (zlib.error, IsalError, brotli.error, zstandard.ZstdError) as exc:
            if self._started or not looks_plain(coded):
                raise ContentEncodingError(f"content encoding does not decode: {exc}") from exc
            self._plain = True   # its first block is no such coding: stored decoded
            self._quirks.append("content_encoding_not_applied")
            data = coded
        self._started = True
        self._add(data)
        return True

    def _add(self, data: bytes) -> None:
        if data:
            self._parts.append(data)
            self._have += len(data)

    def read(self, size: int = -1) -> bytes:
        if self._error is not None:
            raise self._error
        while (size is None or size < 0 or self._have < size) and self._step():
            pass
        data = b"".join(self._parts)
        if size is not None and 0 <= size < len(data):
            data, rest = data[:size], data[size:]
            self._parts, self._have = [rest], len(rest)
        else:
            self._parts, self._have = [], 0
        return data


def payload_stream(record, quirks: list[str]):
    """The HTTP payload of a warcio record: chunked transfer coding and content codings
    undone (the block itself when it has no HTTP head). Quirks met are added to ``quirks``."""
    if not record.http_headers:
        return record.raw_stream
    body = record.raw_stream
    transfer = (record.http_headers.get_header("transfer-encoding") or "").strip().lower()
    if transfer == "chunked":
        body = ChunkedDataReader(body)  # a body that is not chunked after all is read plain
    names = codings(record.http_headers.get_header("content-encoding"))
    return DecodedStream(body, names, quirks) if names else body

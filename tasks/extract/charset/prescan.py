"""Declared charsets: a byte order mark, ``<meta>`` (the WHATWG prescan), an XML declaration
at the start of the body, and the ``charset`` parameter of an HTTP Content-Type."""
from __future__ import annotations

import codecs
import re

from warclake.tasks.extract.charset.labels import normalize_label

# --- BOM ----------------------------------------------------------------------------------
_BOMS = (  # UTF-32LE before UTF-16LE: its BOM starts with the UTF-16LE one
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32le"),
    (codecs.BOM_UTF32_BE, "utf-32be"),
    (codecs.BOM_UTF16_LE, "utf-16le"),
    (codecs.BOM_UTF16_BE, "utf-16be"),
)


def sniff_bom(body: bytes) -> tuple[str, int] | None:
    """(charset, BOM length) when the body starts with a byte order mark."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name, len(bom)
    return None


# --- WHATWG prescan -----------------------------------------------------------------------
_CHARSET_WORD = re.compile(rb"charset", re.I)
_META_OPEN = re.compile(rb"<meta[\t\n\x0c\r /]", re.I)
_TAG_OPEN = re.compile(rb"</?[A-Za-z]")
_TAG_NAME_END = re.compile(rb"[\t\n\x0c\r >]")
_SKIP_ATTR_START = re.compile(rb"[\t\n\x0c\r /]*")
_ATTR_NAME = re.compile(rb"[^\t\n\x0c\r /=>]*")
_SPACES = re.compile(rb"[\t\n\x0c\r ]*")
_UNQUOTED = re.compile(rb"[^\t\n\x0c\r >]*")


def _run_end(pattern: re.Pattern[bytes], buf: bytes, pos: int) -> int:
    """Where the run of ``pattern`` starting at ``pos`` ends (each of these patterns matches
    the empty string too)."""
    m = pattern.match(buf, pos)
    assert m is not None
    return m.end()


class _End(Exception):
    """The prescan ran past the end of the bytes it may look at."""


def _get_attribute(buf: bytes, pos: int) -> tuple[bytes, bytes, int] | None:
    """WHATWG "get an attribute": (name, value, new position), None when there is none."""
    n = len(buf)
    pos = _run_end(_SKIP_ATTR_START, buf, pos)
    if pos >= n:
        raise _End
    if buf[pos] == 0x3E:  # '>'
        return None
    # The first byte belongs to the name even if it is '='.
    end = _run_end(_ATTR_NAME, buf, pos + 1)
    name = buf[pos:end].lower()
    pos = end
    if pos >= n:
        raise _End
    if buf[pos] in b"/>":
        return name, b"", pos
    if buf[pos] != 0x3D:  # whitespace after the name
        pos = _run_end(_SPACES, buf, pos)
        if pos >= n:
            raise _End
        if buf[pos] != 0x3D:
            return name, b"", pos
    pos = _run_end(_SPACES, buf, pos + 1)
    if pos >= n:
        raise _End
    q = buf[pos]
    if q in b"\"'":
        close = buf.find(bytes([q]), pos + 1)
        if close < 0:
            raise _End
        return name, buf[pos + 1:close].lower(), close + 1
    if q == 0x3E:
        return name, b"", pos
    end = _run_end(_UNQUOTED, buf, pos)
    if end >= n:
        raise _End
    return name, buf[pos:end].lower(), end


def charset_from_content(value: bytes) -> str | None:
    """WHATWG "extract a character encoding from a meta element" (the content= value); returns
    the raw label."""
    pos = 0
    while True:
        m = _CHARSET_WORD.search(value, pos)
        if not m:
            return None
        pos = _run_end(_SPACES, value, m.end())
        if pos < len(value) and value[pos] == 0x3D:
            break
    pos = _run_end(_SPACES, value, pos + 1)
    if pos >= len(value):
        return None
    q = value[pos]
    if q in b"\"'":
        close = value.find(bytes([q]), pos + 1)
        return value[pos + 1:close].decode("latin-1") if close >= 0 else None
    end = pos
    while end < len(value) and value[end] not in b"\t\n\x0c\r ;":
        end += 1
    return value[pos:end].decode("latin-1")


def _meta_charset(buf: bytes, pos: int) -> tuple[str | None, int]:
    """Attributes of one <meta> starting at ``pos`` (just after "<meta"): (charset, position)."""
    seen: set[bytes] = set()
    got_pragma = False
    need_pragma: bool | None = None
    charset: str | None = None  # None: not set yet; "": an unknown label (WHATWG "failure")
    while True:
        attr = _get_attribute(buf, pos)
        if attr is None:
            break
        name, value, pos = attr
        if name in seen:
            continue
        seen.add(name)
        if name == b"http-equiv":
            got_pragma = got_pragma or value == b"content-type"
        elif name == b"content":
            if charset is None:
                found = normalize_label(charset_from_content(value))
                if found:
                    charset, need_pragma = found, True
        elif name == b"charset":
            charset, need_pragma = normalize_label(value) or "", False
    if need_pragma is None or (need_pragma and not got_pragma) or not charset:
        return None, pos
    if charset in ("utf-16le", "utf-16be"):  # a byte-level prescan only works on ASCII-compatible bytes
        charset = "utf-8"
    return charset, pos


# A whole ordinary tag in one regex call, following "get an attribute" exactly: possessive
# quantifiers stop the engine from re-parsing a tag differently when the exact algorithm would
# have run off the end (an unclosed quote); when it does not match, the exact per-attribute
# path below decides.
_W = rb"[\t\n\x0c\r ]"
_NW = rb"\t\n\x0c\r "
_WHOLE_TAG = re.compile(
    rb"</?[A-Za-z][^" + _NW + rb">]*+"
    rb"(?:[" + _NW + rb"/]*+[^" + _NW + rb"/>][^" + _NW + rb"/=>]*+" + _W + rb"*+"
    rb"(?:=" + _W + rb"*+(?:\"[^\"]*+\"|'[^']*+'|[^" + _NW + rb">\"'][^" + _NW + rb">]*+|(?=>))|(?!=)))*+"
    rb"[" + _NW + rb"/]*+>")


def _last_meta_candidate(low: bytes) -> int:
    """Start of the last "<meta" that a "charset" follows (no declaration can come later), -1 if none."""
    end = low.rfind(b"charset")
    while end > 0:
        m = low.rfind(b"<meta", 0, end)
        if m < 0:
            return -1
        if low[m + 5:m + 6] in (b"\t", b"\n", b"\x0c", b"\r", b" ", b"/"):
            return m
        end = m
    return -1


def sniff_meta(body: bytes, limit: int = 20480) -> str | None:
    """Charset declared by ``<meta>`` in the first ``limit`` bytes, per the WHATWG prescan
    algorithm (canonical name), or None.

    The standard prescans 1024 bytes; pages often declare later (long scripts or comments in
    <head>), and a browser's parser still honours such a late declaration, so the default
    looks as far as the strict-decode window (html5lib's cases: 82/82 vs 75/82 at 1024)."""
    buf = body[:limit]
    low = buf.lower()
    # The scan can stop after the last "<meta" followed by a "charset" somewhere: pages that
    # rely on the HTTP header often say charset only in <script charset=...> further down.
    last = _last_meta_candidate(low)
    if last < 0:
        return None
    n = len(buf)
    pos = 0
    try:
        while True:
            pos = buf.find(b"<", pos)
            if pos < 0 or pos > last or pos + 1 >= n:
                return None
            if buf.startswith(b"<!--", pos):
                end = buf.find(b"-->", pos + 2)
                if end < 0:
                    return None
                pos = end + 3
                continue
            if low.startswith(b"<meta", pos) and _META_OPEN.match(buf, pos):
                charset, pos = _meta_charset(buf, pos + 5)
                if charset:
                    return charset
                pos += 1
                continue
            m = _WHOLE_TAG.match(buf, pos)
            if m:
                pos = m.end()
                continue
            if _TAG_OPEN.match(buf, pos):
                m = _TAG_NAME_END.search(buf, pos + 1)
                if m is None:
                    return None
                pos = m.start()
                while (attr := _get_attribute(buf, pos)) is not None:
                    pos = attr[2]
                pos += 1
                continue
            if buf[pos + 1] in b"!/?":
                end = buf.find(b">", pos + 1)
                if end < 0:
                    return None
                pos = end + 1
                continue
            pos += 1
    except _End:
        return None


# --- XML declaration and HTTP header ------------------------------------------------------
_XML_DECL = re.compile(rb"\s*<\?xml[^>]*?\sencoding\s*=\s*[\"']([A-Za-z0-9._:-]+)[\"']")


def sniff_xml_declaration(body: bytes) -> str | None:
    """Encoding of an ``<?xml ... encoding="..."?>`` declaration at the start of the body."""
    m = _XML_DECL.match(body, 0, 512)
    return normalize_label(m.group(1)) if m else None


_HTTP_CHARSET = re.compile(r"""charset\s*=\s*["']?([^"';,\s]+)""", re.I)


def header_charset(content_type: str | None) -> str | None:
    """Canonical charset from an HTTP Content-Type value (None if absent or unknown)."""
    if not content_type:
        return None
    m = _HTTP_CHARSET.search(content_type)
    return normalize_label(m.group(1)) if m else None

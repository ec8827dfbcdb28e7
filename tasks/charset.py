"""Charset detection and decoding of HTTP bodies (the Uzushio cascade, with measured refinements).

Candidates, in order; each is accepted only if it decodes the first ``window`` bytes strictly
(a multibyte character cut by the window edge is not a failure); the rest of the body is then
decoded with replacement characters:

1. ``bom``      a UTF-8 / UTF-16 / UTF-32 byte order mark (UTF-32 is outside WHATWG, but the
                Uzushio article saw UTF-32LE pages in Common Crawl).
2. ``meta``     an in-document declaration: ``<meta charset>`` / ``<meta http-equiv content>``
                found with the WHATWG prescan algorithm, else an ``<?xml ... encoding=?>``
                declaration at the very start (feeds, XHTML).
3. ``header``   the ``charset`` parameter of the HTTP Content-Type.
4. ``detector`` decided from the bytes: a window that is valid UTF-8 (exact and ~100x
                cheaper than a statistical guess), else charset-normalizer's best guess (only
                Latin code pages are asked about when the bytes look Latin, see below; equal
                guesses are ordered by web prevalence, so plain English is windows-1252).
5. ``fallback`` UTF-8 with replacement characters: damaged UTF-8 (a few invalid sequences
                among many valid multibyte ones; checked before charset-normalizer, which would
                turn it into mojibake), or a last resort. The text then contains U+FFFD.

A declared charset is also skipped when the bytes contradict it, since strict decoding cannot:
- a single-byte legacy label on a window whose non-ASCII bytes form valid UTF-8 -> UTF-8
  (``detector``): legacy 8-bit text is practically never valid UTF-8 (0 of 385 non-ASCII
  legacy files of the chardet corpus are), while "iso-8859-1" on UTF-8 pages is a common
  server default;
- a Latin single-byte label on bytes whose non-ASCII bytes come in runs (Cyrillic, CJK...);
- any ASCII-compatible label on UTF-16/32 (NULs) or ISO-2022 (escape sequences) bytes.

``None`` means no candidate worked (the caller records ``charset_failed``).

Labels are normalised to WHATWG Encoding Standard names, lower-case, with one exception kept
from Uzushio: Shift_JIS and its labels are decoded as windows-31j (cp932) and reported so.
"""
from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

SOURCES = ("bom", "meta", "header", "detector", "fallback")


@dataclass(frozen=True, slots=True)
class DecodeResult:
    text: str
    charset: str
    source: str


# --- label table --------------------------------------------------------------------------
# Encoding names and their labels as listed by the WHATWG Encoding Standard, with the Python
# codec that decodes each. Where WHATWG's decoder is a superset of the historical charset the
# superset codec is used (GBK -> gb18030, Big5 -> big5hkscs, EUC-KR -> cp949 (UHC)).
_WHATWG: dict[str, tuple[str, str]] = {
    # name: (python codec, space-separated labels)
    "utf-8": ("utf-8", "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8"),
    "ibm866": ("cp866", "866 cp866 csibm866 ibm866"),
    "iso-8859-2": ("iso8859_2", "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 "
                                "iso_8859-2:1987 l2 latin2"),
    "iso-8859-3": ("iso8859_3", "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 "
                                "iso_8859-3:1988 l3 latin3"),
    "iso-8859-4": ("iso8859_4", "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 "
                                "iso_8859-4:1988 l4 latin4"),
    "iso-8859-5": ("iso8859_5", "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 "
                                "iso_8859-5 iso_8859-5:1988"),
    "iso-8859-6": ("iso8859_6", "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 "
                                "iso-8859-6 iso-8859-6-e iso-8859-6-i iso-ir-127 iso8859-6 iso88596 "
                                "iso_8859-6 iso_8859-6:1987"),
    "iso-8859-7": ("iso8859_7", "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 "
                                "iso8859-7 iso88597 iso_8859-7 iso_8859-7:1987 sun_eu_greek"),
    "iso-8859-8": ("iso8859_8", "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 "
                                "iso8859-8 iso88598 iso_8859-8 iso_8859-8:1988 visual"),
    "iso-8859-8-i": ("iso8859_8", "csiso88598i iso-8859-8-i logical"),
    "iso-8859-10": ("iso8859_10", "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6"),
    "iso-8859-13": ("iso8859_13", "iso-8859-13 iso8859-13 iso885913"),
    "iso-8859-14": ("iso8859_14", "iso-8859-14 iso8859-14 iso885914"),
    "iso-8859-15": ("iso8859_15", "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9"),
    "iso-8859-16": ("iso8859_16", "iso-8859-16"),
    "koi8-r": ("koi8_r", "cskoi8r koi koi8 koi8-r koi8_r"),
    "koi8-u": ("koi8_u", "koi8-ru koi8-u"),
    "macintosh": ("mac_roman", "csmacintosh mac macintosh x-mac-roman"),
    "windows-874": ("cp874", "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874"),
    "windows-1250": ("cp1250", "cp1250 windows-1250 x-cp1250"),
    "windows-1251": ("cp1251", "cp1251 windows-1251 x-cp1251"),
    "windows-1252": ("windows-1252", "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 "
                                     "iso-ir-100 iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 "
                                     "us-ascii windows-1252 x-cp1252"),
    "windows-1253": ("cp1253", "cp1253 windows-1253 x-cp1253"),
    "windows-1254": ("cp1254", "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 "
                               "iso_8859-9:1989 l5 latin5 windows-1254 x-cp1254"),
    "windows-1255": ("cp1255", "cp1255 windows-1255 x-cp1255"),
    "windows-1256": ("cp1256", "cp1256 windows-1256 x-cp1256"),
    "windows-1257": ("cp1257", "cp1257 windows-1257 x-cp1257"),
    "windows-1258": ("cp1258", "cp1258 windows-1258 x-cp1258"),
    "x-mac-cyrillic": ("mac_cyrillic", "x-mac-cyrillic x-mac-ukrainian"),
    "gbk": ("gb18030", "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk"),
    "gb18030": ("gb18030", "gb18030"),
    "big5": ("big5hkscs", "big5 big5-hkscs cn-big5 csbig5 x-x-big5"),
    "euc-jp": ("euc_jp", "cseucpkdfmtjapanese euc-jp x-euc-jp"),
    "iso-2022-jp": ("iso2022_jp_ext", "csiso2022jp iso-2022-jp"),
    # WHATWG calls it Shift_JIS; Uzushio reports the Microsoft variant it really decodes with.
    "windows-31j": ("cp932", "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis"),
    "euc-kr": ("cp949", "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 "
                        "ksc5601 ksc_5601 windows-949"),
    "utf-16be": ("utf-16-be", "unicodefffe utf-16be"),
    "utf-16le": ("utf-16-le", "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le"),
    # WHATWG decodes x-user-defined to private-use code points; the prescan maps it to
    # windows-1252 and so do we everywhere (it is never meant as a real charset on the web).
    "windows-1252#x-user-defined": ("windows-1252", "x-user-defined"),
}
# Not WHATWG encodings, but real and decodable by Python: kept so such pages are not lost.
_EXTRA: dict[str, tuple[str, str]] = {
    "utf-32le": ("utf-32-le", "utf-32le utf-32 ucs-4 ucs-4le"),
    "utf-32be": ("utf-32-be", "utf-32be ucs-4be"),
    "euc-kr#cp949": ("cp949", "cp949 uhc ks_c_5601"),
    "iso-2022-kr": ("iso2022_kr", "iso-2022-kr csiso2022kr"),
    "johab": ("johab", "johab"),
    "ibm855": ("cp855", "ibm855 cp855 855"),
}

_LABELS: dict[str, str] = {}   # label -> canonical name
_CODEC: dict[str, str] = {}    # canonical name -> python codec
for _table in (_WHATWG, _EXTRA):
    for _key, (_py, _labels) in _table.items():
        _name = _key.split("#")[0]
        _CODEC.setdefault(_name, _py)
        for _label in _labels.split():
            _LABELS.setdefault(_label, _name)

# Single-byte legacy charsets: any byte string decodes in most of them, so a declared one is
# checked against UTF-8 validity (see the module docstring).
_SINGLE_BYTE = frozenset(
    n for n in _CODEC
    if n.startswith(("iso-8859-", "windows-12", "koi8-")) or n in (
        "ibm866", "ibm855", "macintosh", "x-mac-cyrillic", "windows-874"))
# Latin-script single-byte charsets decode any byte string, so strict decoding cannot reject
# them. Their text has isolated non-ASCII letters inside ASCII words, while Cyrillic, Greek,
# Hebrew, CJK... bytes form runs: on the chardet corpus the mean run of bytes >= 0x80 is
# <= 1.38 for every Latin file and >= 2.0 for every other one (UTF-16/32 aside, which NULs show).
_LATIN_SINGLE_BYTE = frozenset({
    "windows-1252", "windows-1250", "windows-1254", "windows-1257", "macintosh",
    "iso-8859-2", "iso-8859-3", "iso-8859-4", "iso-8859-10", "iso-8859-13", "iso-8859-14",
    "iso-8859-15", "iso-8859-16"})
_MAX_LATIN_RUN = 1.7
# Bytes < 0x80 -> "a", >= 0x80 -> 0x80, so runs can be counted without a Python loop.
_HIGH_MARK = bytes(0x61 if i < 0x80 else 0x80 for i in range(256))


def ascii_compatible_plausible(window: bytes) -> bool:
    """False when the bytes are evidently UTF-16/32 (many NULs) or ISO-2022 (escape
    sequences), which any ASCII-compatible declared charset would decode as garbage."""
    start = window[:1024]
    return start.count(b"\x00") * 8 < len(start) and not (b"\x1b" in window and b"\x1b$" in window)


def latin_plausible(window: bytes) -> bool:
    """False when the bytes cannot be text in a Latin-script single-byte charset."""
    marks = window.translate(_HIGH_MARK)
    high = marks.count(b"\x80")
    # Runs counted at their ends: a pattern starting with the rare byte searches fast.
    runs = marks.count(b"\x80a") + (marks[-1:] == b"\x80")
    return high <= _MAX_LATIN_RUN * runs


_UTF16_32 = frozenset({"utf-16le", "utf-16be", "utf-32le", "utf-32be"})

# charset-normalizer answers with Python codec names; map Python's canonical codec names to
# ours (identity through the tables above, plus the names the tables do not spell).
_PY_TO_NAME: dict[str, str] = {}
for _name, _py in _CODEC.items():
    _PY_TO_NAME.setdefault(codecs.lookup(_py).name, _name)
for _py, _name in {
    "shift_jis": "windows-31j", "cp932": "windows-31j", "shift_jis_2004": "windows-31j",
    "shift_jisx0213": "windows-31j", "euc_jis_2004": "euc-jp", "euc_jisx0213": "euc-jp",
    "latin-1": "windows-1252", "ascii": "windows-1252", "cp1252": "windows-1252",
    "gb2312": "gbk", "gbk": "gbk", "big5": "big5", "cp950": "big5", "euc_kr": "euc-kr",
    "iso2022_jp": "iso-2022-jp", "iso2022_jp_2": "iso-2022-jp", "tis-620": "windows-874",
    "iso8859-9": "windows-1254", "iso8859-11": "windows-874", "utf-8-sig": "utf-8",
    "cp1125": "ibm866",  # the Ukrainian cp866; they differ in 8 rarely used cells
}.items():
    _PY_TO_NAME[codecs.lookup(_py).name] = _name


def normalize_label(label: str | bytes | None) -> str | None:
    """Canonical lower-case name for a charset label (WHATWG "get an encoding"), or None."""
    if label is None:
        return None
    if isinstance(label, bytes):
        label = label.decode("latin-1")
    return _LABELS.get(label.strip("\t\n\f\r ").lower())


def _python_codec_name(py_name: str) -> str | None:
    """Our name for a Python codec name (as charset-normalizer returns), or None if unknown."""
    try:
        info = codecs.lookup(py_name)
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True):
        return None
    return _PY_TO_NAME.get(info.name) or normalize_label(py_name.replace("_", "-"))


# --- decoders -----------------------------------------------------------------------------
# windows-1252 as WHATWG defines it: Python's cp1252 leaves 0x81 0x8D 0x8F 0x90 0x9D undefined,
# WHATWG maps them to the C1 controls of the same value, so a real latin-1 page never fails.
_CP1252_TABLE = "".join(
    bytes([i]).decode("cp1252", "ignore") or chr(i) for i in range(256))


def _eucjp_extension(err: UnicodeDecodeError) -> tuple[str, int] | None:
    """NEC row 13 (circled digits...) and NEC-selected IBM rows 89-92 in EUC-JP, which WHATWG's
    jis0208 index has and Python's euc_jp lacks: decode the same JIS cell through cp932."""
    data, i = err.object, err.start
    if i + 1 >= len(data):
        return None
    a, b = data[i], data[i + 1]
    if not (0xA1 <= a <= 0xFE and 0xA1 <= b <= 0xFE):
        return None
    row, cell = a - 0xA0, b - 0xA0
    lead = (row + 1) // 2 + (0x80 if row <= 62 else 0xC0)
    if row % 2:
        trail = cell + 0x3F + (cell >= 64)
    else:
        trail = cell + 0x9E
    try:
        return bytes([lead, trail]).decode("cp932"), i + 2
    except UnicodeDecodeError:
        return None


def _eucjp_strict(err):
    got = _eucjp_extension(err)
    if got is None:
        raise err
    return got


def _eucjp_replace(err):
    return _eucjp_extension(err) or ("\ufffd", err.start + 1)


codecs.register_error("warclake-eucjp-strict", _eucjp_strict)
codecs.register_error("warclake-eucjp-replace", _eucjp_replace)
_ERRORS = {"euc_jp": ("warclake-eucjp-strict", "warclake-eucjp-replace")}


_C1 = bytes(range(0x80, 0xA0))


def _incremental(body: bytes, py: str, strict: str, lenient: str, window: int) -> str | None:
    dec = codecs.getincrementaldecoder(py)(strict)
    try:
        head = dec.decode(body[:window], False)
    except UnicodeDecodeError:
        return None
    dec.errors = lenient
    return head + dec.decode(body[window:], True)


def decode_strict_window(body: bytes, name: str, window: int) -> str | None:
    """Whole body decoded with ``name``, or None if the first ``window`` bytes are not strictly
    valid. An incomplete character at the window edge (or at the end) is not a failure."""
    py = _CODEC[name]
    if py == "windows-1252":
        if len(body.translate(None, _C1)) == len(body):  # no 0x80-0x9F: same as latin-1, 10x faster
            return body.decode("latin-1")
        return codecs.charmap_decode(body, "strict", _CP1252_TABLE)[0]
    strict, lenient = _ERRORS.get(py, ("strict", "replace"))
    # One C call for the usual valid page; the incremental decoder only when the first error
    # sits near the window edge, where a character cut by the window must not count.
    try:
        return body.decode(py, strict)
    except UnicodeDecodeError as err:
        if err.start >= window:
            return body.decode(py, lenient)
        if err.start < min(window, len(body)) - 8:
            return None
    return _incremental(body, py, strict, lenient, window)


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
_WS = b"\t\n\x0c\r "
_CHARSET_WORD = re.compile(rb"charset", re.I)
_LT = re.compile(rb"<")
_META_OPEN = re.compile(rb"<meta[\t\n\x0c\r /]", re.I)
_TAG_OPEN = re.compile(rb"</?[A-Za-z]")
_TAG_NAME_END = re.compile(rb"[\t\n\x0c\r >]")
_SKIP_ATTR_START = re.compile(rb"[\t\n\x0c\r /]*")
_ATTR_NAME = re.compile(rb"[^\t\n\x0c\r /=>]*")
_SPACES = re.compile(rb"[\t\n\x0c\r ]*")
_UNQUOTED = re.compile(rb"[^\t\n\x0c\r >]*")


class _End(Exception):
    """The prescan ran past the end of the bytes it may look at."""


def _get_attribute(buf: bytes, pos: int) -> tuple[bytes, bytes, int] | None:
    """WHATWG "get an attribute": (name, value, new position), None when there is none."""
    n = len(buf)
    pos = _SKIP_ATTR_START.match(buf, pos).end()
    if pos >= n:
        raise _End
    if buf[pos] == 0x3E:  # '>'
        return None
    # The first byte belongs to the name even if it is '='.
    end = _ATTR_NAME.match(buf, pos + 1).end()
    name = buf[pos:end].lower()
    pos = end
    if pos >= n:
        raise _End
    if buf[pos] in b"/>":
        return name, b"", pos
    if buf[pos] != 0x3D:  # whitespace after the name
        pos = _SPACES.match(buf, pos).end()
        if pos >= n:
            raise _End
        if buf[pos] != 0x3D:
            return name, b"", pos
    pos = _SPACES.match(buf, pos + 1).end()
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
    end = _UNQUOTED.match(buf, pos).end()
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
        pos = _SPACES.match(value, m.end()).end()
        if pos < len(value) and value[pos] == 0x3D:
            break
    pos = _SPACES.match(value, pos + 1).end()
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


# --- detector and fallback ----------------------------------------------------------------
def _utf8_window_valid(window: bytes) -> bool:
    try:
        codecs.getincrementaldecoder("utf-8")().decode(window, False)
        return True
    except UnicodeDecodeError:
        return False


def _trim_for_detector(window: bytes) -> bytes:
    """End the window at a character boundary: charset-normalizer decodes strictly and gave up
    on 9 of 62 Shift_JIS/EUC-JP files of the chardet corpus because of the cut character."""
    if b"\x00" in window[:1024]:  # UTF-16/32: keep whole code units
        return window[: len(window) - len(window) % 4]
    # '\n', '<', '>' are never trail bytes of the CJK multibyte encodings.
    cut = max(window.rfind(b"\n", -512), window.rfind(b"<", -512), window.rfind(b">", -512))
    return window[:cut + 1] if cut > 0 else window


# The Latin code pages that matter on the web; the rarer ones (Mac Roman, Latin-3/4/6...)
# won ties on plain English pages when allowed.
_LATIN_CODECS = ["cp1252", "cp1250", "cp1254", "cp1257", "iso8859_2", "iso8859_15", "latin_1"]
# Web prevalence of legacy charsets, used only to break ties between equally good guesses
# (charset-normalizer ranks windows-1250/1252/1258 equal on plain French or Portuguese text;
# windows-1252 is by far the most common of them on the web).
_PREVALENCE = ("windows-1252", "windows-1251", "windows-31j", "gbk", "euc-kr", "big5", "euc-jp",
               "windows-1250", "iso-8859-2", "windows-1256", "windows-1254", "windows-874",
               "iso-8859-15", "windows-1255", "windows-1253", "koi8-r", "iso-8859-9")
_RANK = {n: i for i, n in enumerate(_PREVALENCE)}


def detect_charset(window: bytes) -> list[str]:
    """charset-normalizer's guesses for the window as our canonical names, best first; guesses
    within a hair of the best are reordered by web prevalence. Codecs outside our tables (DOS
    and EBCDIC code pages, which it proposes on messy Latin text) are dropped."""
    from charset_normalizer import from_bytes  # imported lazily: the common path never needs it

    window = _trim_for_detector(window)
    # Bytes that can only be Latin-script text: ask about Latin code pages only (half the time).
    latin = ascii_compatible_plausible(window) and latin_plausible(window)
    matches = from_bytes(window, preemptive_behaviour=False, cp_isolation=_LATIN_CODECS if latin else None)
    if latin and not len(matches):
        matches = from_bytes(window, preemptive_behaviour=False)
    scored = []
    for i, match in enumerate(matches):
        if match.encoding in ("utf_16", "utf_32"):  # BOM-detecting codecs: the BOM says which
            bom = sniff_bom(window)
            names = [bom[0]] if bom else []
        else:
            # Codecs that decode this window to the very same text are listed together; name
            # the most common one (English with a few curly quotes is cp1250 = cp1252 = ...).
            names = [n for n in map(_python_codec_name, match.could_be_from_charset or [match.encoding]) if n]
        names.sort(key=lambda n: _RANK.get(n, len(_RANK)))
        if names and all(names[0] != s[-1] for s in scored):
            scored.append((match.chaos, -match.coherence, i, names[0]))
    if not scored:
        return []
    best_chaos = min(s[0] for s in scored)
    best_coh = min(s[1] for s in scored if s[0] == best_chaos)
    # Only exact ties: a looser tie let windows-1252 beat the right windows-1250/1254 on
    # Hungarian and Turkish files whose coherence was a few hundredths better.
    tied = [s for s in scored if s[0] == best_chaos and s[1] == best_coh]
    tied.sort(key=lambda s: (_RANK.get(s[-1], len(_RANK)), s[2]))
    rest = [s for s in scored if s not in tied]
    return [s[-1] for s in tied + rest]


_FALLBACK_MIN_RATIO = 2  # valid multibyte chars per invalid sequence; legacy CJK text peaks at 0.43 (chardet corpus)


def _damaged_utf8(window: bytes) -> bool:
    text = window.decode("utf-8", "replace")
    errors = text.count("\ufffd")
    if not errors:
        return False
    multibyte = len(text) - len(text.encode("ascii", "ignore")) - errors
    return multibyte >= _FALLBACK_MIN_RATIO * errors


# --- the cascade --------------------------------------------------------------------------
def decode_body(body: bytes, http_content_type: str | None, window: int = 20480,
                *, trust_declarations: bool = True, meta_limit: int | None = None) -> DecodeResult | None:
    """Decode an HTTP body with the cascade described in the module docstring.

    ``trust_declarations=False`` skips the BOM/meta/header steps (evaluation of the detector
    alone); ``meta_limit`` bounds the prescan (default: the window)."""
    tried: set[str] = set()
    head = body[:window]
    if trust_declarations:
        bom = sniff_bom(body)
        if bom:
            name, skip = bom
            text = decode_strict_window(body[skip:], name, window)
            if text is not None:
                return DecodeResult(text, name, "bom")
            tried.add(name)
        declared = [(sniff_meta(head, meta_limit or window) or sniff_xml_declaration(head), "meta"),
                    (header_charset(http_content_type), "header")]
        for name, source in declared:
            if name is None or name in tried:
                continue
            tried.add(name)
            if name in _UTF16_32:
                if b"\x00" not in head[:256]:
                    continue  # a UTF-16/32 label on ASCII-compatible bytes is wrong (WHATWG: utf-8)
            elif not name.startswith("iso-2022") and not ascii_compatible_plausible(head):
                continue
            if name in _SINGLE_BYTE and not head.isascii():
                if _utf8_window_valid(head):
                    return DecodeResult(decode_strict_window(body, "utf-8", window), "utf-8", "detector")
                if name in _LATIN_SINGLE_BYTE and not latin_plausible(head):
                    continue
            text = decode_strict_window(body, name, window)
            if text is not None:
                return DecodeResult(text, name, source)
    # Valid UTF-8 is exact evidence; NUL (UTF-16/32) and ESC (ISO-2022) bytes are valid UTF-8
    # too but mean another encoding, so those go to the statistical detector.
    if b"\x00" not in head and b"\x1b" not in head and _utf8_window_valid(head):
        return DecodeResult(decode_strict_window(body, "utf-8", window), "utf-8", "detector")
    if _damaged_utf8(head):
        return DecodeResult(body.decode("utf-8", "replace"), "utf-8", "fallback")
    for name in detect_charset(head)[:3]:
        if name in tried:
            continue
        text = decode_strict_window(body, name, window)
        if text is not None:
            return DecodeResult(text, name, "detector")
    text = decode_strict_window(body, "utf-8", window)
    if text is not None:
        return DecodeResult(text, "utf-8", "fallback")
    return None

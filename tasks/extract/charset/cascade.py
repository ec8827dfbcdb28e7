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
                Among the Latin code pages the decoded letters then decide (latin.py);
                when it has no guess, or guesses Shift_JIS for text without kana, the
                strictly valid CJK encodings are ranked (cjk.py). The rules between
                neighbouring code pages: README.md beside this file.
5. ``fallback`` UTF-8 with replacement characters: damaged UTF-8 (a few invalid sequences
                among many valid multibyte ones; checked before charset-normalizer, which would
                turn it into mojibake), or a last resort. The text then contains U+FFFD.

A declared charset is also skipped when the bytes contradict it, since strict decoding cannot:
- a single-byte legacy label on a window whose non-ASCII bytes form valid UTF-8 -> UTF-8
  (``detector``): legacy 8-bit text is practically never valid UTF-8 (0 of 385 non-ASCII
  legacy files of the chardet corpus are), while "iso-8859-1" on UTF-8 pages is a common
  server default;
- a Latin single-byte label on bytes whose non-ASCII bytes come in runs (Cyrillic, CJK...);
- a Latin single-byte HTTP header when another Latin code page reads clearly better (latin.py);
- any ASCII-compatible label on UTF-16/32 (NULs) or ISO-2022 (escape sequences) bytes.

``None`` means no candidate worked (the caller records ``charset_failed``).

Labels are normalised to WHATWG Encoding Standard names, lower-case, with one exception kept
from Uzushio: Shift_JIS and its labels are decoded as windows-31j (cp932) and reported so.
"""
from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

from warclake.tasks.extract.charset.cjk import CANDIDATES as _CJK_CANDIDATES
from warclake.tasks.extract.charset.cjk import MIN_KANA as _CJK_MIN_KANA
from warclake.tasks.extract.charset.cjk import score_text as _cjk_score
from warclake.tasks.extract.charset.detect import (
    ascii_compatible_plausible,
    damaged_utf8,
    detect_charset,
    latin_plausible,
    utf8_window_valid,
)
from warclake.tasks.extract.charset.eucjp import ERROR_HANDLERS
from warclake.tasks.extract.charset.labels import CODEC
from warclake.tasks.extract.charset.latin import CANDIDATES as _LATIN_CANDIDATES
from warclake.tasks.extract.charset.latin import decode as decode_latin
from warclake.tasks.extract.charset.latin import rank_latin, sample, score_and_best_possible
from warclake.tasks.extract.charset.prescan import (
    header_charset,
    sniff_bom,
    sniff_meta,
    sniff_xml_declaration,
)

SOURCES = ("bom", "meta", "header", "detector", "fallback")


@dataclass(frozen=True, slots=True)
class DecodeResult:
    text: str
    charset: str
    source: str
    # The body itself when it is strictly valid UTF-8: exactly ``text`` encoded, so the HTML
    # parser reads it without encoding the text again.
    utf8: bytes | None = field(default=None, repr=False, compare=False)


# --- names the cascade second-guesses -----------------------------------------------------
# Single-byte legacy charsets: any byte string decodes in most of them, so a declared one is
# checked against UTF-8 validity (see the module docstring).
_SINGLE_BYTE = frozenset(
    n for n in CODEC
    if n.startswith(("iso-8859-", "windows-12", "koi8-")) or n in (
        "ibm866", "ibm855", "macintosh", "x-mac-cyrillic", "windows-874"))
# Latin-script single-byte charsets decode any byte string, so strict decoding cannot reject
# them; latin_plausible (detect.py) rejects bytes that cannot be Latin-script text.
_LATIN_SINGLE_BYTE = frozenset({
    "windows-1252", "windows-1250", "windows-1254", "windows-1257", "macintosh",
    "iso-8859-2", "iso-8859-3", "iso-8859-4", "iso-8859-10", "iso-8859-13", "iso-8859-14",
    "iso-8859-15", "iso-8859-16"})
# The code pages the decoded letters choose among when the detector names one of them.
_LATIN_RANKED = _LATIN_SINGLE_BYTE | frozenset(_LATIN_CANDIDATES)
_UTF16_32 = frozenset({"utf-16le", "utf-16be", "utf-32le", "utf-32be"})


# --- strict window decoding ---------------------------------------------------------------
# windows-1252 as WHATWG defines it: Python's cp1252 leaves 0x81 0x8D 0x8F 0x90 0x9D undefined,
# WHATWG maps them to the C1 controls of the same value, so a real latin-1 page never fails.
_CP1252_TABLE = "".join(
    bytes([i]).decode("cp1252", "ignore") or chr(i) for i in range(256))
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
    py = CODEC[name]
    if py == "windows-1252":
        if len(body.translate(None, _C1)) == len(body):  # no 0x80-0x9F: same as latin-1, 10x faster
            return body.decode("latin-1")
        return codecs.charmap_decode(body, "strict", _CP1252_TABLE)[0]
    strict, lenient = ERROR_HANDLERS.get(py, ("strict", "replace"))
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


def _decoded(body: bytes, name: str, window: int, source: str) -> DecodeResult | None:
    """decode_strict_window as a result; strictly valid UTF-8 keeps its bytes."""
    if name == "utf-8":
        try:
            return DecodeResult(body.decode("utf-8"), name, source, body)
        except UnicodeDecodeError:
            pass
    text = decode_strict_window(body, name, window)
    return None if text is None else DecodeResult(text, name, source)


def _valid_utf8(body: bytes, head: bytes, window: int) -> DecodeResult | None:
    """The body as UTF-8 (source ``detector``) when its window is valid UTF-8, else None.
    A body valid as a whole is decoded once, without checking its window apart."""
    try:
        return DecodeResult(body.decode("utf-8"), "utf-8", "detector", body)
    except UnicodeDecodeError:
        return _decoded(body, "utf-8", window, "detector") if utf8_window_valid(head) else None


# A server's Latin charset loses to another Latin code page only when that one reads clearly
# better: every such header on the web is a default as often as a choice.
_HEADER_MARGIN = 2.0


def _contradicted(head: bytes, declared: str) -> bool:
    # The usual case costs one scoring: every non-ASCII letter fits one alphabet, nothing can
    # read better.
    score, best_possible = score_and_best_possible(decode_latin(sample(head), declared))
    if score >= best_possible:
        return False
    ranked = rank_latin(head)
    return dict((n, s) for s, n in ranked)[declared] + _HEADER_MARGIN <= ranked[0][0]


_CJK_MARGIN = 0.1
_KANA = re.compile("[\u3041-\u30ff]")


def _kanaless_sjis(body: bytes, window: int) -> bool:
    """Whether the window read as Shift_JIS has fewer kana than Japanese text ever has. GB2312
    and EUC-KR write every character as two bytes from 0xA1 up, which Shift_JIS reads as
    half-width katakana and level-2 kanji but never as kana (its kana start with 0x82/0x83)."""
    text = decode_strict_window(body[:window], "windows-31j", window)
    return text is not None and len(_KANA.findall(text)) < _CJK_MIN_KANA


def _rank_cjk(body: bytes, window: int, names: list[str]) -> list[str]:
    """The CJK encodings that decode the window strictly, best first by character frequency
    (cjk.py); charset-normalizer's first guess stays first when it scores as well."""
    scored = []
    for i, name in enumerate(_CJK_CANDIDATES):
        text = decode_strict_window(body[:window], name, window)
        if text is not None:
            # Mojibake between these encodings often lands on common characters too (Hangul
            # rows read as GBK are first-level hanzi), so only a clear difference overrules.
            bonus = _CJK_MARGIN if names and name == names[0] else 0.0
            scored.append((_cjk_score(text) + bonus, -i, name))
    scored.sort(reverse=True)
    best = [s[-1] for s in scored]
    return best + [n for n in names if n not in best]


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
            bom_name, skip = bom
            res = _decoded(body[skip:], bom_name, window, "bom")
            if res is not None:
                return res
            tried.add(bom_name)
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
                res = _valid_utf8(body, head, window)
                if res is not None:
                    return res
                if name in _LATIN_SINGLE_BYTE and not latin_plausible(head):
                    continue
                if source == "header" and name in _LATIN_CANDIDATES and _contradicted(head, name):
                    continue
            res = _decoded(body, name, window, source)
            if res is not None:
                return res
    # Valid UTF-8 is exact evidence; NUL (UTF-16/32) and ESC (ISO-2022) bytes are valid UTF-8
    # too but mean another encoding, so those go to the statistical detector.
    if b"\x00" not in head and b"\x1b" not in head:
        res = _valid_utf8(body, head, window)
        if res is not None:
            return res
    if damaged_utf8(head):
        return DecodeResult(body.decode("utf-8", "replace"), "utf-8", "fallback")
    names = detect_charset(head)
    if names and names[0] in _LATIN_RANKED and not head.isascii():
        # Among the Latin code pages the letters decide (latin.py); charset-normalizer's
        # choice stays when it reads as well as the best.
        ranked = rank_latin(head, _LATIN_CANDIDATES if names[0] in _LATIN_CANDIDATES
                            else _LATIN_CANDIDATES + (names[0],))
        if dict((n, s) for s, n in ranked)[names[0]] < ranked[0][0]:
            names = [ranked[0][1]] + [n for n in names if n != ranked[0][1]]
    elif (not names and not latin_plausible(head)) or (names and names[0] == "windows-31j"
                                                       and _kanaless_sjis(body, window)):
        # The strictly valid CJK encodings, by character frequency: when charset-normalizer
        # found nothing (it gives up on some Japanese and Korean pages that every browser
        # reads), and against a Shift_JIS guess whose text has no kana.
        names = _rank_cjk(body, window, names)
    for name in names[:3]:
        if name in tried:
            continue
        res = _decoded(body, name, window, "detector")
        if res is not None:
            return res
    return _decoded(body, "utf-8", window, "fallback")

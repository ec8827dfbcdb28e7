"""Charset from the bytes alone, for bodies whose declarations are missing or wrong: UTF-8
validity, charset-normalizer's guesses, and the checks of bytes against a declared charset."""
from __future__ import annotations

import codecs

from warclake.tasks.extract.charset.labels import python_codec_name
from warclake.tasks.extract.charset.prescan import sniff_bom

# Text in a Latin-script single-byte charset has isolated non-ASCII letters inside ASCII
# words, while Cyrillic, Greek, Hebrew, CJK... bytes form runs: on the chardet corpus the mean
# run of bytes >= 0x80 is <= 1.38 for every Latin file and >= 2.0 for every other one
# (UTF-16/32 aside, which NULs show).
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


def utf8_window_valid(window: bytes) -> bool:
    """Whether the window is valid UTF-8; a character cut by the end of the window is not an
    error (the window is a prefix of the body)."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(window, False)
        return True
    except UnicodeDecodeError:
        return False


def _trim_for_detector(window: bytes) -> bytes:
    """End the window at a character boundary: charset-normalizer decodes strictly and gives up
    on 9 of 62 Shift_JIS/EUC-JP files of the chardet corpus when the cut splits a character."""
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
    scored: list[tuple[float, float, int, str]] = []
    for i, match in enumerate(matches):
        if match.encoding in ("utf_16", "utf_32"):  # BOM-detecting codecs: the BOM says which
            bom = sniff_bom(window)
            names = [bom[0]] if bom else []
        else:
            # Codecs that decode this window to the very same text are listed together; name
            # the most common one (English with a few curly quotes is cp1250 = cp1252 = ...).
            names = [n for n in map(python_codec_name, match.could_be_from_charset or [match.encoding]) if n]
        names.sort(key=lambda n: _RANK.get(n, len(_RANK)))
        if names and all(names[0] != s[-1] for s in scored):
            scored.append((match.chaos, -match.coherence, i, names[0]))
    if not scored:
        return []
    best_chaos = min(s[0] for s in scored)
    best_coh = min(s[1] for s in scored if s[0] == best_chaos)
    # Only exact ties: a looser tie lets windows-1252 beat the right windows-1250/1254 on
    # Hungarian and Turkish files whose coherence is a few hundredths better.
    tied = [s for s in scored if s[0] == best_chaos and s[1] == best_coh]
    tied.sort(key=lambda s: (_RANK.get(s[-1], len(_RANK)), s[2]))
    rest = [s for s in scored if s not in tied]
    return [s[-1] for s in tied + rest]


_FALLBACK_MIN_RATIO = 2  # valid multibyte chars per invalid sequence; legacy CJK text peaks at 0.43 (chardet corpus)


def damaged_utf8(window: bytes) -> bool:
    """UTF-8 with a few invalid sequences among many valid multibyte characters: a damaged
    UTF-8 page rather than a legacy charset, which charset-normalizer would turn into mojibake."""
    text = window.decode("utf-8", "replace")
    errors = text.count("\ufffd")
    if not errors:
        return False
    multibyte = len(text) - len(text.encode("ascii", "ignore")) - errors
    return multibyte >= _FALLBACK_MIN_RATIO * errors

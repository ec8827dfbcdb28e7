"""Choosing among the Latin single-byte code pages by the letters their decoding produces.

Any byte string decodes in every one of them, and charset-normalizer ranks them by statistics
of mojibake that do not separate the Central European and Baltic pages from windows-1252 on
short texts. The text itself does: in the right code page the bytes above 0x7F are letters of
one language's alphabet, in the wrong one they are symbols, control characters, or letters of
no language that uses the others ("Kraków" in iso-8859-2 read as windows-1252 is "Krak¢w";
"žluťoučký" in windows-1250 read as iso-8859-2 has C1 controls). No model is loaded: this runs
on the charset step, before any language is known (and ``--langs ja`` never loads lingua).
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter

# The code pages compared, in the order that breaks ties (web prevalence).
CANDIDATES = ("windows-1252", "windows-1250", "iso-8859-2", "windows-1257", "windows-1254",
              "iso-8859-15", "iso-8859-13", "iso-8859-16", "iso-8859-4", "iso-8859-9",
              "windows-1258", "iso-8859-3")
_PY = {"windows-1252": "cp1252", "windows-1250": "cp1250", "iso-8859-2": "iso8859_2",
       "windows-1257": "cp1257", "windows-1254": "cp1254", "iso-8859-15": "iso8859_15",
       "iso-8859-13": "iso8859_13", "iso-8859-16": "iso8859_16", "iso-8859-4": "iso8859_4",
       "iso-8859-9": "iso8859_9", "windows-1258": "cp1258", "iso-8859-3": "iso8859_3"}


def _vietnamese() -> str:
    """Every Vietnamese letter beyond ASCII: the vowels with their hats and horns, each with
    one of the five tone marks or none, and đ."""
    tones = ("", "\u0300", "\u0301", "\u0303", "\u0309", "\u0323")
    vowels = ("a", "\u0103", "\u00e2", "e", "\u00ea", "i", "o", "\u00f4", "\u01a1", "u", "\u01b0", "y")
    letters = {unicodedata.normalize("NFC", v + t) for v in vowels for t in tones}
    return "".join(sorted(c for c in letters | {"\u0111"} if c >= "\x80"))


# The letters beyond ASCII that each Latin-script language of these code pages writes
# (lower case; orthographies as published, not fitted to any data).
_ALPHABET_LETTERS = {
    "fr": "àâæçéèêëîïôœùûüÿ", "de": "äöüß", "es": "áéíñóúü", "pt": "áâãàçéêíóôõú",
    "it": "àèéìíîòóùú", "nl": "éëïóöü", "ca": "àçèéíïòóúü", "da": "æøåé", "no": "æøåéóò",
    "sv": "åäöé", "fi": "äöåšž", "is": "áðéíóúýþæö", "ga": "áéíóú", "sq": "çë",
    "cs": "áčďéěíňóřšťúůýž", "sk": "áäčďéíĺľňóôŕšťúýž", "pl": "ąćęłńóśźż",
    "hu": "áéíóöőúüű", "sl": "čšž", "hr": "čćđšž", "ro": "ăâîșțşţ", "tr": "çğıöşüâîİ",
    "et": "äöõüšž", "lv": "āčēģīķļņšūž", "lt": "ąčęėįšųūž",
    "af": "áéèêëíîïóôöúûü", "br": "âêîôûùüñ", "co": "àèìòùïü", "cy": "âêîôûŵŷáéíóúàèìòùäëïöü",
    "eo": "ĉĝĥĵŝŭ", "eu": "ñü", "fo": "áíóúýæøð", "fy": "âêéôûúäëïöü", "gd": "àèìòù",
    "gl": "áéíóúñü", "lb": "äëéèöü", "mt": "àèìòùċġħż", "oc": "àèéíòóúïüç",
    "rm": "àèéìòùäöüê", "sc": "àèìòù", "wa": "âåçèéêîôûëöü", "vi": _vietnamese(),
}
ALPHABETS = {lang: frozenset(letters) for lang, letters in _ALPHABET_LETTERS.items()}

_NON_ASCII_WORD = re.compile(r"[^\W\d_]*[^\x00-\x7f][^\s<>&;\"'=/.,:!?()\[\]{}0-9-]*")
# Weights: a symbol or control inside a word is the clearest sign of a wrong code page.
_WRONG_LETTER, _SYMBOL_IN_WORD = 1.0, 2.0
# Characters no text writes alone, so they count wherever they stand: the C1 controls (bytes
# 0x80-0x9F of windows-125x punctuation, the euro sign and smart quotes, read in an ISO code
# page), the generic currency sign (the euro sign of ISO-8859-15/16 read in another), and
# the replacement character (a byte the code page leaves undefined).
_NEVER_ALONE = frozenset(map(chr, range(0x80, 0xA0))) | {"\u00a4", "\ufffd"}
# Inside a word these join its letters rather than break them: apostrophes, the Catalan middle
# dot, hyphens, dashes, ellipses and quotes written without spaces.
_JOINERS = frozenset("\u2019\u2018\u02bc\u00b7\u2010\u2011\u00ad\u2013\u2014\u2026\u201c\u201d\u201e\u201a")
# Signs that follow a word ("Realtor®", "25°", "m²"): punctuation at a word's edge, symbols
# between letters.
_TRAILERS = frozenset("\u00ae\u00a9\u2122\u00b0\u00b2\u00b3\u00b9\u2020\u2021")
# The one-letter words beyond ASCII of these languages (French and Portuguese à, Italian è,
# Portuguese é, Icelandic and Faroese á í, Irish é í, Scandinavian å ø, Vietnamese ở ...): a
# lone letter outside them ("Ł825", "ŕ" for à) is a letter of no word.
_ONE_LETTER_WORDS = frozenset("àèéóáíåøởừạồôơưýốúò")
_COMBINING = re.compile("[\u0300-\u036f]")
_TONED = re.compile("[^\\W\\d_][\u0300-\u036f]+")


def _compose(m: re.Match) -> str:
    written = m.group()
    composed = unicodedata.normalize("NFC", written)
    if len(composed) > 1:
        return composed
    return composed * (len(written) - (written[0] < "\x80"))  # once per byte above 0x7F


def decode(window: bytes, name: str) -> str:
    if name == "windows-1252":
        import codecs

        from warclake.tasks.extract.charset.cascade import _CP1252_TABLE
        return codecs.charmap_decode(window, "replace", _CP1252_TABLE)[0]
    if name in _PY:
        return window.decode(_PY[name], "replace")
    from warclake.tasks.extract.charset.labels import CODEC
    return window.decode(CODEC[name], "replace")


def score_text(text: str) -> float:
    """How much the non-ASCII characters of the words look like one language's letters: one
    point per letter of the best alphabet, minus one per other letter and two per symbol."""
    return score_and_best_possible(text)[0]


def _char_class(c: str) -> str:
    """'L' letter, 'P' punctuation, 'N' neutral (joiners, marks), 'S' anything else."""
    if c.isalpha():
        return "L"
    if c in _JOINERS:
        return "N"
    if c in _TRAILERS:
        return "P"
    cat = unicodedata.category(c)[0]
    return "N" if cat == "M" else "P" if cat == "P" else "S"


_CLASS: dict[str, str] = {}
# For each letter, the alphabets that hold it (indices into ALPHABETS' values).
_ALPHABET_LIST = tuple(ALPHABETS.values())
_HOLDERS = {c: tuple(i for i, a in enumerate(_ALPHABET_LIST) if c in a) for a in _ALPHABET_LIST for c in a}


def score_and_best_possible(text: str) -> tuple[float, int]:
    """The score and the most any decoding of these words could get (every character counted
    a letter of one alphabet)."""
    if _COMBINING.search(text):
        # windows-1258 writes Vietnamese tones as combining marks after the letter: the letter
        # and its marks are one letter, counted once per byte above 0x7F it was written with
        # (as other code pages read those bytes as that many letters).
        text = _TONED.sub(_compose, text)
    words = _NON_ASCII_WORD.findall(text)
    symbols = wrong_alone = 0
    # A lone character counts only when no text writes it alone: other lone bytes (a currency
    # sign before a number) are a letter in one code page and a symbol in another with nothing
    # to tell which.
    for word in [w for w in words if len(w) < 2]:
        if word in _NEVER_ALONE or unicodedata.category(word)[0] == "M":  # a mark on no letter
            symbols += 1
        elif word.isalpha() and word.lower() not in _ONE_LETTER_WORDS:
            wrong_alone += 1
    joined = " ".join([w for w in words if len(w) > 1])
    letters: dict[str, int] = {}
    for c, n in Counter(joined).items():
        if c < "\x80":
            continue
        kind = _CLASS.get(c) or _CLASS.setdefault(c, _char_class(c))
        if kind == "L":
            low = c.lower()
            if low != c:
                # A capital after two lower-case letters of the same word ("thuÒ", "coÌ"): the
                # second byte of a letter another code page writes with two.
                symbols += len(re.findall(f"(?<=[a-z]{{2}}){c}", joined))
            low = low if len(low) == 1 else c
            letters[low] = letters.get(low, 0) + n
        elif kind == "P":
            # Punctuation around a word (quotes, dashes) is no sign either way; between two
            # letters it is.
            symbols += len(re.findall(f"(?<=[^\\W\\d_]){re.escape(c)}(?=[^\\W\\d_])", joined))
        elif kind == "S":
            symbols += n
    total = sum(letters.values())
    if not total and not symbols and not wrong_alone:
        return 0.0, 0
    held = [0] * len(_ALPHABET_LIST)
    for c, n in letters.items():
        for i in _HOLDERS.get(c, ()):
            held[i] += n
    best = max(held)
    score = best - _WRONG_LETTER * (total - best + wrong_alone) - _SYMBOL_IN_WORD * symbols
    return score, total + symbols + wrong_alone


# Words with a byte above 0x7F, found on the bytes so that each candidate decodes only them.
_HIGH_WORD = re.compile(rb"[A-Za-z]*[\x80-\xff][^\s<>&;\"'=/.,:!?()\[\]{}0-9-]*")
# Words compared: enough to tell the code pages apart, and a bounded cost on long pages.
SAMPLE_WORDS = 300


def sample(window: bytes) -> bytes:
    """The first SAMPLE_WORDS words holding a non-ASCII byte, space-separated."""
    words = []
    for m in _HIGH_WORD.finditer(window):
        words.append(m.group())
        if len(words) >= SAMPLE_WORDS:
            break
    return b" ".join(words)


def rank_latin(window: bytes, candidates: tuple[str, ...] = CANDIDATES) -> list[tuple[float, str]]:
    """(score, name) for each candidate, best first; equal scores keep the candidates' order."""
    words = sample(window)
    scored = [(score_text(decode(words, n)), -i, n) for i, n in enumerate(candidates)]
    scored.sort(reverse=True)
    return [(s, n) for s, _, n in scored]

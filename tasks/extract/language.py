"""Language identification of decoded pages: exact script routing first, lingua only where needed.

Buffers (their sizes are ExtractConfig's ``lang_window_chars``, ``uzushio_buffer_chars`` and
``latin_buffer_chars``; the defaults below)
- The Uzushio buffer (:func:`language_buffer`): from the start of the decoded page, every run
  of characters below U+007F or whitespace becomes one space and everything else is kept, up
  to ``max_chars``. Markup is ASCII, so this leaves the text of non-Latin scripts. The original
  limit is "20 KB of body"; the text is already decoded here, so the prefix is cut at
  ``window`` *characters*, which covers at least ``window`` bytes of the body. Scripts,
  styles and comments are skipped and not counted (heads of inline code hide no text).
- Latin-script text is all ASCII-range letters, so that buffer is empty for English or French
  (Uzushio could not detect them). :func:`latin_buffer` drops scripts, styles, comments and tags
  with regular expressions and keeps the text (or takes the paragraph text when the caller has
  it), up to its own ``max_chars``.

Routing
- Scripts used by one language only decide alone: kana -> ja, Hangul -> ko, Thai -> th,
  Greek -> el, Hebrew -> he, Armenian, Georgian, Bengali, Gujarati, Gurmukhi, Tamil, Telugu.
- Han: Japanese when kana is a real share of the Han + kana text, Chinese otherwise. (lingua
  decides the same pair by script alone: any kana -> ja, so a Chinese page with one "の" is
  Japanese to it, and kanji-only text is always Chinese.)
- Cyrillic, Arabic, Devanagari and Latin text goes to a lingua detector built only for the
  languages of that script, when first needed; clearly English Latin text is settled before
  lingua by its function words (:func:`english_words_share`), and clear Latin-script and
  Cyrillic text by the first pass on lingua's own trigram models (:mod:`language_first_pass`).

Caching: lingua's detectors (their models take up to a gigabyte) are cached once per process
by :func:`lingua_detector`, and lingua's answers by text in a bounded table (a repeated text
is answered without lingua, see :func:`_lingua_top`). A :class:`LanguageDetector` only routes
and is cheap to make, so callers make one per configuration and never cache it.
- When no target can be written in the page's script, the page is rejected without lingua.
"""
from __future__ import annotations

import html
import re
import threading
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

# --- scripts ------------------------------------------------------------------------------
OTHER, LATIN, KANA, HAN, HANGUL, CYRILLIC, ARABIC, DEVANAGARI = range(8)
GREEK, HEBREW, THAI, ARMENIAN, GEORGIAN, BENGALI, GUJARATI, GURMUKHI, TAMIL, TELUGU = range(8, 18)
N_SCRIPTS = 18

# (first code point, script) for consecutive Unicode ranges, from the Unicode block chart.
_RANGES = [
    (0x0000, OTHER), (0x0041, LATIN), (0x005B, OTHER), (0x0061, LATIN), (0x007B, OTHER),
    (0x00C0, LATIN), (0x00D7, OTHER), (0x00D8, LATIN), (0x00F7, OTHER), (0x00F8, LATIN),
    (0x0250, OTHER), (0x0370, GREEK), (0x0400, CYRILLIC), (0x0530, ARMENIAN), (0x0590, HEBREW),
    (0x0600, ARABIC), (0x0700, OTHER), (0x0750, ARABIC), (0x0780, OTHER), (0x08A0, ARABIC),
    (0x0900, DEVANAGARI), (0x0980, BENGALI), (0x0A00, GURMUKHI), (0x0A80, GUJARATI),
    (0x0B00, OTHER), (0x0B80, TAMIL), (0x0C00, TELUGU), (0x0C80, OTHER), (0x0E00, THAI),
    (0x0E80, OTHER), (0x10A0, GEORGIAN), (0x1100, HANGUL), (0x1200, OTHER), (0x1E00, LATIN),
    (0x1F00, GREEK), (0x2000, OTHER), (0x3040, KANA),
    # U+30FB (・) and U+30FC (ー) are left out: Python's gb2312 decodes the Chinese middle dot
    # to U+30FB, and neither says anything without other kana around.
    (0x30FB, OTHER), (0x30FD, KANA), (0x3100, OTHER), (0x3130, HANGUL), (0x3190, OTHER),
    (0x31F0, KANA), (0x3200, OTHER), (0x3400, HAN), (0x4DC0, OTHER), (0x4E00, HAN),
    (0xA000, OTHER), (0xAC00, HANGUL), (0xD7B0, OTHER), (0xF900, HAN), (0xFB00, OTHER),
    (0xFB50, ARABIC), (0xFE00, OTHER), (0xFE70, ARABIC), (0xFEFF, OTHER),
    # Halfwidth katakana (U+FF66-U+FF9D) stays OTHER: runs of it are the classic mojibake of
    # EUC-KR/EUC-JP bytes read as Shift_JIS, and real Japanese text has hiragana anyway.
    (0x20000, HAN), (0x30000, OTHER),
]
_STARTS = np.array([r[0] for r in _RANGES], dtype=np.uint32)
_IDS = np.array([r[1] for r in _RANGES], dtype=np.intp)

# Scripts that one language alone writes (among lingua's 75 languages).
EXACT_SCRIPT_LANG = {KANA: "ja", HANGUL: "ko", THAI: "th", GREEK: "el", HEBREW: "he",
                     ARMENIAN: "hy", GEORGIAN: "ka", BENGALI: "bn", GUJARATI: "gu",
                     GURMUKHI: "pa", TAMIL: "ta", TELUGU: "te"}
CYRILLIC_LANGS = ("be", "bg", "kk", "mk", "mn", "ru", "sr", "uk")
ARABIC_LANGS = ("ar", "fa", "ur")
DEVANAGARI_LANGS = ("hi", "mr")
LATIN_LANGS = ("af", "az", "bs", "ca", "cs", "cy", "da", "de", "en", "eo", "es", "et", "eu", "fi",
               "fr", "ga", "hr", "hu", "id", "is", "it", "la", "lg", "lt", "lv", "mi", "ms", "nb",
               "nl", "nn", "pl", "pt", "ro", "sk", "sl", "sn", "so", "sq", "st", "sv", "sw", "tl",
               "tn", "tr", "ts", "vi", "xh", "yo", "zu")
LINGUA_SCRIPT_LANGS = {CYRILLIC: CYRILLIC_LANGS, ARABIC: ARABIC_LANGS,
                       DEVANAGARI: DEVANAGARI_LANGS, LATIN: LATIN_LANGS}
LANG_SCRIPT: dict[str, int] = {"ja": HAN, "zh": HAN}
LANG_SCRIPT.update({lang: s for s, lang in EXACT_SCRIPT_LANG.items() if s != KANA})
for _s, _langs in LINGUA_SCRIPT_LANGS.items():
    LANG_SCRIPT.update(dict.fromkeys(_langs, _s))
KNOWN_LANGS = frozenset(LANG_SCRIPT)


def script_counts(text: str) -> np.ndarray:
    """Characters per script (indexed by the script constants) in one vectorised pass."""
    if not text:
        return np.zeros(N_SCRIPTS, dtype=np.intp)
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    ids = _IDS[np.searchsorted(_STARTS, cps, side="right") - 1]
    return np.bincount(ids, minlength=N_SCRIPTS)


# --- buffers ------------------------------------------------------------------------------
# Defaults of the buffer settings (ExtractConfig takes them from here).
LANG_WINDOW_CHARS = 20 * 1024   # characters from the start of the decoded page the buffers read
UZUSHIO_BUFFER_CHARS = 1000     # length of the Uzushio buffer (scripts; Cyrillic, Arabic, Devanagari lingua)
LATIN_BUFFER_CHARS = 1000       # length of the Latin buffer (Latin-script lingua)

_SKIPPED = re.compile(r"[\x00-\x7e\s]+")


def language_buffer(text: str, max_chars: int = UZUSHIO_BUFFER_CHARS, window: int = LANG_WINDOW_CHARS) -> str:
    """:func:`reference_language_buffer`, by the compiled scan when it is in use."""
    if _TEXT is None:
        return reference_language_buffer(text, max_chars, window)
    return _TEXT.language_buffer(text, max_chars, window, READ_FACTOR)


def reference_language_buffer(text: str, max_chars: int = UZUSHIO_BUFFER_CHARS,
                              window: int = LANG_WINDOW_CHARS) -> str:
    """The Uzushio buffer: characters >= U+007F of the first ``window`` characters a reader
    can see, runs of skipped characters or whitespace collapsed to one space, at most
    ``max_chars`` long.

    Scripts, styles, comments and inline SVG (:func:`_next_hidden_block`) are skipped and do
    not count: pages whose <head> holds tens of thousands of characters of inline code before
    the first word of text are judged on that text. Markup outside them counts; at most
    ``READ_FACTOR * window`` characters of the page are read."""
    if text.isascii():   # O(1) in CPython
        return ""
    parts, have, step = [], 0, 2 * max_chars
    left = window   # visible characters still to read
    limit = min(len(text), READ_FACTOR * window)
    pos = 0
    while left > 0 and have <= max_chars and pos < limit:
        start, end_of_block = _next_hidden_block(text, pos, min(limit, pos + left), limit)
        # In slices, so a long non-Latin page does not squeeze the whole window to keep max_chars.
        while pos < start and left > 0:
            n = min(step, start - pos, left)
            part = _SKIPPED.sub(" ", text[pos:pos + n])
            parts.append(part)
            have += len(part)
            pos += n
            left -= n
            if have > max_chars:
                break
        if pos < start or end_of_block <= pos:
            break
        pos = end_of_block
        parts.append(" ")
    buf = parts[0] if len(parts) == 1 else _DOUBLE_SPACE.sub(" ", "".join(parts))
    return buf.strip()[:max_chars]


READ_FACTOR = 4   # how far past the window skipped blocks may carry the Uzushio buffer (heads of
                  # 20-44k characters of inline code are common; the --langs ja gate scans this far)

# Blocks a reader never sees, by how they open, in the usual spellings (a case-blind pattern
# is ~2x slower over a page), and how they close.
_HIDDEN_NAMES = ("script", "style", "svg", "noscript", "template")
_OPENERS = tuple(v for n in _HIDDEN_NAMES for v in (n, n.upper(), n.title()))
_HIDDEN_OPEN = re.compile("<(" + "|".join(_OPENERS) + r")(?![\w-])|<!--")
_HIDDEN_CLOSE = {v: re.compile(rf"</{n}\s*>", re.I) for n in _HIDDEN_NAMES for v in (n, n.upper(), n.title())}


def _next_hidden_block(text: str, pos: int, bound: int, limit: int) -> tuple[int, int]:
    """(start, end) of the first hidden block opening in ``text[pos:bound]``, its end searched
    up to ``limit`` (a block cut by it ends there); (bound, bound) when none opens."""
    block = _HIDDEN_OPEN.search(text, pos, min(limit, bound + 10))   # an opener may cross bound
    if block is None or block.start() >= bound:
        return bound, bound
    name = block.group(1)
    if name is None:   # a comment
        end = text.find("-->", block.end(), limit)
        return block.start(), (end + 3 if end >= 0 else limit)
    close = _HIDDEN_CLOSE[name].search(text, block.end(), limit)
    return block.start(), (close.end() if close else limit)


_DOUBLE_SPACE = re.compile(r"  +")


# Blocks whose content is not text; one cut by the end of the window is dropped to the end.
_DROPPED_BLOCKS = re.compile(
    r"<(?:(script|style|noscript|template|svg|math|textarea|select)\b.*?(?:</\1\s*>|\Z)|!--.*?(?:-->|\Z))",
    re.S | re.I)
_TAG = re.compile(r"<[^>]*>")
_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title", re.S | re.I)
_BODY = re.compile(r"<body\b", re.I)
# Tokens with URL, e-mail, path or code characters (or a dot inside, as in domain names) say
# nothing about the language and push lingua towards English. Anchored at token starts and
# with a lazy look-ahead, so it stays linear on long tokens (minified code, data URIs).
_NOT_WORDS = re.compile(r"(?<!\S)(?=\S*?(?:[{}()\[\];=<>|\\/_#$%^*~`@]|\.\w))\S++")
_SPACE = re.compile(r"\s+")


def latin_buffer(text: str, max_chars: int = LATIN_BUFFER_CHARS, window: int = LANG_WINDOW_CHARS,
                 min_chars: int = 200) -> str:
    """Visible text of the page: the title, then the body without scripts, styles, comments,
    tags, URLs and code-like tokens, entities decoded, whitespace collapsed.

    It starts at <body> (long <head> sections of scripts and styles are common) and reads
    4,096 characters, doubling until ``max_chars`` of text are found or ``window`` characters are
    read; past the window it only goes on (up to 4x) while less than ``min_chars`` were found."""
    title = _TITLE.search(text, 0, window)
    body = _BODY.search(text, 0, 8 * window)
    start = body.start() if body else 0
    head = title.group(1) + " " if title else ""
    size = min(4096, window)
    while True:
        part = _DROPPED_BLOCKS.sub(" ", text[start:start + size])
        part = _SPACE.sub(" ", head + _TAG.sub(" ", part))
        # Entities first ("Caf&eacute;" is a word); filtering tokens is the costly step, so
        # only on what can end up in the buffer.
        part = part[: 3 * max_chars]
        if "&" in part:
            part = html.unescape(part)
        part = _SPACE.sub(" ", _NOT_WORDS.sub("", part)).strip()
        if (len(part) >= max_chars or start + size >= len(text) or size >= 4 * window
                or (size >= window and len(part) >= min_chars)):
            return part[:max_chars]
        size *= 2


# --- lingua -------------------------------------------------------------------------------
# (languages, low accuracy) -> (lingua detector, its models preloaded). The only detector
# cache in the process: every path to lingua goes through lingua_detector.
_LINGUA: dict[tuple[tuple[str, ...], bool], tuple[object, bool]] = {}
_LOCK = threading.Lock()


def _build(key: tuple, preload: bool):
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    builder = LanguageDetectorBuilder.from_iso_codes_639_1(*[getattr(IsoCode639_1, c.upper()) for c in key[0]])
    if key[1]:
        builder = builder.with_low_accuracy_mode()
    if preload:
        builder = builder.with_preloaded_language_models()
    return builder.build()


def lingua_detector(langs: tuple[str, ...], low_accuracy: bool = False, preload: bool = False):
    """A lingua detector for exactly these ISO 639-1 languages, built once per process and
    (language set, accuracy mode), thread-safely. Without ``preload`` its models load lazily
    on first use; with it, a detector built without is rebuilt with every model loaded."""
    key = (tuple(sorted(set(langs))), low_accuracy)
    entry = _LINGUA.get(key)
    if entry is None or (preload and not entry[1]):
        with _LOCK:
            entry = _LINGUA.get(key)
            if entry is None or (preload and not entry[1]):
                entry = _LINGUA[key] = (_build(key, preload), preload)
    return entry[0]


def built_detectors() -> list[tuple]:
    """Keys (languages, low accuracy) of the lingua detectors built so far in this process."""
    return list(_LINGUA)


# --- detection ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LangResult:
    lang: str | None       # ISO 639-1, lower case; None when undetermined
    score: float           # lingua's confidence, the script's share for script decisions, or
                           # the English screen's share of English function words
    accepted: bool         # lang is a target, or targets == ("all",) and no minimum asked for failed
    via: str = ""          # how it was decided: script, kana, lingua, words (the English screen),
                           # trigrams (the first pass, tasks/extract/language_first_pass.py),
                           # no-target-script, no-letters,
                           # too-short (below min_chars), low-score (below min_score)

    @property
    def undetermined(self) -> bool:
        """Rejected for lack of evidence rather than for being another language: the ledger
        tells the two apart (lang_undetermined against lang_rejected)."""
        return not self.accepted and self.via in UNDETERMINED_VIA


UNDETERMINED_VIA = frozenset({"no-letters", "too-short", "low-score"})


class LinguaCall(NamedTuple):
    """A language decision that needs lingua: its text, candidate languages, accuracy mode
    and the letters of the deciding script (for ``min_chars``)."""
    text: str
    langs: tuple[str, ...]
    low_accuracy: bool
    chars: int


# Evidence rules, measured with tools.measure.language (results in its docstring):
KANA_SHARE = 0.05      # kana / (kana + Han) for Japanese: Japanese pages >= 0.27, Chinese 0.0
MIN_SCRIPT_CHARS = 4   # fewer characters of a script say nothing ("ログイン" is a Japanese page)
FEW_SCRIPT_CHARS = 200  # below this, the script must outweigh the page's Latin text
# A CJK or Hangul character carries about a word; compare them to Latin letters at this rate.
_CHAR_WEIGHT = {HAN: 3, HANGUL: 3}
# Letters in the Latin buffer under which the paragraph text is too thin and the page's own
# text is read instead. No minimum applies to the decision itself: lingua is built for short
# text (its low-accuracy models are right on 93 % of 60-character slices of our Latin pages,
# 97 % at 100) and a user who wants one asks for it (ExtractConfig's min_chars, min_lang_score).
MIN_LATIN_LETTERS = 100
_NOT_LATIN_LETTERS = re.compile(r"[^A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f]+")


# --- the English screen ------------------------------------------------------------------
# Most Latin-script pages of a crawl are English, and English running text is full of a few
# function words no other Latin-script language writes. A page whose text holds enough of
# them, no function word of another language and (almost) no accented letter is settled
# here, in ~0.05 ms instead of lingua's ~0.7 ms; every other page goes to lingua.
# The words are chosen, not trained: ENGLISH_WORDS leaves out English words that are also
# frequent in other languages ("in", "is", "was", "to", "of", "for", "on", "at", "die"...),
# FOREIGN_WORDS leaves out foreign words that English pages use ("com", "do", "la", "van",
# "per", "non", "ve" of "I've"...). Measured with tools.measure.language and
# on the Latin pages of the development dump (see screen_english's figures there).
ENGLISH_WORDS = frozenset("""
the and that with this from have which they you are be not but or were been has had would
their there what when who them these than could your should such does did how where any
those through between being because while both each very just about if into only other some
its it our one all can more out after""".split())
FOREIGN_WORDS = frozenset("""
der und das ist nicht sich ein eine dem auf für von zu auch werden wird sie ich wir aber oder
des une pour pas qui dans sur avec sont nous vous mais leur
que por para una como más pero sus
di che della sono gli nel alla anche questo delle dei
não uma também mais pelo pela
het een niet zijn voor wordt ook naar bij deze maar heeft
yang ini itu dengan untuk dari tidak dalam akan pada ada juga atau
ang ng mga ay ito hindi kwa katika
sed quod quae enim ipsum lorem dolor amet
och att det som är av för på med inte og til ikke jeg
että ole jest się nie bir için và của là có yn agus eta""".split())
SCREEN_MIN_WORDS = 15        # fewer words are lingua's to judge
SCREEN_MIN_SHARE = 0.10      # English function words among all words (web text with menus: 0.1-0.5)
SCREEN_MIN_DISTINCT = 4      # distinct English function words (a repeated "the" in a list of names is not enough)
SCREEN_MAX_FOREIGN = 0.05    # foreign function words per English one
SCREEN_MAX_ACCENTED = 0.02   # accented Latin letters per Latin letter (English: names, loan words)
_WORDS = re.compile(r"[^\W\d_]+")
_NOT_ASCII_LETTERS = re.compile(r"[^A-Za-z]+")


def english_words_share(text: str, letters: int) -> float | None:
    """:func:`reference_english_words_share`, by the compiled scan when it is in use."""
    if _TEXT is None:
        return reference_english_words_share(text, letters)
    return _TEXT.english_words_share(text, letters, SCREEN_MIN_WORDS, SCREEN_MIN_SHARE, SCREEN_MIN_DISTINCT,
                                     SCREEN_MAX_FOREIGN, SCREEN_MAX_ACCENTED)


def reference_english_words_share(text: str, letters: int) -> float | None:
    """The screen's score of a clearly English ``text`` (``letters``: its Latin letters):
    English function words / (English + foreign function words), at least 0.95; None when
    the text is not clearly English."""
    words = _WORDS.findall(text.lower())
    n = len(words)
    if n < SCREEN_MIN_WORDS:
        return None
    english = [w for w in words if w in ENGLISH_WORDS]
    e = len(english)
    if e < SCREEN_MIN_SHARE * n:
        return None
    foreign = sum(1 for w in words if w in FOREIGN_WORDS)
    if foreign > SCREEN_MAX_FOREIGN * e or len(set(english)) < SCREEN_MIN_DISTINCT:
        return None
    if letters - len(_NOT_ASCII_LETTERS.sub("", text)) > SCREEN_MAX_ACCENTED * letters:
        return None
    return e / (e + foreign)


def latin_letters(text: str) -> int:
    """Latin letters in ``text``: :func:`reference_latin_letters`, compiled when in use."""
    return reference_latin_letters(text) if _TEXT is None else _TEXT.latin_letters(text)


def reference_latin_letters(text: str) -> int:
    """Latin letters in ``text`` (deleting the rest is ~2x cheaper than listing them)."""
    return len(_NOT_LATIN_LETTERS.sub("", text))


class LanguageDetector:
    """Decides the language of decoded pages for a set of target languages.

    ``targets`` are ISO 639-1 codes or ("all",). lingua is only loaded for the scripts that
    can hold a target: with ("ja",) never, with ("ja", "en") only the Latin-script models.
    ``low_accuracy`` selects lingua's trigram-only models, for every script: together
    about 25 MB instead of 1.3 GB (the 8 Cyrillic languages' full models alone take 270 MB),
    with the same accuracy on the labelled pages and single sentences of ``eval_language``
    (0.993 over both; every Cyrillic and Arabic item right either way).
    ``screen`` settles clearly English Latin-script text without lingua
    (:func:`english_words_share`, via "words"); off, every Latin-script page goes to lingua.
    ``first_pass`` settles the Latin-script and Cyrillic texts that lingua's own trigram models
    give one language by a wide margin (:mod:`language_first_pass`, via "trigrams"; in
    low-accuracy mode, whose models they are); the rest goes to lingua.
    ``window_chars``, ``uzushio_buffer_chars`` and ``latin_buffer_chars`` size the buffers
    (ExtractConfig's ``lang_window_chars``, ``uzushio_buffer_chars``, ``latin_buffer_chars``)."""

    def __init__(self, targets: tuple[str, ...] | list[str] | str = ("ja",), *,
                 window_chars: int = LANG_WINDOW_CHARS, uzushio_buffer_chars: int = UZUSHIO_BUFFER_CHARS,
                 latin_buffer_chars: int = LATIN_BUFFER_CHARS, low_accuracy: bool = True,
                 min_score: float = 0.0, min_chars: int = 0, screen: bool = True, first_pass: bool = True):
        if isinstance(targets, str):
            targets = tuple(t.strip() for t in targets.split(",") if t.strip())
        targets = tuple(sorted({t.lower() for t in targets}))
        if "all" in targets:  # "all" keeps every language, whatever else is listed
            targets = ("all",)
        self.all = targets == ("all",)
        unknown = [t for t in targets if t not in KNOWN_LANGS] if not self.all else []
        if unknown or not targets:
            raise ValueError(f"unknown target language(s) {unknown or targets}: use ISO 639-1 codes "
                             f"of {sorted(KNOWN_LANGS)} or 'all'")
        self.targets = targets
        self.window_chars = window_chars
        self.uzushio_buffer_chars = uzushio_buffer_chars
        self.latin_buffer_chars = latin_buffer_chars
        self.low_accuracy = low_accuracy
        self.screen = screen
        # it reads lingua's low-accuracy (trigram) models: with the full models lingua judges all
        self.first_pass = first_pass and low_accuracy
        self.min_score = min_score
        self.min_chars = min_chars
        self.scripts = set(range(N_SCRIPTS)) if self.all else {LANG_SCRIPT[t] for t in targets}
        if "ja" in targets:
            self.scripts.add(KANA)
        # With only CJK targets a page without kana or Han can be rejected by one regex search.
        self._cjk_only = not self.all and self.scripts <= {KANA, HAN}
        self._has_latin = LATIN in self.scripts

    @property
    def wants_paragraphs(self) -> bool:
        """Latin-script targets are judged better on the extractor's paragraph text than on
        regex-stripped markup (tools.measure.language: 0.995 against 0.990 with 'all')."""
        return self._has_latin

    def lingua_sets(self) -> list[tuple[tuple[str, ...], bool]]:
        """The (languages, low accuracy) lingua detectors this configuration can use."""
        out = []
        for script, langs in LINGUA_SCRIPT_LANGS.items():
            if script in self.scripts:
                out.append((langs, self.low_accuracy))
        return out

    def preload(self) -> "LanguageDetector":
        """Load every lingua model this configuration can need now (a worker's start-up), so
        memory is known up front and no page pays the loading time."""
        for langs, low in self.lingua_sets():
            lingua_detector(langs, low, preload=True)
        if self.first_pass and self.scripts & {LATIN, CYRILLIC}:
            from warclake.tasks.extract import language_first_pass as first_pass

            first_pass.table()
        return self

    @classmethod
    def from_config(cls, cfg) -> "LanguageDetector":
        """The detector an extraction with this ExtractConfig uses."""
        return cls(cfg.langs, window_chars=cfg.lang_window_chars,
                   uzushio_buffer_chars=cfg.uzushio_buffer_chars, latin_buffer_chars=cfg.latin_buffer_chars,
                   min_score=cfg.min_lang_score, min_chars=cfg.min_chars)

    def _result(self, lang: str | None, score: float, via: str, chars: int | None = None) -> LangResult:
        if lang is None:
            # No letter to judge: with "all" the page is kept with no language; a named
            # target cannot be confirmed.
            return LangResult(None, 0.0, self.all and not self.min_chars and not self.min_score, "no-letters")
        if lang not in self.targets and not self.all:
            return LangResult(lang, float(score), False, via)
        if chars is not None and chars < self.min_chars:
            return LangResult(lang, float(score), False, "too-short")
        if score < self.min_score:
            return LangResult(lang, float(score), False, "low-score")
        return LangResult(lang, float(score), True, via)

    def detect(self, text: str, paragraphs_text: str | None = None) -> LangResult:
        """Language of a decoded page. ``paragraphs_text`` (the extractor's text, if the caller
        has it) replaces the regex-stripped page text for Latin-script decisions."""
        decision = self.plan(text, paragraphs_text)
        return self.run(decision) if isinstance(decision, LinguaCall) else decision

    def run(self, call: "LinguaCall") -> LangResult:
        """The decision a planned lingua call gives."""
        return self._lingua(call.text, call.langs, call.low_accuracy, call.chars)

    def plan(self, text: str, paragraphs_text: str | None = None) -> "LangResult | LinguaCall":
        """:meth:`detect` up to lingua: the decision, or the lingua call that will make it
        (callers with many pages run those calls back to back: lingua's models stay in the
        CPU caches; see ``extract_record.finish_pending``)."""
        if self._cjk_only and not _has_cjk(text, READ_FACTOR * self.window_chars):
            return LangResult(None, 0.0, False, "no-target-script")
        buf = language_buffer(text, self.uzushio_buffer_chars, self.window_chars)
        counts = script_counts(buf)
        kana, han = int(counts[KANA]), int(counts[HAN])
        counts[HAN] += counts[KANA]  # one group: the kana share decides ja or zh below
        counts[KANA] = counts[OTHER] = counts[LATIN] = 0  # Latin is judged on its own buffer
        best = int(np.argmax(counts))
        n = script_chars = int(counts[best])
        latin: str | None = None   # the Latin buffer and its letters, once they are needed
        letters = 0
        if n >= MIN_SCRIPT_CHARS:
            latin, letters = self._latin_text(text, paragraphs_text)
            # A little non-Latin text on a page (a language menu, a quoted title) decides only
            # if it outweighs the page's Latin text.
            if n < FEW_SCRIPT_CHARS and n * _CHAR_WEIGHT.get(best, 1) < letters:
                n = 0
        if n >= MIN_SCRIPT_CHARS:
            share = script_share(counts, best, letters)
            if best == HAN:
                if kana >= MIN_SCRIPT_CHARS and kana >= KANA_SHARE * (kana + han):
                    return self._result("ja", share, "kana", n)
                return self._result("zh", share, "script", n)
            if best in EXACT_SCRIPT_LANG:
                return self._result(EXACT_SCRIPT_LANG[best], share, "script", n)
            if best not in self.scripts:
                return LangResult(None, share, False, "no-target-script")
            return self._first_look(LinguaCall(buf, LINGUA_SCRIPT_LANGS[best], self.low_accuracy, n))
        if not self._has_latin:
            return LangResult(None, 0.0, False, "no-target-script")
        if latin is None:
            latin, letters = self._latin_text(text, paragraphs_text)
        if letters == 0:
            if script_chars and self.all:
                # A few characters of another script and no Latin letter: they are all there is.
                return self._decide_script(best, buf, script_chars, kana, han, script_share(counts, best, 0))
            return self._result(None, 0.0, "no-letters")
        if self.screen:
            words_share = english_words_share(latin, letters)
            if words_share is not None and words_share >= self.min_score:  # a higher minimum is lingua's to judge
                return self._result("en", words_share, "words", letters)
        return self._first_look(LinguaCall(latin, LATIN_LANGS, self.low_accuracy, letters))

    def _first_look(self, call: LinguaCall) -> "LangResult | LinguaCall":
        """The first pass's decision of a lingua call when its words settle it, else the call."""
        if self.first_pass and call.langs in (LATIN_LANGS, CYRILLIC_LANGS):
            from warclake.tasks.extract import language_first_pass as first_pass

            got = first_pass.settle(call.text, call.langs, first_look=FIRST_LOOK_CHARS)
            if got is not None and got[1] >= self.min_score:   # a higher minimum is lingua's to judge
                return self._result(got[0], got[1], "trigrams", call.chars)
        return call

    def _decide_script(self, best: int, buf: str, n: int, kana: int, han: int,
                       share: float) -> "LangResult | LinguaCall":
        if best == HAN:
            return self._result("ja" if kana else "zh", share, "kana" if kana else "script", n)
        if best in EXACT_SCRIPT_LANG:
            return self._result(EXACT_SCRIPT_LANG[best], share, "script", n)
        if best in LINGUA_SCRIPT_LANGS:
            return LinguaCall(buf, LINGUA_SCRIPT_LANGS[best], self.low_accuracy, n)
        return self._result(None, 0.0, "no-letters")

    def _latin_text(self, text: str, paragraphs_text: str | None) -> tuple[str, int]:
        """The Latin buffer and its Latin letters."""
        if paragraphs_text:
            para = paragraphs_text[: self.latin_buffer_chars]
            letters = latin_letters(para)
            if letters >= MIN_LATIN_LETTERS:
                return para, letters
        latin = latin_buffer(text, self.latin_buffer_chars, self.window_chars)
        return latin, latin_letters(latin)

    def _lingua(self, text: str, langs: tuple[str, ...], low: bool, chars: int) -> LangResult:
        # lingua's cost grows with text length times languages: a short first look settles
        # most pages; only unsure ones get the long text (same accuracy on the Latin pages of
        # the evaluation, 2.5x less time than always reading 1,000 characters).
        first = text[:FIRST_LOOK_CHARS]
        lang, score = _lingua_top(langs, low, first)
        if score < SURE and len(text) > FIRST_LOOK_CHARS:
            lang, score = _lingua_top(langs, low, text)
        if lang is None:
            return self._result(None, 0.0, "no-letters")
        return self._result(lang, score, "lingua", chars)


FIRST_LOOK_CHARS = 200
SURE = 0.99

# lingua's answers by (languages, low accuracy, text): lingua is deterministic, and pages of
# one site often open with the same menus (and crawls hold copies of pages), so a repeated
# text costs a dictionary look-up instead of ~1 ms. Bounded: the oldest answers go first.
_TOP_CACHE: dict[tuple, tuple[str | None, float]] = {}
TOP_CACHE_SIZE = 8192


def forget_answers() -> None:
    """Empty lingua's answer table (a benchmark run must not start with answers it made)."""
    _TOP_CACHE.clear()


def _lingua_top(langs: tuple[str, ...], low: bool, text: str) -> tuple[str | None, float]:
    """lingua's most likely language of ``text`` (ISO 639-1) and its confidence; (None, 0.0)
    when it finds none."""
    key = (langs, low, text)
    top = _TOP_CACHE.get(key)
    if top is None:
        values = lingua_detector(langs, low).compute_language_confidence_values(text)
        if not values or values[0].value <= 0:
            top = (None, 0.0)
        else:
            top = (values[0].language.iso_code_639_1.name.lower(), float(values[0].value))
        if len(_TOP_CACHE) >= TOP_CACHE_SIZE:
            try:
                del _TOP_CACHE[next(iter(_TOP_CACHE))]
            except (KeyError, RuntimeError, StopIteration):  # another thread got there first
                pass
        _TOP_CACHE[key] = top
    return top


_WEIGHTS = np.array([_CHAR_WEIGHT.get(i, 1) for i in range(N_SCRIPTS)], dtype=np.intp)


def script_share(counts: np.ndarray, best: int, latin_letters: int) -> float:
    """The score of a decision by script: the deciding script's share of the letters judged
    (every script of the Uzushio buffer and the Latin buffer's letters, a Han or Hangul
    character weighing 3 letters as in the outweighing rule). A page in one script scores
    1.0; an English page with a Japanese menu far less, so ``min_lang_score`` can drop it."""
    weighted = counts * _WEIGHTS
    total = int(weighted.sum()) + latin_letters
    return float(weighted[best]) / total if total else 0.0


_CJK = re.compile(r"[\u3040-\u30fa\u30fd-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                  r"\U00020000-\U0002ffff]")

def _has_cjk(text: str, window: int) -> bool:
    """Any kana or Han in the first ``window`` characters (as far as the Uzushio buffer can
    read), cheaply for the usual negative."""
    if text.isascii():  # O(1) in CPython
        return False
    units = np.frombuffer(text[:window].encode("utf-16-le", "surrogatepass"), dtype="<u2")
    if not (units >= 0x3040).any():  # 8x faster than the regex on pages with curly quotes
        return False
    return _CJK.search(text, 0, window) is not None


# Fixed texts of the compiled scans' import-time check: hidden blocks in every spelling (cut
# by the window, nested, unclosed), whitespace beyond ASCII, the screen's edge cases
# (accented and non-Latin words, digits and underscores inside words, too few words).
CHECK_TEXTS = (
    "", "plain ascii <p>text</p>", "<p>caf\u00e9 \u65e5\u672c\u8a9e\u3000\u00a0x\u2028y</p>",
    "<head><script>var s='\u65e5';</script><STYLE a>\u00e9</STYLE ><!-- \u672c -->\u8a9e<svg>\u00f6</svg>"
    "<scripts>\u00fc</scripts><Noscript>\u00e4</noscript ><template>\u00df</TEMPLATE>\u00ff<!--",
    "<script>" + "x" * 250 + "</script>\u65e5\u672c\u8a9e" + "\u3042 " * 900,
    "\u0130stanbul \u0131 \u017f \u212a <SCRİPT>\u00e9</ſcript>\u00e8 <script-x>\u00e0</script-x>",
    ("The house and the garden that they have with this and which would be there, "
     "where the children are not but the mother could be when some of them were, "
     "\u00e9t\u00e9 caf\u00e9 der und das dog_s 2nd x\u00b2 \u0661\u0662 THE And ") * 3,
    "the the the the and and and and with with with with that that that that were",
)


def _compiled_text():
    from warclake.tasks.native import load_checked

    def check(module) -> None:
        module.configure(ENGLISH_WORDS, FOREIGN_WORDS, _OPENERS, _HIDDEN_CLOSE)
        for text in CHECK_TEXTS:
            for max_chars, window in ((UZUSHIO_BUFFER_CHARS, LANG_WINDOW_CHARS), (10, 100), (3, 7)):
                got = module.language_buffer(text, max_chars, window, READ_FACTOR)
                if got != reference_language_buffer(text, max_chars, window):
                    raise ValueError(f"Uzushio buffer differs ({text[:30]!r})")
            letters = reference_latin_letters(text)
            if module.latin_letters(text) != letters:
                raise ValueError(f"Latin letters differ ({text[:30]!r})")
            got = module.english_words_share(text, letters, SCREEN_MIN_WORDS, SCREEN_MIN_SHARE,
                                             SCREEN_MIN_DISTINCT, SCREEN_MAX_FOREIGN, SCREEN_MAX_ACCENTED)
            if got != reference_english_words_share(text, letters):
                raise ValueError(f"English screen differs ({text[:30]!r})")

    module, _, _ = load_checked("language_text", "language text scans", "Python language text scans", check)
    return module


_TEXT = _compiled_text()


def detect_language(text: str, targets: tuple[str, ...] = ("ja",), paragraphs_text: str | None = None,
                    **options) -> LangResult:
    """One call of :meth:`LanguageDetector.detect` (the lingua models stay cached)."""
    return LanguageDetector(targets, **options).detect(text, paragraphs_text)

"""Per-document quality metrics and the rules that drop a document on them.

:func:`document_metrics` measures one lake document (``text`` in the lake format: paragraphs
``<css-path>\\x1c<text>`` joined by blank lines, link text in ``\\x02…\\x03``) and returns plain
floats; :data:`QUALITY_RULES` are documented thresholds over those metrics and
:func:`evaluate_rules` says which of them fire. Metrics are stored beside the decision, so a
changed threshold never needs the text again.

Units. Gopher, C4 and FineWeb count whitespace-separated words. Chinese, Japanese, Korean,
Thai, Lao, Khmer and Burmese text (by ``lang``, or when such characters are half of the text)
is measured in *units* instead: each character of those scripts is one unit, each run of
other non-space characters one more (Latin words, numbers, punctuation). Word-length rules
do not apply there (their metric is NaN, and a NaN never fires), and a short line is
counted at :data:`SHORT_LINE_CHARS_CJK` instead of :data:`SHORT_LINE_CHARS`.

Lines. The lake keeps block structure: a line is a ``<br>``-separated line of a paragraph
(most paragraphs are one line), which is what "line" means in a WET record too.

Table rows. A table's data row is one paragraph of one line, its cells joined by `` | ``
(the data contract, sql/README.md): one line per row, as trafilatura writes a row in the
text FineWeb's line rules and thresholds were made on, where a row is a line that ends no
sentence, as a heading or a menu item does. So the rules keep their sources' definitions
and a row is judged as the line it is: it counts in the line shares (a page of a table and
little prose is a list to FineWeb, as it was to FineWeb's own filter), C4 keeps it only when
it ends a sentence, and no rule drops a row paragraph on its own (the line rules judge the
document). Measured on the clean gold pages (``tools/measure/quality_rules.py``, figures in
reports/boilerplate_eval.md, "Tables as rows"): the same pages are dropped with rows as with
a line per cell.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat
from typing import Any, Callable

import numpy as np

from warclake.tasks.corpus.signals import unicode_tables
from warclake.tasks.corpus.signals.signatures import text_hashes
from warclake.tasks.extract.paragraph import LINK_END, LINK_START, PARA_SEP, PATH_SEP

# Languages written without spaces between words, and Korean, whose syllable blocks each
# carry what several Latin letters do: measured in units, not words.
CHAR_UNIT_LANGS = frozenset({"zh", "ja", "ko", "th", "lo", "km", "my"})

# A line this short (in characters) is "short" for FineWeb's short-line rule. A CJK
# character carries about what two Latin letters do, hence half the length there.
SHORT_LINE_CHARS = 30
SHORT_LINE_CHARS_CJK = 15

# Sentence-final marks in the scripts the lake holds. A line ends a sentence when it ends
# in one, closing quotes or a bracket after it allowed ('."', '.”', '.)'): a bare closing
# quote or '»' ("more photos »") ends none. Japanese closing brackets end one on their own,
# as Japanese often writes no full stop before them (「ありがとう」).
TERMINAL_PUNCT = (".", "!", "?", "。", "！", "？", "．", "｡", "」", "』", "؟", "।", "॥",
                  "։", "።", "။", "׃")
CLOSING_MARKS = "\"'”’»」』)"
# Stripped from both ends of a word before it is compared with a stop word or another word
# of an n-gram ("the," is "the"); a word of nothing else is left out of the n-grams.
WORD_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~“”‘’«»„‚‹›…–—¡¿·"
BULLETS = ("•", "‣", "●", "○", "◦", "▪", "▫", "■", "□", "►", "▶", "➢", "➤", "✓", "✔",
           "・", "·", "- ", "* ", "– ", "— ", "→")
ELLIPSES = ("...", "…", "．．．", "・・・")
# C4 removes lines naming these; the CJK forms are the same notices' usual wording.
POLICY_PHRASES = ("terms of use", "privacy policy", "cookie policy", "uses cookies",
                  "use of cookies", "use cookies", "プライバシーポリシー", "利用規約",
                  "クッキー", "隐私政策", "使用条款", "개인정보", "이용약관")
# Gopher's English stop words: a document needs two occurrences of these.
GOPHER_STOP_WORDS = frozenset({"the", "be", "to", "of", "and", "that", "have", "with"})

# One element of a CSS path is site chrome when it is a chrome tag, or when one of its
# class or id names, cut into words at '-' and '_', starts with a chrome word, alone or
# after a word naming where it sits ("site-footer", "main-nav", "footer-links"). Whole
# words only: "commented" (a post that has comments) is no comment. A name that says how
# the page is laid out wraps the main text too and does not count: a chrome word after
# which come only position or state words ("sidebar-right", "global-nav-false",
# "nav-open"), a sidebar placed left or right ("left-sidebar"), or a chrome word after
# another ("content-sidebar", "sticky-footer", "no-sidebar").
_CHROME_TAG = re.compile(r"^(?:nav|footer|header|aside|menu)(?=$|[.#])", re.I)
_NAMES = re.compile(r"[.#]([^.#]*)")
CHROME_CLASS_WORDS = frozenset({"nav", "navbar", "navigation", "menu", "footer", "sidebar", "breadcrumb",
                                "breadcrumbs", "comment", "comments", "cookie", "cookies"})
CHROME_PLACES = frozenset({"site", "main", "page", "global", "top", "primary", "secondary", "left", "right",
                           "mobile", "sub"})
LAYOUT_WORDS = frozenset({"left", "right", "true", "false", "on", "off", "open", "closed", "active", "hidden",
                          "none", "yes", "no", "enabled", "disabled"})

_CHROME_WORDS = ("nav", "footer", "header", "aside", "menu", "sidebar", "breadcrumb", "comment", "cookie")

# Code-point ranges of the scripts measured in units (Han, kana, Hangul, Thai, Lao, Khmer,
# Burmese, CJK punctuation and full-width forms).
_UNIT_RANGES = ((0x1000, 0x109F), (0x0E00, 0x0EFF), (0x1780, 0x17FF), (0x1100, 0x11FF),
                (0x2E80, 0x2FDF), (0x3000, 0x303F), (0x3040, 0x30FF), (0x3130, 0x318F),
                (0x31F0, 0x31FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF),
                (0xF900, 0xFAFF), (0xFF00, 0xFFEF), (0x20000, 0x2FFFF))
_UNIT_CLASS = "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in _UNIT_RANGES)
_UNITS = re.compile(f"[{_UNIT_CLASS}]|[^\\s{_UNIT_CLASS}]+")
# A sentence ends at a CJK full stop anywhere, or at other terminal punctuation (closing
# quotes after it) followed by a space or the line's end.
_SENTENCE_END = re.compile(r"[。！？｡]|[.!?؟।][\"'”’»」』)]*(?=\s|$)")
_LINKS = re.compile("\x02([^\x03]*)\x03?")

# Per code point of the Basic Multilingual Plane, bit flags: whitespace (str.isspace),
# letter (str.isalpha), unit script, CJK (Han, kana, Hangul), hiragana; one table look-up
# classifies a whole text with numpy.
_SPACE, _LETTER, _UNIT, _CJK, _HIRA = 1, 2, 4, 8, 16
_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF),
               (0xF900, 0xFAFF))


def class_table_built() -> np.ndarray:
    """The class table from the ``str`` methods (``unicode_tables`` keeps it stored)."""
    t = np.array([(_SPACE if chr(i).isspace() else 0) | (_LETTER if chr(i).isalpha() else 0)
                  for i in range(0x10000)], dtype=np.uint8)
    for a, b in _UNIT_RANGES:
        t[a:min(b, 0xFFFF) + 1] |= _UNIT
    for a, b in _CJK_RANGES:
        t[a:b + 1] |= _CJK
    t[0x3040:0x30A0] |= _HIRA
    return t


_STORED = unicode_tables.stored()
_CLASS = np.frombuffer(_STORED[0], np.uint8) if _STORED is not None else class_table_built()
# Outside the BMP only the CJK extensions (U+20000-2FFFF) are letters, units and CJK.
_ASTRAL_CJK = _LETTER | _UNIT | _CJK

_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)
_TAIL = np.uint64(0xFFFFFFFF00000000)


@dataclass(slots=True)
class _Chars:
    nonspace: int       # characters other than whitespace
    cjk: int            # Han, kana and Hangul characters
    hiragana: int
    char_mode: bool     # measured in units (see the module's docstring), not words
    words: int          # words, or units in char mode
    words_lettered: int  # of those, the ones holding a letter


def _token_count(start: np.ndarray, letter: np.ndarray) -> tuple[int, int]:
    """(tokens, tokens holding a letter), tokens starting where ``start`` is set and running
    to the next start (whitespace never holds a letter, so it needs no mask)."""
    n = int(np.count_nonzero(start))
    if not n:
        return 0, 0
    tid = np.cumsum(start)[letter]     # non-decreasing: count its distinct values
    return n, int(np.count_nonzero(tid[1:] != tid[:-1])) + 1 if tid.size else 0


def _char_stats(plain: str, lang: str | None) -> _Chars:
    """Character and word (or unit) counts of the plain text, vectorised over its code
    points. Units when ``lang`` is written without spaces or half the text is in such
    scripts."""
    if not plain:
        return _Chars(0, 0, 0, lang in CHAR_UNIT_LANGS, 0, 0)
    cp = np.frombuffer(plain.encode("utf-32-le"), dtype=np.uint32)
    cls = _CLASS[np.minimum(cp, 0xFFFF)]
    if cp.max() > 0xFFFF:
        astral = cp > 0xFFFF
        cls[astral] = np.where((cp[astral] >= 0x20000) & (cp[astral] <= 0x2FFFF), _ASTRAL_CJK, 0)
    space = (cls & _SPACE).astype(bool)
    letter = (cls & _LETTER).astype(bool)
    nonspace = cp.size - int(np.count_nonzero(space))
    cjk = int(np.count_nonzero(cls & _CJK))
    unit = (cls & _UNIT).astype(bool)
    char_mode = lang in CHAR_UNIT_LANGS or 2 * int(np.count_nonzero(unit)) >= nonspace
    start = np.empty_like(space)   # a word starts after whitespace ...
    start[0], start[1:] = True, space[:-1]
    if char_mode:                  # ... a unit also at and after a unit-script character
        start[1:] |= unit[:-1]
        start |= unit
    start &= ~space
    words = _token_count(start, letter)
    hira = int(np.count_nonzero(cls & _HIRA)) if cjk else 0
    return _Chars(nonspace, cjk, hira, char_mode, *words)


def _duplicates(items: list[str]) -> tuple[int, int, int]:
    """(repeated items, their characters, all characters): each occurrence after the first
    of an identical item counts (Gopher's duplicate line and paragraph fractions)."""
    seen: set[str] = set()
    dup = dup_chars = chars = 0
    for it in items:
        chars += len(it)
        if it in seen:
            dup += 1
            dup_chars += len(it)
        else:
            seen.add(it)
    return dup, dup_chars, chars


def _groups(h: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort order of ``h`` (not stable: numpy's stable sort is several times slower), and
    where each run of equal values starts and ends in it."""
    order = np.argsort(h)
    s = h[order]
    edges = np.concatenate(([0], np.flatnonzero(s[1:] != s[:-1]) + 1, [s.size]))
    return order, edges[:-1], edges[1:]


def _ngram_shares(units: list[str], scale: int = 1) -> dict[str, float]:
    """Gopher's repetition measures over the unit sequence, vectorised with numpy:
    ``top_{n}gram_char_share`` (n = 2..4: characters of the most frequent n-gram times its
    count, over all unit characters; among equally frequent ones the longest) and
    ``dup_{n}gram_char_share`` (n = 5..10: share of unit characters covered by repeats of
    an n-gram, every occurrence after its first). With ``scale`` 2 (text measured in
    units) an n-gram is 2n units long: a CJK word is about two characters, and n-grams of
    single characters repeat in any prose."""
    out = {f"top_{n}gram_char_share": 0.0 for n in range(2, 5)}
    out.update({f"dup_{n}gram_char_share": 0.0 for n in range(5, 11)})
    w = len(units)
    if w < 2:
        return out
    # each unit as its 64-bit text hash (the compiled pass hashes it alike); the figures
    # depend only on which n-grams are equal, never on the hash values.
    ids = text_hashes(units).view(np.uint64)
    lens = np.fromiter(map(len, units), dtype=np.int64, count=w)
    csum = np.concatenate(([0], np.cumsum(lens)))
    total = float(csum[-1])
    if total == 0:
        return out
    grams = {}   # n -> hashes of the n-grams (of n * scale units) at every start
    h = ids
    for n in range(2, 10 * scale + 1):
        if w < n:
            break
        h = h[:-1] * _HASH_MUL + ids[n - 1:]       # wraps modulo 2**64
        if n % scale == 0:
            grams[n // scale] = h
    for n in (2, 3, 4):
        if n not in grams:
            break
        h, span = grams[n], n * scale
        values, counts = np.unique(h, return_counts=True)   # a plain sort: the cheapest
        top = counts.max()
        if top > 1:
            tied = values[counts == top]
            if tied.size <= 8:      # where each of the most frequent ones first is
                pos = np.array([int(np.argmax(h == v)) for v in tied])
            else:
                order, lo, hi = _groups(h)
                pos = np.minimum.reduceat(order, lo)[hi - lo == top]
            out[f"top_{n}gram_char_share"] = float(top * (csum[pos + span] - csum[pos]).max()) / total
    keys = [n for n in range(5, 11) if n in grams]
    if not keys:
        return out
    # Only starts whose 5-gram occurs twice can start a repeated longer n-gram: all the
    # lengths are then done at once, one row per n.
    order, lo, hi = _groups(grams[5])
    rep = np.empty(order.size, dtype=bool)
    rep[order] = np.repeat(hi - lo > 1, hi - lo)
    cand = np.flatnonzero(rep)
    if cand.size < 2:
        return out
    rows = np.empty((len(keys), cand.size), dtype=np.uint64)
    unique_tail = _TAIL + cand.astype(np.uint64)     # past the end of a row: never equal
    for r, n in enumerate(keys):
        g = grams[n]
        rows[r] = np.where(cand < g.size, g[np.minimum(cand, g.size - 1)], unique_tail)
    order = np.argsort(rows, axis=1)
    srt = np.take_along_axis(rows, order, axis=1)
    starts = np.ones(srt.shape, dtype=bool)
    starts[:, 1:] = srt[:, 1:] != srt[:, :-1]
    run_start = starts.ravel()
    pos = cand[order].ravel()                 # start positions, run by run, row by row
    first = np.minimum.reduceat(pos, np.flatnonzero(run_start))   # each n-gram's first start
    later = pos != first[np.cumsum(run_start) - 1]
    r_idx = np.repeat(np.arange(len(keys)), cand.size)[later]
    starts = pos[later]
    cover = np.zeros((len(keys), w + 1), dtype=np.int32)
    cover[r_idx, starts] += 1
    cover[r_idx, starts + np.array(keys)[r_idx] * scale] -= 1
    covered = np.cumsum(cover[:, :-1], axis=1) > 0
    chars = covered.astype(np.int64) @ lens
    for r, n in enumerate(keys):
        out[f"dup_{n}gram_char_share"] = float(chars[r]) / total
    return out


def _line_share(lines: list[str], low: str, phrases: tuple[str, ...]) -> float:
    """Share of lines holding one of the (lower-case) phrases; the whole text is checked
    first, since most documents hold none."""
    found = [p for p in phrases if p in low]
    if not found:
        return 0.0
    return sum(any(p in ln.lower() for p in found) for ln in lines) / len(lines)


@lru_cache(maxsize=1 << 17)
def is_chrome_path(path: str) -> bool:
    """Whether any element of the CSS path is page chrome (navigation, header, footer,
    aside, menu, sidebar, breadcrumbs, comments, cookie notices). Used by the quality rule
    ``lake_chrome_paths`` and to leave chrome out of the text documents are compared by.
    Cached per path, and each path asks its parent: the paths of a page and of its site
    share their parents."""
    parent, sep, last = path.rpartition(">")
    return _is_chrome_element(last) or (bool(sep) and is_chrome_path(parent))


@lru_cache(maxsize=1 << 14)
def _is_chrome_element(element: str) -> bool:
    low = element.lower()   # most elements hold none of the words at all
    if not any(w in low for w in _CHROME_WORDS):
        return False
    return _CHROME_TAG.match(element) is not None or any(map(_is_chrome_name, _NAMES.findall(low)))


def _is_chrome_name(name: str) -> bool:
    """Whether a lower-case class or id name is page chrome (see ``CHROME_CLASS_WORDS``)."""
    words = re.split(r"[-_]", name)
    at = 1 if len(words) > 1 and words[0] in CHROME_PLACES else 0
    if words[at] not in CHROME_CLASS_WORDS:
        return False
    rest = words[at + 1:]
    if rest and all(w in LAYOUT_WORDS for w in rest):
        return False
    return not (at == 1 and words[1] == "sidebar" and words[0] in ("left", "right"))


_NO_DIGITS = str.maketrans("", "", "0123456789")


def chrome_chars_past_frame(paths: list[str], sizes: list[int]) -> int:
    """Characters of the paragraphs under page chrome beside the page's frame. The frame
    is the chain of elements each holding more than half of the characters (``sizes``);
    an element of it holds the page's main text whatever its name (a forum thread in
    ``#comments``, an article in ``.sidebar-container``), so only the elements of a path
    past its frame part are asked whether they are chrome. Elements that differ only in
    their digits are one element here: the items of a list (``#comment-4398546_wrap``,
    ``#comment-4398607_wrap``: a forum's posts) hold the text together."""
    total = sum(sizes)
    elements = [p.split(">") for p in paths]
    keys = [p.translate(_NO_DIGITS).split(">") for p in paths]
    skip = [0] * len(paths)      # per paragraph: its leading elements on the frame
    under = list(range(len(paths)))
    depth = 0
    while total:
        held: dict[str, int] = {}
        for i in under:
            if len(keys[i]) > depth:
                held[keys[i][depth]] = held.get(keys[i][depth], 0) + sizes[i]
        frame = next((e for e, n in held.items() if 2 * n > total), None)
        if frame is None:
            break
        depth += 1
        under = [i for i in under if len(keys[i]) >= depth and keys[i][depth - 1] == frame]
        for i in under:
            skip[i] = depth
    return sum(size for els, k, size in zip(elements, skip, sizes) if k < len(els) and is_chrome_path(">".join(els[k:])))


def ends_sentence(line: str) -> bool:
    """Whether a (stripped) line ends a sentence: a terminal mark, closing quotes or a
    bracket after it allowed (see :data:`TERMINAL_PUNCT`)."""
    return line.endswith(TERMINAL_PUNCT) or line.rstrip(CLOSING_MARKS).endswith(TERMINAL_PUNCT)


def kept_text(text: str, paragraph_labels: list[str] | None, dropped=()) -> str:
    """The paragraphs of a lake text that the corpus emits, in the lake format: those
    labelled good (all, when the document has no labels), less the positions (from 1) in
    ``dropped`` (paragraphs that repeated-text removal drops)."""
    if paragraph_labels is None and not dropped:
        return text
    chunks = text.split(PARA_SEP) if text else []
    n_lab = len(paragraph_labels or ())
    return PARA_SEP.join(c for i, c in enumerate(chunks)
                         if (paragraph_labels is None or (i < n_lab and paragraph_labels[i] == "good"))
                         and i + 1 not in dropped)


def kept_metrics(text: str, paragraph_labels: list[str] | None, lang: str | None, dropped=()) -> dict[str, float]:
    """:func:`document_metrics` of the text the corpus emits (:func:`kept_text`): what the
    rules judge unless a run asks for whole pages. It has no labels (its boilerplate share
    does not apply)."""
    return document_metrics(kept_text(text, paragraph_labels, dropped), None, lang)


def document_metrics(text: str, paragraph_labels: list[str] | None, lang: str | None) -> dict[str, float]:
    """Every quality metric of one lake document, as floats (NaN where a metric does not
    apply: word lengths in unit mode, stop words outside English, boilerplate share
    without labels). Counted by the compiled pass when it is available, else by
    :func:`document_metrics_reference`: the same values either way."""
    native = compiled_module()
    if native is None:
        return document_metrics_reference(text, paragraph_labels, lang)
    return _metrics_compiled(native, text, paragraph_labels, lang)


def document_metrics_reference(text: str, paragraph_labels: list[str] | None, lang: str | None) -> dict[str, float]:
    """The definition of every metric, in Python and numpy (see :func:`document_metrics`)."""
    links = _LINKS.findall(text) if LINK_START in text else []
    clean = text.replace(LINK_START, "").replace(LINK_END, "") if links or LINK_END in text else text
    chunks = clean.split(PARA_SEP) if clean else []
    paths, paras = [], []
    for c in chunks:
        path, _, body = c.partition(PATH_SEP)
        paths.append(path)
        paras.append(body)
    plain = "\n".join(paras)
    lines = [ln for ln in map(str.strip, plain.split("\n")) if ln]
    n_lines = len(lines)

    cs = _char_stats(plain, lang)
    nonspace, char_mode = cs.nonspace, cs.char_mode
    low = plain.lower()
    # the n-gram measures need the units themselves; counts come from _char_stats
    units = _UNITS.findall(low) if char_mode else low.split()
    n_units = len(units)
    # words compared (stop words, n-grams) without the punctuation around them
    words = units if char_mode else [u.strip(WORD_PUNCT) for u in units]
    m: dict[str, float] = {"char_units": float(char_mode), "paragraphs": float(len(chunks)),
                           "chars": float(nonspace), "word_count": float(n_units)}

    # Gopher quality filter
    if char_mode or not n_units:
        m["mean_word_length"] = math.nan
    else:
        m["mean_word_length"] = nonspace / n_units   # characters per word, spaces excluded
    symbols = plain.count("#") + sum(plain.count(e) for e in ELLIPSES)
    m["symbol_word_ratio"] = symbols / n_units if n_units else 0.0
    m["bullet_line_share"] = sum(map(str.startswith, lines, repeat(BULLETS))) / n_lines if n_lines else 0.0
    m["ellipsis_line_share"] = sum(map(str.endswith, lines, repeat(ELLIPSES))) / n_lines if n_lines else 0.0
    lettered = cs.words_lettered
    m["alpha_word_share"] = lettered / n_units if n_units else 0.0
    if lang == "en":
        m["en_stop_words"] = float(sum(map(GOPHER_STOP_WORDS.__contains__, words)))
    else:
        m["en_stop_words"] = math.nan

    # Gopher repetition
    dl, dl_chars, l_chars = _duplicates(lines)
    nonempty = [p for p in paras if p]
    dp, dp_chars, p_chars = _duplicates(nonempty)
    m["dup_line_share"] = dl / n_lines if n_lines else 0.0
    m["dup_line_char_share"] = dl_chars / l_chars if l_chars else 0.0
    m["dup_para_share"] = dp / len(nonempty) if nonempty else 0.0
    m["dup_para_char_share"] = dp_chars / p_chars if p_chars else 0.0
    m.update(_ngram_shares([w for w in words if w], 2 if char_mode else 1))

    # C4 and FineWeb line rules
    short = SHORT_LINE_CHARS_CJK if char_mode else SHORT_LINE_CHARS
    ends = list(map(ends_sentence, lines))
    m["terminal_punct_line_share"] = sum(ends) / n_lines if n_lines else 0.0
    # C4 keeps lines ending in terminal punctuation but not in an ellipsis, with 3 words or
    # 5 units (the lake collapses whitespace, so two spaces mean three words); its
    # sentences and its curly brackets are those of these lines
    c4_lines = [ln for ln, e in zip(lines, ends) if e and not ln.endswith(ELLIPSES)
                and (len(ln) >= 5 if char_mode else ln.count(" ") >= 2)]
    m["c4_sentences"] = float(len(_SENTENCE_END.findall("\n".join(c4_lines))))
    line_len = np.fromiter(map(len, lines), dtype=np.int64, count=n_lines)
    m["short_line_share"] = float((line_len <= short).sum()) / n_lines if n_lines else 0.0
    m["javascript_line_share"] = _line_share(lines, low, ("javascript",))
    m["policy_line_share"] = _line_share(lines, low, POLICY_PHRASES)
    m["lorem_ipsum"] = float(low.count("lorem ipsum"))
    m["curly_brackets"] = float(sum(ln.count("{") for ln in c4_lines))
    # FineWeb's list ratio: line feeds per word (the kept text's lines, one feed between two)
    m["newline_word_ratio"] = (n_lines - 1) / n_units if n_units and n_lines else 0.0

    # CJK
    m["cjk_char_share"] = cs.cjk / nonspace if nonspace else 0.0
    m["hiragana_share"] = cs.hiragana / nonspace if nonspace else 0.0

    # What only the lake has: link markers, paragraph labels, CSS paths
    linked = "".join(links)
    link_chars = len(linked) - linked.count(" ") - linked.count("\n")
    m["link_char_share"] = link_chars / nonspace if nonspace else 0.0
    sizes = [len(p) for p in paras]
    total = sum(sizes)
    if paragraph_labels is not None and len(paragraph_labels) == len(paras) and total:
        m["boilerplate_char_share"] = sum(s for s, lab in zip(sizes, paragraph_labels) if lab == "bad") / total
    else:
        m["boilerplate_char_share"] = math.nan
    chrome_chars = sum(size for path, size in zip(paths, sizes) if is_chrome_path(path))
    if chrome_chars:
        chrome_chars = chrome_chars_past_frame(paths, sizes)
    depth = "".join(paths).count(">") + sum(map(bool, paths))   # elements: separators + 1
    m["chrome_path_char_share"] = chrome_chars / total if total else 0.0
    m["mean_path_depth"] = depth / len(paths) if paths else 0.0
    return m


# ---- the compiled pass -----------------------------------------------------------------
# ``warclake.tasks.native.corpus_quality`` counts the whole numbers each metric is a
# quotient of; they are divided here by the reference's own expressions, so both paths give
# the same doubles.

_CHROME_CACHE: dict = {}


def _metrics_compiled(native, text: str, paragraph_labels, lang: str | None) -> dict[str, float]:
    if len(text or "") >= 1 << 31:     # positions past 32 bits: the reference's numpy
        return document_metrics_reference(text, paragraph_labels, lang)
    if len(_CHROME_CACHE) > 1 << 17:
        _CHROME_CACHE.clear()
    c = native.document_counts(text or "", paragraph_labels, lang in CHAR_UNIT_LANGS, lang == "en",
                               is_chrome_path, _CHROME_CACHE)
    return _metrics_from_counts(c, paragraph_labels is not None, lang)


def _metrics_from_counts(c: dict, has_labels, lang) -> dict:
    """Every metric of a document from its whole-number counts ``c``, or of many documents
    at once: ``c`` a dict of float64 columns (``top`` and ``dup`` (3, n) and (6, n)),
    ``has_labels`` a bool array and ``lang`` an object array give a dict of columns. Both
    give the reference's doubles: a quotient of whole numbers below 2**53 is the same
    correctly rounded double in Python and numpy, and NaN is the same quiet NaN."""
    num: Callable[[Any], Any]   # a count column as the result's type
    if isinstance(has_labels, np.ndarray):
        def div(num, den, ok, other=0.0):    # num / den where ok, else other
            return np.where(ok, num / np.where(ok, den, 1.0), other)

        def pick(ok, value, other):
            return np.where(ok, value, other)
        num = np.asarray
    else:
        def div(num, den, ok, other=0.0):
            return num / den if ok else other

        def pick(ok, value, other):
            return float(value) if ok else other
        num = float
    n_units, n_lines, nonspace, char_mode = c["units"], c["lines"], c["nonspace"], c["char_mode"]
    has_units, has_lines, has_chars = n_units != 0, n_lines != 0, nonspace != 0
    m = {"char_units": num(char_mode), "paragraphs": num(c["paragraphs"]),
         "chars": num(nonspace), "word_count": num(n_units)}
    m["mean_word_length"] = div(nonspace, n_units, (char_mode == 0) & has_units, math.nan)
    m["symbol_word_ratio"] = div(c["symbols"], n_units, has_units)
    m["bullet_line_share"] = div(c["bullet_lines"], n_lines, has_lines)
    m["ellipsis_line_share"] = div(c["ellipsis_lines"], n_lines, has_lines)
    m["alpha_word_share"] = div(c["lettered"], n_units, has_units)
    m["en_stop_words"] = pick(lang == "en", c["stop_words"], math.nan)
    m["dup_line_share"] = div(c["dup_lines"], n_lines, has_lines)
    m["dup_line_char_share"] = div(c["dup_line_chars"], c["line_chars"], c["line_chars"] != 0)
    m["dup_para_share"] = div(c["dup_paragraphs"], c["nonempty_paragraphs"], c["nonempty_paragraphs"] != 0)
    m["dup_para_char_share"] = div(c["dup_paragraph_chars"], c["paragraph_chars"], c["paragraph_chars"] != 0)
    total = num(c["unit_chars"])
    for n, count in zip(range(2, 5), c["top"]):
        m[f"top_{n}gram_char_share"] = div(count, total, count > 0)
    for n, count in zip(range(5, 11), c["dup"]):
        m[f"dup_{n}gram_char_share"] = div(count, total, count >= 0)
    m["terminal_punct_line_share"] = div(c["terminal_lines"], n_lines, has_lines)
    m["newline_word_ratio"] = div(n_lines - 1, n_units, has_units & has_lines)
    m["c4_sentences"] = num(c["sentences"])
    m["short_line_share"] = div(c["short_lines"], n_lines, has_lines)
    m["javascript_line_share"] = div(c["javascript_lines"], n_lines, c["javascript_lines"] != 0)
    m["policy_line_share"] = div(c["policy_lines"], n_lines, c["policy_lines"] != 0)
    m["lorem_ipsum"] = num(c["lorem_ipsum"])
    m["curly_brackets"] = num(c["curly_brackets"])
    m["cjk_char_share"] = div(c["cjk"], nonspace, has_chars)
    m["hiragana_share"] = div(c["hiragana"], nonspace, has_chars)
    m["link_char_share"] = div(c["link_chars"], nonspace, has_chars)
    body = c["body_chars"]
    m["boilerplate_char_share"] = div(c["bad_chars"], body, has_labels & (c["labels_fit"] != 0) & (body != 0), math.nan)
    m["chrome_path_char_share"] = div(c["chrome_chars"], body, body != 0)
    m["mean_path_depth"] = div(c["path_elements"], c["paragraphs"], c["paragraphs"] != 0)
    return m


def _lower_table() -> list[int]:
    """Per BMP code point its lower case when that is one character that needs no context
    (everything ``str.lower`` does but capital sigma's final form), else -1. Stored for
    this Python's Unicode data (``unicode_tables``), else built."""
    return _STORED[1] if _STORED is not None else lower_table_built()


@lru_cache(maxsize=1)
def lower_table_built() -> list[int]:
    """:func:`_lower_table` from ``str.lower``."""
    out = []
    for i in range(0x10000):
        low = chr(i).lower()
        out.append(ord(low) if len(low) == 1 and i != 0x3A3 else -1)
    return out


# Documents for the import-time check: links (closed, open, nested), paths and none,
# labels fitting and not, CJK, kana, Thai, astral, final sigma, dotted capital I,
# combining marks, every rule's characters (bullets, ellipses, sentence ends, phrases),
# repeated lines, paragraphs and n-grams, empty texts.
CHECK_DOCS = (
    ("", None, None),
    ("body>nav>a\x1c\x02Home\x03 \x02About\n\nbody>p\x1cThe cat sat on the mat. "
     "The cat sat on the mat. The cat sat on the mat.\n\nbody>div.site-footer\x1c"
     "Privacy Policy | Terms of Use\n\nno path", ["bad", "good", "bad", "bad"], "en"),
    ("body>p\x1c東京の天気は晴れです。\u3000明日も晴れるでしょう！\U0002000b\U0001F600\n\n"
     "body>p\x1cクッキーを使用します。東京の天気は晴れです。明日も晴れるでしょう！", None, "ja"),
    ("body>ul>li\x1c• one...\n\nbody>ul>li\x1c- two …\n\nbody>ul>li\x1c  ・・・ three．．．  "
     "\n\nbody>p\x1cΟΔΟΣ ΑΣ İstanbul e\u0301 {x} #tag \"Done.\" she said.) Lorem ipsum lorem ipsum",
     ["good"], None),
    ("body>p\x1c" + "one two three four five six seven eight nine ten " * 30
     + "\n\nbody>p\x1cline\nline\n\n\n\nbody>p\x1c\x1cdouble", None, "en"),
    ("body>p\x1c" + "ภาษาไทย ข้อความ " * 20 + "\n\nbody>p\x1c한국어 문장입니다. " * 3
     + "javascript JavaScript", None, "th"),
    ("\n\n\x02\x03\x1c\n\n\n", ["bad", "bad"], "zh"),
    # bare closing quotes, closing marks after a full stop, braces in lines C4 keeps and
    # not, words with punctuation around them, class names with and without a boundary
    ("body>div.commented>p\x1cThe cat, the dog; and (the) bird sat {here} today.\nmore photos »\n"
     "He said, \"It is {done}.\"\nOK {x}.\n\nbody>div.sidebar-right>p\x1cSS14, SS14 and \"SS14\" — "
     "with, (with) “with”!)\n\nbody>div.left-sidebar>p\x1c。」\n\nbody>div.nav-menu>a\x1c\x02x\x03 - — ...",
     ["good", "bad", "good", "good"], "en"),
    ("body>p\x1cone\n\nbody>p\x1c\n\n\n\nbody>p\x1ctwo", ["bad", "bad", "good", "bad"], None),
    # the page's frame: posts in #comments differing in their digits, chrome past the frame
    # and beside it, a path that is not ASCII
    ("body>div#comments>article#c-1>p\x1cThe first post of the thread, long enough to count.\n\n"
     "body>div#comments>article#c-22>p\x1cThe second post has a few more words than the first.\n\n"
     "body>div#comments>article#c-22>nav>p\x1cReply\n\nbody>div.menu-ü>p\x1cMenü", None, "en"),
)

STATUS, REASON = "python", "not loaded"
_COMPILED = None


def metrics_equal(a: dict, b: dict) -> bool:
    """Equal keys and values, NaN equal to NaN."""
    return a.keys() == b.keys() and all(
        (a[k] == b[k]) or (a[k] != a[k] and b[k] != b[k]) for k in a)


@lru_cache(maxsize=1)
def check_doc_references() -> tuple[dict, ...]:
    """:func:`document_metrics_reference` of each of :data:`CHECK_DOCS`: the checks of this
    module's compiled counts and of the per-archive pass (``archive_pass``) compare with them."""
    return tuple(document_metrics_reference(text, labels, lang) for text, labels, lang in CHECK_DOCS)


def compiled_module():
    """The compiled counts when they are built, enabled and equal to the reference on
    :data:`CHECK_DOCS`; else None, with a one-line warning (none for WARCLAKE_NATIVE=0).
    Decided once per process."""
    global _COMPILED, STATUS, REASON
    if STATUS == "python" and REASON == "not loaded":
        from warclake.tasks.native import load_checked

        def check(native) -> None:
            native.configure(_CLASS.tobytes(), _lower_table())
            for (text, labels, lang), ref in zip(CHECK_DOCS, check_doc_references()):
                if not metrics_equal(_metrics_compiled(native, text, labels, lang), ref):
                    raise ValueError("metrics differ from the reference on a check document")

        _COMPILED, STATUS, REASON = load_checked("corpus_quality", "quality metrics",
                                                 "Python quality metrics", check)
    return _COMPILED


@dataclass(frozen=True)
class QualityRule:
    """Drop the document when ``metric op threshold`` (op ``<`` or ``>``), for documents of
    ``langs`` (None: every language, a document without a language included)."""
    name: str
    metric: str
    op: str
    threshold: float
    langs: frozenset[str] | None
    doc: str


def _r(name: str, metric: str, op: str, threshold: float, doc: str,
       langs: frozenset[str] | None = None) -> QualityRule:
    return QualityRule(name, metric, op, threshold, langs, doc)


QUALITY_RULES: tuple[QualityRule, ...] = (
    # Gopher quality filter (Rae et al. 2021, "Scaling Language Models", appendix A)
    _r("gopher_min_words", "word_count", "<", 50,
       "Fewer than 50 words (units in CJK text): too short to be a document. Gopher's bound."),
    _r("gopher_max_words", "word_count", ">", 100_000,
       "More than 100,000 words: dumps of lists or logs rather than prose. Gopher's bound."),
    _r("gopher_min_mean_word_length", "mean_word_length", "<", 3,
       "Mean word length under 3 characters: symbols, numbers, gibberish. Gopher's bound; "
       "not applied to text measured in units (no words there)."),
    _r("gopher_max_mean_word_length", "mean_word_length", ">", 10,
       "Mean word length over 10 characters: URLs, hashes, glued tokens. Gopher's bound; "
       "not applied to text measured in units."),
    _r("gopher_symbol_ratio", "symbol_word_ratio", ">", 0.1,
       "More than one '#' or ellipsis per 10 words: hashtag and teaser spam. Gopher's ratio."),
    _r("gopher_bullet_lines", "bullet_line_share", ">", 0.9,
       "More than 90 % of lines start with a bullet: a list, not text. Gopher's share."),
    _r("gopher_ellipsis_lines", "ellipsis_line_share", ">", 0.3,
       "More than 30 % of lines end with an ellipsis: truncated teasers. Gopher's share."),
    _r("gopher_alpha_words", "alpha_word_share", "<", 0.8,
       "Under 80 % of words hold a letter: tables of numbers or symbols. Gopher's share."),
    _r("gopher_stop_words", "en_stop_words", "<", 2,
       "English text with fewer than two of Gopher's eight stop words (the, be, to, of, and, "
       "that, have, with): not running English. Gopher's rule.", frozenset({"en"})),
    # Gopher repetition filter (same paper, table A1)
    _r("gopher_dup_lines", "dup_line_share", ">", 0.3,
       "Over 30 % of lines repeat an earlier line. Gopher's share."),
    _r("gopher_dup_paragraphs", "dup_para_share", ">", 0.3,
       "Over 30 % of paragraphs repeat an earlier paragraph. Gopher's share."),
    _r("gopher_dup_paragraph_chars", "dup_para_char_share", ">", 0.2,
       "Over 20 % of paragraph characters are in repeated paragraphs. Gopher's share."),
    # top n-grams over 20, 18 and 16 %; repeated n-grams over 15 % (5-grams) down to 10 % (10-grams)
    *(_r(f"gopher_top_{n}gram", f"top_{n}gram_char_share", ">", (24 - 2 * n) / 100,
         f"The most frequent {n}-gram (of words; of {2 * n} units in CJK text) covers over "
         f"{24 - 2 * n} % of the characters. Gopher's share.") for n in range(2, 5)),
    *(_r(f"gopher_dup_{n}gram", f"dup_{n}gram_char_share", ">", (20 - n) / 100,
         f"Repeats of {n}-grams (of words; of {2 * n} units in CJK text) cover over {20 - n} % of "
         "the characters. Gopher's share.") for n in range(5, 11)),
    # C4 (Raffel et al. 2020, section 2.2): C4 removes lines; these are its page-level forms
    _r("c4_min_sentences", "c4_sentences", "<", 5,
       "Fewer than 5 sentences in the lines C4 keeps (lines ending in terminal punctuation, "
       "。！？ included, not in an ellipsis, with at least 3 words or 5 units): C4's page rule."),
    _r("c4_lorem_ipsum", "lorem_ipsum", ">", 0,
       "Contains 'lorem ipsum': placeholder text. C4 drops such pages."),
    _r("c4_curly_bracket", "curly_brackets", ">", 0,
       "A '{' in a line C4 keeps (terminal punctuation, at least 3 words or 5 units): code "
       "shown as prose. C4 drops such pages."),
    _r("c4_javascript_lines", "javascript_line_share", ">", 0.2,
       "Over 20 % of lines mention 'javascript' ('please enable JavaScript' pages). C4 "
       "removes such lines; the page-level share is this project's choice."),
    _r("c4_policy_lines", "policy_line_share", ">", 0.3,
       "Over 30 % of lines are cookie, privacy or terms notices. C4 removes such lines; "
       "the page-level share is this project's choice."),
    # FineWeb (Penedo et al. 2024; datatrove's FineWeb quality filter defaults). FineWeb's
    # figures are for trafilatura's main text, which leaves out more than boilerplate labels
    # do (a table's repeated cells, code, "Reply" and "Loading" lines inside the content).
    # Two of them dropped over 1.5 % of the clean tuning gold pages: pages whose gold main
    # text passes every rule, measured on the text the corpus keeps of them through sieve
    # (`python -m tools.measure.quality_rules --gold-pages DIR --split tuning --clean`,
    # 1,941 pages); those two are the 99.5th percentile of those pages instead.
    _r("fineweb_line_punct", "terminal_punct_line_share", "<", 0.12,
       "Under 12 % of lines end a sentence (。！？ included; a bare closing quote does not): "
       "menus, lists, headlines only. FineWeb's share."),
    _r("fineweb_short_lines", "short_line_share", ">", 0.79,
       "Over 79 % of lines are at most 30 characters (15 in CJK text). FineWeb: 67 %, which "
       "dropped 1.9 % of the clean tuning gold pages; 79 % is their 99.5th percentile."),
    _r("fineweb_dup_line_chars", "dup_line_char_share", ">", 0.2,
       "Over 20 % of characters are in lines repeated in the text. FineWeb: 1 %, which "
       "dropped 6.0 % of the clean tuning gold pages (repeated table cells, code, 'Loading' "
       "lines); 20 % is their 99.5th percentile, Gopher's duplicate line character share."),
    _r("fineweb_list_ratio", "newline_word_ratio", ">", 0.3,
       "Over 0.3 line feeds per word: a list. FineWeb's ratio."),
    # CJK
    _r("ja_min_hiragana", "hiragana_share", "<", 0.05,
       "Japanese text with under 5 % hiragana: keyword lists, tables, Chinese mislabelled "
       "Japanese. Uzushio filters on the hiragana ratio; 5 % is nwc-toolkit's kana rate.",
       frozenset({"ja"})),
    # What only the lake has
    _r("lake_link_chars", "link_char_share", ">", 0.8,
       "Over 80 % of the characters are link text (from the lake's link markers): "
       "navigation and link farms. Uzushio filters on a link-character ratio; 80 % is the "
       "98th percentile of the development gold pages."),
    _r("lake_boilerplate_chars", "boilerplate_char_share", ">", 0.9,
       "Over 90 % of the characters are in paragraphs the boilerplate model labelled bad "
       "(only where the lake has labels and whole pages are judged: the kept text is good "
       "paragraphs only)."),
    _r("lake_chrome_paths", "chrome_path_char_share", ">", 0.95,
       "Over 95 % of the characters sit under nav, header, footer, aside or menu elements "
       "or menu / sidebar / comment / breadcrumb classes (from the CSS paths) beside the "
       "page's frame (the elements each holding over half of the text): a page of site "
       "chrome. 95 % is above the 98th percentile of the development gold pages (93 %). "
       "Counted on every element, it dropped 1.0 % of the clean tuning gold pages (forum "
       "threads in #comments, articles in .sidebar-container or header wrappers); past the "
       "frame, none of the 2,533 tuning pages' kept text."),
)

RULES_BY_NAME = {r.name: r for r in QUALITY_RULES}
# Metrics that are shares (0..1); every other metric is a count or a length (>= 0).
SHARE_METRICS = frozenset(r.metric for r in QUALITY_RULES if r.metric.endswith(("_share", "_ratio"))
                          and r.metric not in ("symbol_word_ratio", "newline_word_ratio"))


def validate_thresholds(thresholds: dict[str, float] | None) -> dict[str, float]:
    """Check user thresholds by rule name; raise ValueError naming the first bad one."""
    out: dict[str, float] = {}
    for name, value in (thresholds or {}).items():
        rule = RULES_BY_NAME.get(name)
        if rule is None:
            raise ValueError(f"unknown quality rule {name!r}; known: {', '.join(sorted(RULES_BY_NAME))}")
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"threshold of {name} must be a number, not {value!r}") from None
        if not math.isfinite(v):
            raise ValueError(f"threshold of {name} must be finite, not {value!r}")
        if rule.metric in SHARE_METRICS and not 0.0 <= v <= 1.0:
            raise ValueError(f"threshold of {name} ({rule.metric}) is a share: 0..1, not {v}")
        if v < 0:
            raise ValueError(f"threshold of {name} ({rule.metric}) must be >= 0, not {v}")
        out[name] = v
    return out


def evaluate_rules(metrics: dict, lang: str | None,
                   thresholds: dict[str, float] | None = None) -> list[tuple[QualityRule, float, float]]:
    """The rules that fire on these metrics, as (rule, measured value, threshold used),
    in :data:`QUALITY_RULES` order. ``thresholds`` overrides by rule name."""
    over = validate_thresholds(thresholds) if thresholds else {}
    fired = []
    for rule in QUALITY_RULES:
        if rule.langs is not None and lang not in rule.langs:
            continue
        value = metrics.get(rule.metric)
        if value is None or value != value:   # absent or NaN: the rule does not apply
            continue
        t = over.get(rule.name, rule.threshold)
        if (value < t) if rule.op == "<" else (value > t):
            fired.append((rule, float(value), t))
    return fired

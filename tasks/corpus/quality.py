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
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from ..paragraph import LINK_END, LINK_START, PARA_SEP, PATH_SEP

# Languages written without spaces between words (or, for Korean, where the brief of the
# corpus stage asks for characters): measured in units, not words.
CHAR_UNIT_LANGS = frozenset({"zh", "ja", "ko", "th", "lo", "km", "my"})
CJK_LANGS = frozenset({"zh", "ja", "ko"})

# A line this short (in characters) is "short" for FineWeb's short-line rule. A CJK
# character carries about what two Latin letters do, hence half the length there.
SHORT_LINE_CHARS = 30
SHORT_LINE_CHARS_CJK = 15

# Sentence-final marks in the scripts the lake holds, closing quotes after them included.
TERMINAL_PUNCT = (".", "!", "?", '"', "'", "”", "’", "»", "。", "！", "？", "．", "｡",
                  "」", "』", "؟", "।", "॥", "։", "።", "။", "׃")
BULLETS = ("•", "‣", "●", "○", "◦", "▪", "▫", "■", "□", "►", "▶", "➢", "➤", "✓", "✔",
           "・", "·", "- ", "* ", "– ", "— ", "→")
ELLIPSES = ("...", "…", "．．．", "・・・")
# C4 removes lines naming these; the CJK forms are the same notices' usual wording.
POLICY_PHRASES = ("terms of use", "privacy policy", "cookie policy", "uses cookies",
                  "use of cookies", "use cookies", "プライバシーポリシー", "利用規約",
                  "クッキー", "隐私政策", "使用条款", "개인정보", "이용약관")
# Gopher's English stop words: a document needs two occurrences of these.
GOPHER_STOP_WORDS = frozenset({"the", "be", "to", "of", "and", "that", "have", "with"})

# Paths of site chrome: elements named so, or classes / ids that say so.
_CHROME_PATH = re.compile(
    r"(?:^|>)(?:nav|footer|header|aside|menu)(?=$|[>.#])"
    r"|[.#][\w-]*(?:nav|menu|footer|sidebar|breadcrumb|widget|comment|cookie)",
    re.I)

# Code-point ranges of the scripts measured in units (Han, kana, Hangul, Thai, Lao, Khmer,
# Burmese, CJK punctuation and full-width forms).
_UNIT_RANGES = ((0x1000, 0x109F), (0x0E00, 0x0EFF), (0x1780, 0x17FF), (0x1100, 0x11FF),
                (0x2E80, 0x2FDF), (0x3000, 0x303F), (0x3040, 0x30FF), (0x3130, 0x318F),
                (0x31F0, 0x31FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF),
                (0xF900, 0xFAFF), (0xFF00, 0xFFEF), (0x20000, 0x2FFFF))
_UNIT_CLASS = "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in _UNIT_RANGES)
_UNITS = re.compile(f"[{_UNIT_CLASS}]|[^\\s{_UNIT_CLASS}]+")
# A whitespace token without any letter (digits, symbols, punctuation only).
_NO_LETTER_TOKEN = re.compile(r"(?<!\S)(?:[^\w\s]|[\d_])+(?!\S)")
_LINKS = re.compile("\x02([^\x03]*)\x03?")
_STRIP = ".,;:!?\"'()[]«»“”‘’"
_SPACE_CODES = np.array([9, 10, 11, 12, 13, 32, 0xA0, 0x3000], dtype=np.uint32)

_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)


def _in(cp: np.ndarray, lo: int, hi: int) -> np.ndarray:
    return (cp >= lo) & (cp <= hi)


def _script_counts(plain: str) -> tuple[int, int, int, int]:
    """(non-space characters, unit-script characters, CJK characters, hiragana), one
    vectorised pass over the code points."""
    if not plain:
        return 0, 0, 0, 0
    cp = np.frombuffer(plain.encode("utf-32-le"), dtype=np.uint32)
    nonspace = int(cp.size - np.isin(cp, _SPACE_CODES).sum())
    hira = _in(cp, 0x3040, 0x309F)
    cjk = (hira | _in(cp, 0x30A0, 0x30FF) | _in(cp, 0x3400, 0x4DBF) | _in(cp, 0x4E00, 0x9FFF)
           | _in(cp, 0xAC00, 0xD7AF) | _in(cp, 0xF900, 0xFAFF) | _in(cp, 0x20000, 0x2FFFF))
    unit = cjk | _in(cp, 0x0E00, 0x0EFF) | _in(cp, 0x1000, 0x109F) | _in(cp, 0x1780, 0x17FF)
    return nonspace, int(unit.sum()), int(cjk.sum()), int(hira.sum())


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


def _ngram_shares(units: list[str]) -> dict[str, float]:
    """Gopher's repetition measures over the unit sequence, vectorised with numpy:
    ``top_{n}gram_char_share`` (n = 2..4: characters of the most frequent n-gram times its
    count, over all unit characters) and ``dup_{n}gram_char_share`` (n = 5..10: share of
    unit characters covered by some n-gram that occurs at least twice)."""
    out = {f"top_{n}gram_char_share": 0.0 for n in range(2, 5)}
    out.update({f"dup_{n}gram_char_share": 0.0 for n in range(5, 11)})
    w = len(units)
    if w < 2:
        return out
    # hash() of a str is stable within a process; a 64-bit collision is negligible, and
    # the figures depend only on which n-grams are equal, never on the hash values.
    ids = np.fromiter(map(hash, units), dtype=np.int64, count=w).view(np.uint64)
    lens = np.fromiter(map(len, units), dtype=np.int64, count=w)
    csum = np.concatenate(([0], np.cumsum(lens)))
    total = float(csum[-1])
    if total == 0:
        return out
    h = ids
    for n in range(2, 11):
        if w < n:
            break
        h = h[:-1] * _HASH_MUL + ids[n - 1:]       # wraps modulo 2**64
        if n <= 4:
            _, first, counts = np.unique(h, return_index=True, return_counts=True)
            top = int(counts.argmax())
            if counts[top] > 1:
                i = int(first[top])
                out[f"top_{n}gram_char_share"] = float(counts[top] * (csum[i + n] - csum[i])) / total
        else:
            _, inv, counts = np.unique(h, return_inverse=True, return_counts=True)
            starts = np.flatnonzero(counts[inv] > 1)
            if starts.size:
                cover = np.zeros(w + 1, dtype=np.int32)
                cover[starts] += 1
                cover[starts + n] -= 1
                covered = np.cumsum(cover[:-1]) > 0
                out[f"dup_{n}gram_char_share"] = float(lens[covered].sum()) / total
    return out


def document_metrics(text: str, paragraph_labels: list[str] | None, lang: str | None) -> dict[str, float]:
    """Every quality metric of one lake document, as floats (NaN where a metric does not
    apply: word lengths in unit mode, stop words outside English, boilerplate share
    without labels)."""
    chunks = text.split(PARA_SEP) if text else []
    paths, bodies = [], []
    for c in chunks:
        path, _, body = c.partition(PATH_SEP)
        paths.append(path)
        bodies.append(body)
    raw = "\n".join(bodies)
    plain = raw.replace(LINK_START, "").replace(LINK_END, "")
    paras = [b.replace(LINK_START, "").replace(LINK_END, "").strip() for b in bodies]
    lines = [ln.strip() for p in paras for ln in p.split("\n")]
    lines = [ln for ln in lines if ln]
    n_lines = len(lines)

    nonspace, unit_chars, cjk_chars, hira = _script_counts(plain)
    char_mode = lang in CHAR_UNIT_LANGS or (nonspace > 0 and unit_chars * 2 >= nonspace)
    low = plain.lower()
    units = _UNITS.findall(low) if char_mode else low.split()
    n_units = len(units)
    m: dict[str, float] = {"char_units": float(char_mode), "paragraphs": float(len(chunks)),
                           "chars": float(nonspace), "word_count": float(n_units)}

    # Gopher quality filter
    if char_mode or not n_units:
        m["mean_word_length"] = math.nan
    else:
        m["mean_word_length"] = nonspace / n_units   # characters per word, spaces excluded
    symbols = plain.count("#") + sum(plain.count(e) for e in ELLIPSES)
    m["symbol_word_ratio"] = symbols / n_units if n_units else 0.0
    m["bullet_line_share"] = sum(ln.startswith(BULLETS) for ln in lines) / n_lines if n_lines else 0.0
    m["ellipsis_line_share"] = sum(ln.endswith(ELLIPSES) for ln in lines) / n_lines if n_lines else 0.0
    if char_mode:
        lettered = sum(1 for u in units if not _NO_LETTER_TOKEN.fullmatch(u))
    else:
        lettered = n_units - len(_NO_LETTER_TOKEN.findall(low))
    m["alpha_word_share"] = lettered / n_units if n_units else 0.0
    if lang == "en":
        m["en_stop_words"] = float(sum(1 for u in units if u.strip(_STRIP) in GOPHER_STOP_WORDS))
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
    m.update(_ngram_shares(units))

    # C4 and FineWeb line rules
    short = SHORT_LINE_CHARS_CJK if char_mode else SHORT_LINE_CHARS
    ends = [ln.endswith(TERMINAL_PUNCT) for ln in lines]
    m["terminal_punct_line_share"] = sum(ends) / n_lines if n_lines else 0.0
    min_units = 5 if char_mode else 3
    m["terminal_punct_lines"] = float(sum(
        1 for ln, e in zip(lines, ends)
        if e and len(_UNITS.findall(ln) if char_mode else ln.split()) >= min_units))
    m["short_line_share"] = sum(len(ln) <= short for ln in lines) / n_lines if n_lines else 0.0
    low_lines = [ln.lower() for ln in lines]
    m["javascript_line_share"] = sum("javascript" in ln for ln in low_lines) / n_lines if n_lines else 0.0
    m["policy_line_share"] = (sum(any(p in ln for p in POLICY_PHRASES) for ln in low_lines) / n_lines
                              if n_lines else 0.0)
    m["lorem_ipsum"] = float(low.count("lorem ipsum"))
    m["curly_brackets"] = float(plain.count("{") + plain.count("}"))

    # CJK
    m["cjk_char_share"] = cjk_chars / nonspace if nonspace else 0.0
    m["hiragana_share"] = hira / nonspace if nonspace else 0.0

    # What only the lake has: link markers, paragraph labels, CSS paths
    link_chars = sum(len(t) - t.count(" ") for t in _LINKS.findall(raw)) if LINK_START in raw else 0
    m["link_char_share"] = link_chars / nonspace if nonspace else 0.0
    sizes = [len(p) for p in paras]
    total = sum(sizes)
    if paragraph_labels is not None and len(paragraph_labels) == len(paras) and total:
        m["boilerplate_char_share"] = sum(s for s, lab in zip(sizes, paragraph_labels) if lab == "bad") / total
    else:
        m["boilerplate_char_share"] = math.nan
    chrome: dict[str, bool] = {}
    chrome_chars = 0
    depth = 0
    for path, s in zip(paths, sizes):
        hit = chrome.get(path)
        if hit is None:
            hit = chrome[path] = bool(_CHROME_PATH.search(path))
        if hit:
            chrome_chars += s
        depth += path.count(">") + 1 if path else 0
    m["chrome_path_char_share"] = chrome_chars / total if total else 0.0
    m["mean_path_depth"] = depth / len(paths) if paths else 0.0
    return m


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
       "More than 30 % of lines repeat an earlier line of the page. Gopher's share."),
    _r("gopher_dup_paragraphs", "dup_para_share", ">", 0.3,
       "More than 30 % of paragraphs repeat an earlier paragraph. Gopher's share."),
    _r("gopher_dup_line_chars", "dup_line_char_share", ">", 0.2,
       "More than 20 % of line characters are in repeated lines. Gopher's share."),
    _r("gopher_dup_paragraph_chars", "dup_para_char_share", ">", 0.2,
       "More than 20 % of paragraph characters are in repeated paragraphs. Gopher's share."),
    _r("gopher_top_2gram", "top_2gram_char_share", ">", 0.2,
       "The most frequent word 2-gram covers over 20 % of the characters. Gopher's share."),
    _r("gopher_top_3gram", "top_3gram_char_share", ">", 0.18,
       "The most frequent word 3-gram covers over 18 % of the characters. Gopher's share."),
    _r("gopher_top_4gram", "top_4gram_char_share", ">", 0.16,
       "The most frequent word 4-gram covers over 16 % of the characters. Gopher's share."),
    _r("gopher_dup_5gram", "dup_5gram_char_share", ">", 0.15,
       "Repeated word 5-grams cover over 15 % of the characters. Gopher's share."),
    _r("gopher_dup_6gram", "dup_6gram_char_share", ">", 0.14,
       "Repeated word 6-grams cover over 14 % of the characters. Gopher's share."),
    _r("gopher_dup_7gram", "dup_7gram_char_share", ">", 0.13,
       "Repeated word 7-grams cover over 13 % of the characters. Gopher's share."),
    _r("gopher_dup_8gram", "dup_8gram_char_share", ">", 0.12,
       "Repeated word 8-grams cover over 12 % of the characters. Gopher's share."),
    _r("gopher_dup_9gram", "dup_9gram_char_share", ">", 0.11,
       "Repeated word 9-grams cover over 11 % of the characters. Gopher's share."),
    _r("gopher_dup_10gram", "dup_10gram_char_share", ">", 0.10,
       "Repeated word 10-grams cover over 10 % of the characters. Gopher's share."),
    # C4 (Raffel et al. 2020, section 2.2): C4 removes lines; these are its page-level forms
    _r("c4_min_sentences", "terminal_punct_lines", "<", 3,
       "Fewer than 3 lines that end in terminal punctuation (。！？ included) and hold 3 "
       "words (5 units): C4 keeps only such lines and drops pages with too few sentences."),
    _r("c4_lorem_ipsum", "lorem_ipsum", ">", 0,
       "Contains 'lorem ipsum': placeholder text. C4 drops such pages."),
    _r("c4_curly_bracket", "curly_brackets", ">", 0,
       "Contains a curly bracket: code (scripts and styles are already out of the lake's "
       "text, so what is left is code shown on the page). C4 drops such pages."),
    _r("c4_javascript_lines", "javascript_line_share", ">", 0.2,
       "Over 20 % of lines mention 'javascript' ('please enable JavaScript' pages). C4 "
       "removes such lines; the page-level share is this project's choice."),
    _r("c4_policy_lines", "policy_line_share", ">", 0.3,
       "Over 30 % of lines are cookie, privacy or terms notices. C4 removes such lines; "
       "the page-level share is this project's choice."),
    # FineWeb (Penedo et al. 2024; datatrove's FineWeb quality filter defaults)
    _r("fineweb_line_punct", "terminal_punct_line_share", "<", 0.12,
       "Under 12 % of lines end in terminal punctuation: menus, lists, headlines. FineWeb's "
       "default."),
    _r("fineweb_short_lines", "short_line_share", ">", 0.67,
       "Over 67 % of lines are at most 30 characters (15 in CJK text). FineWeb's default."),
    _r("fineweb_dup_line_chars", "dup_line_char_share", ">", 0.01,
       "Over 1 % of characters are in lines repeated on the page. FineWeb's default."),
    # CJK
    _r("ja_min_hiragana", "hiragana_share", "<", 0.05,
       "Japanese text with under 5 % hiragana: keyword lists, tables, Chinese mislabelled "
       "Japanese. Uzushio filters on the hiragana ratio; 5 % is nwc-toolkit's kana rate.",
       frozenset({"ja"})),
    # What only the lake has
    _r("lake_link_chars", "link_char_share", ">", 0.6,
       "Over 60 % of the characters are link text (from the lake's link markers): "
       "navigation and link farms. Uzushio filters on a link-character ratio."),
    _r("lake_boilerplate_chars", "boilerplate_char_share", ">", 0.9,
       "Over 90 % of the characters are in paragraphs the boilerplate model labelled bad "
       "(only where the lake has labels)."),
    _r("lake_chrome_paths", "chrome_path_char_share", ">", 0.8,
       "Over 80 % of the characters sit under nav, header, footer, aside or menu elements "
       "or menu / sidebar / comment / widget classes (from the CSS paths)."),
)

RULES_BY_NAME = {r.name: r for r in QUALITY_RULES}
# Metrics that are shares (0..1); every other metric is a count or a length (>= 0).
SHARE_METRICS = frozenset(r.metric for r in QUALITY_RULES
                          if r.metric.endswith(("_share", "_ratio")) and r.metric != "symbol_word_ratio")


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

"""The text-only feature columns of every paragraph of a page at once.

Per paragraph of L characters and T whitespace tokens (``str.split()``):
log_len log1p(L); log_words log1p(word units: whitespace runs, with CJK characters as
whitespace, that hold a letter or digit, plus one unit per two CJK characters — as
``text.word_units``); punct / digit / upper / sep ratio: characters of PUNCT_CHARS, ASCII
digits, capitals below U+0500, SEP_CHARS, over L; titlecase_ratio: capitals of the title
ranges at the start of a token, over T; sentence_ends: log1p(TERM_CHARS followed by any
CLOSER_CHARS and then whitespace or the end); ends_with_punct: the last non-space
character is one of END_CHARS; avg_word_len L / T; n_lines log1p(newlines). Empty texts
give zeros.

One pass of numpy over the page's code points replaces a dozen regular-expression and
``str.translate`` passes per paragraph: each code point gets its classes from a table,
per-paragraph counts are differences of cumulative sums. Counts are whole numbers, ratios
the same IEEE divisions as in Python, logarithms ``math.log1p`` through a table, so the
values are bit-identical to the per-paragraph definitions (the tests hold them to that).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from warclake.tasks.extract.boilerplate.text import _CJK_RE

# Character classes, one bit each.
SPACE, ALNUM, CJK, PUNCT, DIGIT, UPPER, SEP, TITLE, TERM, CLOSER = (1 << k for k in range(10))

PUNCT_CHARS = ".,;:!?\"'()[]{}-–—…/|»«•·*#>、。，！？：；「」『』（）"
SEP_CHARS = "|»«•·>/:"
TERM_CHARS = ".!?。！？"             # a sentence end, when closers and then a space follow
CLOSER_CHARS = "\"'”’)]"
END_CHARS = ".!?。！？:;\"”"         # ends_with_punct
UPPER_BELOW = 0x500                  # upper_ratio counts capitals of Latin, Greek, Cyrillic
_TITLE_RANGES = (("A", "Z"), ("À", "Ö"), ("Ø", "Þ"), ("А", "Я"), ("Ё", "Ё"))

_LOG1P_TABLE = np.array([math.log1p(i) for i in range(1 << 16)])


@lru_cache(maxsize=1)
def _table() -> np.ndarray:
    """Class bits of every BMP code point (astral ones are classed one by one)."""
    t = np.zeros(0x10000, dtype=np.uint16)
    chars = [chr(c) for c in range(0x10000)]
    t[[c for c, ch in enumerate(chars) if ch.isspace()]] |= SPACE
    t[[c for c, ch in enumerate(chars) if ch.isalnum()]] |= ALNUM
    t[[ord(ch) for ch in chars if _CJK_RE.match(ch)]] |= CJK
    t[[c for c in range(UPPER_BELOW) if chars[c].isupper()]] |= UPPER
    for chars_, bit in ((PUNCT_CHARS, PUNCT), ("0123456789", DIGIT), (SEP_CHARS, SEP),
                        (TERM_CHARS, TERM), (CLOSER_CHARS, CLOSER)):
        t[[ord(ch) for ch in chars_]] |= bit
    for lo, hi in _TITLE_RANGES:
        t[ord(lo):ord(hi) + 1] |= TITLE
    return t


def _classes(codes: np.ndarray) -> np.ndarray:
    table = _table()
    astral = codes > 0xFFFF
    if not astral.any():
        return table[codes]
    flags = table[np.where(astral, 0, codes)]
    for c in np.unique(codes[astral]).tolist():  # no astral space, CJK-class character or capital
        if chr(c).isalnum():
            flags[codes == c] = ALNUM
    return flags


def _log1p(counts: np.ndarray) -> np.ndarray:
    if counts.size and counts.max() >= len(_LOG1P_TABLE):
        return np.array([math.log1p(int(c)) for c in counts])
    return _LOG1P_TABLE[counts]


def text_columns(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(an (n, 11) array of the TEXT_COLS of ``features``, the word units of
    ``text.word_units``) for each text."""
    n = len(texts)
    out = np.zeros((n, 11))
    lens = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    total = int(lens.sum())
    if total == 0:
        return out, np.zeros(n, dtype=np.int64)
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    f = _classes(codes)
    ends = np.cumsum(lens)
    starts = ends - lens
    para = np.repeat(np.arange(n, dtype=np.int32), lens)  # paragraph of each code point
    first = np.zeros(total, dtype=bool)
    first[starts[lens > 0]] = True

    def per_para(mask: np.ndarray) -> np.ndarray:
        cs = np.concatenate(([0], np.cumsum(mask, dtype=np.int32)))
        return cs[ends] - cs[starts]

    space = (f & SPACE) != 0
    prev_space = np.concatenate(([True], space[:-1])) | first   # a paragraph start counts as after a space
    n_tok = per_para(~space & prev_space)
    n_title = per_para(((f & TITLE) != 0) & prev_space)
    # word units: runs of characters that are neither space nor CJK holding a letter or digit,
    # plus one unit per two CJK characters
    cjk = (f & CJK) != 0
    gap = space | cjk
    run_start = ~gap & (np.concatenate(([True], gap[:-1])) | first)
    run_id = np.cumsum(run_start, dtype=np.int32)
    alnum_at = np.flatnonzero(((f & ALNUM) != 0) & ~gap)
    ids = run_id[alnum_at]
    first_alnum = alnum_at[np.concatenate(([True], ids[1:] != ids[:-1]))] if ids.size else alnum_at
    runs = np.bincount(para[first_alnum], minlength=n)
    n_cjk = per_para(cjk)
    units = runs + (n_cjk + 1) // 2
    # sentence ends: a terminal followed by closers, then a space or the paragraph's end
    term_at = np.flatnonzero((f & TERM) != 0)
    if term_at.size:
        open_at = np.flatnonzero((f & CLOSER) == 0)
        k = np.searchsorted(open_at, term_at + 1)
        nxt = np.where(k < open_at.size, open_at[np.minimum(k, open_at.size - 1)], total)
        seg_end = ends[para[term_at]]
        counted = (nxt >= seg_end) | space[np.minimum(nxt, total - 1)]
        sentences = np.bincount(para[term_at[counted]], minlength=n)
    else:
        sentences = np.zeros(n, dtype=np.int64)

    L = lens.astype(np.float64)
    nz = lens > 0
    safe_L = np.where(nz, L, 1.0)
    tok = n_tok.astype(np.float64)
    has_tok = n_tok > 0
    safe_tok = np.where(has_tok, tok, 1.0)
    out[:, 0] = _log1p(lens)
    out[:, 1] = _log1p(units)
    out[:, 2] = per_para((f & PUNCT) != 0) / safe_L
    out[:, 3] = per_para((f & DIGIT) != 0) / safe_L
    out[:, 4] = per_para((f & UPPER) != 0) / safe_L
    out[:, 5] = np.where(has_tok, n_title / safe_tok, 0.0)
    out[:, 6] = _log1p(sentences)
    out[:, 7] = [float(t.rstrip()[-1:] in END_CHARS) for t in texts]
    out[:, 8] = per_para((f & SEP) != 0) / safe_L
    out[:, 9] = np.where(has_tok, L / safe_tok, 0.0)
    out[:, 10] = _log1p(per_para(codes == 10))
    out[~nz] = 0.0
    return out, units

"""Body Text Extraction (Finn, Kushmerick & Smyth 2001).

The page is a token sequence: each tag is 1, each word 0. BTE picks i <= j maximising
(tags before i) + (words inside [i, j]) + (tags after j): the one stretch where text
outweighs markup. With s_k = +1 for a word and -1 for a tag that objective is
``total_tags + sum(s[i..j])``, so the best span is a maximum-sum subarray (Kadane, O(n)).

From paragraphs, the sequence is each paragraph's ``n_tags`` ones followed by its words
(``text.word_units``: whitespace words, CJK characters two to a word). A best span starts
at the first word of some paragraph and ends at the last word of some paragraph (extending
into a run of +1s only helps, a run of -1s only hurts), so Kadane runs over the
alternating run sums -n_tags, +words without expanding them. Paragraphs whose words lie in
the span are good.
"""
from __future__ import annotations

from warclake.tasks.extract.boilerplate.text import tag_count, word_units
from warclake.tasks.extract.paragraph import Paragraph


def best_span(paragraphs: list[Paragraph], units: list[int] | None = None) -> tuple[int, int] | None:
    """(first, last) paragraph index of the maximum span, None when there are no words."""
    best = 0
    best_span_ = None
    cur = 0
    start = 0
    if units is None:
        units = [word_units(p.plain) for p in paragraphs]
    for k, (p, w) in enumerate(zip(paragraphs, units)):
        cur -= tag_count(p.n_tags)
        if cur <= 0:          # a span that starts here beats one carrying a deficit
            cur, start = 0, k
        if w == 0:
            continue
        cur += w
        if cur > best:
            best, best_span_ = cur, (start, k)
    return best_span_


def classify(paragraphs: list[Paragraph], lang: str = "", units: list[int] | None = None) -> list[str]:
    """``units``: the paragraphs' word units (``text.word_units``), when the caller has them."""
    span = best_span(paragraphs, units)
    if span is None:
        return ["bad"] * len(paragraphs)
    i, j = span
    return ["good" if i <= k <= j else "bad" for k in range(len(paragraphs))]

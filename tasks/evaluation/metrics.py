"""Extraction quality metrics.

* ``token_counts`` / ``prf``: the bag-of-tokens (n=1) and token-shingle (n>1) overlap used by
  the public article-extraction benchmarks (Scrapinghub's article-extraction-benchmark,
  itself after Moz's Dragnet benchmark): tokens are ``\\w+`` runs (case kept; deviation:
  each CJK character is its own token, else a Japanese sentence is one token), shingles are
  n consecutive tokens, true positives per page are the multiset intersection. Each page's
  (tp, fp, fn) is normalised to sum 1 so long pages do not dominate; precision is the mean
  of per-page precisions over pages that predicted something, recall the mean over pages
  whose gold is non-empty, and F1 the harmonic mean of those two means.
* ``token_page_prf``: one page's own precision, recall and F1 over the same tokens (each CJK
  character a token), for scores that average F1 over pages (the Japanese gold's report).
* ``word_prf``: WCXB's own score, per page: precision, recall and F1 of the bag of
  lowercased ``\\w+`` tokens (multiset overlap, no CJK splitting), each averaged over all
  pages (a page that predicts nothing has precision 0; both texts empty score 1).
* ``edit_similarity``: CLEANEVAL-style word-level similarity, ``1 - d / max(|a|, |b|)``
  where d is the Levenshtein distance between the whitespace-word sequences (CJK
  characters one by one; insert,
  delete, substitute, cost 1 each). The CLEANEVAL scorer aligned texts with diff; this
  normalised Levenshtein is the same idea in a closed form, so numbers are comparable in
  spirit, not digit for digit. Two empty texts are identical (1.0).
"""
from __future__ import annotations

import re
from collections import Counter

import numpy as np

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
# \w+ runs, except that each CJK character is a token of its own (a \w+ run of Japanese or
# Chinese would be a whole sentence); identical to \w+ on text without CJK.
_TOKEN = re.compile(f"[{_CJK}]|(?:(?![{_CJK}])\\w)+")
# Whitespace words for the edit similarity, CJK characters again one by one.
_EDIT_WORD = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text or "")


def shingles(text: str, n: int = 1) -> Counter:
    toks = tokens(text)
    if n <= 1:
        return Counter(toks)
    if len(toks) < n:   # a short text is one (shorter) shingle, as in the benchmark
        return Counter([tuple(toks)]) if toks else Counter()
    return Counter(tuple(toks[i:i + n]) for i in range(len(toks) - n + 1))


def token_counts(gold: str, pred: str, n: int = 1) -> tuple[float, float, float]:
    """Per-page (tp, fp, fn), normalised to sum 1 (all zero when both texts are empty)."""
    g, p = shingles(gold, n), shingles(pred, n)
    tp = sum((g & p).values())
    fp = sum(p.values()) - tp
    fn = sum(g.values()) - tp
    s = tp + fp + fn
    return (tp / s, fp / s, fn / s) if s else (0.0, 0.0, 0.0)


def token_page_prf(gold: str, pred: str) -> tuple[float, float, float]:
    """One page's (precision, recall, F1) of the bag of :func:`tokens`; both empty score 1,
    an empty prediction of a non-empty gold 0."""
    return _bag_prf(shingles(gold, 1), shingles(pred, 1))


_WORD = re.compile(r"\w+")


def word_prf(gold: str, pred: str) -> tuple[float, float, float]:
    """One page's (precision, recall, F1) over lowercased ``\\w+`` words (WCXB's metric)."""
    return _bag_prf(Counter(_WORD.findall(gold.lower())), Counter(_WORD.findall(pred.lower())))


def _bag_prf(g: Counter, p: Counter) -> tuple[float, float, float]:
    if not g and not p:
        return 1.0, 1.0, 1.0
    tp = sum((g & p).values())
    precision = tp / sum(p.values()) if p else 0.0
    recall = tp / sum(g.values()) if g else 0.0
    f1 = 2 * precision * recall / (precision + recall) if tp else 0.0
    return precision, recall, f1


def _precision(tp, fp, fn):
    if fp == fn == 0:
        return 1.0
    return tp / (tp + fp) if tp + fp else 0.0


def _recall(tp, fp, fn):
    if fp == fn == 0:
        return 1.0
    return tp / (tp + fn) if tp + fn else 0.0


def prf(counts: list[tuple[float, float, float]]) -> dict[str, float]:
    """Precision, recall, F1 over pages from their normalised (tp, fp, fn)."""
    ps = [_precision(*c) for c in counts if c[0] + c[1] > 0]
    rs = [_recall(*c) for c in counts if c[0] + c[2] > 0]
    p = sum(ps) / len(ps) if ps else 0.0
    r = sum(rs) / len(rs) if rs else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f}


def levenshtein(a: list, b: list) -> int:
    """Edit distance between two sequences, one numpy row per element of ``a``.

    Row recurrence: t[j] = min(prev[j] + 1, prev[j-1] + cost); the in-row insertions
    D[j] = min_k<=j (t[k] + j - k) are a running minimum of t[k] - k, so each row is a few
    vector operations instead of a Python loop over ``b``."""
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    vocab: dict = {}
    ai = np.fromiter((vocab.setdefault(x, len(vocab)) for x in a), dtype=np.int64, count=len(a))
    bi = np.fromiter((vocab.setdefault(x, len(vocab)) for x in b), dtype=np.int64, count=len(b))
    m = len(bi)
    ar = np.arange(m + 1, dtype=np.int64)
    prev = ar.copy()
    t = np.empty(m + 1, dtype=np.int64)
    for i, x in enumerate(ai, 1):
        t[0] = i
        np.minimum(prev[1:] + 1, prev[:-1] + (bi != x), out=t[1:])
        prev = np.minimum.accumulate(t - ar) + ar
    return int(prev[-1])


def edit_similarity(gold: str, pred: str) -> float:
    a, b = _EDIT_WORD.findall(gold), _EDIT_WORD.findall(pred)
    if not a and not b:
        return 1.0
    return 1.0 - levenshtein(a, b) / max(len(a), len(b))

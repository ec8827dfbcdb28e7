"""The page's kind for ``sieve``'s operating point: how likely a page is listing-like.

On an article, forum thread or product page the main content is a block and its
surroundings are boilerplate; on a listing, a collection, a documentation or a service page
it is spread over many records, cards and sections, each of which alone looks like a teaser.
Paragraph probabilities there run lower for the same share of content, so one cutoff keeps
too little of those pages or too much of the others. A small tree ensemble over the page's
summary row (``vector``) gives the probability p that the page is listing-like; above one
half the page takes the lower ``listing_cutoff`` (``page_cutoff``). A cutoff moved with p
instead scored about the same on an inner split of WCXB's tuning pages but cost the shop
pages of the Japanese tuning set (p 0.13-0.31) 0.05 of page F1: their sidebars of product
links sit just under the cutoff. Trained by ``tools.train_sieve --page-kind-types``; numpy
only (the compiled path passes its tree scores in), so the Python and the compiled path agree.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from warclake.tasks.extract.boilerplate.forest import Forest

LISTING_ABOVE = 0.5   # the page-kind probability above which a page takes listing_cutoff


def vector(X: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    """A page's summary row from its paragraphs' feature matrix: each column's mean weighted
    by the paragraphs' characters, its plain mean, and the log of the numbers of paragraphs
    and characters (2 * columns + 2 values)."""
    n, width = X.shape
    if n == 0:
        return np.zeros(2 * width + 2)
    chars = np.expm1(X[:, names.index("log_len")])
    total = float(chars.sum())
    weights = chars / total if total > 0 else np.full(n, 1.0 / n)
    return np.concatenate([weights @ X, X.mean(axis=0), [np.log1p(n), np.log1p(total)]])


def listing_probability(forest: Forest, X: np.ndarray,
                        margin: Callable[[Forest, np.ndarray], np.ndarray] | None = None) -> float:
    """p: the page-kind trees' probability that the page of X is listing-like (0 without them)."""
    if forest.kind is None or len(X) == 0:
        return 0.0
    row = vector(X, forest.names)[None, :]
    m = margin(forest.kind, row) if margin is not None else forest.kind.margin(row)
    return float(1.0 / (1.0 + np.exp(-m[0])))


def page_cutoff(forest: Forest, X: np.ndarray,
                margin: Callable[[Forest, np.ndarray], np.ndarray] | None = None) -> float:
    """The page's operating point: ``listing_cutoff`` when p > 1/2, else the model's cutoff."""
    return moved_cutoff(forest.cutoff, forest, listing_probability(forest, X, margin))


def moved_cutoff(cutoff: float, forest: Forest, p: float) -> float:
    """``cutoff``, or the model's ``listing_cutoff`` on a page the trees call listing-like
    (p above one half)."""
    if forest.kind is None or p <= LISTING_ABOVE:
        return cutoff
    return forest.listing_cutoff

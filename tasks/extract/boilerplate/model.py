"""``sieve``: warclake's learned boilerplate classifier.

A small gradient-boosted tree ensemble (logistic loss, fixed-depth trees stored as complete
binary heaps, ``forest``) over the paragraph features of ``features``; the trees' scores are
those of the compiled module when it passed its check (``compiled``). A paragraph is good
when its probability is above the page's cutoff, which a second, page-level ensemble moves
lower on listing-like pages (``page_kind``); on a page that would keep nothing it is half the
best paragraph's probability (``labels``); a paragraph inside a cookie or consent dialog is
bad whatever its score (``consent``). The weights ship inside the package as
``sieve.json`` and are reproduced by ``python -m tools.train_sieve``.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources

import numpy as np

from warclake.tasks.extract.boilerplate import compiled, features, page_kind
from warclake.tasks.extract.boilerplate.consent import consent_paths
from warclake.tasks.extract.boilerplate.forest import Forest  # also model.Forest for the training script
from warclake.tasks.extract.paragraph import Paragraph

MODEL_FILE = "sieve.json"


@lru_cache(maxsize=1)
def load() -> Forest:
    data = json.loads(resources.files(__package__).joinpath(MODEL_FILE).read_text("utf-8"))
    forest = Forest.from_json(data)
    if forest.names != features.NAMES:
        raise RuntimeError("sieve.json was trained on other features than features.NAMES; "
                           "retrain with python -m tools.train_sieve")
    return forest


def probabilities(paragraphs: list[Paragraph], lang: str) -> np.ndarray:
    """The shipped model's probability that each paragraph is good (the trees' scores
    compiled when the features are: ``compiled.margin``, equal to ``Forest.margin``)."""
    return _probabilities(load(), features.matrix(paragraphs, lang))


def _probabilities(forest: Forest, X: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-compiled.margin(forest, X)))


def classify(paragraphs: list[Paragraph], lang: str) -> list[str]:
    forest = load()
    X = features.matrix(paragraphs, lang)
    cutoff = page_kind.page_cutoff(forest, X, compiled.margin)
    # as Python floats (the same values): no numpy scalar per paragraph
    return labels(_probabilities(forest, X).tolist(), cutoff, paragraphs)


# A page with nothing above its cutoff keeps the paragraphs above FALLBACK_SHARE times its best
# when that best is at least FALLBACK_FLOOR, rather than nothing: pages with empty main text
# (error, login pages) score their best below 0.13 (reports/boilerplate_eval.md, "Pages that
# would keep nothing").
FALLBACK_FLOOR = 0.15
FALLBACK_SHARE = 0.5


def kept_above(probabilities: Iterable[float], cutoff: float) -> float:
    """The probability a paragraph must exceed to be kept: the page's cutoff, or, when no
    paragraph is above it and the best has at least ``FALLBACK_FLOOR``, ``FALLBACK_SHARE``
    times the best."""
    best = max(probabilities, default=0.0)
    return best * FALLBACK_SHARE if FALLBACK_FLOOR <= best <= cutoff else cutoff


def labels(probabilities: list[float], cutoff: float, paragraphs: list[Paragraph]) -> list[str]:
    """Good above ``kept_above`` the page's cutoff; bad below it and inside a consent dialog."""
    cutoff = kept_above(probabilities, cutoff)
    good = [v > cutoff for v in probabilities]
    dialog = consent_paths(p.path for p, g in zip(paragraphs, good) if g)
    return ["good" if g and p.path not in dialog else "bad" for g, p in zip(good, paragraphs)]

"""``sieve``: warclake's learned boilerplate classifier.

A small gradient-boosted tree ensemble (logistic loss, fixed-depth trees stored as complete
binary heaps) over the paragraph features of ``features``. Inference is numpy only: all
trees walk down together, one fancy-indexing step per level. The weights ship inside the
package as ``sieve.json`` and are reproduced by ``python -m warclake.tasks.tooling.train_sieve``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

from warclake.tasks.paragraph import Paragraph

from . import compiled, features

MODEL_FILE = "sieve.json"


@dataclass
class Forest:
    feature: np.ndarray      # (trees, 2**depth - 1) feature index per internal node
    threshold: np.ndarray    # (trees, 2**depth - 1) go right when x > threshold
    leaf: np.ndarray         # (trees, 2**depth) leaf values, learning rate applied
    base: float
    depth: int
    names: tuple[str, ...]
    cutoff: float = 0.5      # probability above which a paragraph is good

    def margin(self, X: np.ndarray) -> np.ndarray:
        n, n_feat = X.shape
        t, n_int = self.feature.shape
        if n == 0 or t == 0:
            return np.full(n, self.base)
        # Flat np.take on raveled arrays: cheaper than 2-D fancy indexing at this size.
        xf = np.ascontiguousarray(X).ravel()
        featf, thrf = self.feature.ravel(), self.threshold.ravel()
        row_off = (np.arange(n) * n_feat)[:, None]
        tree_off = (np.arange(t) * n_int)[None, :]
        node = np.zeros((n, t), dtype=np.int64)
        for _ in range(self.depth):
            k = tree_off + node
            go_right = np.take(xf, row_off + np.take(featf, k)) > np.take(thrf, k)
            node = 2 * node + 1 + go_right
        leaf_k = (np.arange(t) * (n_int + 1))[None, :] + (node - n_int)
        return self.base + np.take(self.leaf.ravel(), leaf_k).sum(axis=1)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.margin(X)))

    def to_json(self, meta: dict | None = None) -> dict:
        return {
            "model": "sieve", "format": 1, "depth": self.depth, "base": self.base,
            "cutoff": self.cutoff, "features": list(self.names),
            "feature": self.feature.tolist(),
            "threshold": [[round(float(v), 6) if np.isfinite(v) else 1e300 for v in row]
                          for row in self.threshold],
            "leaf": [[round(float(v), 6) for v in row] for row in self.leaf],
            "meta": meta or {},
        }

    @classmethod
    def from_json(cls, d: dict) -> "Forest":
        depth = int(d["depth"])
        n_int = 2 ** depth - 1
        feat = np.array(d["feature"], dtype=np.int64).reshape(-1, n_int)
        thr = np.array(d["threshold"], dtype=np.float64).reshape(-1, n_int)
        leaf = np.array(d["leaf"], dtype=np.float64).reshape(-1, 2 ** depth)
        return cls(feat, thr, leaf, float(d["base"]), depth, tuple(d["features"]),
                   float(d.get("cutoff", 0.5)))


@lru_cache(maxsize=1)
def load() -> Forest:
    data = json.loads(resources.files(__package__).joinpath(MODEL_FILE).read_text("utf-8"))
    forest = Forest.from_json(data)
    if forest.names != features.NAMES:
        raise RuntimeError("sieve.json was trained on other features than features.NAMES; "
                           "retrain with python -m warclake.tasks.tooling.train_sieve")
    return forest


def probabilities(paragraphs: list[Paragraph], lang: str) -> np.ndarray:
    """The shipped model's probability that each paragraph is good (the trees' scores
    compiled when the features are: ``compiled.margin``, equal to ``Forest.margin``)."""
    forest = load()
    return 1.0 / (1.0 + np.exp(-compiled.margin(forest, features.matrix(paragraphs, lang))))


def classify(paragraphs: list[Paragraph], lang: str) -> list[str]:
    cutoff = load().cutoff
    return ["good" if v > cutoff else "bad" for v in probabilities(paragraphs, lang)]

"""The tree ensemble of ``sieve``: fixed-depth trees stored as complete binary heaps, and
their numpy inference (the reference of the compiled ``sieve_features.margin``; no import of
the features, so the import-time check of the compiled path can use it)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Forest:
    feature: np.ndarray      # (trees, 2**depth - 1) feature index per internal node
    threshold: np.ndarray    # (trees, 2**depth - 1) go right when x > threshold
    leaf: np.ndarray         # (trees, 2**depth) leaf values, learning rate applied
    base: float
    depth: int
    names: tuple[str, ...]
    cutoff: float = 0.5      # probability above which a paragraph is good
    # the page-kind trees over page_kind.vector (None: one cutoff for every page), and the
    # cutoff of a page they call listing-like (page_kind.page_cutoff)
    kind: "Forest | None" = None
    listing_cutoff: float = 0.5

    def margin(self, X: np.ndarray) -> np.ndarray:
        """Scores of the rows of X: all trees walk down together, one fancy-indexing step
        per level, and each row's leaves are added by numpy's pairwise sum."""
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
        d = {
            "model": "sieve", "format": 1, "depth": self.depth, "base": self.base,
            "cutoff": self.cutoff, "features": list(self.names),
            "feature": self.feature.tolist(),
            "threshold": [[round(float(v), 6) if np.isfinite(v) else 1e300 for v in row]
                          for row in self.threshold],
            "leaf": [[round(float(v), 6) for v in row] for row in self.leaf],
        }
        if self.kind is not None:
            kind = self.kind.to_json()
            d["page_kind"] = {k: kind[k] for k in ("depth", "base", "feature", "threshold", "leaf")}
            d["listing_cutoff"] = self.listing_cutoff
        d["meta"] = meta or {}
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Forest":
        depth = int(d["depth"])
        n_int = 2 ** depth - 1
        feat = np.array(d["feature"], dtype=np.int64).reshape(-1, n_int)
        thr = np.array(d["threshold"], dtype=np.float64).reshape(-1, n_int)
        leaf = np.array(d["leaf"], dtype=np.float64).reshape(-1, 2 ** depth)
        # the page-kind trees read page_kind.vector's rows, which have no names of their own
        kind = cls.from_json(dict(d["page_kind"], features=())) if d.get("page_kind") else None
        return cls(feat, thr, leaf, float(d["base"]), depth, tuple(d["features"]),
                   float(d.get("cutoff", 0.5)), kind, float(d.get("listing_cutoff", 0.5)))

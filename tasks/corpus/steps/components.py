"""Connected components of a pair list, deterministic: every node gets the smallest node
number of its component (min-label propagation with pointer jumping, all in numpy)."""
from __future__ import annotations

import numpy as np


def component_labels(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """label[i] = the smallest node of i's component, for nodes 0..n-1 and edges a[k]-b[k]."""
    label = np.arange(n, dtype=np.int64)
    if len(a) == 0:
        return label
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    while True:
        la, lb = label[a], label[b]
        m = np.minimum(la, lb)
        before = label.copy()
        np.minimum.at(label, a, m)
        np.minimum.at(label, b, m)
        np.minimum.at(label, la, m)   # move the roots too, so long chains collapse fast
        np.minimum.at(label, lb, m)
        while True:                   # pointer jumping: label of label
            nxt = label[label]
            if np.array_equal(nxt, label):
                break
            label = nxt
        if np.array_equal(label, before):
            return label

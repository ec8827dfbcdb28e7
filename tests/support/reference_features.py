"""Plain per-paragraph definitions of the sieve features that the shipped code computes
faster (per page, per distinct path, from cached parents). The tests swap these in and
demand bit-identical matrices and labels, so speed work can never change output silently."""
from __future__ import annotations

import math
import re
from collections import defaultdict

import numpy as np

from warclake.tasks.extract.boilerplate import features, justext
from warclake.tasks.extract.boilerplate.text import word_units
from warclake.tasks.extract.paragraph import Paragraph

_POS = {c: k for k, c in enumerate(features.PATH_COLS)}


def element_parts(el: str) -> tuple[str, list[str]]:
    """(tag, sub-words of its classes and id), one name at a time."""
    m = re.match(r"[^.#]*", el)
    subs = []
    for name in re.split(r"[.#]", el[m.end():]):
        subs += [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", name)]
    return m.group(0).lower(), subs


def path_vector(path: str) -> np.ndarray:
    v = np.zeros(len(features.PATH_COLS))
    parts = [element_parts(e) for e in path.split(">")]
    tags = [t for t, _ in parts]
    for k, (_, subs) in enumerate(parts):
        for w in subs:
            for g, words in features.PATH_GROUPS.items():
                if w in words:
                    v[_POS["grp_any_" + g]] = 1.0
                    if k >= len(parts) - 2:
                        v[_POS["grp_near_" + g]] = 1.0
    v[_POS["depth"]] = len(tags)
    v[_POS["is_heading"]] = float(any(re.fullmatch(r"h[1-6]", t) for t in tags))
    v[_POS["path_has_class"]] = float("." in path)
    v[_POS["path_has_id"]] = float("#" in path)
    for a in set(tags[:-1]) & set(features.ANCESTOR_TAGS):
        v[_POS["anc_" + a]] = 1.0
    own = "h" if re.fullmatch(r"h[1-6]", tags[-1]) else tags[-1]
    if own in features.OWN_TAGS:
        v[_POS["tag_" + own]] = 1.0
    return v


def path_block(paths: list[str]) -> np.ndarray:
    return np.array([path_vector(q) for q in paths]).reshape(len(paths), len(features.PATH_COLS))


def path_sums(X: np.ndarray, distinct: list[str], inverse: np.ndarray, lens: np.ndarray,
              stops: np.ndarray, links: np.ndarray, total: float) -> None:
    """Per-path sums paragraph by paragraph, over path strings."""
    paths = [distinct[k] for k in inverse]
    col = {n: i for i, n in enumerate(features.NAMES)}
    chars, count, stop, link, under = (defaultdict(float) for _ in range(5))
    for q, L, s, k in zip(paths, lens, stops, links):
        chars[q] += L
        count[q] += 1
        stop[q] += s * L
        link[q] += k * L
        els = q.split(">")
        for up in range(0, 3):  # the path itself, its parent and its grandparent
            if len(els) > up:
                under[">".join(els[:len(els) - up])] += L
    X[:, col["same_path_share"]] = [chars[q] / total for q in paths]
    X[:, col["same_path_count"]] = np.log([count[q] for q in paths])
    X[:, col["parent_share"]] = [under[q.rpartition(">")[0]] / total for q in paths]
    X[:, col["grandparent_share"]] = [under[q.rpartition(">")[0].rpartition(">")[0]] / total for q in paths]
    X[:, col["same_path_stop"]] = [stop[q] / max(chars[q], 1.0) for q in paths]
    X[:, col["same_path_link"]] = [link[q] / max(chars[q], 1.0) for q in paths]


def justext_flags(distinct) -> list[tuple[bool, bool]]:
    return [justext._path_flags(q) for q in distinct]


def context_free_all(prm, has_stoplist, stop_densities, plains, link_counts, in_selects) -> list[str]:
    """jusText's context-free class paragraph by paragraph (``in_selects`` as a path)."""
    return [justext.context_free(Paragraph("body>select" if sel else "body", t), "", prm, has_stoplist, sd, t, k)
            for sd, t, k, sel in zip(stop_densities, plains, link_counts, in_selects)]


def main_container(X: np.ndarray, paths: list[str], lens: np.ndarray, cf: list[str], **_) -> None:
    """Every paragraph adds its weight to every ancestor, one at a time."""
    score: defaultdict = defaultdict(float)
    anc_of = []
    for q, L, c in zip(paths, lens, cf):
        w = L if c in ("good", "near-good") else (-L if c == "bad" else 0.0)
        els = q.split(">")
        prefixes = [">".join(els[:k]) for k in range(2, len(els) + 1)]
        for pre in prefixes:
            score[pre] += w
        anc_of.append(prefixes)
    prose = sum(L for L, c in zip(lens, cf) if c in ("good", "near-good"))
    if not score or prose <= 0:
        return
    best = max(score, key=lambda k: (score[k], k.count(">")))
    col = {n: i for i, n in enumerate(features.NAMES)}
    X[:, col["main_share"]] = score[best] / prose
    for i, prefixes in enumerate(anc_of):
        X[i, col["in_main"]] = float(best in prefixes)
        X[i, col["best_ancestor"]] = max((score[p] for p in prefixes), default=0.0) / prose


def _count(text: str, chars: str) -> int:
    return sum(1 for ch in text if ch in chars)


_UPPER = "".join(chr(c) for c in range(0x500) if chr(c).isupper())


def text_row(t: str) -> tuple[float, ...]:
    """features.TEXT_COLS of one paragraph, by regular expressions and counting."""
    L = len(t)
    n_tok = len(t.split())
    if not L:
        return (0.0,) * len(features.TEXT_COLS)
    n_title = len(re.findall(r"(?:^|(?<=\s))[A-ZÀ-ÖØ-ÞА-ЯЁ]", t))
    sentences = len(re.findall(r"[.!?。！？](?:[\"'”’)\]]*)(?:\s|$)", t))
    return (math.log1p(L), math.log1p(word_units(t)),
            _count(t, ".,;:!?\"'()[]{}-–—…/|»«•·*#>、。，！？：；「」『』（）") / L,
            _count(t, "0123456789") / L, _count(t, _UPPER) / L,
            n_title / n_tok if n_tok else 0.0, math.log1p(sentences),
            float(t.rstrip()[-1:] in ".!?。！？:;\"”"), _count(t, "|»«•·>/:") / L,
            L / n_tok if n_tok else 0.0, math.log1p(t.count("\n")))


def text_columns(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    rows = np.array([text_row(t) for t in texts]).reshape(len(texts), len(features.TEXT_COLS))
    return rows, np.array([word_units(t) for t in texts], dtype=np.int64)


def use_reference(monkeypatch) -> None:
    """Make ``features.matrix`` compute with the plain definitions above."""
    monkeypatch.setattr(features, "_path_block", path_block)
    monkeypatch.setattr(features, "_path_sums", path_sums)
    monkeypatch.setattr(features, "_justext_flags", justext_flags)
    monkeypatch.setattr(justext, "_context_free_all", context_free_all)
    monkeypatch.setattr(features, "_main_container", main_container)
    monkeypatch.setattr(features, "text_columns", text_columns)

"""Paragraph features for the ``sieve`` model: what the seed systems had (length, links,
stop words, markup density, jusText's own classes) plus what they never had — the CSS path
(semantic words in class/id names, ancestor tags, depth, how much of the page's text shares
the path or the parent), position, duplicates, the neighbours' features and the page
structure around the article (``structure``: comment and related sections, records, class
stems inside compound names).

``matrix(paragraphs, lang)`` returns an (n, len(NAMES)) float array; the order of NAMES is
part of the model file's contract (the file stores the names and is checked on load).
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from functools import lru_cache
from itertools import chain

import numpy as np

from warclake.tasks.extract.boilerplate import bte, density, justext, structure
from warclake.tasks.extract.boilerplate.text import link_chars, stopword_density, tag_count
from warclake.tasks.extract.boilerplate.text_columns import text_columns
from warclake.tasks.extract.paragraph import Paragraph

# Semantic groups of class/id sub-words, from common web-template vocabulary.
PATH_GROUPS: dict[str, tuple[str, ...]] = {
    "nav": ("nav", "navbar", "navigation", "menu", "menubar", "breadcrumb", "breadcrumbs",
            "crumbs", "toc", "pager", "pagination", "paging", "tabs", "topnav", "subnav",
            "sitemap", "jump", "skip"),
    "header": ("header", "head", "masthead", "banner", "top", "topbar", "logo", "branding",
               "title"),
    "footer": ("footer", "foot", "bottom", "copyright", "legal", "disclaimer", "colophon"),
    "side": ("sidebar", "side", "aside", "rail", "widget", "widgets", "column", "col",
             "right", "left", "box", "panel", "module", "block", "portlet"),
    "comment": ("comment", "comments", "reply", "replies", "respond", "discussion",
                "feedback", "review", "reviews", "forum", "thread"),
    "social": ("share", "sharing", "social", "facebook", "twitter", "tweet", "like",
               "follow", "rss", "feed", "subscribe", "newsletter", "email", "print"),
    "ad": ("ad", "ads", "advert", "advertisement", "advertising", "sponsor", "sponsored",
           "promo", "promotion", "banner", "dfp", "adsense", "commercial", "partner"),
    "related": ("related", "recommended", "popular", "trending", "more", "also", "recent",
                "latest", "teaser", "tags", "tag", "category", "categories", "archive",
                "archives", "links", "blogroll", "list"),
    "meta": ("meta", "date", "time", "author", "byline", "posted", "info", "source",
             "credit", "caption", "photo", "image", "img", "figure", "thumb"),
    "form": ("search", "login", "signin", "register", "form", "input", "button", "btn",
             "cart", "account", "user", "poll", "vote"),
    "content": ("content", "article", "post", "entry", "story", "body", "text", "main",
                "blog", "news", "page", "primary", "single", "hentry", "prose", "copy",
                "detail", "details", "document", "doc", "paragraph", "para", "lead",
                "intro", "summary", "abstract", "description", "desc"),
}
_WORD_TO_GROUP: dict[str, list[str]] = defaultdict(list)
for _g, _ws in PATH_GROUPS.items():
    for _w in _ws:
        _WORD_TO_GROUP[_w].append(_g)
GROUPS = tuple(PATH_GROUPS)

ANCESTOR_TAGS = ("nav", "header", "footer", "aside", "article", "main", "form", "table",
                 "ul", "ol", "dl", "blockquote", "center", "font", "span", "a", "section")
OWN_TAGS = ("p", "div", "td", "li", "h", "dd", "dt", "th", "body", "pre", "blockquote",
            "span", "font", "b", "center", "a")

_TAG_PART = re.compile(r"[^.#]*")
# Cache sizes: a page has a few hundred distinct paths and pages of one archive seldom share
# a site's templates, so larger caches hold memory (~0.3 KB a path) without many more hits.
PATH_CACHE = 8192
TEXT_CACHE = 16384

_SPLIT_SUBWORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")

BASE = [
    "log_len", "log_words", "link_density", "stop_density", "log_ntags", "markup_density",
    "depth", "is_heading", "punct_ratio", "digit_ratio", "upper_ratio", "titlecase_ratio",
    "sentence_ends", "ends_with_punct", "sep_ratio", "avg_word_len", "n_lines",
    "pos_index", "pos_chars", "log_doc_chars", "log_doc_paras", "dup_count",
    "same_path_share", "same_path_count", "parent_share", "grandparent_share",
    "same_path_stop", "same_path_link", "path_has_class", "path_has_id",
    "jt_cf_bad", "jt_cf_short", "jt_cf_near", "jt_cf_good", "jt_final_good",
    "in_main", "main_share", "best_ancestor",
    "density_good", "bte_good", "dist_jt_good", "chars_to_jt_good",
]
BASE += [f"grp_any_{g}" for g in GROUPS] + [f"grp_near_{g}" for g in GROUPS]
BASE += [f"anc_{t}" for t in ANCESTOR_TAGS] + [f"tag_{t}" for t in OWN_TAGS]
# Neighbour features: a few base columns copied from paragraphs at offsets -2..+2, and
# window means over +-3 and +-10 paragraphs.
CONTEXT_COLS = ("log_len", "link_density", "stop_density", "jt_cf_good", "jt_final_good",
                "markup_density", "grp_any_content", "sentence_ends", "in_main")
OFFSETS = (-2, -1, 1, 2)
WINDOWS = (3, 10)
CORE_NAMES = (*BASE, *(f"{c}@{o:+d}" for o in OFFSETS for c in CONTEXT_COLS),
              *(f"{c}~{w}" for w in WINDOWS for c in CONTEXT_COLS))
# Page-structure columns (comment and related sections, records, compound class stems):
# last; ``with_structure`` adds them to the compiled module's columns.
NAMES = (*CORE_NAMES, *structure.NAMES)
_STRUCTURE = slice(len(CORE_NAMES), len(NAMES))
_IDX = {n: i for i, n in enumerate(NAMES)}


@lru_cache(maxsize=PATH_CACHE)
def _element_parts(el: str) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """(tag, PATH_COLS positions of the groups its class/id sub-words name, as ``grp_any_``
    and as ``grp_near_``) of one path element; cached, as templates repeat elements."""
    m = _TAG_PART.match(el)
    assert m is not None   # (it matches the empty string)
    tag, rest = m.group(0), el[m.end():]
    if not rest:
        return tag.lower(), (), ()
    groups: dict[str, None] = {}
    # "." and "#" are not letters, so the sub-words of the whole rest are those of each name
    for w in _SPLIT_SUBWORDS.findall(rest):
        for g in _WORD_TO_GROUP.get(w.lower(), ()):
            groups[g] = None
    return (tag.lower(), tuple(_PATH_POS["grp_any_" + g] for g in groups),
            tuple(_PATH_POS["grp_near_" + g] for g in groups))


PATH_COLS = (["depth", "is_heading", "path_has_class", "path_has_id"]
             + [f"grp_any_{g}" for g in GROUPS] + [f"grp_near_{g}" for g in GROUPS]
             + [f"anc_{t}" for t in ANCESTOR_TAGS] + [f"tag_{t}" for t in OWN_TAGS])
TEXT_COLS = ["log_len", "log_words", "punct_ratio", "digit_ratio", "upper_ratio",
             "titlecase_ratio", "sentence_ends", "ends_with_punct", "sep_ratio",
             "avg_word_len", "n_lines"]
_PATH_POS = {c: k for k, c in enumerate(PATH_COLS)}
_ANCESTOR_SET = frozenset(ANCESTOR_TAGS)
_OWN_SET = frozenset(OWN_TAGS)
_HEADINGS = frozenset(f"h{i}" for i in range(1, 7))


@lru_cache(maxsize=PATH_CACHE)
def _path_state(path: str) -> tuple:
    """What the path columns need of a path, built from its parent's (cached: siblings share
    their parent, so a new path costs one element): (group columns of any element, tags of
    all elements, depth, any heading, group columns of the last element as near, the same of
    the element before it)."""
    parent, sep, el = path.rpartition(">")
    tag, any_cols, near_cols = _element_parts(el)
    if not sep:
        return frozenset(any_cols), frozenset((tag,)), 1, tag in _HEADINGS, near_cols, ()
    p_any, p_tags, p_depth, p_heading, p_near, _ = _path_state(parent)
    return (p_any.union(any_cols), p_tags | {tag}, p_depth + 1, p_heading or tag in _HEADINGS,
            near_cols, p_near)


@lru_cache(maxsize=PATH_CACHE)
def _path_row(path: str) -> tuple[tuple[int, ...], int]:
    """The path-only columns of a paragraph as (PATH_COLS positions that are 1, depth);
    cached, as templates repeat paths."""
    parent, _, last = path.rpartition(">")
    any_cols, _, depth, heading, near_cols, prev_near = _path_state(path)
    on = set(any_cols)
    on.update(near_cols, prev_near)
    if parent:  # the ancestors' tags: every element's but the paragraph's own
        on.update(_PATH_POS["anc_" + a] for a in _path_state(parent)[1] & _ANCESTOR_SET)
    tag = _element_parts(last)[0]
    own = "h" if tag in _HEADINGS else tag
    if own in _OWN_SET:
        on.add(_PATH_POS["tag_" + own])
    if heading:
        on.add(_PATH_POS["is_heading"])
    if "." in path:
        on.add(_PATH_POS["path_has_class"])
    if "#" in path:
        on.add(_PATH_POS["path_has_id"])
    return tuple(on), depth


def _path_block(paths: list[str]) -> np.ndarray:
    """The PATH_COLS columns of distinct paths, one row each (their order in ``paths``):
    one scatter for the page instead of a vector per path."""
    rows = [_path_row(q) for q in paths]
    B = np.zeros((len(rows), len(PATH_COLS)))
    counts = [len(on) for on, _ in rows]
    B[np.repeat(np.arange(len(rows)), counts), list(chain.from_iterable(on for on, _ in rows))] = 1.0
    B[:, _PATH_POS["depth"]] = [depth for _, depth in rows]
    return B


@lru_cache(maxsize=TEXT_CACHE)
def _stop_density(t: str, lang: str) -> float:
    return stopword_density(t, lang)


_CF_COL = {"bad": "jt_cf_bad", "short": "jt_cf_short", "near-good": "jt_cf_near",
           "good": "jt_cf_good"}


def matrix(paragraphs: list[Paragraph], lang: str) -> np.ndarray:
    """The (n, len(NAMES)) feature matrix of a page's paragraphs: the compiled module's when
    it passed its check on import (``compiled``), else ``python_matrix``'s; both are equal."""
    if _COMPILED is not None:
        return _COMPILED(paragraphs if type(paragraphs) is list else list(paragraphs), lang)
    return python_matrix(paragraphs, lang)


def with_structure(core_matrix, fill=None, core_parts=None):
    """The whole matrix from a function computing the CORE_NAMES columns (the compiled
    module): the structure columns are added by ``fill(X, paths, plains, in_main_column)``
    (the compiled ``sieve_structure``) or else by ``structure``, as in ``python_matrix``.
    With ``fill``, ``core_parts(paragraphs, lang, width)`` (the compiled ``matrix_parts``)
    may stand for ``core_matrix``: it gives the core columns already in a matrix of the
    whole width, and the paths and plain texts it read."""
    in_main = _IDX["in_main"]
    if fill is not None and core_parts is not None:
        width = len(NAMES)

        def full_in_place(paragraphs: list[Paragraph], lang: str) -> np.ndarray:
            X, paths, plains = core_parts(paragraphs, lang, width)
            fill(X, paths, plains, in_main)
            return X
        return full_in_place

    def full(paragraphs: list[Paragraph], lang: str) -> np.ndarray:
        core = core_matrix(paragraphs, lang)
        X = np.empty((core.shape[0], len(NAMES)), dtype=np.float64)
        X[:, :len(CORE_NAMES)] = core
        paths = [p.path for p in paragraphs]
        plains = [p.plain for p in paragraphs]
        if fill is not None:
            fill(X, paths, plains, in_main)
        else:
            X[:, _STRUCTURE] = structure.columns(paths, plains, core[:, in_main])
        return X
    return full


def python_matrix(paragraphs: list[Paragraph], lang: str) -> np.ndarray:
    """The reference of the feature matrix (and the fallback of the compiled one)."""
    n = len(paragraphs)
    X = np.zeros((n, len(NAMES)), dtype=np.float64)
    if n == 0:
        return X
    col = _IDX
    plains = [p.plain for p in paragraphs]
    paths = [p.path for p in paragraphs]
    # distinct paths, numbered in order of appearance: per-path sums and columns are
    # computed once per distinct path and spread back with ``inverse``
    distinct: dict[str, int] = {}
    inverse = np.fromiter([distinct.setdefault(q, len(distinct)) for q in paths], np.intp, n)
    lens = np.array([len(t) for t in plains], dtype=np.float64)
    total = lens.sum() or 1.0
    stops = [_stop_density(t, lang) for t in plains]
    link_counts = [link_chars(p.text) for p in paragraphs]
    links = np.array(link_counts, dtype=np.float64)
    links = np.divide(links, lens, out=np.zeros(n), where=lens > 0)
    flags = _justext_flags(distinct)
    jt_cf, jt_final = justext.classify_detailed(paragraphs, lang, stop_densities=stops,
                                                plains=plains, link_counts=link_counts,
                                                path_flags=[flags[k] for k in inverse.tolist()])
    text_cols, units = text_columns(plains)
    X[:, [col[c] for c in TEXT_COLS]] = text_cols
    X[:, [col[c] for c in PATH_COLS]] = _path_block(list(distinct))[inverse]
    X[:, col["link_density"]] = links
    X[:, col["stop_density"]] = stops
    ntags = np.array([tag_count(p.n_tags) for p in paragraphs], dtype=np.float64)
    X[:, col["log_ntags"]] = np.log1p(ntags)
    X[:, col["markup_density"]] = (lens + 1) / (lens + ntags * density.MARKUP_CHARS_PER_TAG + 1)
    X[:, col["density_good"]] = [lab == "good" for lab in density.classify(paragraphs, lang, plains)]
    X[:, col["bte_good"]] = [lab == "good" for lab in bte.classify(paragraphs, lang, units.tolist())]
    X[:, col["jt_final_good"]] = [lab == "good" for lab in jt_final]
    for i, c in enumerate(jt_cf):
        X[i, col[_CF_COL[c]]] = 1.0
    cum = np.concatenate([[0.0], np.cumsum(lens)])
    X[:, col["pos_index"]] = np.arange(n) / max(n - 1, 1)
    X[:, col["pos_chars"]] = cum[:-1] / total
    X[:, col["log_doc_chars"]] = math.log1p(total)
    X[:, col["log_doc_paras"]] = math.log1p(n)
    dup = Counter(plains)
    X[:, col["dup_count"]] = [math.log(dup[t]) for t in plains]
    _path_sums(X, list(distinct), inverse, lens, np.array(stops), links, total)
    _main_container(X, paths, lens, jt_cf, distinct=distinct, inverse=inverse)
    # distance to the nearest context-free good paragraph (in paragraphs and characters)
    good_idx = [i for i, c in enumerate(jt_cf) if c == "good"]
    if good_idx:
        g = np.array(good_idx)
        idx = np.arange(n)
        pos = np.searchsorted(g, idx)
        left = g[np.clip(pos - 1, 0, len(g) - 1)]
        right = g[np.clip(pos, 0, len(g) - 1)]
        d = np.minimum(np.abs(idx - left), np.abs(right - idx))
        X[:, col["dist_jt_good"]] = np.log1p(d)
        dc = np.minimum(np.abs(cum[idx] - cum[left]), np.abs(cum[right] - cum[idx]))
        X[:, col["chars_to_jt_good"]] = np.log1p(dc)
    else:
        X[:, col["dist_jt_good"]] = math.log1p(n)
        X[:, col["chars_to_jt_good"]] = math.log1p(total)
    _add_context(X)
    X[:, _STRUCTURE] = structure.columns(paths, plains, X[:, col["in_main"]])
    return X


def _justext_flags(distinct: dict[str, int]) -> list[tuple[bool, bool]]:
    """jusText's path flags (a heading, inside a select) of each distinct path, from the
    cached path states instead of parsing each path again."""
    return [(state[3], "select" in state[1]) for state in map(_path_state, distinct)]


def _path_sums(X: np.ndarray, distinct: list[str], inverse: np.ndarray, lens: np.ndarray,
               stops: np.ndarray, links: np.ndarray, total: float) -> None:
    """How much of the page's text shares a paragraph's path, or sits under its parent /
    grandparent, and the stop-word and link densities of its path's text. bincount adds in
    paragraph order, so the weighted sums are those of a plain loop, bit for bit."""
    col = _IDX
    m = len(distinct)
    chars = np.bincount(inverse, weights=lens, minlength=m)
    count = np.bincount(inverse, minlength=m)
    stop = np.bincount(inverse, weights=stops * lens, minlength=m)
    link = np.bincount(inverse, weights=links * lens, minlength=m)
    # Text under a prefix: its own paragraphs' and those one and two levels below. Character
    # counts are whole numbers, so these sums are exact in any order.
    ids = {q: k for k, q in enumerate(distinct)}
    parent_id, grand_id = [], []
    for q in distinct:
        par = q.rpartition(">")[0]
        gra = par.rpartition(">")[0]
        parent_id.append(ids.setdefault(par, len(ids)) if par else -1)
        grand_id.append(ids.setdefault(gra, len(ids)) if gra else -1)
    under = np.zeros(len(ids) + 1)   # the last slot stands for "no such prefix": 0 chars
    under[:m] = chars
    par_ix, gra_ix = np.array(parent_id, dtype=np.intp), np.array(grand_id, dtype=np.intp)
    np.add.at(under, par_ix, chars)
    np.add.at(under, gra_ix, chars)
    under[-1] = 0.0
    X[:, col["same_path_share"]] = (chars / total)[inverse]
    X[:, col["same_path_count"]] = np.log(count)[inverse]
    X[:, col["parent_share"]] = (under[par_ix] / total)[inverse]
    X[:, col["grandparent_share"]] = (under[gra_ix] / total)[inverse]
    per_char = np.maximum(chars, 1.0)
    X[:, col["same_path_stop"]] = (stop / per_char)[inverse]
    X[:, col["same_path_link"]] = (link / per_char)[inverse]


@lru_cache(maxsize=PATH_CACHE)
def _prefixes(path: str) -> tuple[str, ...]:
    """Every ancestor path of a paragraph below body, outermost first, itself included
    (built from the parent's, which siblings share)."""
    parent, sep, _ = path.rpartition(">")
    if not sep:
        return ()
    return _prefixes(parent) + (path,)


def _main_container(X: np.ndarray, paths: list[str], lens: np.ndarray, cf: list[str], *,
                    distinct: dict[str, int], inverse: np.ndarray) -> None:
    """Readability's idea on paths: the ancestor under which prose (jusText good / near-good
    text) most outweighs boilerplate (jusText bad text) is the main container."""
    # Weights are summed per distinct path first: templates repeat paths, and sums of whole
    # character counts are exact in any order.
    cls = np.array(cf)
    prose_mask = (cls == "good") | (cls == "near-good")
    w = np.where(prose_mask, lens, np.where(cls == "bad", -lens, 0.0))
    weight = np.bincount(inverse, weights=w, minlength=len(distinct))
    prose = float(lens[prose_mask].sum())
    score: dict[str, float] = {}
    for q, wq in zip(distinct, weight.tolist()):
        for pre in _prefixes(q):
            score[pre] = score.get(pre, 0.0) + wq
    if not score or prose <= 0:
        return
    # best container: highest score; the deeper one on ties (it excludes more)
    best = max(score, key=lambda k: (score[k], k.count(">")))
    col = _IDX
    X[:, col["main_share"]] = score[best] / prose
    per_path = np.array([(float(best in _prefixes(q)),
                          max((score[p] for p in _prefixes(q)), default=0.0) / prose)
                         for q in distinct]).reshape(len(distinct), 2)
    X[:, [col["in_main"], col["best_ancestor"]]] = per_path[inverse]


def _add_context(X: np.ndarray) -> None:
    n = X.shape[0]
    src = np.stack([X[:, _IDX[c]] for c in CONTEXT_COLS], axis=1)
    for o in OFFSETS:
        shifted = np.full_like(src, -1.0)     # -1 marks "beyond the document edge"
        if o < 0 and n > -o:
            shifted[-o:] = src[:o]
        elif o > 0 and n > o:
            shifted[:-o] = src[o:]
        for k, c in enumerate(CONTEXT_COLS):
            X[:, _IDX[f"{c}@{o:+d}"]] = shifted[:, k]
    csum = np.vstack([np.zeros((1, src.shape[1])), np.cumsum(src, axis=0)])
    idx = np.arange(n)
    for w in WINDOWS:
        lo = np.clip(idx - w, 0, n)
        hi = np.clip(idx + w + 1, 0, n)
        means = (csum[hi] - csum[lo]) / (hi - lo)[:, None]
        for k, c in enumerate(CONTEXT_COLS):
            X[:, _IDX[f"{c}~{w}"]] = means[:, k]


# The compiled matrix, chosen once per process (see ``compiled``); None: the Python one.
from warclake.tasks.extract.boilerplate import compiled as _compiled  # noqa: E402 - it reads this module's tables

_COMPILED = _compiled.choose_matrix()

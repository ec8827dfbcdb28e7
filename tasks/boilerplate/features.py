"""Paragraph features for the ``sieve`` model: what the seed systems had (length, links,
stop words, markup density, jusText's own classes) plus what they never had — the CSS path
(semantic words in class/id names, ancestor tags, depth, how much of the page's text shares
the path or the parent), position, duplicates and the neighbours' features.

``matrix(paragraphs, lang)`` returns an (n, len(NAMES)) float array; the order of NAMES is
part of the model file's contract (the file stores the names and is checked on load).
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from functools import lru_cache

import numpy as np

from warclake.tasks.paragraph import Paragraph

from . import bte, density, justext
from .text import link_chars, stopword_density, word_units

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

_SPLIT_SUBWORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_SENT_END = re.compile(r"[.!?。！？](?:[\"'”’)\]]*)(?:\s|$)")

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
NAMES = list(BASE)
NAMES += [f"{c}@{o:+d}" for o in OFFSETS for c in CONTEXT_COLS]
NAMES += [f"{c}~{w}" for w in WINDOWS for c in CONTEXT_COLS]
NAMES = tuple(NAMES)
_IDX = {n: i for i, n in enumerate(NAMES)}


@lru_cache(maxsize=16384)
def _element_parts(el: str) -> tuple[str, tuple[str, ...]]:
    """(tag, sub-words of its classes and id) of one path element."""
    m = re.match(r"[^.#]*", el)
    tag, rest = m.group(0), el[m.end():]
    subs = []
    for name in re.split(r"[.#]", rest):
        for w in _SPLIT_SUBWORDS.findall(name):
            subs.append(w.lower())
    return tag.lower(), tuple(subs)


PATH_COLS = (["depth", "is_heading", "path_has_class", "path_has_id"]
             + [f"grp_any_{g}" for g in GROUPS] + [f"grp_near_{g}" for g in GROUPS]
             + [f"anc_{t}" for t in ANCESTOR_TAGS] + [f"tag_{t}" for t in OWN_TAGS])
TEXT_COLS = ["log_len", "log_words", "punct_ratio", "digit_ratio", "upper_ratio",
             "titlecase_ratio", "sentence_ends", "ends_with_punct", "sep_ratio",
             "avg_word_len", "n_lines"]
_PATH_POS = {c: k for k, c in enumerate(PATH_COLS)}


@lru_cache(maxsize=16384)
def _path_vector(path: str) -> np.ndarray:
    """The path-only columns of a paragraph (cached: templates repeat paths)."""
    v = np.zeros(len(PATH_COLS))
    parts = [_element_parts(e) for e in path.split(">")]
    tags = [t for t, _ in parts]
    for k, (_, subs) in enumerate(parts):
        for w in subs:
            for g in _WORD_TO_GROUP.get(w, ()):
                v[_PATH_POS["grp_any_" + g]] = 1.0
                if k >= len(parts) - 2:
                    v[_PATH_POS["grp_near_" + g]] = 1.0
    v[_PATH_POS["depth"]] = len(tags)
    v[_PATH_POS["is_heading"]] = float(any(re.fullmatch(r"h[1-6]", t) for t in tags))
    v[_PATH_POS["path_has_class"]] = float("." in path)
    v[_PATH_POS["path_has_id"]] = float("#" in path)
    for a in set(tags[:-1]) & set(ANCESTOR_TAGS):
        v[_PATH_POS["anc_" + a]] = 1.0
    own = "h" if re.fullmatch(r"h[1-6]", tags[-1]) else tags[-1]
    if own in OWN_TAGS:
        v[_PATH_POS["tag_" + own]] = 1.0
    return v


def _count(text: str, table: dict) -> int:
    return len(text) - len(text.translate(table))


_PUNCT_T = dict.fromkeys(map(ord, ".,;:!?\"'()[]{}-–—…/|»«•·*#>、。，！？：；「」『』（）"), None)
_DIGIT_T = dict.fromkeys(map(ord, "0123456789"), None)
_UPPER_T = dict.fromkeys((c for c in range(0x500) if chr(c).isupper()), None)
_SEP_T = dict.fromkeys(map(ord, "|»«•·>/:"), None)
_TITLE_UP = re.compile(r"(?:^|(?<=\s))[A-ZÀ-ÖØ-ÞА-ЯЁ]")


@lru_cache(maxsize=65536)
def _text_row(t: str) -> tuple[float, ...]:
    """The text-only columns (cached: navigation text repeats across a site's pages)."""
    L = len(t)
    n_tok = len(t.split())
    if not L:
        return (0.0,) * len(TEXT_COLS)
    n_title = len(_TITLE_UP.findall(t))
    return (math.log1p(L), math.log1p(word_units(t)), _count(t, _PUNCT_T) / L,
            _count(t, _DIGIT_T) / L, _count(t, _UPPER_T) / L,
            n_title / n_tok if n_tok else 0.0, math.log1p(len(_SENT_END.findall(t))),
            float(t.rstrip()[-1:] in ".!?。！？:;\"”"), _count(t, _SEP_T) / L,
            L / n_tok if n_tok else 0.0, math.log1p(t.count("\n")))


@lru_cache(maxsize=65536)
def _stop_density(t: str, lang: str) -> float:
    return stopword_density(t, lang)


_CF_COL = {"bad": "jt_cf_bad", "short": "jt_cf_short", "near-good": "jt_cf_near",
           "good": "jt_cf_good"}


def matrix(paragraphs: list[Paragraph], lang: str) -> np.ndarray:
    n = len(paragraphs)
    X = np.zeros((n, len(NAMES)), dtype=np.float64)
    if n == 0:
        return X
    col = _IDX
    plains = [p.plain for p in paragraphs]
    paths = [p.path for p in paragraphs]
    lens = np.array([len(t) for t in plains], dtype=np.float64)
    total = lens.sum() or 1.0
    stops = [_stop_density(t, lang) for t in plains]
    links = np.array([link_chars(p.text) for p in paragraphs], dtype=np.float64)
    links = np.divide(links, lens, out=np.zeros(n), where=lens > 0)
    jt_cf, jt_final = justext.classify_detailed(paragraphs, lang, stop_densities=stops)
    X[:, [col[c] for c in TEXT_COLS]] = np.array([_text_row(t) for t in plains])
    X[:, [col[c] for c in PATH_COLS]] = np.array([_path_vector(q) for q in paths])
    X[:, col["link_density"]] = links
    X[:, col["stop_density"]] = stops
    ntags = np.array([p.n_tags for p in paragraphs], dtype=np.float64)
    X[:, col["log_ntags"]] = np.log1p(ntags)
    X[:, col["markup_density"]] = (lens + 1) / (lens + ntags * density.MARKUP_CHARS_PER_TAG + 1)
    X[:, col["density_good"]] = [lab == "good" for lab in density.classify(paragraphs, lang)]
    X[:, col["bte_good"]] = [lab == "good" for lab in bte.classify(paragraphs, lang)]
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
    # how much of the page's text shares this path, or sits under the parent / grandparent
    path_chars: Counter = Counter()
    path_count: Counter = Counter()
    path_stop: defaultdict = defaultdict(float)
    path_link: defaultdict = defaultdict(float)
    prefix_chars: Counter = Counter()
    parents, grands = [], []
    for i, q in enumerate(paths):
        L = lens[i]
        path_chars[q] += L
        path_count[q] += 1
        path_stop[q] += stops[i] * L
        path_link[q] += links[i] * L
        prefix_chars[q] += L
        par = q.rpartition(">")[0]
        gra = par.rpartition(">")[0]
        parents.append(par)
        grands.append(gra)
        if par:
            prefix_chars[par] += L
            if gra:
                prefix_chars[gra] += L
    pc = np.array([path_chars[q] for q in paths])
    X[:, col["same_path_share"]] = pc / total
    X[:, col["same_path_count"]] = np.log([path_count[q] for q in paths])
    X[:, col["parent_share"]] = [prefix_chars[q] / total for q in parents]
    X[:, col["grandparent_share"]] = [prefix_chars[q] / total for q in grands]
    pcs = np.maximum(pc, 1.0)
    X[:, col["same_path_stop"]] = np.array([path_stop[q] for q in paths]) / pcs
    X[:, col["same_path_link"]] = np.array([path_link[q] for q in paths]) / pcs
    _main_container(X, paths, lens, jt_cf)
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
    return X


def _main_container(X: np.ndarray, paths: list[str], lens: np.ndarray, cf: list[str]) -> None:
    """Readability's idea on paths: the ancestor under which prose (jusText good / near-good
    text) most outweighs boilerplate (jusText bad text) is the main container."""
    score: defaultdict = defaultdict(float)
    anc_of = []
    for q, L, c in zip(paths, lens, cf):
        w = L if c in ("good", "near-good") else (-L if c == "bad" else 0.0)
        els = q.split(">")
        prefixes = []
        pre = els[0]
        for e in els[1:]:
            pre = pre + ">" + e
            prefixes.append(pre)
        for pre in prefixes:
            score[pre] += w
        anc_of.append(prefixes)
    prose = sum(L for L, c in zip(lens, cf) if c in ("good", "near-good"))
    if not score or prose <= 0:
        return
    # best container: highest score; the deeper one on ties (it excludes more)
    best = max(score, key=lambda k: (score[k], k.count(">")))
    col = _IDX
    X[:, col["main_share"]] = score[best] / prose
    for i, prefixes in enumerate(anc_of):
        X[i, col["in_main"]] = float(best in prefixes)
        X[i, col["best_ancestor"]] = max((score[p] for p in prefixes), default=0.0) / prose


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

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

import numpy as np

from tasks.paragraph import Paragraph

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
_PUNCT_RE = re.compile(r"[.,;:!?\"'()\[\]{}\-–—…/|»«•·*#>、。，！？：；「」『』（）]")
_DIGIT_RE = re.compile(r"\d")
_UPPER_RE = re.compile(r"[A-ZÀ-ÖØ-ÞĀ-ſА-ЯЁ]")
_SEP_RE = re.compile(r"[|»«•·>/:]")
_SENT_END = re.compile(r"[.!?。！？](?:[\"'”’)\]]*)(?:\s|$)")

BASE = [
    "log_len", "log_words", "link_density", "stop_density", "log_ntags", "markup_density",
    "depth", "is_heading", "punct_ratio", "digit_ratio", "upper_ratio", "titlecase_ratio",
    "sentence_ends", "ends_with_punct", "sep_ratio", "avg_word_len", "n_lines",
    "pos_index", "pos_chars", "log_doc_chars", "log_doc_paras", "dup_count",
    "same_path_share", "same_path_count", "parent_share", "grandparent_share",
    "same_path_stop", "same_path_link", "path_has_class", "path_has_id",
    "jt_cf_bad", "jt_cf_short", "jt_cf_near", "jt_cf_good", "jt_final_good",
    "density_good", "bte_good", "dist_jt_good", "chars_to_jt_good",
]
BASE += [f"grp_any_{g}" for g in GROUPS] + [f"grp_near_{g}" for g in GROUPS]
BASE += [f"anc_{t}" for t in ANCESTOR_TAGS] + [f"tag_{t}" for t in OWN_TAGS]
# Neighbour features: a few base columns copied from paragraphs at offsets -2..+2, and
# window means over +-3 and +-10 paragraphs.
CONTEXT_COLS = ("log_len", "link_density", "stop_density", "jt_cf_good", "jt_final_good",
                "markup_density", "grp_any_content", "sentence_ends")
OFFSETS = (-2, -1, 1, 2)
WINDOWS = (3, 10)
NAMES = list(BASE)
NAMES += [f"{c}@{o:+d}" for o in OFFSETS for c in CONTEXT_COLS]
NAMES += [f"{c}~{w}" for w in WINDOWS for c in CONTEXT_COLS]
NAMES = tuple(NAMES)
_IDX = {n: i for i, n in enumerate(NAMES)}


def _element_parts(el: str) -> tuple[str, list[str]]:
    """(tag, sub-words of its classes and id) of one path element."""
    tag, _, rest = el.partition(".") if "." in el.split("#", 1)[0] else el.partition("#")
    if "#" in tag:
        tag = tag.split("#", 1)[0]
    subs = []
    for name in re.split(r"[.#]", rest):
        for w in _SPLIT_SUBWORDS.findall(name):
            subs.append(w.lower())
    return tag.lower(), subs


def _path_info(path: str, cache: dict) -> tuple:
    info = cache.get(path)
    if info is None:
        els = path.split(">")
        parts = [_element_parts(e) for e in els]
        tags = [t for t, _ in parts]
        any_groups, near_groups = set(), set()
        for k, (_, subs) in enumerate(parts):
            for w in subs:
                for g in _WORD_TO_GROUP.get(w, ()):
                    any_groups.add(g)
                    if k >= len(parts) - 2:
                        near_groups.add(g)
        info = (tags, any_groups, near_groups, "." in path, "#" in path)
        cache[path] = info
    return info


def matrix(paragraphs: list[Paragraph], lang: str) -> np.ndarray:
    n = len(paragraphs)
    X = np.zeros((n, len(NAMES)), dtype=np.float64)
    if n == 0:
        return X
    plains = [p.plain for p in paragraphs]
    lens = np.array([len(t) for t in plains], dtype=np.float64)
    total = lens.sum() or 1.0
    cache: dict = {}
    stops = [stopword_density(t, lang) for t in plains]
    jt_cf, jt_final = justext.classify_detailed(paragraphs, lang, stop_densities=stops)
    dens_lab = density.classify(paragraphs, lang)
    bte_lab = bte.classify(paragraphs, lang)
    dup = Counter(plains)
    parents = [p.path.rsplit(">", 1)[0] for p in paragraphs]
    grands = [q.rsplit(">", 1)[0] for q in parents]
    path_chars: Counter = Counter()
    path_count: Counter = Counter()
    path_stop: defaultdict = defaultdict(float)
    path_link: defaultdict = defaultdict(float)
    prefix_chars: Counter = Counter()
    links = [0.0] * n
    for i, p in enumerate(paragraphs):
        L = lens[i]
        links[i] = link_chars(p.text) / L if L else 0.0
        path_chars[p.path] += L
        path_count[p.path] += 1
        path_stop[p.path] += stops[i] * L
        path_link[p.path] += links[i] * L
        # text under every ancestor prefix, for the parent / grandparent shares
        q = p.path
        for _ in range(3):
            prefix_chars[q] += L
            if ">" not in q:
                break
            q = q.rsplit(">", 1)[0]
    good_idx = [i for i, c in enumerate(jt_cf) if c == "good"]
    cum = np.concatenate([[0.0], np.cumsum(lens)])
    col = _IDX
    for i, p in enumerate(paragraphs):
        t = plains[i]
        L = lens[i]
        row = X[i]
        wu = word_units(t)
        toks = t.split()
        row[col["log_len"]] = math.log1p(L)
        row[col["log_words"]] = math.log1p(wu)
        row[col["link_density"]] = links[i]
        row[col["stop_density"]] = stops[i]
        row[col["log_ntags"]] = math.log1p(p.n_tags)
        row[col["markup_density"]] = density.density(p)
        tags, anyg, nearg, has_cls, has_id = _path_info(p.path, cache)
        row[col["depth"]] = len(tags)
        row[col["is_heading"]] = float(justext.is_heading(p))
        if L:
            row[col["punct_ratio"]] = len(_PUNCT_RE.findall(t)) / L
            row[col["digit_ratio"]] = len(_DIGIT_RE.findall(t)) / L
            row[col["upper_ratio"]] = len(_UPPER_RE.findall(t)) / L
            row[col["sep_ratio"]] = len(_SEP_RE.findall(t)) / L
        if toks:
            row[col["titlecase_ratio"]] = sum(w[:1].isupper() for w in toks) / len(toks)
            row[col["avg_word_len"]] = L / len(toks)
        row[col["sentence_ends"]] = math.log1p(len(_SENT_END.findall(t)))
        row[col["ends_with_punct"]] = float(t.rstrip()[-1:] in ".!?。！？:;\"”")
        row[col["n_lines"]] = math.log1p(t.count("\n"))
        row[col["pos_index"]] = i / max(n - 1, 1)
        row[col["pos_chars"]] = cum[i] / total
        row[col["log_doc_chars"]] = math.log1p(total)
        row[col["log_doc_paras"]] = math.log1p(n)
        row[col["dup_count"]] = math.log(dup[t])
        row[col["same_path_share"]] = path_chars[p.path] / total
        row[col["same_path_count"]] = math.log(path_count[p.path])
        row[col["parent_share"]] = prefix_chars[parents[i]] / total
        row[col["grandparent_share"]] = prefix_chars[grands[i]] / total
        pc = path_chars[p.path] or 1.0
        row[col["same_path_stop"]] = path_stop[p.path] / pc
        row[col["same_path_link"]] = path_link[p.path] / pc
        row[col["path_has_class"]] = float(has_cls)
        row[col["path_has_id"]] = float(has_id)
        row[col["jt_cf_" + {"bad": "bad", "short": "short", "near-good": "near",
                            "good": "good"}[jt_cf[i]]]] = 1.0
        row[col["jt_final_good"]] = float(jt_final[i] == "good")
        row[col["density_good"]] = float(dens_lab[i] == "good")
        row[col["bte_good"]] = float(bte_lab[i] == "good")
        for g in anyg:
            row[col["grp_any_" + g]] = 1.0
        for g in nearg:
            row[col["grp_near_" + g]] = 1.0
        tagset = set(tags[:-1])
        for a in ANCESTOR_TAGS:
            if a in tagset:
                row[col["anc_" + a]] = 1.0
        own = tags[-1]
        own = "h" if re.fullmatch(r"h[1-6]", own) else own
        if own in OWN_TAGS:
            row[col["tag_" + own]] = 1.0
    # distance to the nearest context-free good paragraph (in paragraphs and characters)
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

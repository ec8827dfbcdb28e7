"""jusText (Pomikálek 2011) on the extractor's paragraphs — no second HTML parse.

Stages, as published:

1. Preprocessing: paragraphs inside ``<select>`` and paragraphs containing ``©`` are bad.
   (``<head>``, ``<style>``, ``<script>`` never become paragraphs in our extractor.)
2. Context-free classes bad / short / near-good / good from length (characters), link
   density (characters inside links / length) and stop-word density.
3. Heading preprocessing: a *short* heading followed within MAX_HEADING_DISTANCE characters
   by a good paragraph becomes near-good.
4. Context-sensitive pass over each run of short / near-good paragraphs between two
   anchors (good or bad; the document edges count as bad): good–good -> all good, bad–bad
   -> all bad; good–bad -> the near-good paragraph closest to the bad side splits the run,
   the paragraphs between it and the bad anchor are bad, it and the rest good; a run with no
   near-good paragraph next to a bad anchor is bad.
5. Heading postprocessing: a heading that ended bad but was not context-free bad becomes
   good when a good paragraph follows within MAX_HEADING_DISTANCE characters (one pass, not
   iterated).

Languages without a shipped stoplist: there is no stop-word evidence, so the stop-word
tests are skipped (as jusText's language-independent mode does with empty thresholds):
medium paragraphs are near-good and long ones good unless their links say otherwise.

Japanese / Chinese: words are not space-separated, so ``stopword density`` is the
function-character density (``text.function_char_density``) and length thresholds are in
characters scaled for CJK: one CJK character carries roughly what 2.5–3 Latin letters do
(English averages ~6 characters per word with its space, Japanese and Chinese ~2 per word),
so LENGTH_LOW 70 / LENGTH_HIGH 200 become 25 / 70 characters. The function-character
bounds (ja 0.18 / 0.20, zh 0.12 / 0.14 of CJK characters) were set a priori from the
grammar — in running Japanese roughly every fourth or fifth character is a particle or an
inflection kana, in Chinese roughly every sixth a function character — and then checked,
not fitted, on the Readability CJK test pages (hukumusume, yahoo-4, qq, gmw, pixnet):
main-text paragraphs have median densities 0.17–0.31, other paragraphs 0.04–0.20, and
jusText with this design scores token F1 0.80 there against 0.42 without it
(``python -m tools.measure.justext_cjk``; smoke level, numbers in reports/boilerplate_eval.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from warclake.tasks.extract.boilerplate.text import CJK_LANGS, link_chars, stoplist, stopword_density
from warclake.tasks.extract.paragraph import Paragraph

MAX_LINK_DENSITY = 0.2
LENGTH_LOW = 70
LENGTH_HIGH = 200
STOPWORDS_LOW = 0.30
STOPWORDS_HIGH = 0.32
MAX_HEADING_DISTANCE = 200

# CJK: lengths in characters (see module docstring) and function-character density bounds.
CJK_LENGTH_LOW = 25
CJK_LENGTH_HIGH = 70
CJK_FUNC_LOW = {"ja": 0.18, "zh": 0.12}
CJK_FUNC_HIGH = {"ja": 0.20, "zh": 0.14}

_HEADING = re.compile(r"^h[1-6]$")


@dataclass(frozen=True)
class Params:
    max_link_density: float = MAX_LINK_DENSITY
    length_low: int = LENGTH_LOW
    length_high: int = LENGTH_HIGH
    stopwords_low: float = STOPWORDS_LOW
    stopwords_high: float = STOPWORDS_HIGH
    max_heading_distance: int = MAX_HEADING_DISTANCE
    no_headings: bool = False


def params_for(lang: str, base: Params | None = None) -> Params:
    base = base or Params()
    if lang in CJK_LANGS:
        return Params(base.max_link_density, CJK_LENGTH_LOW, CJK_LENGTH_HIGH,
                      CJK_FUNC_LOW[lang], CJK_FUNC_HIGH[lang],
                      base.max_heading_distance, base.no_headings)
    return base


_TAG_OF = re.compile(r"(?:^|>)([^.#>]*)")


@lru_cache(maxsize=8192)
def path_tags(path: str) -> tuple[str, ...]:
    # lower() maps character by character and never makes ".", "#" or ">", so lowering
    # the whole path first gives each tag lowered
    return tuple(_TAG_OF.findall(path.lower()))


@lru_cache(maxsize=8192)
def _path_flags(path: str) -> tuple[bool, bool]:
    tags = path_tags(path)
    return any(map(_HEADING.match, tags)), "select" in tags


def in_select(p: Paragraph) -> bool:
    return _path_flags(p.path)[1]


def context_free(p: Paragraph, lang: str, prm: Params, has_stoplist: bool,
                 stop_density: float | None = None, plain: str | None = None,
                 n_link: int | None = None) -> str:
    """One paragraph's context-free class; ``stop_density``, its ``plain`` text and its
    link characters may be passed in precomputed."""
    text = p.plain if plain is None else plain
    length = len(text.strip())
    if "©" in text or in_select(p):
        return "bad"
    if n_link is None:
        n_link = link_chars(p.text)
    link_density = n_link / length if length else 0.0
    if link_density > prm.max_link_density:
        return "bad"
    if length < prm.length_low:
        return "bad" if n_link > 0 else "short"
    if not has_stoplist:
        return "good" if length > prm.length_high else "near-good"
    sd = stopword_density(text, lang) if stop_density is None else stop_density
    if sd > prm.stopwords_high:
        return "good" if length > prm.length_high else "near-good"
    if sd > prm.stopwords_low:
        return "near-good"
    return "bad"


_CLASSES = np.array(["bad", "short", "near-good", "good"], dtype=object)
_BAD, _SHORT, _NEAR, _GOOD = range(4)


def _context_free_all(prm: Params, has_stoplist: bool, stop_densities: list[float],
                      plains: list[str], link_counts: list[int], in_selects: list[bool]) -> list[str]:
    """``context_free`` of every paragraph of a page at once (same rules, same order of
    tests, as arrays): the sieve features pass every input precomputed."""
    length = np.array([len(t.strip()) for t in plains], dtype=np.int64)
    n_link = np.array(link_counts, dtype=np.int64)
    density = np.divide(n_link, length, out=np.zeros(len(length)), where=length > 0)
    sd = np.array(stop_densities, dtype=np.float64)
    long = length > prm.length_high
    if has_stoplist:
        rich = np.where(sd > prm.stopwords_high, np.where(long, _GOOD, _NEAR),
                        np.where(sd > prm.stopwords_low, _NEAR, _BAD))
    else:
        rich = np.where(long, _GOOD, _NEAR)
    short = np.where(n_link > 0, _BAD, _SHORT)
    cls = np.where(length < prm.length_low, short, rich)
    cls[density > prm.max_link_density] = _BAD
    cls[["©" in t for t in plains]] = _BAD
    cls[in_selects] = _BAD
    return _CLASSES[cls].tolist()


def _good_follows(i: int, classes: list[str], lengths: list[int], max_dist: int) -> bool:
    dist = 0
    for j in range(i + 1, len(classes)):
        if classes[j] == "good":
            return True
        dist += lengths[j]
        if dist > max_dist:
            return False
    return False


def context_sensitive(classes: list[str]) -> list[str]:
    """Resolve short / near-good runs between good / bad anchors (edges count as bad)."""
    out = list(classes)
    n = len(out)
    i = 0
    while i < n:
        if out[i] in ("good", "bad"):
            i += 1
            continue
        j = i
        while j < n and out[j] not in ("good", "bad"):
            j += 1
        left = out[i - 1] if i > 0 else "bad"
        right = out[j] if j < n else "bad"
        run = range(i, j)
        if left == right:
            for k in run:
                out[k] = left
        else:
            near = [k for k in run if classes[k] == "near-good"]
            if not near:
                for k in run:
                    out[k] = "bad"
            else:
                # The near-good paragraph nearest the bad anchor is the boundary.
                pivot = near[0] if left == "bad" else near[-1]
                for k in run:
                    bad_side = k < pivot if left == "bad" else k > pivot
                    out[k] = "bad" if bad_side else "good"
        i = j
    return out


def classify_detailed(paragraphs: list[Paragraph], lang: str, prm: Params | None = None,
                      stop_densities: list[float] | None = None, plains: list[str] | None = None,
                      link_counts: list[int] | None = None,
                      path_flags: list[tuple[bool, bool]] | None = None) -> tuple[list[str], list[str]]:
    """(context-free classes, final labels) — the model uses both as features. The
    paragraphs' stop-word densities, plain texts, link characters and path flags (is a
    heading, is inside a select) may come precomputed."""
    prm = params_for(lang, prm)
    has_stops = bool(stoplist(lang))
    n = len(paragraphs)
    sds: Sequence[float | None] = stop_densities or [None] * n
    plains = plains or [p.plain for p in paragraphs]
    links: Sequence[int | None] = link_counts or [None] * n
    if path_flags is None:
        path_flags = [_path_flags(p.path) for p in paragraphs]
    if stop_densities is not None and link_counts is not None:
        cf = _context_free_all(prm, has_stops, stop_densities, plains, link_counts,
                               [sel for _, sel in path_flags])
    else:
        cf = [context_free(p, lang, prm, has_stops, sd, t, k)
              for p, sd, t, k in zip(paragraphs, sds, plains, links)]
    lengths = [len(t) for t in plains]
    heads = [False] * len(paragraphs) if prm.no_headings else [head for head, _ in path_flags]
    pre = list(cf)
    for i, c in enumerate(cf):
        if heads[i] and c == "short" and _good_follows(i, pre, lengths, prm.max_heading_distance):
            pre[i] = "near-good"
    final = context_sensitive(pre)
    for i in range(len(final)):
        if (heads[i] and final[i] == "bad" and cf[i] != "bad"
                and _good_follows(i, final, lengths, prm.max_heading_distance)):
            final[i] = "good"
    return cf, final


def classify(paragraphs: list[Paragraph], lang: str, prm: Params | None = None) -> list[str]:
    return classify_detailed(paragraphs, lang, prm)[1]

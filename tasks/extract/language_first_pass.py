"""The first-pass language identifier: settles the Latin-script and Cyrillic texts that
lingua's own trigram models give one language by a wide margin, and hands lingua the rest.

Knowledge: lingua's low-accuracy (trigram) models of the 49 Latin-script and 8 Cyrillic
languages, read from the installed lingua package (:mod:`language_models`; ~1 s, ~10 MB) once
per installation and user, then from the user's cache (:mod:`trigram_cache`; ~20 ms), as
penalties -ln(frequency) * SCALE per trigram and language.

Scoring: the words of the text (runs of Latin or Cyrillic letters), lowered; every trigram
inside a word that some language's model has adds each language's penalty (MISSING where
its model lacks it). The best language among the call's candidates settles the text when
at least ``min_trigrams`` trigrams were known and the next language's sum is at least
``min_margin`` nats per known trigram worse (:data:`RULE`, chosen on the tuning part of the
development texts against lingua's answers and their labels, ``python -m
tools.measure.language_first_pass --tune``: 97.8 % of the 3,217 tuning texts settled, 0.54 % of those
otherwise than lingua, mostly English menus lingua calls German or Latin from their first
200 characters; no labelled text lingua gets right made wrong). It reads
the text as lingua is asked (``language._lingua``): the first look's characters, then the
whole text.
Short, mixed and close-language texts miss the margin and go to lingua, which stays the
judge of every hard page.

The counting pass is compiled (``tasks/native/language_trigrams.pyx``), checked against
:func:`reference_scores` at first use; ``WARCLAKE_NATIVE=0`` keeps the reference.
"""
from __future__ import annotations

import math
import re
import sys
import threading
from typing import NamedTuple

import numpy as np

from warclake.tasks.extract.language import CYRILLIC_LANGS, LATIN_LANGS

LANGS = LATIN_LANGS + CYRILLIC_LANGS   # the penalty table's columns
_COLUMN = {lang: i for i, lang in enumerate(LANGS)}
TABLE_CPS = 0x0530

_WORD = re.compile("[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u0400-\u0481\u048a-\u04ff]+")
LETTERS = [1 if _WORD.fullmatch(chr(cp)) else 0 for cp in range(TABLE_CPS)]
# str.lower character by character; a character whose lower case is longer stays as it is
LOWER = [ord(chr(cp).lower()) if len(chr(cp).lower()) == 1 else cp for cp in range(TABLE_CPS)]
_LOWER_MAP = {cp: low for cp, low in enumerate(LOWER) if low != cp}


class Rule(NamedTuple):
    min_trigrams: int     # trigrams of the text the models know
    min_margin: float     # nats per known trigram between the best language and the next


RULE = Rule(min_trigrams=20, min_margin=0.2)


class _Table:
    """The penalty table and the scorer that reads it, made once per process."""

    def __init__(self):
        from warclake.tasks.extract.language_models import SCALE, penalty_table

        self.keys, self.penalty = penalty_table(LANGS)
        self.scale = SCALE
        self.module, self.status, self.reason = _compiled(self)


_TABLE: _Table | None = None
_FAILED: str | None = None
_LOCK = threading.Lock()


def table() -> _Table | None:
    """The process's table, made on first use; None (and one warning) when lingua's models
    cannot be read, which leaves every text to lingua."""
    global _TABLE, _FAILED
    if _TABLE is None and _FAILED is None:
        with _LOCK:
            if _TABLE is None and _FAILED is None:
                try:
                    _TABLE = _Table()
                except Exception as exc:  # noqa: BLE001 - any doubt leaves lingua every text
                    _FAILED = f"{type(exc).__name__}: {exc}"
                    sys.stderr.write(f"warclake: first-pass language identifier off ({_FAILED})\n")
    return _TABLE


def reference_scores(text: str, t: _Table | None = None) -> tuple[int, list[int]]:
    """(trigrams known, per language of LANGS the sum of their penalties), in Python: what the
    compiled pass must equal."""
    t = t or table()
    assert t is not None, "the first pass has no table: lingua's models could not be read"
    keys: list[int] = []
    for word in _WORD.findall(text):
        cps = [LOWER[ord(c)] for c in word]
        keys.extend((cps[i] << 42) | (cps[i + 1] << 21) | cps[i + 2] for i in range(len(cps) - 2))
    if not keys:
        return 0, [0] * len(LANGS)
    k = np.array(keys, dtype=np.int64)
    at = np.minimum(np.searchsorted(t.keys, k), len(t.keys) - 1)
    rows = at[t.keys[at] == k]
    return len(rows), t.penalty[rows].sum(axis=0, dtype=np.int64).tolist()


def scores(text: str, t: _Table) -> tuple[int, list[int]]:
    if t.module is None:
        return reference_scores(text, t)
    return t.module.scores(text)


def settle(text: str, langs: tuple[str, ...], rule: Rule = RULE, first_look: int = 0) -> tuple[str, float] | None:
    """(language, its share of the candidates' likelihood) when lingua's trigram models give
    ``text`` one language of ``langs`` by the rule's margin; None when lingua must judge.
    With ``first_look``, as lingua is asked (language._lingua): its first characters decide
    when they settle, the whole text otherwise."""
    if langs != LATIN_LANGS and langs != CYRILLIC_LANGS:
        return None
    t = table()
    if t is None:
        return None
    if first_look and len(text) > first_look:
        got = _settle(text[:first_look], langs, rule, t)
        if got is not None:
            return got
    return _settle(text, langs, rule, t)


def _settle(text: str, langs: tuple[str, ...], rule: Rule, t: _Table) -> tuple[str, float] | None:
    known, sums = scores(text, t)
    if known < rule.min_trigrams:
        return None
    cand = sorted((sums[_COLUMN[lang]], lang) for lang in langs)
    (best, lang), (second, _) = cand[0], cand[1]
    if second - best < rule.min_margin * t.scale * known:
        return None
    share = 1.0 / sum(math.exp((best - s) / t.scale) for s, _ in cand)
    return lang, share


# --- the compiled pass ----------------------------------------------------------------------
CHECK_TEXTS = (
    "The quick brown fox jumps over the lazy dog, and the dog does not mind at all.",
    "Die Bibliothek öffnet um neun Uhr morgens und schließt erst spät am Abend.",
    "Библиотека открывается в девять часов утра. ÀÉÎÕÜ ĀĒĪŌŪ ǅǈ İstanbul Ⱥȿ",
    "ab abc " + "x" * 50 + " 日本語 ελληνικά 123 don't Ǆemal ǅemal",
)


def _compiled(t: _Table):
    from warclake.tasks.native import load_checked

    def check(module) -> None:
        module.configure(LETTERS, LOWER, t.keys, t.penalty)
        for text in CHECK_TEXTS:
            if tuple(module.scores(text)) != reference_scores(text, t):
                raise ValueError(f"scores differ from the reference on {text[:30]!r}")

    return load_checked("language_trigrams", "first-pass language scores", "Python first-pass scores", check)

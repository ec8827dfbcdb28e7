"""Boilerplate removal on extracted paragraphs: one label per paragraph, "good" or "bad".

Modes:

* ``none``    — every paragraph good.
* ``justext`` — jusText, see ``justext``.
* ``density`` — text-density filter, see ``density``.
* ``bte``     — Body Text Extraction, see ``bte``.
* ``sieve``   — warclake's learned classifier: boosted trees over CSS-path, link, length,
  stop-word, position and neighbour features, trained on the tuning splits of several gold
  sets (CLEANEVAL and others; ``sieve.json``'s ``meta`` names them); see ``model``, and
  ``tools.train_sieve``, which reproduces it.

``lang`` is an ISO 639-1 code choosing the stoplist (or CJK function characters); ``None``
or ``"auto"`` guesses it from the paragraphs with ``text.guess_language``.
"""
from __future__ import annotations

from typing import Callable

from warclake.tasks.extract.boilerplate import bte, density, justext
from warclake.tasks.extract.boilerplate.text import guess_language
from warclake.tasks.extract.paragraph import Paragraph

GOOD, BAD = "good", "bad"


def _none(paragraphs: list[Paragraph], lang: str) -> list[str]:
    return [GOOD] * len(paragraphs)


def _sieve(paragraphs: list[Paragraph], lang: str) -> list[str]:
    from warclake.tasks.extract.boilerplate import (
        model,  # loads numpy and the shipped weights only when asked for
    )
    return model.classify(paragraphs, lang)


_CLASSIFIERS: dict[str, Callable[[list[Paragraph], str], list[str]]] = {
    "none": _none,
    "justext": justext.classify,
    "density": density.classify,
    "bte": bte.classify,
    "sieve": _sieve,
}
MODES = tuple(_CLASSIFIERS)


def resolve_lang(paragraphs: list[Paragraph], lang: str | None) -> str:
    if lang in (None, "", "auto"):
        return guess_language([p.plain for p in paragraphs])
    return lang.lower().split("-")[0]


def classify(mode: str, paragraphs: list[Paragraph], lang: str | None = None) -> list[str]:
    """Labels ("good"/"bad"), one per paragraph, in order."""
    try:
        fn = _CLASSIFIERS[mode]
    except KeyError:
        raise ValueError(f"unknown boilerplate mode {mode!r}; choose from {MODES}") from None
    if not paragraphs:
        return []
    return fn(paragraphs, resolve_lang(paragraphs, lang) if mode != "none" else "")


def clean_text(paragraphs: list[Paragraph], labels: list[str], sep: str = "\n") -> str:
    """Plain text of the good paragraphs (link markers removed)."""
    return sep.join(p.plain for p, lab in zip(paragraphs, labels) if lab == GOOD)

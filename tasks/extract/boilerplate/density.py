"""Text-density filter (after "The Easy Way to Extract Useful Text from Arbitrary
HTML"): density = text chars / (text chars + markup chars); keep chunks denser than
``0.5 - stddev(densities)``; chunks under MIN_CHARS_IN_TEXT characters are dropped.

Deviations from the seed, which works on lines of raw HTML:

* Chunks are the extractor's paragraphs, not source lines.
* Markup characters are not seen after extraction, so they are estimated as
  ``n_tags * MARKUP_CHARS_PER_TAG``. n_tags counts the element start tags walked since the
  previous paragraph (its own and inline ones included). 30 characters per start tag is the
  measured ratio on the CLEANEVAL tuning split: characters inside ``<...>`` (end tags
  included, scripts, styles and comments removed) per start tag in ``<body>`` — 30.9 over
  all tuning pages, per-page median 29.3 (quartiles 19.7 / 37.3).
* The seed's +1 in numerator and denominator is kept (it guards empty chunks).
* Standard deviation is the sample one (n-1), as the seed's DescriptiveStatistics; it is 0
  when fewer than two chunks qualify.
"""
from __future__ import annotations

import statistics

from warclake.tasks.extract.boilerplate.text import tag_count
from warclake.tasks.extract.paragraph import Paragraph

MIN_CHARS_IN_TEXT = 60
MARKUP_CHARS_PER_TAG = 30
BASE_THRESHOLD = 0.5


def density(p: Paragraph, plain: str | None = None) -> float:
    n_text = len((p.plain if plain is None else plain).strip())
    n_markup = tag_count(p.n_tags) * MARKUP_CHARS_PER_TAG
    return (n_text + 1) / (n_text + n_markup + 1)


def classify(paragraphs: list[Paragraph], lang: str = "", plains: list[str] | None = None) -> list[str]:
    """``plains``: the paragraphs' texts without link markers, when the caller has them."""
    plains = plains or [p.plain for p in paragraphs]
    dens = [density(p, t) if len(t.strip()) >= MIN_CHARS_IN_TEXT else None
            for p, t in zip(paragraphs, plains)]
    kept = [d for d in dens if d is not None]
    sd = statistics.stdev(kept) if len(kept) > 1 else 0.0
    threshold = BASE_THRESHOLD - sd
    return ["good" if d is not None and d > threshold else "bad" for d in dens]

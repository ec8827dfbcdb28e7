"""Run extractors over gold pages and score them.

An extractor maps (decoded page text, language) to main text. Timing is the process CPU
time of that call only (CPU, not wall time, so other work on a shared machine does not
inflate it):
HTML parsing, paragraph extraction and classification for warclake's modes; the whole
``extract`` call for the reference packages. Reading and decoding the page bytes and the
per-page language guess (shared by all extractors) are outside the timer.
"""
from __future__ import annotations

import platform
import time
from dataclasses import dataclass, field
from typing import Callable

from warclake.tasks.evaluation.gold import GoldPage, decode_page
from warclake.tasks.evaluation.metrics import edit_similarity, prf, token_counts, word_prf
from warclake.tasks.extract.boilerplate import MODES, classify, clean_text
from warclake.tasks.extract.boilerplate.text import guess_language

Extractor = Callable[[str, str], str]

# jusText package stoplist names for the languages warclake ships stoplists for.
_JUSTEXT_NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian",
    "nl": "Dutch", "pt": "Portuguese", "ru": "Russian", "pl": "Polish", "cs": "Czech",
    "sk": "Slovak", "hu": "Hungarian", "sv": "Swedish", "da": "Danish",
    "nb": "Norwegian_Bokmal", "fi": "Finnish", "ro": "Romanian", "tr": "Turkish",
    "uk": "Ukrainian", "ca": "Catalan",
}


def _extract_paragraphs():
    from warclake.tasks.extract.html_paragraphs import extract_paragraphs
    return extract_paragraphs


def mode_extractor(mode: str) -> Extractor:
    extract = _extract_paragraphs()

    def run(html: str, lang: str) -> str:
        paras = extract(html)
        return clean_text(paras, classify(mode, paras, lang or None))
    return run


def _trafilatura() -> Extractor:
    import trafilatura

    def run(html: str, lang: str) -> str:
        # Library defaults, as a user would call it.
        return trafilatura.extract(html) or ""
    return run


def _justext_py() -> Extractor:
    import justext

    stoplists: dict[str, frozenset] = {}

    def run(html: str, lang: str) -> str:
        name = _JUSTEXT_NAMES.get(lang, "English")
        if name not in stoplists:
            stoplists[name] = justext.get_stoplist(name)
        paras = justext.justext(html, stoplists[name])
        return "\n".join(p.text for p in paras if not p.is_boilerplate)
    return run


def _resiliparse() -> Extractor:
    from resiliparse.extract.html2text import extract_plain_text

    def run(html: str, lang: str) -> str:
        # Main-content mode, otherwise defaults.
        return extract_plain_text(html, main_content=True) or ""
    return run


REFERENCES: dict[str, Callable[[], Extractor]] = {
    "trafilatura": _trafilatura,
    "justext-py": _justext_py,
    "resiliparse": _resiliparse,
}


def available_extractors() -> list[str]:
    names = list(MODES)
    for name, factory in REFERENCES.items():
        try:
            factory()
        except Exception:   # optional extra not installed (or broken): leave it out
            continue
        names.append(name)
    return names


def get_extractor(name: str) -> Extractor:
    if name in MODES:
        return mode_extractor(name)
    if name in REFERENCES:
        return REFERENCES[name]()
    raise ValueError(f"unknown extractor {name!r}; known: {list(MODES) + list(REFERENCES)}")


@dataclass
class PageScore:
    page_id: str
    tokens: tuple[float, float, float]
    shingles: tuple[float, float, float]
    edit_sim: float
    ms: float
    error: str = ""
    words: tuple[float, float, float] = (0.0, 0.0, 0.0)   # WCXB's per-page P, R, F1
    page_type: str = ""
    empty: bool = False                                     # the extractor gave no text


@dataclass
class ExtractorResult:
    name: str
    pages: list[PageScore] = field(default_factory=list)

    def summary(self, page_type: str | None = None) -> dict[str, float]:
        pages = [p for p in self.pages if page_type is None or p.page_type == page_type]
        n = len(pages)
        tok = prf([p.tokens for p in pages])
        sh = prf([p.shingles for p in pages])
        return {
            "pages": n,
            "f1": tok["f1"], "precision": tok["precision"], "recall": tok["recall"],
            "f1_shingle4": sh["f1"], "precision_shingle4": sh["precision"],
            "recall_shingle4": sh["recall"],
            "word_precision": sum(p.words[0] for p in pages) / n if n else 0.0,
            "word_recall": sum(p.words[1] for p in pages) / n if n else 0.0,
            "word_f1": sum(p.words[2] for p in pages) / n if n else 0.0,
            "edit_sim": sum(p.edit_sim for p in pages) / n if n else 0.0,
            "ms_per_page": sum(p.ms for p in pages) / n if n else 0.0,
            "errors": sum(1 for p in pages if p.error),
            "empty": sum(1 for p in pages if p.empty),
        }

    def page_types(self) -> list[str]:
        return sorted({p.page_type for p in self.pages if p.page_type})


def page_language(html: str, lang: str) -> str:
    """The language to use for a page: fixed, or guessed from its paragraphs' text."""
    if lang and lang != "auto":
        return lang
    try:
        paras = _extract_paragraphs()(html)
    except Exception:
        return ""
    return guess_language([p.plain for p in paras])


def evaluate(pages: list[GoldPage], extractors: list[str], lang: str = "auto",
             outputs: dict | None = None, progress: Callable[[str], None] | None = None
             ) -> list[ExtractorResult]:
    """Score every extractor on every page. ``outputs``, if given, receives
    ``{(extractor, page_id): text}`` for inspection."""
    fns = {name: get_extractor(name) for name in extractors}
    results = {name: ExtractorResult(name) for name in extractors}
    for k, page in enumerate(pages):
        html = decode_page(page)
        page_lang = page_language(html, lang)
        for name, fn in fns.items():
            err = ""
            t0 = time.process_time()
            try:
                text = fn(html, page_lang)
            except Exception as e:  # a crash on one page scores as empty output
                text, err = "", f"{type(e).__name__}: {e}"
            ms = (time.process_time() - t0) * 1000
            if outputs is not None:
                outputs[(name, page.id)] = text
            results[name].pages.append(PageScore(
                page.id, token_counts(page.gold, text, 1), token_counts(page.gold, text, 4),
                edit_similarity(page.gold, text), ms, err, word_prf(page.gold, text),
                page.page_type, not text.strip()))
        if progress:
            progress(f"{k + 1}/{len(pages)} {page.id}")
    return [results[n] for n in extractors]


def markdown_table(results: list[ExtractorResult]) -> str:
    head = ("| extractor | F1 | precision | recall | F1 shingle-4 | precision shingle-4 | "
            "recall shingle-4 | page F1 | page P | page R | edit sim | ms/page | empty | errors |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for r in results:
        s = r.summary()
        rows.append(f"| {r.name} | {s['f1']:.3f} | {s['precision']:.3f} | {s['recall']:.3f} | "
                    f"{s['f1_shingle4']:.3f} | {s['precision_shingle4']:.3f} | "
                    f"{s['recall_shingle4']:.3f} | {s['word_f1']:.3f} | {s['word_precision']:.3f} | "
                    f"{s['word_recall']:.3f} | {s['edit_sim']:.3f} | {s['ms_per_page']:.1f} | "
                    f"{s['empty']} | {s['errors']} |")
    return head + "\n" + "\n".join(rows)


def _type_order(types: set[str]) -> list[str]:
    from warclake.tasks.evaluation.wcxb import PAGE_TYPES
    return [t for t in PAGE_TYPES if t in types] + sorted(types - set(PAGE_TYPES))


def type_table(results: list[ExtractorResult]) -> str:
    """Page F1 (WCXB's metric) overall and per page type, shingle-4 F1 overall beside it;
    "" when no page has a type."""
    types = _type_order({t for r in results for t in r.page_types()})
    if not types:
        return ""
    counts = {t: sum(1 for p in results[0].pages if p.page_type == t) for t in types}
    head = ("| extractor | page F1 | F1 shingle-4 | "
            + " | ".join(f"{t} ({counts[t]})" for t in types) + " | empty |\n"
            + "|---|" + "---:|" * (len(types) + 3))
    rows = []
    for r in results:
        s = r.summary()
        cells = [f"{r.summary(t)['word_f1']:.3f}" for t in types]
        rows.append(f"| {r.name} | {s['word_f1']:.3f} | {s['f1_shingle4']:.3f} | "
                    + " | ".join(cells) + f" | {s['empty']} |")
    return head + "\n" + "\n".join(rows)


def environment_note() -> str:
    import os
    parts = [f"Python {platform.python_version()}", f"{os.cpu_count()} CPUs", platform.machine()]
    from importlib.metadata import version

    for mod in ("trafilatura", "justext", "selectolax", "resiliparse"):
        try:
            m = __import__(mod)
            parts.append(f"{mod} {getattr(m, '__version__', None) or version(mod)}")
        except Exception:
            pass
    # which path the ms/page of warclake's modes were taken on (compiled or Python)
    from warclake.tasks import native
    from warclake.tasks.extract.boilerplate import compiled
    parts += [native.describe(), compiled.describe(),
              f"sieve structure columns: {compiled.STRUCTURE_STATUS}"]
    return ", ".join(parts)

"""The choice between the compiled sieve (``warclake.tasks.native.sieve_features``) and the
Python reference (``features.python_matrix``, ``forest.Forest.margin``).

Decided once per process, when ``features`` is imported, as for the paragraph walk
(``warclake.tasks.native``):

* ``WARCLAKE_NATIVE=0`` in the environment: the Python path, silently (for comparisons);
* the module was not built (no compiler at install): the Python path, one warning line;
* it computes other matrices or scores than the Python path on the fixed pages below, or
  ``features.NAMES`` holds a column it does not compute: the Python path, one warning line.

The page-structure columns (``structure``, the last ones of ``features.NAMES``) come from
``warclake.tasks.native.sieve_structure`` (its short-line patterns matched in C as their
regular expressions in ``structure`` match), added by ``features.with_structure``; that module is loaded and checked the
same way (``STRUCTURE_STATUS``, ``STRUCTURE_REASON``), and without it they come from
``structure``.

``STATUS`` ("compiled" or "python") and ``REASON`` say what was chosen and why.
"""
from __future__ import annotations

import random
import statistics

from warclake.tasks.extract.paragraph import Paragraph
from warclake.tasks.native import load_checked

STATUS = "python"
REASON = "not loaded"
STRUCTURE_STATUS = "python"     # the same for the structure columns (``_structure_fill``)
STRUCTURE_REASON = "not loaded"
_MARGIN = None     # the compiled margin(X, feature, threshold, leaf, base, depth), or None

# Fixed pages of the import-time check: texts and paths that exercise every rule whose
# result the C code decides itself (stop words and elisions in several scripts, lower-
# casing beyond Latin-1, CJK function characters, links, ©, select, headings, group words
# in camelCase and capitals, empty and odd path elements, duplicates, blank texts).
_TEXTS = [
    "The committee met on Tuesday and it was decided that the plan would go ahead as it is.",
    "Home | About | Contact", "© 2024 Example Inc.", "l'homme de l’année est dans la maison",
    "Über die Brücke gehen wir mit dem Hund und der Katze, aber nicht in die Stadt.",
    "ΑΘΗΝΑ ΚΑΙ ΣΠΆΡΤΗ ΣΑΣ ΟΔΟΣ", "İstanbul ve Ankara bir şehir", "日本語の文章です。これは「テスト」です！",
    "中文的句子。我们在这里。", "emoji 😀 and 𠮷野家 𝐀𝐁", "   ", "", "x", "Read more...",
    "\x02Privacy\x03 | \x02Terms\x03", "a \x02link \x02inside\x03 and\x03 after", "stray \x02 marker",
    "line one\nline two. And three! (four)", "what?!\u2019 ok.\u201d", "1,234.56 € / 78%",
    "It works.\u201d Then the story continues for a long while, as stories do, with words. " * 4,
    "dell'anno l'uomo un'altra d'accordo all'inizio della città e nel mondo degli uomini",
    # short lines of the structure columns: dates, records, comment and related headings
    "March 3, 2012 at 4:05 pm", "Jane Doe says:", "Reply", "12 Comments", "Related posts",
    "You may also like", "posted 3 hours ago", "Leave a Reply", "04/11/2019",
    # price lines of the page-type columns
    "$599", "12,99 €",
]
_PATHS = [
    "body>div.content>p", "body>div#nav.navBar>ul>li", "body>footer.site-footer>p",
    "body>article.postBody>h2", "body>div.HTMLParserBox>select>option", ">p", "body>>div",
    "body>div.col-md-4.sidebar>div.widget>a", "body>main#main>section.entry-content>p",
    "body>div.commentsList>div.comment>p", "body>table>tr>td", "body", "", "body>h1",
    "body>div.AdSlot.promo>span", "body>div.\u212aey>blockquote", "body>DIV.Content>P",
    "body>nav>ul>li>a.tag-cloud", "body>center>font>b", "body>div.x1#top>header>h",
    "body>div#comments>ol.commentlist>li.depth-1>div.commentbody>p", "body>div.relatedposts>ul>li",
    "body>div.postmeta>span.byline", "body>div.wp-caption>p.wp-caption-text",
    "body>main>SECTION.productGrid>article.card>h3", "body>section.tabPanel>div.cooked>p",
]


def _check_pages() -> list[tuple[list[Paragraph], str]]:
    rng = random.Random(18)
    pages = []
    for lang in ("en", "fr", "de", "el", "tr", "ja", "zh", "", "ru", "it"):
        paras = [Paragraph(rng.choice(_PATHS), rng.choice(_TEXTS), rng.choice((0, 1, 2, 5, 40)))
                 for _ in range(rng.randint(20, 45))]
        pages.append((paras, lang))
    pages.append(([Paragraph("body>p", "one sentence only", 1)], "en"))
    pages.append(([Paragraph("body>div.content>p", _TEXTS[0] * 3, 1)] * 3, "en"))
    return pages


def _lang_tables(lang):
    from warclake.tasks.extract.boilerplate.justext import params_for
    from warclake.tasks.extract.boilerplate.text import CJK_LANGS, stoplist

    prm = params_for(lang)
    return (stoplist(lang), lang in CJK_LANGS,
            (prm.max_link_density, prm.length_low, prm.length_high, prm.stopwords_low,
             prm.stopwords_high, prm.max_heading_distance, prm.no_headings))


def _configure(sf, features) -> None:
    import numpy as np

    from warclake.tasks.extract.boilerplate import density
    from warclake.tasks.extract.boilerplate import text_columns as tc

    # the structure columns are sieve_structure's (features.with_structure)
    core = tuple(n for n in features.NAMES if n not in features.structure.NAMES)
    sf.configure(core, features.PATH_GROUPS, features.ANCESTOR_TAGS,
                 features.OWN_TAGS, features._HEADINGS, tuple(features.TEXT_COLS),
                 features.CONTEXT_COLS, features.OFFSETS, features.WINDOWS, tc._table(),
                 {"SPACE": tc.SPACE, "ALNUM": tc.ALNUM, "CJK": tc.CJK, "PUNCT": tc.PUNCT,
                  "DIGIT": tc.DIGIT, "UPPER": tc.UPPER, "SEP": tc.SEP, "TITLE": tc.TITLE,
                  "TERM": tc.TERM, "CLOSER": tc.CLOSER}, tc.END_CHARS,
                 float(density.MARKUP_CHARS_PER_TAG), density.MIN_CHARS_IN_TEXT,
                 density.BASE_THRESHOLD, statistics.stdev, np.log, np.log1p)
    sf.LANG_FACTORY = _lang_tables


def _structure_fill(features):
    """The compiled structure columns' ``fill``, or None (then ``structure`` computes them):
    loaded and checked like the features (not built, or other values than ``structure``
    on the check pages: one warning line)."""
    def check(ss) -> None:
        ss.configure(features.structure, features._STRUCTURE.start)
        in_main = features._IDX["in_main"]
        for paras, lang in _check_pages():
            want = features.python_matrix(paras, lang)
            got = want.copy()
            got[:, features._STRUCTURE] = -1.0
            ss.fill(got, [p.path for p in paras], [p.plain for p in paras], in_main)
            if got.tobytes() != want.tobytes():
                raise ValueError(f"structure columns differ from the Python ones ({lang or 'no'} page)")

    global STRUCTURE_STATUS, STRUCTURE_REASON
    ss, STRUCTURE_STATUS, STRUCTURE_REASON = load_checked(
        "sieve_structure", "sieve structure columns", "Python structure columns", check)
    return None if ss is None else ss.fill


def _check_margin(sf, matrices) -> None:
    import numpy as np

    from warclake.tasks.extract.boilerplate.forest import Forest

    rng = np.random.default_rng(18)
    for trees, depth in ((200, 4), (9, 5), (7, 3), (130, 2), (1, 1)):
        n_int = 2 ** depth - 1
        n_feat = matrices[0].shape[1]
        forest = Forest(rng.integers(0, n_feat, (trees, n_int)),
                        rng.random((trees, n_int)) * 2 - 0.5, rng.normal(0, 0.3, (trees, n_int + 1)),
                        0.1, depth, ())
        for X in matrices:
            if sf.margin(X, forest.feature, forest.threshold, forest.leaf, forest.base,
                         forest.depth).tobytes() != forest.margin(X).tobytes():
                raise ValueError("tree scores differ from the Python ones")


def choose_matrix():
    """The compiled ``matrix(paragraphs, lang)`` if it may run, else None (called by
    ``features`` on its import; sets ``STATUS``, ``REASON`` and the compiled margin)."""
    global STATUS, REASON, _MARGIN
    from warclake.tasks.extract.boilerplate import features

    checked = {}

    def check(sf) -> None:
        _configure(sf, features)
        full = features.with_structure(sf.matrix, _structure_fill(features), sf.matrix_parts)
        matrices = []
        for paras, lang in _check_pages():
            X = full(paras, lang)
            if X.tobytes() != features.python_matrix(paras, lang).tobytes():
                raise ValueError(f"feature matrix differs from the Python one ({lang or 'no'} page)")
            matrices.append(X)
        _check_margin(sf, matrices)
        checked["matrix"] = full

    sf, STATUS, REASON = load_checked("sieve_features", "sieve", "Python sieve features", check)
    _MARGIN = None if sf is None else sf.margin
    return checked.get("matrix") if sf is not None else None


def margin(forest, X):
    """``forest.margin(X)``, compiled when the features are."""
    if _MARGIN is None or X.dtype != "float64" or not X.flags.c_contiguous:
        return forest.margin(X)
    return _MARGIN(X, forest.feature, forest.threshold, forest.leaf,
                   forest.base, forest.depth)


def describe() -> str:
    """"sieve features: compiled" or "sieve features: python (why)", for --version and bench."""
    from warclake.tasks.extract.boilerplate import features  # noqa: F401 - the choice is made on its import

    return f"sieve features: {STATUS}" + ("" if STATUS == "compiled" else f" ({REASON})")

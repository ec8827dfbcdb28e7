"""warclake's quality rules beside their sources as datatrove 0.10.1 implements them
(GopherQualityFilter, GopherRepetitionFilter, C4QualityFilter, FineWebQualityFilter), on
the same documents, rule by rule, at datatrove's thresholds on both sides.

The documents: the held-back gold pages through extraction and sieve (the text the corpus
keeps of each), and generated pages that sit on both sides of each threshold. datatrove
gets the kept text as the corpus emits it: paragraphs joined by a blank line (FineWeb:
by a line feed, as in the trafilatura text it was made for, since its list ratio counts
line feeds).

datatrove's English word and sentence splitting is NLTK's Punkt, whose model is a download
(nltk_data), and nothing downloads here: unless NLTK and its Punkt model are installed,
datatrove runs with a stand-in tokenizer (below), and the agreement of the rules that count
datatrove's tokens is the stand-in's. Each known, deliberate difference is listed in
``DIFFERENCES`` (the table in tasks/corpus/README.md) and asserted as such.
"""
from __future__ import annotations

import random
import re

import pytest

from conftest import shared_data
from warclake.tasks.corpus.signals.quality import evaluate_rules, kept_metrics, kept_text
from warclake.tasks.extract.paragraph import PARA_SEP, PATH_SEP

datatrove = pytest.importorskip("datatrove")

from datatrove.data import Document  # noqa: E402
from datatrove.pipeline.filters import (  # noqa: E402
    C4QualityFilter,
    FineWebQualityFilter,
    GopherQualityFilter,
    GopherRepetitionFilter,
)

FLOOR = 0.98

# datatrove's own thresholds, given to warclake's rules too (the two FineWeb figures the
# project sets elsewhere, see quality.py)
SAME_THRESHOLDS = {"fineweb_short_lines": 0.67, "fineweb_dup_line_chars": 0.01}


def _nltk_ready() -> bool:
    try:
        import nltk
        nltk.data.find("tokenizers/punkt_tab/english")
        return True
    except Exception:
        return False


class StandIn:
    """Words as NLTK's Treebank tokenizer cuts them in ordinary prose (punctuation its own
    token, "n't" and "'s" parted), sentences as datatrove's own fallback splitter cuts them."""
    _words = re.compile(r"\w+(?=n't\b)|n't\b|'\w+|\w+(?:[-.]\w+)*|[^\w\s]+")

    def __init__(self):
        from datatrove.utils.word_tokenizers import WhitespaceTokenizer
        self._sentences = WhitespaceTokenizer()

    def word_tokenize(self, text):
        return self._words.findall(text)

    def sent_tokenize(self, text):
        return self._sentences.sent_tokenize(text)

    def span_tokenize(self, text):
        return self._sentences.span_tokenize(text)


@pytest.fixture(scope="module", autouse=True)
def tokenizer():
    """datatrove's tokenizer, or the stand-in when NLTK's Punkt model is not installed."""
    from datatrove.utils import text as dt_text
    from datatrove.utils import word_tokenizers

    if _nltk_ready():
        yield "nltk"
        return
    mp = pytest.MonkeyPatch()
    stand_in = StandIn()
    mp.setattr(word_tokenizers, "load_word_tokenizer", lambda language: stand_in)
    dt_text.split_into_parts.cache_clear()
    yield "stand-in"
    dt_text.split_into_parts.cache_clear()
    mp.undo()


def _plain(kept: str, sep: str) -> str:
    bodies = [c.partition(PATH_SEP)[2] if PATH_SEP in c else c for c in kept.split(PARA_SEP)] if kept else []
    return sep.join(b.replace("\x02", "").replace("\x03", "") for b in bodies)


# (warclake rule, datatrove filter made to test that check alone). Every other check of
# the filter is switched off, so each verdict is this check's.
# Each filter's checks, all switched off.
OFF = {
    GopherQualityFilter: dict(min_doc_words=None, max_doc_words=None, min_avg_word_length=None,
                              max_avg_word_length=None, max_symbol_word_ratio=None, max_bullet_lines_ratio=None,
                              max_ellipsis_lines_ratio=None, max_non_alpha_words_ratio=None, min_stop_words=None),
    GopherRepetitionFilter: dict(dup_line_frac=None, dup_para_frac=None, dup_line_char_frac=None,
                                 dup_para_char_frac=None, top_n_grams=(), dup_n_grams=()),
    C4QualityFilter: dict(filter_lorem_ipsum=False, filter_curly_bracket=False, min_num_sentences=-1),
    FineWebQualityFilter: dict(line_punct_thr=0.0, short_line_thr=1.0, char_duplicates_ratio=1.0,
                               new_line_ratio=float("inf")),
}


def _only(cls):
    """A maker of ``cls`` with only the checks given switched on."""
    return lambda **on: cls(**{**OFF[cls], **on})


_gopher, _repetition = _only(GopherQualityFilter), _only(GopherRepetitionFilter)
_c4, _fineweb = _only(C4QualityFilter), _only(FineWebQualityFilter)


CHECKS = {
    "gopher_min_words": lambda: _gopher(min_doc_words=50),
    "gopher_max_words": lambda: _gopher(max_doc_words=100_000),
    "gopher_min_mean_word_length": lambda: _gopher(min_avg_word_length=3),
    "gopher_max_mean_word_length": lambda: _gopher(max_avg_word_length=10),
    "gopher_symbol_ratio": lambda: _gopher(max_symbol_word_ratio=0.1),
    "gopher_bullet_lines": lambda: _gopher(max_bullet_lines_ratio=0.9),
    "gopher_ellipsis_lines": lambda: _gopher(max_ellipsis_lines_ratio=0.3),
    "gopher_alpha_words": lambda: _gopher(max_non_alpha_words_ratio=0.8),
    "gopher_stop_words": lambda: _gopher(min_stop_words=2),
    "gopher_dup_lines": lambda: _repetition(dup_line_frac=0.3),
    "gopher_dup_paragraphs": lambda: _repetition(dup_para_frac=0.3),
    "gopher_dup_paragraph_chars": lambda: _repetition(dup_para_char_frac=0.2),
    **{f"gopher_top_{n}gram": (lambda n=n, t=t: _repetition(top_n_grams=((n, t),)))
       for n, t in ((2, 0.2), (3, 0.18), (4, 0.16))},
    **{f"gopher_dup_{n}gram": (lambda n=n: _repetition(dup_n_grams=((n, (20 - n) / 100),))) for n in range(5, 11)},
    "c4_min_sentences": lambda: _c4(min_num_sentences=5),
    "c4_lorem_ipsum": lambda: _c4(filter_lorem_ipsum=True),
    "c4_curly_bracket": lambda: _c4(filter_curly_bracket=True),
    "fineweb_line_punct": lambda: _fineweb(line_punct_thr=0.12),
    "fineweb_short_lines": lambda: _fineweb(short_line_thr=0.67),
    "fineweb_dup_line_chars": lambda: _fineweb(char_duplicates_ratio=0.01),
    "fineweb_list_ratio": lambda: _fineweb(new_line_ratio=0.3),
}

# Rules whose definitions differ on purpose and that agree with datatrove on under 98 % of
# this test's documents: rule -> (a floor just under the agreement measured with the
# stand-in tokenizer, which side fires on more of the documents they disagree on, why).
# The table of tasks/corpus/README.md lists these and the smaller differences.
DIFFERENCES = {
    "gopher_alpha_words": (0.90, "datatrove", "words are whitespace words: datatrove counts each punctuation "
                                              "token as a word without a letter"),
    **{f"gopher_dup_{n}gram": (0.96, "warclake", "every repeated occurrence of an n-gram counts, overlapping ones "
                                                 "included: datatrove skips past each repeat it finds")
       for n in range(5, 11)},
    "gopher_top_4gram": (0.97, "datatrove", "n-grams of words without their punctuation: datatrove's of tokens, "
                                            "where '. The' and ', and' are frequent n-grams"),
    "c4_min_sentences": (0.97, None, "sentences by the lake's own splitter, not Punkt; a bare closing quote ends "
                                     "no line; citation marks like '[1]' are not removed first"),
}


def generated_pages(n: int = 300, seed: int = 1) -> list[str]:
    """Lake texts on both sides of the thresholds: prose, lists, menus, repeated lines and
    paragraphs, hashtags, ellipses, quotes, braces, placeholder text."""
    rng = random.Random(seed)
    words = ("the river of that town was built with stone and the people have a market there "
             "every week with fish bread and wine from the hills").split()

    def sentence():
        s = " ".join(rng.choice(words) for _ in range(rng.randint(3, 14)))
        end = rng.choice([".", ".", "!", "?", '."', ".”", "", " »", "...", " {x}.", "'"])
        return s.capitalize() + end

    out = []
    for _ in range(n):
        paras = []
        for _ in range(rng.randint(1, 14)):
            kind = rng.random()
            if kind < 0.55:
                body = " ".join(sentence() for _ in range(rng.randint(1, 5)))
            elif kind < 0.7:
                body = "\n".join(rng.choice(["• ", "- ", ""]) + sentence() for _ in range(rng.randint(2, 6)))
            elif kind < 0.8:
                body = rng.choice(["Home", "News", "Sport", "Contact us", "#tag #news", "Read more..."])
            elif kind < 0.9 and paras:
                body = rng.choice(paras).partition(PATH_SEP)[2]
            else:
                body = rng.choice(["Lorem ipsum dolor sit amet.", "Price list 1 2 3 4 5 6 7 8",
                                   "Call 555 0100 now", sentence()])
            paras.append("body>p" + PATH_SEP + body)
        out.append(PARA_SEP.join(paras))
    return out


@pytest.fixture(scope="module")
def documents() -> list[str]:
    """The kept texts of the English documents."""
    docs = [kept_text(t, None) for t in generated_pages()]
    gold = shared_data("gold")
    try:
        from tools.measure.quality_rules import gold_page_documents
        pages = gold_page_documents(gold, "heldout", "sieve", 0, clean=False)
    except FileNotFoundError:
        pages = []
    docs += [kept_text(d["text"], d["paragraph_labels"]) for d in pages if d["lang"] == "en"]
    return [d for d in docs if _plain(d, "\n").strip()]


@pytest.fixture(scope="module")
def verdicts(documents) -> dict[str, tuple[list[bool], list[bool]]]:
    """Per rule, (warclake fires, datatrove drops) per document."""
    ours = [{r.name for r, _, _ in evaluate_rules(kept_metrics(d, None, "en"), "en", SAME_THRESHOLDS)}
            for d in documents]
    filters = {rule: make() for rule, make in CHECKS.items()}
    theirs: dict[str, list[bool]] = {rule: [] for rule in CHECKS}
    for i, d in enumerate(documents):     # a document through every check in turn: datatrove caches its words
        for rule, f in filters.items():
            sep = "\n" if rule.startswith("fineweb") else "\n\n"
            theirs[rule].append(f.filter(Document(text=_plain(d, sep), id=str(i))) is not True)
    return {rule: ([rule in o for o in ours], theirs[rule]) for rule in CHECKS}


def agreement(pair) -> float:
    a, b = pair
    return sum(x == y for x, y in zip(a, b)) / len(a)


def test_documents_hold_both_sides_of_most_rules(documents, verdicts):
    assert len(documents) >= 300
    both = [r for r, (a, b) in verdicts.items() if any(b) and not all(b)]
    assert len(both) >= 15, both


@pytest.mark.parametrize("rule", sorted(CHECKS))
def test_rule_agrees_with_its_source(rule, verdicts, tokenizer):
    got = agreement(verdicts[rule])
    floor, more, why = DIFFERENCES.get(rule, (FLOOR, None, ""))
    assert got >= floor, f"{rule}: {got:.3f} agreement with datatrove (floor {floor}; {why or 'no known difference'})"
    if more:     # a known difference: its disagreements lean the way its reason says
        ours, theirs = verdicts[rule]
        only_ours = sum(a and not b for a, b in zip(ours, theirs))
        only_theirs = sum(b and not a for a, b in zip(ours, theirs))
        assert (only_ours > only_theirs) if more == "warclake" else (only_theirs > only_ours), (only_ours, only_theirs)


def test_bare_closing_quote_and_quoted_sentence_end_are_the_known_differences(tokenizer):
    """The two line ends warclake decides differently from datatrove, on purpose."""
    prose = "The river of that town was built with stone by the people who live there."
    lines = [prose] * 2 + ['More photos of the town "'] * 9 + ["He said it was done.”"] * 1
    text = "body>p" + PATH_SEP + "\n".join(lines)
    m = kept_metrics(text, None, "en")
    assert m["terminal_punct_line_share"] == pytest.approx(3 / 12)   # ".”" ends a sentence, '"' none
    between = 2.5 / 12
    assert not evaluate_rules(m, "en", {"fineweb_line_punct": between}) or "fineweb_line_punct" not in {
        r.name for r, _, _ in evaluate_rules(m, "en", {"fineweb_line_punct": between})}
    fw = FineWebQualityFilter(short_line_thr=1.0, char_duplicates_ratio=1.0, new_line_ratio=float("inf"),
                              line_punct_thr=between)
    # datatrove: 2 of 12 lines (neither ".”" nor the bare quote ends in its marks)
    assert fw.filter(Document(text=_plain(text, "\n"), id="q")) is not True


def test_report_agreement(verdicts, tokenizer, capsys):
    """The agreement table (shown with -s)."""
    with capsys.disabled():
        print(f"\nagreement with datatrove ({tokenizer} tokenizer), {len(next(iter(verdicts.values()))[0])} documents")
        for rule in sorted(verdicts):
            a, b = verdicts[rule]
            print(f"| {rule} | {agreement((a, b)):.3f} | {sum(a)} | {sum(b)} |")

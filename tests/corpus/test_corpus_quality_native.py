"""The compiled quality metrics: the same values as the Python reference on real pages and
on generated documents, and the fallbacks when the module is off, missing or wrong."""
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from conftest import REPO, shared_data
from tools.fuzz import quality as fuzz_quality
from warclake.tasks import native
from warclake.tasks.corpus.signals import quality as q
from warclake.tasks.extract.paragraph import join_paragraphs

compiled_only = pytest.mark.skipif(
    os.environ.get(native.ENV) == "0", reason="WARCLAKE_NATIVE=0: the compiled metrics are off")


def both(text, labels, lang):
    return q._metrics_compiled(q.compiled_module(), text, labels, lang), q.document_metrics_reference(text, labels, lang)


@compiled_only
def test_the_installed_package_runs_the_compiled_metrics():
    assert q.compiled_module() is not None, q.REASON
    assert q.STATUS == "compiled"


@compiled_only
@pytest.mark.shared_data("gold", "cleaneval", "cleaneval-dev")
def test_real_pages_give_the_reference_values():
    from warclake.tasks.evaluation.gold import decode_page, read_cleaneval
    from warclake.tasks.extract.boilerplate import classify
    from warclake.tasks.extract.html_paragraphs import extract_paragraphs

    seen = set()
    for i, page in enumerate(read_cleaneval(Path(shared_data("gold", "cleaneval", "cleaneval-dev")))[:60]):
        paras = extract_paragraphs(decode_page(page))
        text = join_paragraphs(paras)
        labels = classify("sieve", paras, "en") if i % 2 else None
        got, want = both(text, labels, "en" if i % 3 else None)
        assert q.metrics_equal(got, want), (i, {k: (got[k], want[k]) for k in want if got[k] != want[k]})
        seen.add(round(got["word_count"]))
    assert len(seen) > 50     # real, different pages


@compiled_only
def test_generated_documents_give_the_reference_values():
    """CJK, kana, Thai, astral characters, combining marks, sigma, dotted capital I, every
    whitespace, bullets, ellipses, phrases, markers out of place, heavy repetition, empty
    documents, labels that do not fit."""
    for i in range(500):
        text, labels, lang = fuzz_quality.document(5, i)
        got, want = both(text, labels, lang)
        assert q.metrics_equal(got, want), (i, text)


@compiled_only
def test_repetition_and_ties_give_the_reference_values():
    runs = ["a b c d e f g h i j k l " * 300, "red apple red apple pie " * 50 + "x y z " * 40,
            "日本語の文章です。" * 400, "one two three. " * 3 + "\n".join(["same line"] * 50)]
    for lang in ("en", "ja", None):
        for body in runs:
            got, want = both("body>p\x1c" + body, None, lang)
            assert q.metrics_equal(got, want), (lang, body[:40])
            assert got["dup_5gram_char_share"] > 0.5


def test_with_the_module_off_the_reference_runs_silently():
    code = ("from warclake.tasks.corpus.signals import quality as q;q.compiled_module();"
            "m = q.document_metrics('body>p\\x1cSome words here.', None, 'en');"
            "print(q.STATUS, m['word_count'])")
    off = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO,
                         env={**os.environ, native.ENV: "0"})
    assert off.stdout.split() == ["python", "3.0"] and off.stderr == ""


def _reload_state(monkeypatch):
    monkeypatch.setattr(native, "LOADED", dict(native.LOADED))   # --version's record, restored after
    monkeypatch.setattr(q, "STATUS", "python")
    monkeypatch.setattr(q, "REASON", "not loaded")
    monkeypatch.setattr(q, "_COMPILED", None)
    monkeypatch.delenv(native.ENV, raising=False)


def test_a_module_that_is_not_built_leaves_the_reference_with_one_line(monkeypatch, capsys):
    _reload_state(monkeypatch)
    monkeypatch.setitem(sys.modules, "warclake.tasks.native.corpus_quality", None)   # import fails
    monkeypatch.delattr(native, "corpus_quality", raising=False)
    assert q.compiled_module() is None and q.STATUS == "python"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not built" in err and "Python quality metrics" in err
    text = "body>p\x1cThe river runs to the sea. The river runs to the sea."
    assert q.metrics_equal(q.document_metrics(text, None, "en"), q.document_metrics_reference(text, None, "en"))


def test_a_module_that_disagrees_is_refused_with_one_line(monkeypatch, capsys):
    """A compiled module whose counts differ from the reference (a stale build) is not used."""
    import importlib

    real = importlib.import_module("warclake.tasks.native.corpus_quality") if os.environ.get(native.ENV) != "0" else None
    _reload_state(monkeypatch)

    def wrong(*args):
        c = real.document_counts(*args) if real else {}
        c["lettered"] = c.get("lettered", 0) + 1
        return c
    fake = types.ModuleType("warclake.tasks.native.corpus_quality")
    fake.document_counts = wrong
    fake.configure = real.configure if real else (lambda *a: None)
    monkeypatch.setitem(sys.modules, "warclake.tasks.native.corpus_quality", fake)
    monkeypatch.setattr(native, "corpus_quality", fake, raising=False)
    assert q.compiled_module() is None and q.STATUS == "python"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "failed its check" in err


@compiled_only
def test_compiled_chrome_paths_follow_is_chrome_path():
    """Both compiled modules decide an ASCII path by ``is_chrome_path``'s rules (chrome tags,
    classes and ids with a place word before them, any letter case) and leave the others to it."""
    import random

    from warclake.tasks.native import corpus_quality as cq
    from warclake.tasks.native import corpus_signatures as cs

    parts = ["nav", "Nav", "NAV", "navigation", "footer", "header", "aside", "menu", "sidebar",
             "breadcrumb", "Breadcrumbs", "comment", "Comments", "cookie", "site", "main", "page",
             "global", "top", "primary", "secondary", "left", "right", "mobile", "sub", "Site", "-",
             "_", ".", "#", ">", "div", "p", "x", "content", "no", "sticky", "ul", "li", " ", "1",
             "ed", "navbar", "open", "False", "s"]
    rng = random.Random(2)
    for _ in range(50_000):
        path = "".join(rng.choice(parts) for _ in range(rng.randint(1, 9)))
        assert cq.chrome_path_of(path) == cs.chrome_path_of(path) == int(q.is_chrome_path(path)), path
    for path in ("body>div.ſidebar", "body>div.\u212aookie", "body>div.日本>nav"):
        assert cq.chrome_path_of(path) == -1     # not ASCII: left to is_chrome_path

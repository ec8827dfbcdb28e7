"""The compiled sieve features and tree scores: the same feature matrices (bit for bit), tree
scores and labels as the Python reference on generated, tricky and real pages and whole
archives, its checks and fallbacks, and what --version says."""
import gzip
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, shared_data
from support import tricky_pages
from support.native_fallback import hiding, run_python, warclake_lines
from tools.make_dump import make_dump
from warclake.tasks import native
from warclake.tasks.extract import boilerplate
from warclake.tasks.extract.boilerplate import compiled, features, model, page_kind
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.extract.html_paragraphs import extract_paragraphs
from warclake.tasks.extract.paragraph import Paragraph

compiled_only = pytest.mark.skipif(
    features._COMPILED is None and os.environ.get(native.ENV) == "0",
    reason="WARCLAKE_NATIVE=0: the compiled features are off")


def _python_labels(paras, lang):
    forest = model.load()
    R = features.python_matrix(paras, lang)
    cutoff = page_kind.page_cutoff(forest, R)   # the page-kind trees' numpy scores
    return model.labels(forest.predict_proba(R).tolist(), cutoff, paras)


def assert_same(paras, lang):
    """Bit-identical matrices and tree scores, identical labels, compiled against Python."""
    X = features._COMPILED(paras, lang)
    R = features.python_matrix(paras, lang)
    assert X.shape == R.shape == (len(paras), len(features.NAMES))
    if X.tobytes() != R.tobytes():
        cols = np.flatnonzero((X != R).any(axis=0) | (np.signbit(X) != np.signbit(R)).any(axis=0))
        raise AssertionError(f"columns differ: {[features.NAMES[c] for c in cols]}")
    forest = model.load()
    assert compiled.margin(forest, X).tobytes() == forest.margin(R).tobytes()
    if forest.kind is not None:
        V = page_kind.vector(X, forest.names)[None, :]
        assert compiled.margin(forest.kind, V).tobytes() == forest.kind.margin(V).tobytes()
    assert model.classify(paras, lang) == _python_labels(paras, lang)


@compiled_only
def test_the_installed_package_runs_the_compiled_features():
    # ./dev builds it; a build or check problem must show here, not as a slow lake
    assert compiled.STATUS == "compiled", compiled.REASON
    assert features._COMPILED is not None and compiled._MARGIN is not None


@compiled_only
@pytest.mark.parametrize("seed", range(0, 400, 50))
def test_tricky_pages_give_identical_features_and_labels(seed):
    for s in range(seed, seed + 50):
        paras = extract_paragraphs(tricky_pages.page(s))
        if paras:
            assert_same(paras, ["en", "ja", "de", "", "fr", "zh", "el", "tr"][s % 8])


# Texts and paths whose rules the C code decides itself.
TEXTS = ["", " ", "\n\t ", "x", "©", "a \x02b\x03 c", "\x02\x02a\x03b\x03", "\x02open", "\x03",
         "l'homme", "L’Année dell'anno", "'tis o'clock d'", "ΣΟΦΟΣ σοφος ΟΔΟΣ.", "İİ ǅ ß ẞ",
         "ﬁne ﬂow", "日本語の文章です。", "中文的句子，我们。", "한국어 문장입니다.", "𠮷野家 😀 𝟘𝟙",
         "end.\u201d", "what?!)] next", "a.b.c. d.", "\u2028\u3000\u00a0\u200b", "don't stop",
         "Über die Brücke und zurück.", "ÀÉÎÕÜ ÇØÞ × ÷", "\ud800 lone", "word " * 300,
         "The committee met on Tuesday and it was decided that the plan would go ahead." * 3]
PATHS = ["body>p", "", ">", ">>", "body>", ">p", "body>>p", "a>b>c>d>e>f>g>h", "body>div.",
         "body>div#", "body>div.#.#", "body>div.navBar#mainContent>p", "body>DIV.HTMLParser>P",
         "body>select>option", "body>form>select.x>div", "body>h1", "body>H2.title", "body>h7",
         "body>h", "body>div.\u212aey>span", "body>\u212abd>p", "body>blockquote.Quote>p",
         "body>div.aBCdef.ABC.abc>td", "body>div." + "a" * 500, "body>div.commentsList>li.comment",
         "body>nav>ul>li>a", "body>div.sidebar>div.widget>ul>li", "body>table>tr>td.content"]


@compiled_only
def test_random_pages_of_corner_texts_and_paths():
    rng = random.Random(18)
    for case in range(300):
        n = rng.choice((1, 1, 2, 3, 10, 40))
        paras = [Paragraph(rng.choice(PATHS), rng.choice(TEXTS), rng.choice((0, 1, 3, 1000)))
                 for _ in range(n)]
        assert_same(paras, rng.choice(("en", "fr", "it", "de", "el", "tr", "ja", "zh", "", "xx")))


@compiled_only
def test_empty_and_degenerate_pages():
    assert features._COMPILED([], "en").shape == (0, len(features.NAMES))
    assert_same([Paragraph("", "")], "en")
    assert_same([Paragraph("body>p", "same text here")] * 5, "en")
    assert_same([Paragraph("body>div.content>p", "The story of the day. " * 20, 0)] * 3
                + [Paragraph("body>div.nav>a", "\x02Home\x03", 1)], "en")


@compiled_only
def test_the_wide_matrix_holds_the_core_columns_and_the_texts_it_read():
    # matrix_parts writes the core columns into a matrix with the structure columns' room
    # and hands the paths and plain texts on to them: the same as matrix and Paragraph.plain
    from warclake.tasks.native import sieve_features as sf

    paras = [Paragraph("body>div.nav>a", "\x02Home\x03 | \x02News\x03", 2),
             Paragraph("body>p", "plain text, no link", 0), Paragraph("body>p", "stray \x02 \ud800 x", 1),
             Paragraph("body>p", "\x03\x02\x02\x03", 0), Paragraph("body>p", "日本語\x02リンク\x03😀", 3)]
    width = len(features.NAMES)
    X, paths, plains = sf.matrix_parts(paras, "en", width)
    core = sf.matrix(paras, "en")
    assert X.shape == (len(paras), width)
    assert X[:, :core.shape[1]].tobytes() == core.tobytes() and not X[:, core.shape[1]:].any()
    assert paths == [p.path for p in paras] and plains == [p.plain for p in paras]
    assert plains[1] is paras[1].text    # no marker: the text itself, not a copy
    assert sf.matrix_parts([], "en", width)[0].shape == (0, width)


@compiled_only
def test_a_close_density_threshold_takes_the_exact_deviation():
    # two kept chunks: stdev of two values is |a - b| / sqrt(2); a tie at the threshold
    # must be decided as statistics.stdev decides it
    for n_tags in range(0, 12):
        paras = [Paragraph("body>p", "w" * 60, 0), Paragraph("body>p", "v" * 60, n_tags),
                 Paragraph("body>p", "u" * 80, 2)]
        assert_same(paras, "en")


@compiled_only
def test_start_tag_counts_beyond_64_bits_are_read_as_the_clamp():
    # both paths read n_tags as 0 .. text.N_TAGS_MAX, whatever the int holds
    from warclake.tasks.extract.boilerplate.text import N_TAGS_MAX

    for n_tags in (N_TAGS_MAX - 1, N_TAGS_MAX + 1, 2 ** 63, 2 ** 64 + 5, 10 ** 30, -1, -(2 ** 70)):
        paras = [Paragraph("body>p", "w " * 40, 1), Paragraph("body>div>p", "v " * 50, n_tags),
                 Paragraph("body>p", "u " * 45, 2)]
        assert_same(paras, "en")
    huge = features.matrix([Paragraph("body>p", "w " * 40, 2 ** 64)], "en")
    at_max = features.matrix([Paragraph("body>p", "w " * 40, N_TAGS_MAX)], "en")
    assert huge.tobytes() == at_max.tobytes()


@compiled_only
def test_the_lower_case_table_is_str_lower():
    from warclake.tasks.native import sieve_features

    table = sieve_features.lower_table()
    special = [c for c in range(0x10000) if table[c] == 0]
    assert special == [0, 0x130, 0x3A3]  # the texts holding these are lowered by str.lower()
    assert all(chr(table[c]) == chr(c).lower() for c in range(0x10000) if table[c])


@compiled_only
def test_fuzz_slice_has_no_differences(capsys):
    from tools.fuzz import sieve as fuzz_sieve

    assert fuzz_sieve.main(["--cases", "200", "--seed", "11"]) == 0
    assert "0 differences" in capsys.readouterr().out


@compiled_only
def test_tree_scores_equal_on_random_forests_and_matrices():
    rng = np.random.default_rng(3)
    for trees, depth in ((1, 1), (8, 2), (127, 3), (129, 4), (200, 4), (513, 5)):
        n_int = 2 ** depth - 1
        forest = model.Forest(rng.integers(0, 20, (trees, n_int)), rng.normal(0, 1, (trees, n_int)),
                              rng.normal(0, 1, (trees, n_int + 1)), -0.3, depth, ())
        for n in (0, 1, 7, 300):
            X = rng.normal(0, 1, (n, 20))
            X[rng.random(X.shape) < 0.05] = np.nan
            assert compiled.margin(forest, X).tobytes() == forest.margin(X).tobytes()


@compiled_only
@pytest.mark.shared_data("gold")
def test_real_pages_give_identical_features_and_labels():
    gold = Path(shared_data("gold"))
    pages = sorted(gold.rglob("*.htm*"))
    assert len(pages) > 1000
    for path in pages[::3]:  # every third page of every gold set: ~1,000 pages
        html = path.read_bytes()
        if path.name.endswith(".gz"):
            html = gzip.decompress(html)
        paras = extract_paragraphs(html)
        if paras:
            assert_same(paras, boilerplate.resolve_lang(paras, None))


@compiled_only
@pytest.mark.shared_data("gold", "dragnet")
def test_a_whole_archive_gives_an_identical_lake_with_either_features(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    from warclake.tasks.extract.archive import extract_archive

    make_dump(str(tmp_path / "dump"), [shared_data("gold", "dragnet")], files=1, mb_per_file=2, seed=5)
    archive = str(next((tmp_path / "dump").glob("*.warc.gz")))
    cfg = ExtractConfig.from_langs("all", boilerplate="sieve")
    lakes = []
    for name, matrix, margin in (("compiled", features._COMPILED, compiled._MARGIN),
                                 ("python", None, None)):
        monkeypatch.setattr(features, "_COMPILED", matrix)
        monkeypatch.setattr(compiled, "_MARGIN", margin)
        extract_archive(archive, "CC-MAIN-2099-01", str(tmp_path / name), cfg)
        rows = []
        for f in sorted((tmp_path / name).glob("documents/**/*.parquet")):
            rows += pq.read_table(f).to_pylist()
        lakes.append(sorted(rows, key=lambda r: str(r.get("doc_id") or r)))
    a, b = lakes
    assert len(a) > 50 and a == b
    # the boilerplate labels are in the lake: some paragraphs dropped, most documents kept
    assert any(r.get("text") for r in a)


def test_a_feature_column_the_module_does_not_compute_leaves_the_python_path(monkeypatch, capfd):
    if features._COMPILED is None:
        pytest.skip("the compiled features are off")
    monkeypatch.setattr(features, "NAMES", features.NAMES + ("a_new_column",))
    try:
        assert compiled.choose_matrix() is None
        assert compiled.STATUS == "python" and "does not compute" in compiled.REASON
        err = warclake_lines(capfd.readouterr().err)
        assert len(err) == 1 and "Python sieve features" in err[0]
    finally:
        monkeypatch.undo()
        assert compiled.choose_matrix() is not None and compiled.STATUS == "compiled"



LABELS = ("from warclake.tasks.extract.boilerplate import compiled, features, model\n"
          "from warclake.tasks.extract.paragraph import Paragraph\n"
          "print(compiled.STATUS)\n"
          "menu = [Paragraph('body>nav>ul>li', f'\\x02{w}\\x03', n) for w, n in (('Home', 4), ('News', 2), ('Contact', 2))]\n"
          "print(model.classify(menu + [Paragraph('body>article>p', 'It was the best of times and the worst. ' * 9, 1)],"
          " 'en'))\n")
MENU_AND_ARTICLE = "['bad', 'bad', 'bad', 'good']"   # a menu of three links dropped, the article kept


@compiled_only
def test_the_compiled_path_is_chosen_whichever_module_is_imported_first():
    # extraction imports the model first (boilerplate._sieve), the tests the features
    for first in ("model", "features", "compiled"):
        p = run_python(f"from warclake.tasks.extract.boilerplate import {first}\n" + LABELS)
        assert p.returncode == 0, p.stderr
        assert p.stdout.splitlines() == ["compiled", MENU_AND_ARTICLE], first
        assert "warclake:" not in p.stderr


def test_without_the_module_the_python_features_run_with_one_warning():
    hide = hiding("sieve_features")
    p = run_python(hide + LABELS)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["python", MENU_AND_ARTICLE]
    warnings = warclake_lines(p.stderr)
    assert len(warnings) == 1 and "Python sieve features" in warnings[0]


@compiled_only
def test_without_the_structure_module_its_python_columns_run_with_one_warning():
    hide = hiding("sieve_structure")
    p = run_python(hide + LABELS + "print(compiled.STRUCTURE_STATUS)\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["compiled", MENU_AND_ARTICLE, "python"]
    warnings = warclake_lines(p.stderr)
    assert len(warnings) == 1 and "Python structure columns" in warnings[0]


@compiled_only
def test_a_structure_module_that_computes_other_values_is_refused_with_one_warning():
    # as if a rule had changed on the Python side only: its zeros become -0.0 (other bytes,
    # the same decisions)
    wrong = ("import numpy as np\nfrom warclake.tasks.extract.boilerplate import structure\n"
             "orig = structure.columns\n"
             "structure.columns = lambda *a: np.where(orig(*a) == 0, -0.0, orig(*a))\n")
    p = run_python(wrong + LABELS + "print(compiled.STRUCTURE_STATUS)\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["compiled", MENU_AND_ARTICLE, "python"]
    warnings = warclake_lines(p.stderr)
    assert len(warnings) == 1 and "structure columns failed its check" in warnings[0]


@compiled_only
def test_a_module_that_computes_other_values_is_refused_with_one_warning():
    # as if a rule had changed on one side only: the stop-word table of every language empty
    wrong = ("from warclake.tasks.extract.boilerplate import compiled as c\n"
             "orig = c._lang_tables\n"
             "c._lang_tables = lambda lang: (frozenset(),) + orig(lang)[1:]\n"
             "import warclake.tasks.native.sieve_features\n")
    p = run_python(wrong + LABELS)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["python", MENU_AND_ARTICLE]
    warnings = warclake_lines(p.stderr)
    assert len(warnings) == 1 and "failed its check" in warnings[0]


def test_version_names_the_features_path_and_the_switch_forcesrun_python():
    forced = subprocess.run([sys.executable, "-m", "warclake", "--version"], capture_output=True,
                            text=True, timeout=120, cwd=REPO, env=dict(os.environ, WARCLAKE_NATIVE="0"))
    assert "sieve features: python (WARCLAKE_NATIVE=0)" in forced.stdout
    assert forced.stderr == ""
    default = subprocess.run([sys.executable, "-m", "warclake", "--version"], capture_output=True,
                             text=True, timeout=120, cwd=REPO)
    assert f"sieve features: {compiled.STATUS}" in default.stdout

"""The compiled paragraph walk: the same paragraphs, labels, features and lake as the
Python reference, its checks and fallbacks, and what --version says."""
import gzip
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import types
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from conftest import REPO, shared_data
from support import tricky_pages
from support.native_fallback import hiding, run_python, warclake_lines
from tools.fuzz import paragraph_walk as fuzz_native
from tools.make_dump import make_dump
from warclake.tasks import native
from warclake.tasks.extract import html_paragraphs as hp
from warclake.tasks.extract.archive import extract_archive
from warclake.tasks.extract.boilerplate import features, model
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.sample_dump import make_dump as make_sample_dump

compiled_only = pytest.mark.skipif(
    hp._COMPILED_WALK is None and os.environ.get(native.ENV) == "0",
    reason="WARCLAKE_NATIVE=0: the compiled walk is off")


def compiled(html, limit=None):
    """The compiled walk alone: a page left to the Python walk fails the test."""
    def strict(*args):
        out = hp._COMPILED_WALK(*args)
        assert out is not None, "the compiled walk left this page to the Python walk"
        return out
    return hp._paragraphs(html, limit, strict)


@compiled_only
def test_the_installed_package_runs_the_compiled_walk():
    # ./dev builds it; a build or layout problem must show here, not as a slow lake
    assert native.STATUS == "compiled", native.REASON
    assert hp._COMPILED_WALK is not None


@compiled_only
@pytest.mark.parametrize("seed", range(0, 400, 40))
def test_tricky_pages_give_identical_paragraphs(seed):
    for s in range(seed, seed + 40):
        page = tricky_pages.page(s)
        assert compiled(page) == hp.python_paragraphs(page), s


@compiled_only
def test_contract_corners_are_identical():
    pages = [
        "<body><div class='" + "c " * 400_000 + "'>huge class</div></body>",
        "<body><my-element-with-a-very-long-name id=" + "i" * 5000 + ">custom</my-element-with-a-very-long-name>",
        "<body>" + "<div class=d>" * 300 + "deep" + "</div>" * 300,
        "<body><pre>  a\n\n  b  \n</pre><p>x<br><br> y <a href=z> link </a> z</p>",
        "<body><p>&#2;a\x01b\x03c <a href>\u200b</a> \u3000 \u00a0 d</p><hr><hr>e",
        b"<body><p>broken \xe6\x97 utf-8 \xff\xfe and \xc3\xa9</p></body>",
        "\ufeff<body>\x00nul <o:p>word</o:p> <svg><p>in svg</p></svg>",
        # a noscript read (the page's text), one left out, one cut short
        "<body><b>shell</b><noscript>on</noscript><noscript><div>" + "<p>post words</p>" * 60
        + "<p><a href=/u>link</a> &amp; <my-tag class=x>c</my-tag></div></noscript>x",
        "<body><noscript><ul>" + "<li>item text " * 80 + "</ul>",
        # code keeps its spacing: indentation, inner runs, tabs, a first line's indent
        "<body><pre>  <b>def</b> f(x):\n\t\treturn  x \n \n\u00a0 \x04&#5;end</pre><listing>a  b</listing>",
        "<body><xmp>  <a href=x>  k </a>  </xmp><pre>   </pre><pre><div>  in\n  div</div>  after</pre>",
    ]
    for page in pages:
        assert compiled(page) == hp.python_paragraphs(page)
    for limit in (0, 1, 3):
        page = "<body>" + "<p>a" * 10
        with pytest.raises(hp.TooManyParagraphs):
            compiled(page, limit)
        with pytest.raises(hp.TooManyParagraphs):
            hp.python_paragraphs(page, limit)


def test_a_huge_class_gives_a_short_path_in_both_walks():
    page = "<body><div class='" + "word " * 1_500_000 + "' id=x>text</div></body>"  # 7.5 MB
    for walk in (hp.extract_paragraphs, hp.python_paragraphs):
        (p,) = walk(page)
        assert p.text == "text"
        head, part = p.path.split(">")
        assert head == "body" and part.startswith("div.word.word")
        assert len(part) <= hp.MAX_SEGMENT_CHARS and not part.endswith((".", "#"))


@compiled_only
def test_normalisation_in_c_equals_the_python_one():
    from warclake.tasks.native import lexbor_walk

    alphabet = ["a", " ", "\n", "\x01", "\x02", "\x03", "\x04", "\x05", "\x04", "\x05",
                "\u00a0", "\u3000", "\u200b", "\ufeff",
                "\u2060", "\t", "\x1c", "\x85", "é", "日", "\u2028", "\u205f", "\u1680"]
    rng = np.random.default_rng(5)
    for _ in range(20_000):
        s = "".join(alphabet[i] for i in rng.integers(0, len(alphabet), rng.integers(0, 10)))
        assert lexbor_walk.normalise(s) == hp._normalise(s), repr(s)


@compiled_only
def test_fuzz_slice_has_no_differences(capsys):
    assert fuzz_native.main(["--cases", "400", "--seed", "11"]) == 0
    assert "0 differences" in capsys.readouterr().out


@compiled_only
@pytest.mark.shared_data("gold")
def test_real_pages_give_identical_paragraphs_features_and_labels():
    gold = Path(shared_data("gold"))
    pages = sorted(gold.rglob("*.htm*"))
    assert len(pages) > 1000
    left = []

    def counting(*args):
        out = hp._COMPILED_WALK(*args)
        left.append(out is None)
        return out

    for i, path in enumerate(pages):
        html = path.read_bytes()
        if path.name.endswith(".gz"):
            html = gzip.decompress(html)
        a, b = hp._paragraphs(html, None, counting), hp.python_paragraphs(html)
        assert a == b, path
        if i % 10 == 0 and a:  # the features and labels of a sample (they only read paragraphs)
            assert np.array_equal(features.matrix(a, "en"), features.matrix(b, "en")), path
            assert model.classify(a, "en") == model.classify(b, "en")
    # a page is left to the Python walk only for a rare static tag it cannot name
    assert sum(left) <= len(left) // 500, sum(left)


def _lake_rows(lake: Path) -> list[dict]:
    rows = []
    for f in sorted(lake.glob("documents/**/*.parquet")):
        rows += pq.read_table(f).to_pylist()
    return sorted(rows, key=lambda r: str(r.get("doc_id") or r))


def _both_walks(archive: str, tmp_path: Path, cfg: ExtractConfig, monkeypatch) -> tuple[list, list]:
    out = []
    for name, walk in (("compiled", hp._COMPILED_WALK), ("python", None)):
        monkeypatch.setattr(hp, "_COMPILED_WALK", walk)
        lake = tmp_path / name
        extract_archive(archive, "CC-MAIN-2099-01", str(lake), cfg)
        out.append(_lake_rows(lake))
    return out[0], out[1]


@compiled_only
def test_whole_generated_archives_give_identical_lakes(tmp_path, monkeypatch):
    paths = make_sample_dump(str(tmp_path / "dump"), files=1, pages_per_file=60, truncate_last=False)
    a, b = _both_walks(paths[0], tmp_path, ExtractConfig.from_langs("all", boilerplate="sieve"), monkeypatch)
    assert len(a) > 30 and a == b


@compiled_only
@pytest.mark.shared_data("gold", "dragnet")
def test_whole_archives_of_real_pages_give_identical_lakes(tmp_path, monkeypatch):
    make_dump(str(tmp_path / "dump"), [shared_data("gold", "dragnet")], files=1, mb_per_file=2, seed=3)
    archive = str(next((tmp_path / "dump").glob("*.warc.gz")))
    a, b = _both_walks(archive, tmp_path, ExtractConfig.from_langs("all", boilerplate="sieve"), monkeypatch)
    assert len(a) > 50 and a == b



EXTRACT = ("from warclake.tasks import native; from warclake.tasks.extract import html_paragraphs as hp; "
           "print(native.STATUS); print(hp.extract_paragraphs('<p>a <b>b</b></p>')[0].text)")


def test_without_the_module_the_python_walk_runs_with_one_warning():
    hide = hiding("lexbor_walk")
    p = run_python(hide + EXTRACT)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["python", "a", "b"]
    warnings = warclake_lines(p.stderr)
    assert len(warnings) == 1 and "Python paragraph walk" in warnings[0]


@compiled_only
def test_a_walk_that_reads_the_layout_wrong_is_refused_with_one_warning():
    # as if lexbor's attribute layout had moved: the class and id ids swapped
    swap = ("from warclake.tasks.native import lexbor_walk as pw\n"
            "orig = pw.configure\n"
            "def wrong(*a):\n a = list(a); a[4], a[5] = a[5], a[4]; return orig(*a)\n"
            "pw.configure = wrong\n")
    p = run_python(swap + EXTRACT)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["python", "a", "b"]
    warnings = warclake_lines(p.stderr)
    assert len(warnings) == 1 and "failed its check" in warnings[0]


def misreading(field: str):
    """lexbor_walk with one field of the layout check's reads off, as if lexbor_layout.pxi
    placed it wrong: ``"layout_node.next"``, ``"attr.value"`` (every attribute's), ..."""
    from warclake.tasks.native import lexbor_walk

    where, name = field.split(".")

    def off(value):
        return value + b"?" if isinstance(value, bytes) else (value or 0) + 8

    def wrap(read, pick):
        def misread(address):
            out = read(address)
            if where == "attr":
                for a in out["attrs"]:
                    a[name] = off(a[name])
            elif where == "layout_tag_entry":
                out = (off(out[0]), out[1]) if name == "name" else (out[0], off(out[1]))
            elif isinstance(out, dict):
                out[name] = out[name][:-1] if name == "attrs" else off(out[name])
            else:
                out = off(out)
            return out
        return misread if pick else read

    return types.SimpleNamespace(
        layout_node=wrap(lexbor_walk.layout_node, where == "layout_node"),
        layout_element=wrap(lexbor_walk.layout_element, where in ("layout_element", "attr")),
        layout_text=wrap(lexbor_walk.layout_text, where == "layout_text"),
        layout_tag_entry=wrap(lexbor_walk.layout_tag_entry, where == "layout_tag_entry"))


@compiled_only
def test_the_declared_lexbor_layout_reads_what_selectolax_reads():
    native._check_layout(misreading("none.none"))


@compiled_only
@pytest.mark.parametrize("field, named", [
    ("layout_node.local_name", "lx_node.local_name"), ("layout_node.next", "lx_node.next"),
    ("layout_node.prev", "lx_node.prev"), ("layout_node.parent", "lx_node.parent"),
    ("layout_node.first_child", "lx_node.first_child"), ("layout_node.last_child", "lx_node.last_child"),
    ("layout_node.type", "lx_node.type"), ("layout_text.data", "lx_character_data.data"),
    ("layout_tag_entry.name", "lx_tag_data.u/length"), ("layout_tag_entry.tag_id", "lx_tag_data.tag_id"),
    ("layout_element.qualified_name", "lx_element.qualified_name"),
    ("layout_element.attrs", "lx_element.first_attr/lx_attr.next"),
    ("layout_element.last_attr", "lx_element.last_attr"), ("attr.value", "lx_attr.value"),
    ("attr.owner", "lx_attr.owner"), ("attr.prev", "lx_attr.prev"),
    ("attr.qualified_name", "lx_attr.qualified_name"), ("attr.prefix", "lx_attr.node.prefix")])
def test_a_field_read_at_the_wrong_place_is_named(field, named):
    with pytest.raises(ValueError, match=f"^lexbor layout: {re.escape(named)}"):
        native._check_layout(misreading(field))


@compiled_only
def test_a_misdeclared_struct_is_refused_naming_its_field(tmp_path):
    # lexbor_walk built from a lexbor_layout.pxi with lx_node's next and prev swapped
    cc = sysconfig.get_config_var("CC") or "cc"
    if shutil.which(cc.split()[0]) is None:
        pytest.skip("no C compiler")
    pytest.importorskip("Cython")
    src = Path(REPO) / "tasks" / "native"
    layout = (src / "lexbor_layout.pxi").read_text()
    swapped = layout.replace("    lx_node *next\n    lx_node *prev\n", "    lx_node *prev\n    lx_node *next\n")
    assert swapped != layout
    (tmp_path / "lexbor_layout.pxi").write_text(swapped)
    shutil.copy(src / "lexbor_walk.pyx", tmp_path)
    subprocess.run([sys.executable, "-m", "cython", "-3", "lexbor_walk.pyx"], cwd=tmp_path, check=True)
    so = tmp_path / ("lexbor_walk" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run([*cc.split(), "-shared", "-fPIC", "-O0", "-I" + sysconfig.get_paths()["include"],
                    "lexbor_walk.c", "-o", str(so)], cwd=tmp_path, check=True)
    spec = importlib.util.spec_from_file_location("lexbor_walk", so)
    wrong = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(wrong)
    with pytest.raises(ValueError, match="^lexbor layout: lx_node.next reads"):
        native._check_layout(wrong)


@compiled_only
def test_a_layout_that_moved_is_refused_with_one_warning_naming_the_field():
    moved = ("from warclake.tasks.native import lexbor_walk as pw\n"
             "orig = pw.layout_node\n"
             "def wrong(a):\n f = orig(a); f['first_child'] = f['last_child'] = 0; return f\n"
             "pw.layout_node = wrong\n")
    p = run_python(moved + EXTRACT)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["python", "a", "b"]
    warnings = warclake_lines(p.stderr)
    assert len(warnings) == 1 and "failed its check (lexbor layout: lx_node.first_child reads" in warnings[0]


def test_version_names_the_walk_and_the_switch_forcesrun_python():
    forced = subprocess.run([sys.executable, "-m", "warclake", "--version"], capture_output=True, text=True,
                            timeout=120, cwd=REPO, env=dict(os.environ, WARCLAKE_NATIVE="0"))
    assert "(paragraph walk: python (WARCLAKE_NATIVE=0);" in forced.stdout
    assert forced.stderr == ""
    default = subprocess.run([sys.executable, "-m", "warclake", "--version"], capture_output=True, text=True,
                             timeout=120, cwd=REPO)
    assert f"(paragraph walk: {native.STATUS}" in default.stdout

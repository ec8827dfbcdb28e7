"""The per-archive step's compiled pass (``archive_pass``, ``native/corpus_step.pyx``): the
references' values on real and generated documents, the step's outputs equal either way,
bad bytes refused, and the fallbacks."""
import importlib.util
import itertools
import math
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import types
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from conftest import REPO, shared_data
from tools.fuzz import step as fuzz_step
from warclake.tasks import native
from warclake.tasks.corpus.settings import SignatureConfig
from warclake.tasks.corpus.signals import archive_pass as ap
from warclake.tasks.corpus.signals import archive_step
from warclake.tasks.extract.paragraph import join_paragraphs

compiled_only = pytest.mark.skipif(
    os.environ.get(native.ENV) == "0", reason="WARCLAKE_NATIVE=0: the compiled pass is off")


def table(docs) -> pa.Table:
    return pa.table({"text": pa.array([d[0] for d in docs], pa.string()),
                     "paragraph_labels": pa.array([d[1] for d in docs], pa.list_(pa.string())),
                     "lang": pa.array([d[2] for d in docs], pa.string())})


def documents(seed: int, cases: int, sites: int) -> pa.Table:
    """fuzz_step's documents of ``cases`` cases, with ids and URLs on ``sites`` hosts."""
    docs = []
    for i in range(cases):
        docs += [(r["text"], r["paragraph_labels"], r["lang"]) for r in fuzz_step.case(seed, i)[0].to_pylist()]
    n = len(docs)
    t = table(docs).append_column("docId", pa.array([f"d{i}" for i in range(n)]))
    return t.append_column("url", pa.array([f"https://s{i % sites}.example.org/p/{i}" for i in range(n)]))


@compiled_only
def test_the_installed_package_runs_the_compiled_pass():
    assert ap.compiled_module() is not None, ap.REASON
    assert ap.STATUS == "compiled"


@compiled_only
def test_the_counts_row_names_each_slot_once_with_the_runs_of_top_and_dup():
    from warclake.tasks.corpus.signals import quality

    step, counts = ap.compiled_module(), quality.compiled_module()
    assert step is not None and counts is not None
    names = step.count_names()
    assert names == step.COUNTS == counts.COUNTS
    runs = [(name, len(list(run))) for name, run in itertools.groupby(names)]
    assert len({name for name, _ in runs}) == len(runs)   # each name in one place
    assert {name: width for name, width in runs if width > 1} == {"top": 3, "dup": 6}
    got = counts.document_counts("body\x1cone two\n\nbody\x1cthree", ["good", "bad"], False, True,
                                 quality.is_chrome_path, {})
    assert list(got) == [name for name, _ in runs]
    assert [k for k, v in got.items() if isinstance(v, bool)] == ["char_mode", "labels_fit"]
    assert got["labels_fit"] and got["paragraphs"] == 2 and got["bad_chars"] == len("three")


def test_each_count_of_the_row_is_paired_with_the_slot_named_after_it():
    # what the import-time check cannot see: a name beside another name's slot constant
    pxi = (Path(REPO) / "tasks" / "native" / "corpus_counts.pxi").read_text()
    enum = pxi[pxi.index("cdef enum:\n    AT_CHAR_MODE"):pxi.index("    N_COUNTS\n")]
    slots = re.findall(r"^    (AT_\w+)", enum, re.M)
    table = re.findall(r'\((AT_\w+), "(\w+)", \w+\)', pxi[pxi.index("COUNTS = _row_names("):])
    assert [at for at, _ in table] == slots
    assert [at for at, name in table if at != "AT_" + name.upper()] == []


def test_a_counts_table_whose_name_and_slot_disagree_is_refused_at_import(tmp_path):
    # corpus_quality built with two names of the row's table swapped
    cc = sysconfig.get_config_var("CC") or "cc"
    if shutil.which(cc.split()[0]) is None:
        pytest.skip("no C compiler")
    pytest.importorskip("Cython")
    src = Path(REPO) / "tasks" / "native"
    for f in [src / "corpus_quality.pyx", *src.glob("corpus_*.pxi")]:
        shutil.copy(f, tmp_path)
    table = (tmp_path / "corpus_counts.pxi").read_text()
    swapped = table.replace('(AT_UNITS, "units", 1), (AT_SYMBOLS, "symbols", 1)',
                            '(AT_SYMBOLS, "symbols", 1), (AT_UNITS, "units", 1)')
    assert swapped != table
    (tmp_path / "corpus_counts.pxi").write_text(swapped)
    subprocess.run([sys.executable, "-m", "cython", "-3", "corpus_quality.pyx"], cwd=tmp_path, check=True)
    so = tmp_path / ("corpus_quality" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run([*cc.split(), "-shared", "-fPIC", "-O0", "-I" + sysconfig.get_paths()["include"],
                    "corpus_quality.c", "-o", str(so)], cwd=tmp_path, check=True)
    spec = importlib.util.spec_from_file_location("corpus_quality", so)
    with pytest.raises(ImportError, match="the counts row's table puts 'symbols' at 4, not 3"):
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


@compiled_only
@pytest.mark.shared_data("gold", "cleaneval", "cleaneval-dev")
def test_real_pages_give_the_reference_values_and_count_their_own_metrics(monkeypatch):
    from warclake.tasks.evaluation.gold import decode_page, read_cleaneval
    from warclake.tasks.extract.boilerplate import classify
    from warclake.tasks.extract.html_paragraphs import extract_paragraphs

    docs = []
    for page in read_cleaneval(Path(shared_data("gold", "cleaneval", "cleaneval-dev")))[:60]:
        paras = extract_paragraphs(decode_page(page))
        docs.append((join_paragraphs(paras), classify("sieve", paras, "en") if len(docs) % 2 else None,
                     ("en", None, "de")[len(docs) % 3]))
    t = table(docs)
    left = []
    monkeypatch.setattr(ap, "document_metrics", lambda *a: left.append(a) or ap.document_metrics_reference(*a))
    got = ap.run(ap.compiled_module(), t, 3, 5, 120)
    assert ap.pass_equal(got, ap.reference(t, 3, 5, 120))
    assert len(got.signed.para_paths) > 3000 and len(set(got.signed.clean_hash.tolist())) == len(docs)
    assert len(left) <= 3          # extracted pages: their metrics are counted by the pass itself


@compiled_only
def test_generated_tables_give_the_reference_values():
    """fuzz_step's cases: hostile text, markers and separators out of place, null texts and
    labels, string and large_string columns, several chunks, slices."""
    for i in range(150):
        t, pn, dn, perm = fuzz_step.case(4, i)
        got = ap.run(ap.compiled_module(), t, pn, dn, perm)
        assert ap.pass_equal(got, ap.reference(t, pn, dn, perm)), (i, t.column("text").to_pylist())
        assert got.para_labels.to_pylist() == archive_step.paragraph_labels(
            t.column("paragraph_labels").to_pylist(), got.signed.doc_paragraphs)


def _same_rows(a: pa.Table, b: pa.Table) -> bool:
    def norm(v):
        return "nan" if isinstance(v, float) and math.isnan(v) else v
    return a.schema == b.schema and all(
        [[norm(x) for x in (r if isinstance(r, list) else [r])] for r in a.column(c).to_pylist()]
        == [[norm(x) for x in (r if isinstance(r, list) else [r])] for r in b.column(c).to_pylist()]
        for c in a.column_names if c != "metrics") and ("metrics" not in a.column_names or [
            [(k, norm(v)) for k, v in r] for r in a.column("metrics").to_pylist()] == [
            [(k, norm(v)) for k, v in r] for r in b.column("metrics").to_pylist()])


def test_the_step_gives_the_same_rows_with_and_without_the_pass(monkeypatch):
    t = documents(7, 40, 5)
    n = t.num_rows
    for name in ("dump", "warc_file"):
        t = t.append_column(name, pa.array(["CC-MAIN-2099-01"] * n))
    t = t.append_column("date", pa.array([None] * n, pa.timestamp("us", tz="UTC")))
    sig = SignatureConfig()
    with_pass = archive_step.signatures_of(t, sig)
    monkeypatch.setattr(archive_step, "sign_table", lambda *a, **k: None)
    without = archive_step.signatures_of(t, sig)
    assert _same_rows(with_pass[0], without[0]) and _same_rows(with_pass[1], without[1])
    assert with_pass[0].num_rows > 100


@compiled_only
def test_a_text_that_is_not_utf8_is_refused_with_one_error():
    good = "body>p\x1cfine"
    data = (good + "body>p\x1cbad ").encode() + b"\xff\xfe"
    offsets = np.array([0, len(good.encode()), len(data)], np.int32)
    col = pa.StringArray.from_buffers(2, pa.py_buffer(offsets), pa.py_buffer(data))
    t = pa.table({"text": col})
    with pytest.raises(ValueError, match="UTF-8"):
        ap.run(ap.compiled_module(), t, 3, 5, 120)


def test_without_the_compiled_module_the_step_takes_the_references():
    code = ("from warclake.tasks.corpus.signals import archive_pass as p;import pyarrow as pa;"
            "print(p.compiled_module(), p.STATUS, p.sign_table(pa.table({'text': ['a']}), 3, 5, 120))")
    off = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO,
                         env={**os.environ, native.ENV: "0"})
    assert off.stdout.split() == ["None", "python", "None"] and off.stderr == ""


def test_a_pass_that_disagrees_is_refused_with_one_line(monkeypatch, capsys):
    """A compiled pass whose values differ from the references (a stale build) is not used."""
    real = ap.compiled_module()
    monkeypatch.setattr(ap, "STATUS", ap.STATUS)     # restored after the test
    monkeypatch.setattr(ap, "REASON", ap.REASON)
    monkeypatch.setattr(ap, "_COMPILED", ap._COMPILED)
    fake = types.ModuleType("warclake.tasks.native.corpus_step")
    for name in ("configure", "configure_nfkc", "count_paragraphs"):
        setattr(fake, name, getattr(real, name) if real else (lambda *a: 0))

    def wrong(*args):
        got = real.sign_and_count(*args) if real else (0, 0)
        args[21][:] = 0     # the clean texts' hashes
        return got
    fake.sign_and_count = wrong
    monkeypatch.setitem(sys.modules, "warclake.tasks.native.corpus_step", fake)
    monkeypatch.setattr(native, "corpus_step", fake, raising=False)
    monkeypatch.delenv(native.ENV, raising=False)
    monkeypatch.setattr(ap, "STATUS", "python")
    monkeypatch.setattr(ap, "REASON", "not loaded")
    assert ap.compiled_module() is None
    assert ap.STATUS == "python"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "failed its check" in err


@compiled_only
def test_passes_in_two_threads_give_the_reference_values(monkeypatch):
    """The corpus flow signs archives in two threads: a Python call inside a pass (a
    chrome test, NFKC by unicodedata) lets the other thread start its own pass, which must
    not share the first one's working memory."""
    import threading
    import time

    real_chrome, real_nfkc = ap.is_chrome_path, ap.nfkc_lower

    def chrome(path):
        time.sleep(0.0002)
        return real_chrome(path)

    def nfkc(body):
        time.sleep(0.0002)
        return real_nfkc(body)
    monkeypatch.setattr(ap, "is_chrome_path", chrome)
    monkeypatch.setattr(ap, "nfkc_lower", nfkc)
    monkeypatch.setattr(ap, "_CHROME_CACHE", {})
    tables = [fuzz_step.case(5, i)[0] for i in range(60)]
    want = [ap.reference(t, 3, 5, 120) for t in tables]
    got: dict = {}

    def work(k):
        for i in range(k, len(tables), 2):
            got[i] = ap.run(ap.compiled_module(), tables[i], 3, 5, 120)
    threads = [threading.Thread(target=work, args=(k,)) for k in (0, 1)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert all(ap.pass_equal(got[i], want[i]) for i in range(len(tables)))


@compiled_only
def test_long_documents_after_short_ones_give_the_reference_values():
    """The working memory kept between documents and calls: a document of thousands of
    paragraphs (the per-paragraph arrays grow inside it), one paragraph of 200,000
    characters, then short documents again."""
    words = ["Privacy policy", "The cat and the dog", "ＡＢＣ　全角", "ΣΑΣ σας", "…", "日本語の文。"]
    many = "\n\n".join(f"{'body>nav>a' if i % 7 == 0 else 'body>main>p'}\x1c{words[i % len(words)]} {i}"
                       for i in range(3000))
    labels = [("good", "bad", None)[i % 3] for i in range(2990)]
    huge = "body>p\x1c" + " ".join(f"w{i % 977} \x02link {i}\x03" for i in range(20000))
    small = [("body>h1\x1cTitle\n\nbody>p\x1cShort text here.", ["good", "bad"], "en"), ("", None, None)]
    for docs in (small, [(many, labels, "en"), (huge, None, "ja")] + small, small, [(many, None, "de")]):
        t = table(docs)
        got = ap.run(ap.compiled_module(), t, 3, 5, 120)
        assert ap.pass_equal(got, ap.reference(t, 3, 5, 120))
    assert got.signed.doc_paragraphs.tolist() == [3000]


def test_the_step_reads_tables_lacking_columns_or_in_chunks(monkeypatch):
    """A documents table without dates, labels or archive names, its columns in several
    chunks: the rows with and without the pass agree, the missing columns are nulls."""
    texts = ["body>p\x1cOne two three.\n\nbody>nav\x1cHome", "p\x1cFour five six seven eight.", None]
    t = pa.table({"text": pa.chunked_array([texts[:1], texts[1:]], pa.string()),
                  "docId": pa.chunked_array([["a"], ["b", "c"]]),
                  "url": pa.chunked_array([["https://x.example.org/1"], ["https://y.example.co.uk/2", None]])})
    sig = SignatureConfig()
    with_pass = archive_step.signatures_of(t, sig)
    monkeypatch.setattr(archive_step, "sign_table", lambda *a, **k: None)
    without = archive_step.signatures_of(t, sig)
    assert _same_rows(with_pass[0], without[0]) and _same_rows(with_pass[1], without[1])
    para, docs = with_pass
    assert para.column("docId").to_pylist() == ["a", "a", "b"]
    assert para.column("domain").to_pylist() == ["example.org", "example.org", "example.co.uk"]
    assert docs.column("date").null_count == 3 and docs.column("warc_file").null_count == 3
    assert para.column("label").null_count == 3


def test_a_documents_file_read_by_row_groups_gives_the_rows_of_the_whole_table(tmp_path):
    import pyarrow.parquet as pq

    t = documents(9, 12, 3)
    n = t.num_rows
    path = tmp_path / "documents.parquet"
    pq.write_table(t, path, row_group_size=5)
    groups = list(archive_step.row_groups(str(path), ["text", "paragraph_labels", "lang", "docId", "url"]))
    assert len(groups) == -(-n // 5) > 2
    sig = SignatureConfig()
    parts = [archive_step.signatures_of(g, sig) for g in groups]
    whole = archive_step.signatures_of(t, sig)
    for k in (0, 1):
        assert _same_rows(pa.concat_tables([p[k] for p in parts]), whole[k])

"""The compiled corpus signatures: the same values as the numpy reference on real and
generated lake texts, the premise of normalising whole documents, and the fallbacks."""
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from conftest import REPO, shared_data
from tools.fuzz import signatures as fuzz_signatures
from warclake.tasks import native
from warclake.tasks.corpus.signals import signatures as sg
from warclake.tasks.corpus.signals.quality import is_chrome_path
from warclake.tasks.extract.paragraph import join_paragraphs

compiled_only = pytest.mark.skipif(
    os.environ.get(native.ENV) == "0", reason="WARCLAKE_NATIVE=0: the compiled signatures are off")


def both(texts, labels, pn=3, dn=5, perm=120):
    got = sg._sign_compiled(sg.compiled_module(), [t or "" for t in texts], labels, is_chrome_path, pn, dn, perm)
    want = sg.sign_documents_reference([t or "" for t in texts], labels, is_chrome_path, pn, dn, perm)
    return got, want


@compiled_only
def test_the_installed_package_runs_the_compiled_signatures():
    assert sg.compiled_module() is not None, sg.REASON
    assert sg.STATUS == "compiled"


@compiled_only
@pytest.mark.shared_data("gold", "cleaneval", "cleaneval-dev")
def test_real_pages_give_the_reference_values():
    from warclake.tasks.evaluation.gold import decode_page, read_cleaneval
    from warclake.tasks.extract.boilerplate import classify
    from warclake.tasks.extract.html_paragraphs import extract_paragraphs

    texts, labels = [], []
    for page in read_cleaneval(Path(shared_data("gold", "cleaneval", "cleaneval-dev")))[:60]:
        paras = extract_paragraphs(decode_page(page))
        texts.append(join_paragraphs(paras))
        labels.append(classify("sieve", paras, "en") if len(texts) % 2 else None)
    got, want = both(texts, labels)
    assert sg.signed_equal(got, want)
    assert len(got.para_paths) > 3000 and (got.clean_chars > 0).sum() >= 55
    # the pages differ from each other: distinct clean hashes and MinHash rows
    assert len(set(got.clean_hash.tolist())) == len(texts)


@compiled_only
def test_generated_texts_give_the_reference_values():
    """CJK, astral characters, combining marks, final sigma, NFKC forms, every whitespace,
    separators and markers out of place, empty and missing texts, short texts, odd labels."""
    for i in range(400):
        texts, labels, pn, dn, perm = fuzz_signatures.case(3, i)
        got, want = both(texts, labels, pn, dn, perm)
        assert sg.signed_equal(got, want), (i, texts)


def test_nfkc_and_lower_case_keep_the_separators():
    """What lets a whole document be normalised at once: no character's NFKC and lower case
    form holds a line feed or a path separator, and no other character becomes one."""
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000 or cp in (0x0A, 0x1C):
            continue
        c = chr(cp)
        n = unicodedata.normalize("NFKC", c).lower()
        assert "\n" not in n and "\x1c" not in n, hex(cp)
    for sep in ("\n", "\x1c"):
        for c in ("\u0301", "\u0323", "\u1161", "Σ", "ς"):   # combining, Hangul vowel, sigma
            assert unicodedata.normalize("NFKC", "A" + sep + c).lower() == "a" + sep + \
                unicodedata.normalize("NFKC", c).lower()


def test_minhash_of_short_texts_fills_every_bin_the_same_way():
    texts = ["abcdefgh", "abcdefgh", "abcdefgz", "", "日本"]
    m = sg.minhash(texts, 5, 120)
    assert (m[0] == m[1]).all() and (m[0] != sg.EMPTY_MINHASH).all()
    assert 0 < (m[0] == m[2]).mean() < 1
    assert (m[3] == sg.EMPTY_MINHASH).all() and (m[4] != sg.EMPTY_MINHASH).all()


def test_text_hash_tells_texts_apart_and_is_the_same_in_every_process():
    texts = ["", "a", "b", "ab", "ba", "abc", "日本語", "\U0001F600", "a" * 1000, "a" * 1001]
    h = sg.text_hashes(texts)
    assert len(set(h.tolist())) == len(texts)
    code = ("from warclake.tasks.corpus.signals.signatures import text_hashes, minhash;"
            f"t={texts!r};print(text_hashes(t).tolist(), minhash(t, 5, 120).sum(axis=1).tolist())")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(outs) == 1 and str(h.tolist()) in outs.pop()


def test_compared_text_leaves_out_chrome_and_short_paragraphs_but_never_everything():
    paths = ["body>nav", "body>p", "body>p", "body>footer"]
    lengths = [80, 10, 90, 70]
    assert sg.compared_paragraphs(paths, ["good"] * 4, is_chrome_path, lengths) == [2]
    assert sg.compared_paragraphs(paths, ["bad"] * 4, is_chrome_path, lengths) == [2]     # none good: all
    assert sg.compared_paragraphs(paths, ["good", "bad", "bad", "good"], is_chrome_path, lengths) == [0, 3]
    assert sg.compared_paragraphs(paths[1:2], None, is_chrome_path, [10]) == [0]


def test_without_the_compiled_module_the_reference_runs():
    code = ("from warclake.tasks.corpus.signals import signatures as s;s.compiled_module();"
            "print(s.STATUS, s.REASON)")
    off = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO,
                         env={**os.environ, native.ENV: "0"})
    assert off.stdout.split()[0] == "python" and off.stderr == ""


def test_a_module_that_disagrees_is_refused_with_one_line(monkeypatch, capsys):
    """A compiled module whose values differ from the reference (a stale build) is not used."""
    import types

    real = sg.compiled_module()
    monkeypatch.setattr(sg, "STATUS", sg.STATUS)     # restored after the test
    monkeypatch.setattr(sg, "REASON", sg.REASON)

    def wrong(*args):
        n = real.sign_documents(*args) if real else 0
        args[9][:] = 0     # clean_hash
        return n
    fake = types.ModuleType("warclake.tasks.native.corpus_signatures")
    fake.sign_documents = wrong
    monkeypatch.setitem(sys.modules, "warclake.tasks.native.corpus_signatures", fake)
    monkeypatch.setattr(native, "corpus_signatures", fake, raising=False)
    monkeypatch.delenv(native.ENV, raising=False)
    assert sg._load_compiled() is None
    assert sg.STATUS == "python"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "failed its check" in err


@compiled_only
def test_nfkc_by_table_equals_unicodedata_on_any_text_of_its_characters():
    """The one-look-up NFKC and lower case gives unicodedata's result for every text made
    of the table's characters (composing, reordering and sigma's context included), and
    leaves every other text to unicodedata."""
    import random

    from warclake.tasks.corpus.signals.normalise import normalised_document, simple_nfkc_lower_table

    mod = sg.compiled_module()
    table = simple_nfkc_lower_table()
    kept = [chr(i) for i, v in enumerate(table) if v is not None]
    assert len(kept) > 60000 and all(c in kept for c in "aé한…™Ａ\u00a0ﬁ")
    rng = random.Random(5)
    for _ in range(20000):
        text = "".join(rng.choice(kept) for _ in range(rng.randint(1, 8)))
        assert mod.simple_nfkc_lower(text) == unicodedata.normalize("NFKC", text).lower(), repr(text)
    for text in ("e\u0301", "\u1100\u1161", "ΟΔΟΣ", "Σ", "\U0001F600", "a\u0323\u0307"):
        assert mod.simple_nfkc_lower(text) is None and normalised_document(text)

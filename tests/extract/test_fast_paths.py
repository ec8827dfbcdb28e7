"""The fast paths give exactly what the plain definitions give: the same feature matrix,
bit for bit, and the same labels, on generated pages of tricky markup and on real pages."""
import glob
import os

import numpy as np
import pytest

from conftest import shared_data
from support.reference_features import text_row, use_reference
from support.tricky_pages import page, text
from warclake.tasks.extract import boilerplate
from warclake.tasks.extract.boilerplate import compiled, features
from warclake.tasks.extract.boilerplate.text import word_units
from warclake.tasks.extract.boilerplate.text_columns import text_columns
from warclake.tasks.extract.html_paragraphs import extract_paragraphs


def _clear_caches():
    for name in dir(features):
        fn = getattr(features, name)
        if hasattr(fn, "cache_clear"):
            fn.cache_clear()


def _matrices_and_labels(docs, monkeypatch, plain=False):
    """The Python path's matrices and labels (its fast pieces, or with ``plain`` the plain
    definitions of reference_features); the compiled path is compared in test_native_features."""
    _clear_caches()
    monkeypatch.setattr(features, "_COMPILED", None)
    monkeypatch.setattr(compiled, "_MARGIN", None)
    if plain:
        use_reference(monkeypatch)
    out = [(features.matrix(d, lang), boilerplate.classify("sieve", d, lang)) for d, lang in docs]
    monkeypatch.undo()
    _clear_caches()
    return out


def _same(docs, monkeypatch):
    fast = _matrices_and_labels(docs, monkeypatch)
    plain = _matrices_and_labels(docs, monkeypatch, plain=True)
    for (d, lang), (X, lab), (R, ref_lab) in zip(docs, fast, plain):
        assert X.shape == R.shape
        diff = np.flatnonzero((X != R).any(axis=0))
        assert diff.size == 0, [features.NAMES[c] for c in diff]
        assert lab == ref_lab


def test_text_columns_equal_the_per_paragraph_definition():
    texts = [text(seed) for seed in range(3000)]
    for start in range(0, len(texts), 50):  # pages of 50 paragraphs
        chunk = texts[start:start + 50]
        cols, units = text_columns(chunk)
        ref = np.array([text_row(t) for t in chunk])
        bad = np.flatnonzero((cols != ref).any(axis=1))
        assert bad.size == 0, [(chunk[i], cols[i], ref[i]) for i in bad[:3]]
        assert units.tolist() == [word_units(t) for t in chunk]
    assert text_columns([])[0].shape == (0, len(features.TEXT_COLS))


def test_features_and_labels_equal_the_plain_path_on_tricky_pages(monkeypatch):
    docs = []
    for seed in range(400):
        paras = extract_paragraphs(page(seed))
        if paras:
            docs.append((paras, ["en", "ja", "de", ""][seed % 4]))
    assert len(docs) > 300
    _same(docs, monkeypatch)


@pytest.mark.shared_data("gold", "cleaneval")
def test_features_and_labels_equal_the_plain_path_on_real_pages(monkeypatch):
    files = sorted(glob.glob(os.path.join(shared_data("gold", "cleaneval"), "**", "*.htm*"),
                             recursive=True))[:120]
    assert files
    docs = []
    for f in files:
        with open(f, "rb") as fh:
            paras = extract_paragraphs(fh.read())
        if paras:
            docs.append((paras, boilerplate.resolve_lang(paras, None)))
    _same(docs, monkeypatch)


def _lake_documents(path, lake):
    from support.lakegen import read_lake
    from warclake.tasks.extract.archive import extract_archive
    from warclake.tasks.extract.config import ExtractConfig

    extract_archive(str(path), "D", str(lake), ExtractConfig.from_langs("all", boilerplate="sieve"))
    docs, ledger, _ = read_lake(str(lake), "D", path.name)
    return ([(d["url"], d["text"], d["lang"], d["lang_score"], d["paragraph_labels"]) for d in docs],
            [(r["warc_offset"], r["outcome"]) for r in ledger])


def test_extraction_equals_the_plain_path_document_for_document(tmp_path, monkeypatch):
    """Whole archives of tricky pages through extract_archive: the same documents, texts,
    languages, scores and labels with every fast path as with the plain definitions."""
    from support.lakegen import write_warc
    from warclake.tasks.extract import record as extract_record

    path = tmp_path / "tricky.warc.gz"
    write_warc(path, [(f"http://site{seed % 7}.example/{seed}", 200, "text/html; charset=utf-8",
                       page(seed).encode("utf-8", "surrogatepass"), {}) for seed in range(150)])
    fast = _lake_documents(path, tmp_path / "fast")
    _clear_caches()
    use_reference(monkeypatch)
    monkeypatch.setattr(features, "_COMPILED", None)   # the plain side: no compiled features
    monkeypatch.setattr(compiled, "_MARGIN", None)
    monkeypatch.setattr(extract_record, "_leading_text",
                        lambda paragraphs, chars: "\n".join(p.plain for p in paragraphs))
    plain = _lake_documents(path, tmp_path / "plain")
    _clear_caches()
    assert len(fast[0]) > 100
    assert fast == plain

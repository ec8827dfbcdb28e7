"""Character n-gram signatures and text hashes, computed for many texts at once with numpy.

- Text hash (paragraphs, clean documents): 64 bits, ``mix(sum of mix(position << 21 | code
  point) + length x L + seed)``: a sum of one mixed value per character, so numpy computes
  it for a whole batch with one ``reduceat``.
- MinHash (documents): ``num_perm`` values by one-permutation hashing: each character
  n-gram's 64-bit hash falls in a bin (its high 32 bits scaled to ``num_perm``) and every
  bin keeps the smallest low 32 bits it gets; an empty bin takes the value of the first
  filled bin of its own fixed probe sequence (:func:`densify`). One hash per n-gram instead
  of one per n-gram and permutation; two texts' share of equal values still estimates the
  Jaccard similarity of their n-gram sets. Characters, not words, so Chinese and Japanese
  need no tokenizer.
- SimHash (paragraphs): 64 bits, each the majority vote of that bit over the n-gram hashes.
- LSH band keys: the MinHash split into ``bands`` groups of ``rows``, each hashed to 64 bits.

Texts are handled in batches: all code points of a batch in one array, an n-gram hash
per position from a polynomial over ``n`` consecutive code points, the positions where an
n-gram would cross into the next text masked out, and the per-text reduction done with
``reduceat``. No Python work per n-gram, and no Python object per text beyond its string.
``warclake.tasks.native.corpus_signatures`` computes the same values in one compiled pass
per document; this module is its reference.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: spreads every input bit over all 64 output bits."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def ngram_hashes(texts: list[str], n: int) -> tuple[np.ndarray, np.ndarray]:
    """64-bit hashes of every character n-gram of every text, and the start of each text's
    run in that array (a text shorter than ``n`` counts as one n-gram, an empty one as none).
    Returns (hashes uint64, starts int64 of len(texts)+1)."""
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    if lengths.sum() == 0:
        return np.zeros(0, np.uint64), np.zeros(len(texts) + 1, np.int64)
    cps = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    ends = np.cumsum(lengths)
    text_start = ends - lengths
    total = int(ends[-1])
    # h[i] = sum_k cp[i+k] * M^k (mod 2^64) over the n characters from i
    m = np.uint64(0x9E3779B97F4A7C15)
    h = np.zeros(total, np.uint64)
    mult = np.uint64(1)
    with np.errstate(over="ignore"):
        for k in range(min(n, total)):   # (a batch may be shorter than one n-gram)
            h[: total - k] += cps[k:] * mult
            mult = mult * m
        h = _mix(h ^ np.uint64(n))
    # a text of length L >= n has L-n+1 n-grams starting at its first L-n+1 positions;
    # a shorter non-empty text keeps one: its hash over its own characters
    counts = np.where(lengths >= n, lengths - n + 1, np.minimum(lengths, 1))
    short = np.nonzero((lengths < n) & (lengths > 0))[0]
    if short.size:
        with np.errstate(over="ignore"):
            for i in short:
                s, e = int(text_start[i]), int(ends[i])
                acc = np.uint64(0)
                mult = np.uint64(1)
                for k in range(s, e):
                    acc = acc + cps[k] * mult
                    mult = mult * m
                h[s] = _mix(np.array([acc ^ np.uint64(n)], np.uint64))[0]
    keep = np.repeat(text_start, counts) + _ranges(counts)
    starts = np.zeros(len(texts) + 1, np.int64)
    np.cumsum(counts, out=starts[1:])
    return h[keep], starts


_CP_BITS = np.uint64(21)
_HASH_SEED = np.uint64(0x5EEDC0DE7E57AA5E)
_LEN_MUL = np.uint64(0xD6E8FEB86659FD93)
_BIN_SEED = 0xB1A5ED0DDE45EED


def text_hashes(texts: list[str]) -> np.ndarray:
    """(len(texts),) int64 text hash of each text (see the module's docstring)."""
    out = np.zeros(len(texts), np.uint64)
    for lo, hi in _batches(texts, 1 << 21):
        batch = texts[lo:hi]
        lengths = np.fromiter(map(len, batch), dtype=np.int64, count=len(batch))
        sums = np.zeros(len(batch), np.uint64)
        if lengths.sum():
            cps = np.frombuffer("".join(batch).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
            pos = _ranges(lengths).astype(np.uint64)
            with np.errstate(over="ignore"):
                terms = _mix((pos << _CP_BITS) | cps)
            nonempty = np.nonzero(lengths)[0]
            starts = (np.cumsum(lengths) - lengths)[nonempty]
            sums[nonempty] = np.add.reduceat(terms, starts, dtype=np.uint64)
        with np.errstate(over="ignore"):
            out[lo:hi] = _mix(sums + lengths.astype(np.uint64) * _LEN_MUL + _HASH_SEED)
    return out.view(np.int64)


def _ranges(counts: np.ndarray) -> np.ndarray:
    """0..c-1 for each c in counts, concatenated."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    offsets = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(total, dtype=np.int64) - offsets


EMPTY_MINHASH = np.uint32(0xFFFFFFFF)


def _hashed_batches(texts: list[str], n: int, batch_ngrams: int):
    """Per batch of texts with at least one n-gram: its first index, the n-gram hashes, their
    start per text, and the batch's texts that have n-grams."""
    for lo, hi in _batches(texts, batch_ngrams):
        h, starts = ngram_hashes(texts[lo:hi], n)
        nonempty = np.nonzero(starts[1:] > starts[:-1])[0]
        if nonempty.size:
            yield lo, h, starts, nonempty


@lru_cache(maxsize=4096)
def probe_sequence(bin_: int, bins: int) -> tuple[int, ...]:
    """The bins an empty bin ``bin_`` looks at, in order, for a value: 8 x ``bins`` hashed
    probes, then every other bin from the next one on (so a filled bin is always found)."""
    with np.errstate(over="ignore"):
        t = np.arange(1, 8 * bins + 1, dtype=np.uint64)
        hashed = _mix(np.uint64(_BIN_SEED) ^ (np.uint64(bin_) << np.uint64(32)) ^ t) % np.uint64(bins)
    return tuple(hashed.astype(np.int64).tolist() + [(bin_ + k) % bins for k in range(1, bins)])


def densify(row: np.ndarray, filled: np.ndarray) -> None:
    """Give each empty bin of a one-permutation MinHash row (at least one bin filled) the
    value of the first filled bin of its probe sequence. The sequence depends on the bin
    only, so two texts whose n-grams fill the same bins get equal values there."""
    bins = row.size
    src = row.copy()
    for b in np.nonzero(~filled)[0]:
        for j in probe_sequence(int(b), bins):
            if filled[j]:
                row[b] = src[j]
                break


def minhash(texts: list[str], n: int, num_perm: int, batch_ngrams: int = 1 << 21) -> np.ndarray:
    """(len(texts), num_perm) uint32 one-permutation MinHash signatures; an empty text's row
    is all 0xFFFFFFFF."""
    out = np.full((len(texts), num_perm), EMPTY_MINHASH, np.uint32)
    for lo, h, starts, nonempty in _hashed_batches(texts, n, batch_ngrams):
        counts = np.diff(starts)
        text_of = np.repeat(np.arange(len(counts)), counts)
        with np.errstate(over="ignore"):
            bins = (((h >> np.uint64(32)) * np.uint64(num_perm)) >> np.uint64(32)).astype(np.int64)
        values = (h & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        cell = text_of * num_perm + bins
        cells = np.full(len(counts) * num_perm, EMPTY_MINHASH, np.uint32)
        np.minimum.at(cells, cell, values)
        filled = np.bincount(cell, minlength=cells.size).reshape(len(counts), num_perm) > 0
        rows = cells.reshape(len(counts), num_perm)
        for i in nonempty:
            if not filled[i].all():
                densify(rows[i], filled[i])
        out[lo + nonempty] = rows[nonempty]
    return out


def simhash64(texts: list[str], n: int, batch_ngrams: int = 1 << 19) -> np.ndarray:
    """(len(texts),) SimHash of each text's n-grams, as int64 (0 for an empty text)."""
    out = np.zeros(len(texts), np.uint64)
    for lo, h, starts, nonempty in _hashed_batches(texts, n, batch_ngrams):
        seg = starts[:-1][nonempty]
        half = (starts[1:] - starts[:-1])[nonempty]
        acc = np.zeros(len(nonempty), np.uint64)
        # one bit at a time over one byte column (uint8: an eighth of the memory traffic of
        # shifting the uint64 hashes); a 1-D reduceat per bit is far faster than one over an
        # (N, 64) array. Bit 8k+i of the hash is bit i of its byte k (little-endian).
        hb = h.view(np.uint8).reshape(-1, 8)
        for k in range(8):
            col = np.ascontiguousarray(hb[:, k])
            for i in range(8):
                ones = np.add.reduceat((col >> np.uint8(i)) & np.uint8(1), seg, dtype=np.uint32)
                acc |= (2 * ones > half).astype(np.uint64) << np.uint64(8 * k + i)
        out[lo + nonempty] = acc
    return out.view(np.int64)


def band_keys(sigs: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """(len, bands) int64: each band's ``rows`` MinHash values hashed together (with the
    band's number, so equal values in different bands are different keys). An empty
    text's keys are 0, which the banding step skips. All bands at once: a numpy call per
    row of a band, not per band and row."""
    n = sigs.shape[0]
    by_band = sigs[:, :bands * rows].reshape(n, bands, rows)
    with np.errstate(over="ignore"):
        keys = np.zeros((n, bands), np.uint64) + np.arange(1, bands + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        for r in range(rows):
            keys = _mix(keys ^ by_band[:, :, r])
    keys[(sigs == EMPTY_MINHASH).all(axis=1)] = 0
    return keys.view(np.int64)


def estimated_jaccard(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Share of equal MinHash values, row by row."""
    return (a == b).mean(axis=1)


def _batches(texts: list[str], limit: int):
    """(lo, hi) index ranges holding about ``limit`` characters each."""
    lo, acc = 0, 0
    for i, t in enumerate(texts):
        acc += len(t) + 1
        if acc >= limit:
            yield lo, i + 1
            lo, acc = i + 1, 0
    if lo < len(texts):
        yield lo, len(texts)


# ---- every signature of a batch of lake documents ------------------------------------

@dataclass
class Signed:
    """Signatures of a batch of documents: per paragraph (in document order) and per
    document."""
    para_hash: np.ndarray      # int64 text hash of the normalised paragraph
    para_simhash: np.ndarray   # uint64
    para_chars: np.ndarray     # int32 characters of the normalised paragraph
    para_paths: list | pa.Array  # CSS path of each paragraph ('' when absent); the compiled pass's: Arrow
    doc_paragraphs: np.ndarray  # int32 paragraphs per document
    clean_hash: np.ndarray     # int64 text hash of the clean text
    clean_chars: np.ndarray    # int32
    minhash: np.ndarray        # (documents, num_perm) uint32


# Paragraphs shorter than this (normalised characters) are left out of the compared text
# when longer ones remain: headings, buttons and product names of a template.
COMPARED_MIN_CHARS = 40


def compared_paragraphs(paths: list[str], labels: list | None, is_chrome, lengths: list[int]) -> list[int]:
    """Indexes of the paragraphs a document is compared by: the ones labelled good (all
    when none is), less those under a page-chrome path, less those under
    :data:`COMPARED_MIN_CHARS` characters, each step only when it leaves some. Chosen on
    the tuning part of the near-duplicate set (reports/corpus_eval.md): the same page
    under another site's template keeps more of its similarity, pages of one site do not
    gain any."""
    good = [i for i in range(len(paths)) if labels is not None and i < len(labels) and labels[i] == "good"]
    good = good or list(range(len(paths)))
    plain = [i for i in good if not is_chrome(paths[i])] or good
    return [i for i in plain if lengths[i] >= COMPARED_MIN_CHARS] or plain


def sign_documents_reference(texts: list[str], labels: list, is_chrome, para_ngram: int,
                             doc_ngram: int, num_perm: int) -> Signed:
    """The definition the compiled pass is checked against, paragraph by paragraph."""
    from warclake.tasks.corpus.signals.normalise import normalise, split_paragraphs

    paths: list[str] = []
    norms: list[str] = []
    per_doc: list[int] = []
    cleans: list[str] = []
    for text, labs in zip(texts, labels):
        paras = split_paragraphs(text)
        first = len(norms)
        for path, body in paras:
            paths.append(path)
            norms.append(normalise(body))
        per_doc.append(len(paras))
        keep = compared_paragraphs(paths[first:], labs, is_chrome, [len(x) for x in norms[first:]])
        cleans.append("\n".join(norms[first + i] for i in keep))
    return Signed(text_hashes(norms), simhash64(norms, para_ngram).view(np.uint64),
                  np.fromiter(map(len, norms), np.int32, len(norms)), paths,
                  np.array(per_doc, np.int32), text_hashes(cleans),
                  np.fromiter(map(len, cleans), np.int32, len(cleans)),
                  minhash(cleans, doc_ngram, num_perm))


def _sign_compiled(native, texts: list[str], labels: list, is_chrome, para_ngram: int,
                   doc_ngram: int, num_perm: int) -> Signed:
    from warclake.tasks.corpus.signals.normalise import normalised_document
    from warclake.tasks.corpus.signals.quality import is_chrome_path
    from warclake.tasks.extract.paragraph import PARA_SEP

    n_para = sum(t.count(PARA_SEP) + 1 for t in texts if t)
    n = len(texts)
    out = Signed(np.zeros(n_para, np.int64), np.zeros(n_para, np.uint64), np.zeros(n_para, np.int32),
                 [], np.zeros(n, np.int32), np.zeros(n, np.int64), np.zeros(n, np.int32),
                 np.full((n, num_perm), EMPTY_MINHASH, np.uint32))
    norms = [(native.simple_nfkc_lower(t) or normalised_document(t)) if t else "" for t in texts]
    got = native.sign_documents(texts, norms, list(labels),
                                is_chrome, para_ngram, doc_ngram, num_perm, COMPARED_MIN_CHARS,
                                out.para_hash, out.para_simhash, out.para_chars, out.para_paths,
                                out.clean_hash, out.clean_chars, out.minhash, out.doc_paragraphs,
                                is_chrome is is_chrome_path)
    if got != n_para:
        raise ValueError(f"compiled signatures cut {got} paragraphs, the separators say {n_para}")
    return out


# Documents for the import-time check of the compiled pass: paths and none, labels and
# none, markers, chrome paths, CJK, astral and combining characters, final sigma, NFKC
# forms, whitespace of every kind, empty paragraphs and texts, texts shorter than an n-gram.
CHECK_TEXTS = (
    ("body>div.nav>a\x1c\x02Home\x03 \x02News\x03\n\nbody>p\x1cThe  Quick\tbrown fox\u00a0jumps.\n\n"
     "body>footer\x1c(c) 2024", None),
    ("body>p\x1c今日は良い天気ですね。\U0002000b\U0001F600 ＡＢＣ ﬁ\n\nbody>p\x1cΟΔΟΣ ΑΣ\x02Β\x03\n\n"
     "body>p\x1ce\u0301 \u1e9b\u0323 \u3000x\u2028y\x1dz", ["good", "bad", "good"]),
    ("", None),
    ("no path at all\n\n\n\nbody>p\x1c\n\n\x1c\n\nbody>p\x1cab", ["good"]),
    ("body>div.sidebar\x1conly chrome here\n\nbody>nav\x1cand here", None),
    ("body>p\x1c" + "long paragraph text " * 400, ["good"] * 3),
    ("body>p\x1ca heading\n\nbody>p\x1c" + "a paragraph of more than forty characters, " * 2
     + "\n\nbody>nav>p\x1c" + "navigation " * 9, ["bad", "bad", "bad"]),
)

# Texts the one-look-up NFKC must give as unicodedata does (or leave to it): fullwidth and
# ligature forms, no-break and ideographic spaces, precomposed and combining letters,
# Hangul jamo and syllables, sigma, dotted capital I, astral characters.
NFKC_CHECK_TEXTS = ("Ｈｅｌｌｏ\u00a0Wörld \u3000ﬁ ½ ㎏ Ⅻ", "e\u0301 \u1100\u1161\u11a8 가\u11a8 각",
                    "ΟΔΟΣ ΑΣ\x02Β\x03 İstanbul", "\U0002000b\U0001F600 \u212a \u2126", "plain ascii text",
                    "Café naïve — “quoted” ’ …", "\u0b47\u0b3e \u0dd9\u0dcf \u1025\u102e")

STATUS, REASON = "python", "not loaded"
_COMPILED = None


def _load_compiled():
    """The compiled module when it is built, enabled and equal to the reference on
    :data:`CHECK_TEXTS`; else None, with a one-line warning (none for WARCLAKE_NATIVE=0)."""
    global STATUS, REASON
    from warclake.tasks.corpus.signals.quality import is_chrome_path
    from warclake.tasks.native import load_checked

    def check(native) -> None:
        from warclake.tasks.corpus.signals.normalise import normalised_document, simple_nfkc_lower_table

        native.configure_nfkc(simple_nfkc_lower_table())
        for text in NFKC_CHECK_TEXTS:
            fast = native.simple_nfkc_lower(text)
            if fast is not None and fast != normalised_document(text):
                raise ValueError("the one-look-up NFKC differs from unicodedata on a check text")
        texts, labels = [t for t, _ in CHECK_TEXTS], [lb for _, lb in CHECK_TEXTS]
        for ngrams in ((3, 5, 120), (1, 2, 7)):
            a = _sign_compiled(native, texts, labels, is_chrome_path, *ngrams)
            b = sign_documents_reference(texts, labels, is_chrome_path, *ngrams)
            if not signed_equal(a, b):
                raise ValueError("signatures differ from the reference on a check text")

    native, STATUS, REASON = load_checked("corpus_signatures", "signatures", "numpy signatures", check)
    return native


def signed_equal(a: Signed, b: Signed) -> bool:
    return a.para_paths == b.para_paths and all(
        np.array_equal(getattr(a, f), getattr(b, f))
        for f in ("para_hash", "para_simhash", "para_chars", "doc_paragraphs", "clean_hash",
                  "clean_chars", "minhash"))


def compiled_module():
    """The checked compiled module, or None; decided once per process."""
    global _COMPILED
    if STATUS == "python" and REASON == "not loaded":
        _COMPILED = _load_compiled()
    return _COMPILED


def sign_documents(texts: list[str], labels: list, is_chrome, para_ngram: int, doc_ngram: int,
                   num_perm: int, compiled: bool = True) -> Signed:
    """Every signature of a batch of lake texts (None counts as empty), with ``labels`` per
    text (a list of paragraph labels, or None) and ``is_chrome(path)`` deciding which
    paragraphs the document is compared by. The compiled pass when it is available and
    ``compiled``, else the reference: the same values either way."""
    texts = [t or "" for t in texts]
    native = compiled_module() if compiled else None
    if native is not None:
        return _sign_compiled(native, texts, labels, is_chrome, para_ngram, doc_ngram, num_perm)
    return sign_documents_reference(texts, labels, is_chrome, para_ngram, doc_ngram, num_perm)

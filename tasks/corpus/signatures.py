"""Character n-gram signatures, computed for many texts at once with numpy.

- MinHash (documents): ``num_perm`` minima of multiply-shift hashes of the text's
  character n-grams. Characters, not words, so Chinese and Japanese need no tokenizer.
- SimHash (paragraphs): 64 bits, each the majority vote of that bit over the n-gram hashes.
- LSH band keys: the MinHash split into ``bands`` groups of ``rows``, each hashed to 64 bits.

Texts are handled in batches: all code points of a batch in one array, an n-gram hash
per position from a polynomial over ``n`` consecutive code points, the positions where an
n-gram would cross into the next text masked out, and the per-text reduction done with
``reduceat``. No Python work per n-gram, and no Python object per text beyond its string.
"""
from __future__ import annotations

import numpy as np

_MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_SEED = 0x5EED_C0DE


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
        for k in range(n):
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


def _ranges(counts: np.ndarray) -> np.ndarray:
    """0..c-1 for each c in counts, concatenated."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    offsets = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(total, dtype=np.int64) - offsets


def permutations(num_perm: int, seed: int = _SEED) -> tuple[np.ndarray, np.ndarray]:
    """The (a, b) of each multiply-shift hash: a odd. Fixed by the seed, so signatures of
    separate runs and machines compare."""
    rng = np.random.Generator(np.random.PCG64(seed))
    a = rng.integers(1, 2**63, size=num_perm, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    b = rng.integers(0, 2**63, size=num_perm, dtype=np.uint64)
    return a, b


EMPTY_MINHASH = np.uint32(0xFFFFFFFF)


def _hashed_batches(texts: list[str], n: int, batch_ngrams: int):
    """Per batch of texts with at least one n-gram: its first index, the n-gram hashes, their
    start per text, and the batch's texts that have n-grams."""
    for lo, hi in _batches(texts, batch_ngrams):
        h, starts = ngram_hashes(texts[lo:hi], n)
        nonempty = np.nonzero(starts[1:] > starts[:-1])[0]
        if nonempty.size:
            yield lo, h, starts, nonempty


def minhash(texts: list[str], n: int, num_perm: int, batch_ngrams: int = 1 << 21) -> np.ndarray:
    """(len(texts), num_perm) uint32 MinHash signatures; an empty text's row is all 0xFFFFFFFF."""
    a, b = permutations(num_perm)
    out = np.full((len(texts), num_perm), EMPTY_MINHASH, np.uint32)
    for lo, h, starts, nonempty in _hashed_batches(texts, n, batch_ngrams):
        seg = starts[:-1][nonempty]
        with np.errstate(over="ignore"):
            for j in range(num_perm):
                # the top 32 bits of the minimum are the minimum of the top 32 bits: shift
                # the per-text minima only, not every n-gram's value
                m = np.minimum.reduceat(a[j] * h + b[j], seg)
                out[lo + nonempty, j] = (m >> np.uint64(32)).astype(np.uint32)
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
    text's keys are 0, which the banding step skips."""
    n = sigs.shape[0]
    keys = np.zeros((n, bands), np.uint64)
    empty = (sigs == EMPTY_MINHASH).all(axis=1)
    with np.errstate(over="ignore"):
        for bnd in range(bands):
            acc = np.full(n, np.uint64(bnd + 1) * np.uint64(0x9E3779B97F4A7C15), np.uint64)
            for r in range(rows):
                acc = _mix(acc ^ sigs[:, bnd * rows + r].astype(np.uint64))
            keys[:, bnd] = acc
    keys[empty] = 0
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

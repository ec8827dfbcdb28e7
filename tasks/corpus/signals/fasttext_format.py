"""fastText's supervised model file (``.bin``, format version 11 or 12): reading it into
numpy arrays for the compiled scorer (``tasks/native/corpus_fasttext.pyx``), writing one
from matrices (the tests' and benchmarks' models), and a plain Python definition of what
fastText's ``predict`` computes for one line (the compiled scorer's check).

The file: magic and version; the arguments (dim, ws, epoch, minCount, neg, wordNgrams,
loss, model, bucket, minn, maxn, lrUpdateRate as int32, t as double); the dictionary
(size, words, labels as int32, tokens and the pruned index's size as int64, then per entry
its UTF-8 bytes, a NUL, its count as int64 and its type as int8: 0 word, 1 label); the
input matrix (a quantised flag byte, rows and columns as int64, float32 values): one row
per word then ``bucket`` rows of hashed character and word n-grams; the output matrix the
same, one row per label.

What ``predict`` computes for a line (fastText 0.9's ``Dictionary::getLine``,
``Model::computeHidden`` and the losses' ``predict``):

* tokens are the runs of bytes between `` \\n\\r\\t\\v\\f\\0``; the line's end (the package
  appends ``\\n``) is the token ``</s>``, and a token ``</s>`` ends the line;
* a token in the dictionary is its row (with its character n-grams when ``maxn`` > 0); a
  token not in it and not starting with ``__label__`` has only its character n-grams; a
  label is left out;
* character n-grams: of ``<token>``, every run of ``minn``..``maxn`` UTF-8 characters but
  the bare ``<`` and ``>``, row ``words + hash % bucket``;
* word n-grams (``wordNgrams`` > 1): over the hashes of the word tokens (``</s>``
  included), ``h = h * 116049371 + next`` in 64 bits from each token's hash sign-extended,
  row ``words + h % bucket``;
* the hash is FNV-1a over the bytes taken as signed chars (a byte of 0x80 or more is
  xored sign-extended);
* the hidden vector is the rows' float32 sum in that order (each token's rows, then the
  word n-grams) times float32(1 / rows); no row: no prediction;
* softmax: each label's float32 dot product, ``exp(x - max)``, divided by their sum;
  one-vs-all (and negative sampling): fastText's 512-entry sigmoid table; hierarchical
  softmax: the product down the Huffman tree of the label counts, a branch dropped once its
  log score falls below log(1e-5);
* the probability reported is ``exp(log(p + 1e-5))`` in float32.
"""
from __future__ import annotations

import math
import os
import re
import struct
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

MAGIC, VERSION = 793712314, 12
LOSS_HS, LOSS_NS, LOSS_SOFTMAX, LOSS_OVA = 1, 2, 3, 4
LOSS_NAMES = {LOSS_HS: "hs", LOSS_NS: "ns", LOSS_SOFTMAX: "softmax", LOSS_OVA: "ova"}
MODEL_SUPERVISED = 3
EOS = b"</s>"
LABEL_PREFIX = b"__label__"
_ARGS = struct.Struct("<12id")
_DICT = struct.Struct("<iiiqq")


class UnsupportedModel(ValueError):
    """A fastText file the compiled scorer does not read (quantised, not supervised...)."""


@dataclass
class FastTextFile:
    dim: int
    word_ngrams: int
    loss: int
    bucket: int
    minn: int
    maxn: int
    nwords: int
    entries: list[bytes]       # words then labels, as in the file
    types: np.ndarray          # int8 per entry: 0 word, 1 label
    counts: np.ndarray         # int64 per entry
    input: np.ndarray          # float32 (nwords + bucket, dim)
    output: np.ndarray         # float32 (nlabels, dim)

    @property
    def labels(self) -> list[bytes]:
        return self.entries[self.nwords:]


def read_model(path: str) -> FastTextFile:
    """The model in ``path``; UnsupportedModel (one line) for a file the scorer does not read."""
    with open(path, "rb") as fh:
        data = fh.read()
    return parse_model(data, path)


def parse_model(data: bytes, name: str = "model") -> FastTextFile:
    def fail(why: str):
        raise UnsupportedModel(f"fastText model {name}: {why}")

    if len(data) < 8 + _ARGS.size + _DICT.size:
        fail("too short for a fastText file")
    magic, version = struct.unpack_from("<ii", data, 0)
    if magic != MAGIC or not 11 <= version <= VERSION:
        fail(f"not a fastText model of format 11-{VERSION} (magic {magic}, version {version})")
    (dim, _ws, _epoch, _min_count, _neg, word_ngrams, loss, model, bucket, minn, maxn, _lr_update,
     _t) = _ARGS.unpack_from(data, 8)
    if model != MODEL_SUPERVISED:
        fail("not a supervised classifier")
    if version == 11:
        maxn = 0   # fastText's reading of format 11 classifiers: no character n-grams
    if loss not in LOSS_NAMES:
        fail(f"unknown loss {loss}")
    if dim < 1 or bucket < 0 or ((word_ngrams > 1 or maxn > 0) and bucket < 1):
        fail(f"inconsistent arguments (dim {dim}, bucket {bucket}, wordNgrams {word_ngrams}, maxn {maxn})")
    pos = 8 + _ARGS.size
    size, nwords, nlabels, _ntokens, prune_size = _DICT.unpack_from(data, pos)
    pos += _DICT.size
    if size != nwords + nlabels or nwords < 0 or nlabels < 1:
        fail("inconsistent dictionary sizes")
    entries, counts, types = [], np.empty(size, np.int64), np.empty(size, np.int8)
    for i in range(size):
        end = data.find(b"\0", pos)
        if end < 0 or end + 9 > len(data):
            fail("dictionary cut short")
        entries.append(data[pos:end])
        counts[i], types[i] = struct.unpack_from("<qb", data, end + 1)
        pos = end + 10
    if (types[:nwords] != 0).any() or (types[nwords:] != 1).any():
        fail("dictionary entries are not words then labels")
    if prune_size >= 0:
        fail("a pruned dictionary (a quantised .ftz model): use the .bin model, or install the "
             "fasttext package (the models extra) to score with it")
    matrices = []
    for what, rows in (("input", nwords + bucket), ("output", nlabels)):
        if pos + 17 > len(data):
            fail(f"{what} matrix cut short")
        if data[pos]:
            fail(f"a quantised {what} matrix (a .ftz model): use the .bin model, or install the "
                 "fasttext package (the models extra) to score with it")
        m, n = struct.unpack_from("<qq", data, pos + 1)
        pos += 17
        if m != rows or n != dim:
            fail(f"{what} matrix of {m} x {n}, expected {rows} x {dim}")
        if pos + 4 * m * n > len(data):
            fail(f"{what} matrix cut short")
        matrices.append(np.frombuffer(data, "<f4", m * n, pos).reshape(m, n))
        pos += 4 * m * n
    return FastTextFile(dim, word_ngrams, loss, bucket, minn, maxn, nwords, entries, types, counts, *matrices)


def write_model(path: str | os.PathLike | BinaryIO, words: list[tuple[str, int]], labels: list[tuple[str, int]], input_matrix,
                output_matrix, word_ngrams: int = 1, bucket: int = 0, loss: int = LOSS_SOFTMAX,
                minn: int = 0, maxn: int = 0) -> None:
    """A supervised model file (``path``: a file name or a binary file) that
    ``fasttext.load_model`` reads. ``words`` and ``labels``:
    (token, count); ``input_matrix``: float32, one row per word then ``bucket`` rows of
    hashed n-grams; ``output_matrix``: one row per label."""
    rows, dim = input_matrix.shape
    if rows != len(words) + bucket or output_matrix.shape != (len(labels), dim):
        raise ValueError("matrix shapes do not match the words, labels and bucket")
    if (word_ngrams > 1 or maxn > 0) and bucket < 1:
        raise ValueError("word and character n-grams need a bucket")
    out = [struct.pack("<ii", MAGIC, VERSION),
           _ARGS.pack(dim, 5, 5, 1, 5, word_ngrams, loss, MODEL_SUPERVISED, bucket, minn, maxn, 100, 1e-4),
           _DICT.pack(len(words) + len(labels), len(words), len(labels), sum(c for _, c in words), -1)]
    for (token, count), kind in [(e, 0) for e in words] + [(e, 1) for e in labels]:
        out.append(token.encode() + b"\0" + struct.pack("<qb", count, kind))
    for matrix in (input_matrix, output_matrix):
        out.append(b"\0" + struct.pack("<qq", *matrix.shape) + np.asarray(matrix, "<f4").tobytes())
    if not isinstance(path, (str, os.PathLike)):
        path.write(b"".join(out))
        return
    with open(path, "wb") as fh:
        fh.write(b"".join(out))


# -- the Python definition of predict -----------------------------------------------------

_SEPARATORS = re.compile(rb"[ \n\r\t\v\f\0]+")
_M32, _M64 = 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF


def fnv_hash(token: bytes) -> int:
    """fastText's word hash: FNV-1a, each byte xored as a sign-extended char."""
    h = 2166136261
    for c in token:
        h = ((h ^ (c | 0xFFFFFF00 if c >= 0x80 else c)) * 16777619) & _M32
    return h


def _signed64(h: int) -> int:
    """A 32-bit hash as fastText's int32 read into uint64 (sign-extended)."""
    return h | 0xFFFFFFFF00000000 if h & 0x80000000 else h


class Reference:
    """fastText's ``predict`` for one model, in Python and numpy float32 (slow: for checks)."""

    def __init__(self, m: FastTextFile):
        self.m = m
        self.ids = {w: i for i, w in enumerate(m.entries)}    # a repeated entry: the last one
        self.tree = huffman_tree(m.counts[m.nwords:]) if m.loss == LOSS_HS else None

    def subwords(self, token: bytes) -> list[int]:
        m, w = self.m, b"<" + token + b">"
        out = []
        for i in range(len(w)):
            if w[i] & 0xC0 == 0x80:
                continue
            j, n = i, 1
            while j < len(w) and n <= m.maxn:
                j += 1
                while j < len(w) and w[j] & 0xC0 == 0x80:
                    j += 1
                if n >= m.minn and not (n == 1 and (i == 0 or j == len(w))):
                    out.append(m.nwords + fnv_hash(w[i:j]) % m.bucket)
                n += 1
        return out

    def rows(self, line: bytes) -> list[int]:
        """The input rows of a line (without its line feed), in fastText's order."""
        m = self.m
        rows, hashes = [], []
        for token in [t for t in _SEPARATORS.split(line) if t] + [EOS]:
            wid = self.ids.get(token, -1)
            kind = m.types[wid] if wid >= 0 else (1 if token.startswith(LABEL_PREFIX) else 0)
            if kind == 0:
                if wid >= 0:
                    rows.append(wid)
                if m.maxn > 0 and token != EOS:
                    rows += self.subwords(token)
                hashes.append(fnv_hash(token))
            if token == EOS:
                break
        for i in range(len(hashes)):
            h = _signed64(hashes[i])
            for j in range(i + 1, min(len(hashes), i + m.word_ngrams)):
                h = (h * 116049371 + _signed64(hashes[j])) & _M64
                rows.append(m.nwords + h % m.bucket)
        return rows

    def probability(self, line: bytes, label: int) -> float | None:
        """fastText's reported probability of label number ``label`` (-1: a label the model
        lacks, 0.0) for ``line``; None when no row is found."""
        rows = self.rows(line)
        if not rows:
            return None
        m = self.m
        hidden = np.zeros(m.dim, np.float32)
        for r in rows:
            hidden += m.input[r]
        hidden *= np.float32(1.0 / len(rows))

        def dot(row):
            return np.cumsum(m.output[row] * hidden, dtype=np.float32)[-1]    # sequential, in float32

        if m.loss == LOSS_HS:
            return float(np.float32(math.exp(self._tree_score(label, dot))))
        if label < 0:
            return 0.0
        if m.loss == LOSS_SOFTMAX:
            out = np.array([dot(i) for i in range(len(m.labels))], np.float32)
            e = np.array([math.exp(float(x - out.max())) for x in out], np.float32)
            z = np.float32(0)
            for x in e:
                z = np.float32(z + x)
            p = np.float32(e[label] / z)
        else:
            p = sigmoid_table(dot(label))
        return float(np.float32(math.exp(np.float32(math.log(float(p) + 1e-5)))))

    def _tree_score(self, label: int, dot) -> float:
        """The log score of the label's leaf; -inf when a branch on its path is dropped or
        the label is not in the model (``predict`` then does not report it: 0.0)."""
        if label < 0:
            return float("-inf")
        if self.tree is None:
            raise ValueError("the model has no Huffman tree: its loss is not the hierarchical softmax")
        left, right, parent = self.tree
        osz = len(left) // 2 + 1
        path, node = [], label
        while parent[node] >= 0:
            path.append(node)
            node = parent[node]
        floor = np.float32(math.log(1e-5))
        score = np.float32(0)
        for child in reversed(path):
            if score < floor:
                return float("-inf")
            node = parent[child]
            f = np.float32(1.0 / float(np.float32(1) + np.float32(math.exp(-float(dot(node - osz))))))
            x = np.float32(1.0 - float(f)) if child == left[node] else f
            score = np.float32(score + np.float32(math.log(float(x) + 1e-5)))
        return float("-inf") if score < floor else float(score)


def huffman_tree(counts) -> tuple[list[int], list[int], list[int]]:
    """(left, right, parent) of the 2n - 1 nodes fastText's hierarchical softmax builds
    from the label counts (leaves 0..n-1, the root last; -1: none)."""
    n = len(counts)
    total = 2 * n - 1
    count = [int(c) for c in counts] + [10 ** 15] * (n - 1)
    left, right, parent = [-1] * total, [-1] * total, [-1] * total
    leaf, node = n - 1, n
    for i in range(n, total):
        mini = [0, 0]
        for j in range(2):
            if leaf >= 0 and count[leaf] < count[node]:
                mini[j], leaf = leaf, leaf - 1
            else:
                mini[j], node = node, node + 1
        left[i], right[i] = mini
        count[i] = count[mini[0]] + count[mini[1]]
        parent[mini[0]] = parent[mini[1]] = i
    return left, right, parent


def sigmoid_table(x) -> np.float32:
    """fastText's sigmoid of its one-vs-all loss: a table of 513 values over [-8, 8]."""
    x = np.float32(x)
    if x < -8:
        return np.float32(0.0)
    if x > 8:
        return np.float32(1.0)
    i = int(np.float32(np.float32(np.float32(np.float32(x + np.float32(8)) * np.float32(512)) / np.float32(8))
                       / np.float32(2)))
    t = np.float32(np.float32(i * 16) / np.float32(512) - np.float32(8))
    return np.float32(1.0 / (1.0 + float(np.float32(math.exp(-float(t))))))

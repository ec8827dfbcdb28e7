"""The compiled fastText scorer (``warclake.tasks.native.corpus_fasttext``): a table of lake
documents scored from its Arrow buffers, and the choice between it and the ``fasttext``
package.

The scorer is used only when it gives the Python definition's probabilities
(``fasttext_format.Reference``) on the check documents at import, for each loss it reads
(``native.load_checked``); ``WARCLAKE_NATIVE=0`` turns it off. The documents' lines are
``models.fasttext_lines``'.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from warclake.tasks.corpus.signals.archive_pass import _buffers, _labels, arrow_numbers, compiled_columns
from warclake.tasks.corpus.signals.fasttext_format import (
    LOSS_HS,
    LOSS_OVA,
    LOSS_SOFTMAX,
    FastTextFile,
    Reference,
    huffman_tree,
    parse_model,
)

if TYPE_CHECKING:
    from warclake.tasks.native import corpus_fasttext

STATUS, REASON = "python", "not loaded"
_COMPILED = None
TOLERANCE = 1e-5     # fastText computes in float32; the check allows this much


def compiled_module():
    """The checked compiled scorer, or None; decided once per process."""
    global _COMPILED, STATUS, REASON
    if STATUS == "python" and REASON == "not loaded":
        from warclake.tasks.native import load_checked

        # (the package is what runs otherwise; the check is against the Python definition)
        _COMPILED, STATUS, REASON = load_checked("corpus_fasttext", "fastText scorer",
                                                 "fasttext package", _check)
        if STATUS == "compiled":
            REASON = "checked against fasttext_format.Reference"
    return _COMPILED


class Scorer(Protocol):
    """The compiled scorer's module (``corpus_fasttext``, or an AddressSanitizer build's)."""
    Model: type[corpus_fasttext.Model]

    def fnv_hash(self, token: bytes) -> int: ...

    def score_documents(self, model: corpus_fasttext.Model, offsets: NDArray[np.int64], data: NDArray[np.uint8],
                        valid: NDArray[np.uint8], lab_off: NDArray[np.int64], lab_valid: NDArray[np.uint8],
                        lab_code: NDArray[np.int8], label: int, out: NDArray[np.float64],
                        scored: NDArray[np.uint8]) -> None: ...


if TYPE_CHECKING:
    _MODULE: Scorer = corpus_fasttext   # the stub of the compiled module gives what Scorer says


@dataclass(frozen=True)
class Compiled:
    native: Scorer                   # the module (an AddressSanitizer build's, in the fuzzer)
    model: corpus_fasttext.Model     # its Model


def compiled_model(native: Scorer, m: FastTextFile) -> Compiled:
    """The compiled scorer's model of a read file."""
    data = b"".join(m.entries)
    off = np.zeros(len(m.entries) + 1, np.int64)
    np.cumsum([len(e) for e in m.entries], out=off[1:])
    empty = np.zeros(0, np.int32)
    left = parent = empty
    if m.loss == LOSS_HS:
        lt, _, pt = huffman_tree(m.counts[m.nwords:])
        left, parent = np.array(lt, np.int32), np.array(pt, np.int32)
    return Compiled(native, native.Model(np.frombuffer(data, np.uint8) if data else np.zeros(0, np.uint8), off, m.types,
                        np.ascontiguousarray(m.input), np.ascontiguousarray(m.output), m.nwords, m.word_ngrams,
                        m.bucket, m.minn, m.maxn, m.loss, left, parent))


def score_table(compiled: Compiled, docs: pa.Table, label: str) -> pa.Array | None:
    """The probability of ``label`` for each document (``text``, ``paragraph_labels``),
    clipped to [0, 1] (fastText's carries a 1e-5 floor); null for a document with no line or
    no word the model knows. None when the columns are not a string column and a list of
    strings (the caller takes the package's way)."""
    if not compiled_columns(docs):
        return None
    n = docs.num_rows
    lab_off, lab_valid, lab_code, _ = _labels(docs)
    model = compiled.model
    want = model.label_index(label.encode())
    out = np.zeros(n, np.float64)
    scored = np.zeros(n, np.uint8)
    lo = 0
    for chunk in docs.column("text").chunks:
        hi = lo + len(chunk)
        if hi > lo:
            offsets, data, valid = _buffers(chunk)
            compiled.native.score_documents(model, offsets, data, valid, lab_off[lo:hi + 1], lab_valid[lo:hi],
                                            lab_code, want, out[lo:hi], scored[lo:hi])
        lo = hi
    np.clip(out, 0.0, 1.0, out=out)
    return arrow_numbers(out, scored == 0)


def reference_scores(m: FastTextFile, lines: list[str], label: str) -> list[float | None]:
    """``Reference``'s probabilities of ``label`` for lines (None for an empty line or one
    with no row), clipped as the scores are."""
    ref = Reference(m)
    labels = [lab.decode("utf-8", "replace") for lab in m.labels]
    want = labels.index(label) if label in labels else -1
    out = []
    for line in lines:
        p = ref.probability(line.encode(), want) if line else None
        out.append(None if p is None else min(1.0, max(0.0, p)))
    return out


# -- the check at import --------------------------------------------------------------------

CHECK_DOCS = (
    ("nav\x1cHome About\n\nbody>p\x1cthe quick brown fox \x02jumps\x03 over the lazy dog\n\n"
     "body>p\x1cCaf\u00e9 na\u00efve \u65e5\u672c\u8a9e \U0001F600 word\tword\x0bword\x0cword\rend", ["bad", "good", "good"]),
    ("p\x1cthe dog\n\np\x1c\n\np\x1cfox </s> never read", None),
    ("p\x1cthe fox </s>\n\np\x1cnever read", None),
    ("p\x1c__label__hq the fox\n\np\x1c\u00a0fox\u3000dog", ["good", "good", "good"]),
    ("p\x1cunknown tokens only", None),
    ("p\x1c\x02\x03", None),
    ("", None),
    ("p\x1c \n\nq\x1c", None),
    ("no path the fox\n\n\n\nx\x1cfox", ["good", "bad", "good"]),
)
CHECK_WORDS = ("the", "fox", "dog", "quick", "</s>", "caf\u00e9", "\u65e5\u672c\u8a9e", "word", "fox</s>")


def check_models() -> list[tuple[FastTextFile, str]]:
    """Small models of every loss, with and without word and character n-grams, in memory."""
    import io

    from warclake.tasks.corpus.signals.fasttext_format import write_model

    rng = np.random.default_rng(2026)
    out = []
    for loss, labels, ngrams, bucket, minn, maxn in ((LOSS_SOFTMAX, 3, 1, 0, 0, 0), (LOSS_SOFTMAX, 2, 3, 17, 2, 4),
                                                     (LOSS_HS, 5, 2, 11, 0, 0), (LOSS_OVA, 3, 2, 13, 1, 3)):
        words = [(w, 10 - i) for i, w in enumerate(CHECK_WORDS)]
        labs = [(f"__label__{k}", 9 - k) for k in range(labels)]
        inp = rng.normal(0, 1, (len(words) + bucket, 6)).astype(np.float32)
        outm = rng.normal(0, 1, (labels, 6)).astype(np.float32)
        buf = io.BytesIO()
        write_model(buf, words, labs, inp, outm, ngrams, bucket, loss, minn, maxn)
        out.append((parse_model(buf.getvalue()), "__label__1"))
    return out


def _check(native) -> None:
    from warclake.tasks.corpus.signals.fasttext_format import fnv_hash
    from warclake.tasks.corpus.signals.models import fasttext_lines

    for token in (b"", b"the", "caf\u00e9".encode(), b"\xff\x80", "\U0001F600".encode()):
        if native.fnv_hash(token) != fnv_hash(token):
            raise ValueError("the word hash differs from fastText's")
    table = pa.table({"text": pa.array([d[0] for d in CHECK_DOCS], pa.string()),
                      "paragraph_labels": pa.array([d[1] for d in CHECK_DOCS], pa.list_(pa.string()))})
    lines = fasttext_lines(table)
    for m, label in check_models():
        scores = score_table(compiled_model(native, m), table, label)
        if scores is None:
            raise ValueError("the check documents' columns are not those the compiled scorer reads")
        got = scores.to_pylist()
        want = reference_scores(m, lines, label)
        if not scores_equal(got, want):
            raise ValueError(f"the scores differ from the definition's ({got} against {want})")


def scores_equal(a: list, b: list, tolerance: float = TOLERANCE) -> bool:
    """The same documents scored, each within ``tolerance``."""
    return len(a) == len(b) and all((x is None) == (y is None) and (x is None or abs(x - y) <= tolerance)
                                    for x, y in zip(a, b))

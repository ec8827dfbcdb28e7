"""A supervised fastText model file written from its matrices: fastText's binary format
(version 12, softmax loss), which ``fasttext.load_model`` reads.

The models of the tests and benchmarks are made with it because fastText's own trainer
(``fasttext.train_supervised`` of fasttext-numpy2 0.10.4) stops with "Encountered NaN" on any
supervised input on the project's machines, whatever the learning rate, loss or threads.
fastText evaluates a supervised model as: the mean of the input rows of a line's words (and
of its hashed word n-grams, rows ``len(words) + hash % bucket``), times the output matrix,
then softmax over the labels.
"""
from __future__ import annotations

import struct

MAGIC, VERSION = 793712314, 12
LOSS_SOFTMAX, MODEL_SUPERVISED = 3, 3


def write_fasttext_model(path: str, words: list[tuple[str, int]], labels: list[tuple[str, int]], input_matrix,
                         output_matrix, word_ngrams: int = 1, bucket: int = 0) -> None:
    """``words`` and ``labels``: (token, count); ``input_matrix``: float32, one row per word
    then ``bucket`` rows of hashed word n-grams (``word_ngrams`` > 1 needs ``bucket`` > 0);
    ``output_matrix``: one row per label. No character n-grams (minn = maxn = 0)."""
    rows, dim = input_matrix.shape
    if rows != len(words) + bucket or output_matrix.shape != (len(labels), dim):
        raise ValueError("matrix shapes do not match the words, labels and bucket")
    if word_ngrams > 1 and bucket < 1:
        raise ValueError("word n-grams need a bucket")
    out = [struct.pack("<ii", MAGIC, VERSION)]
    # args: dim ws epoch minCount neg wordNgrams loss model bucket minn maxn lrUpdateRate, then t
    out.append(struct.pack("<12id", dim, 5, 5, 1, 5, word_ngrams, LOSS_SOFTMAX, MODEL_SUPERVISED, bucket,
                           0, 0, 100, 1e-4))
    # dictionary: size, words, labels, tokens, pruned index size (-1: not pruned), entries
    out.append(struct.pack("<iiiqq", len(words) + len(labels), len(words), len(labels),
                           sum(c for _, c in words), -1))
    for (token, count), kind in [(e, 0) for e in words] + [(e, 1) for e in labels]:
        out.append(token.encode() + b"\0" + struct.pack("<qb", count, kind))
    for matrix in (input_matrix, output_matrix):
        out.append(struct.pack("<?", False))   # not quantised
        out.append(struct.pack("<qq", *matrix.shape) + matrix.astype("<f4").tobytes())
    with open(path, "wb") as fh:
        fh.write(b"".join(out))

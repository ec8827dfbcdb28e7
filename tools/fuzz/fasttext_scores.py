"""Generated fastText models and lake documents through the compiled scorer, the ``fasttext``
package's ``predict`` and the Python definition (``fasttext_format.Reference``).

    python -m tools.fuzz.fasttext_scores --cases N [--seed S] [--start I] [--module FILE]

Case ``i`` of seed ``S`` is always the same (``--start I --cases 1`` replays it): a model of
one to six dimensions, one to five labels, a loss of softmax, hierarchical softmax,
one-vs-all or negative sampling, word n-grams of 1 to 3 and character n-grams (``minn``,
``maxn`` 0 to 4) or none, whose words are ASCII, Latin, CJK, astral, ``</s>`` and words
with bytes of 0x80 and over (the hash's signed-char quirk); and one to six documents (or
empty, or null) of paragraphs with and without CSS paths, made of those words, unknown
words, label-like tokens, ``</s>`` inside the text, every separator fastText splits on
(space, tab, vertical tab, form feed, NUL, carriage return, line feeds inside and between
paragraphs), Unicode spaces it does not split on, link markers, and now and then a very
long document or word. The label asked for is sometimes one the model lacks. Scores must
agree within 1e-5 (fastText computes in float32), and be missing for the same documents.
A crash of the compiled code kills the process: the last ``case`` line printed locates it.
Exit 1 on any difference; 2 when the compiled scorer or the package is missing.

``--module FILE`` loads the compiled module from FILE instead, e.g. a build under
AddressSanitizer (any memory error aborts with its report)::

    mkdir -p /tmp/asan/warclake/tasks/native && cp tasks/native/corpus_fasttext.pyx /tmp/asan/
    cython -3 /tmp/asan/corpus_fasttext.pyx -o /tmp/asan/corpus_fasttext.c
    gcc -shared -fPIC -O1 -g -fsanitize=address -fno-omit-frame-pointer \\
        -I"$(python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \\
        /tmp/asan/corpus_fasttext.c -o /tmp/asan/corpus_fasttext.so
    ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \\
        python -m tools.fuzz.fasttext_scores --module /tmp/asan/corpus_fasttext.so --cases 2000
"""
from __future__ import annotations

import os
import random
import sys
import tempfile

import numpy as np

from tools.fuzz.compare import compare_cases, load_module_file, parse_options

WORDS = ["the", "fox", "dog", "a", "of", "Caf\u00e9", "na\u00efve", "\u65e5\u672c\u8a9e", "\u4e2d\u6587", "\U0001F600",
         "\U0002000b", "e\u0301", "\u00ff\u0080", "x" * 30, "w\u00e9" * 15, "</s>", "fox</s>", "<s>", "-", "'s",
         "\u0430\u0431\u0432"]
OTHER = ["unknown", "FOX", "dog.", "__label__0", "__label__zz", "__label__", "</s>", "<", ">", "\u00e9", "\ufffd"]
SPACES = [" ", "  ", "\t", "\x0b", "\x0c", "\x00", "\r", "\n", "\r\n", "\u00a0", "\u3000", "\u2028", "\x85", "\x1f"]
MARKERS = ["\x02", "\x03"]
PATHS = ["body>p", "body>div.nav>ul>li", "", "html>body>article>p", "p\x02"]
LOSSES = (1, 2, 3, 4)    # hs, ns, softmax, ova


def model_case(rng: random.Random) -> dict:
    dim, labels = rng.randint(1, 6), rng.randint(1, 5)
    maxn = rng.choice((0, 0, 1, 2, 3, 4))
    minn = rng.randint(1, maxn) if maxn else 0
    ngrams = rng.choice((1, 1, 2, 3))
    bucket = rng.choice((1, 7, 50)) if (ngrams > 1 or maxn) else rng.choice((0, 0, 5))
    words = rng.sample(WORDS, rng.randint(0, len(WORDS)))
    if rng.random() < 0.1 and words:
        words.append(words[0])    # a repeated entry: fastText keeps the last
    return {"dim": dim, "labels": labels, "maxn": maxn, "minn": minn, "ngrams": ngrams, "bucket": bucket,
            "loss": rng.choice(LOSSES), "words": words, "seed": rng.randrange(1 << 30),
            "counts": [rng.randint(1, 50) for _ in range(labels)]}


def write_case_model(path: str, mc: dict) -> None:
    from warclake.tasks.corpus.signals.fasttext_format import write_model

    rng = np.random.default_rng(mc["seed"])
    words = [(w, 100 - i) for i, w in enumerate(mc["words"])]
    labels = [(f"__label__{k}", c) for k, c in enumerate(sorted(mc["counts"], reverse=True))]
    inp = rng.normal(0, 2, (len(words) + mc["bucket"], mc["dim"])).astype(np.float32)
    out = rng.normal(0, 2, (mc["labels"], mc["dim"])).astype(np.float32)
    write_model(path, words, labels, inp, out, mc["ngrams"], mc["bucket"], mc["loss"], mc["minn"], mc["maxn"])


def _body(rng: random.Random, words: list[str]) -> str:
    n = rng.choice((0, 1, 2, 3, 5, 8, 20, 60))
    if rng.random() < 0.02:
        n = 20_000                # a very long paragraph
    parts = []
    for _ in range(n):
        r = rng.random()
        if r < 0.45 and words:
            parts.append(rng.choice(words))
        elif r < 0.6:
            parts.append(rng.choice(OTHER))
        elif r < 0.68:
            parts.append(rng.choice(MARKERS))
        elif r < 0.7:
            parts.append("y" * rng.choice((100, 5000)))    # a long word
        else:
            parts.append(rng.choice(SPACES))
        if rng.random() < 0.6:
            parts.append(" ")
    return "".join(parts)


def docs_case(rng: random.Random, words: list[str]) -> tuple[list, list]:
    texts, labels = [], []
    for _ in range(rng.randint(1, 6)):
        r = rng.random()
        if r < 0.05:
            texts.append(None)
        elif r < 0.1:
            texts.append("")
        else:
            paras = []
            for _ in range(rng.randint(1, 8)):
                body = _body(rng, words)
                paras.append(body if rng.random() < 0.15 else rng.choice(PATHS) + "\x1c" + body)
            texts.append("\n\n".join(paras))
        if rng.random() < 0.3:
            labels.append(None)
        else:
            n = (texts[-1] or "").count("\n\n") + 1 + rng.choice((-2, -1, 0, 0, 0, 1))
            labels.append([rng.choice(("good", "good", "bad", "other")) for _ in range(max(0, n))])
    return texts, labels


def case(seed: int, i: int) -> tuple[dict, list, list, str]:
    """(model, texts, labels, the label asked for) of case ``i``."""
    rng = random.Random(f"{seed}:{i}")
    mc = model_case(rng)
    texts, labels = docs_case(rng, mc["words"])
    want = f"__label__{rng.randrange(mc['labels'])}" if rng.random() < 0.95 else "__label__missing"
    return mc, texts, labels, want


def main(argv: list[str] | None = None) -> int:
    import pyarrow as pa

    from warclake.tasks.corpus.signals import fasttext_native as fn
    from warclake.tasks.corpus.signals.fasttext_format import read_model
    from warclake.tasks.corpus.signals.models import fasttext_lines, package_scores

    opts = parse_options("fasttext_scores", __doc__, argv, 5_000)
    native = load_module_file("warclake.tasks.native.corpus_fasttext", opts.module) if opts.module \
        else fn.compiled_module()
    if native is None:
        print(f"fuzz_fasttext_scores: no compiled scorer ({fn.REASON})", file=sys.stderr)
        return 2
    try:
        import fasttext
    except ImportError:
        print("fuzz_fasttext_scores: the fasttext package is not installed (the models extra)", file=sys.stderr)
        return 2
    folder = tempfile.mkdtemp(prefix="fuzz-fasttext-")
    path = os.path.join(folder, "model.bin")

    def difference(i: int) -> str | None:
        mc, texts, labels, want = case(opts.seed, i)
        write_case_model(path, mc)
        table = pa.table({"text": pa.array(texts, pa.string()),
                          "paragraph_labels": pa.array(labels, pa.list_(pa.string()))})
        m = read_model(path)
        got = fn.score_table(fn.compiled_model(native, m), table, want).to_pylist()
        lines = fasttext_lines(table)
        package = package_scores(fasttext.load_model(path), lines, want)
        if not fn.scores_equal(got, package):
            return f"compiled {got} package {package}"
        reference = fn.reference_scores(m, lines, want)
        if not fn.scores_equal(reference, package):
            return f"definition {reference} package {package}"
        return None

    try:
        return compare_cases(opts, difference)
    finally:
        os.remove(path) if os.path.exists(path) else None
        os.rmdir(folder)


if __name__ == "__main__":
    raise SystemExit(main())

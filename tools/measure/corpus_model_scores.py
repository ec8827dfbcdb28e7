"""What a fastText classifier adds to the corpus stage's per-archive work: each archive of a
lake of N documents from real texts is signed (the per-archive step) and then scored with
a small fastText model (the model-score step), each timed in this process (CPU and wall
seconds); the figure is scoring's time over signing's. Then the archive is signed again with
the model (the signing pass scores the row groups it reads, as ``warclake corpus`` does when
it signs with a model): ``*_in_sign_pass_over_sign_cpu_pct`` is what that costs more than
signing alone; ``*_over_sign_cpu_pct`` is the model-score step on its own (reading the
documents again, as after a new model).

    python -m tools.measure.corpus_model_scores --docs 100000 [--dim 64] [--word-ngrams 2] [--lm] [--scorer package]
    python -m tools.measure.corpus_model_scores --from-lake LAKE --dump DUMP ...

The documents are those of ``corpus_scale --from-documents`` (sentences of the Dragnet and
CLEANEVAL gold texts under ``../shared/data/gold``: a navigation bar, 3-14 body paragraphs,
a footer). The model is made here, not downloaded: the gold texts' words, ``--dim``
dimensions, word bigrams hashed into ``--bucket`` rows, two labels, random weights (the
time of a prediction does not depend on the weights' values), written in fastText's format
(``tools/fasttext_file.py``). Loading the model is timed apart, once per process.
``--scorer package`` scores with the ``fasttext`` package's ``predict`` instead of the
compiled scorer. ``--from-lake`` measures an extracted lake's documents instead (real pages: many more
paragraphs and longer paths per document than the generated ones). ``--lm`` also times a bigram KenLM model (ARPA, from the same texts' counts) per paragraph.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import time
from collections import Counter

import numpy as np

from tools.fasttext_file import write_fasttext_model


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(fn):
    w, c = time.perf_counter(), _cpu()
    res = fn()
    return res, time.perf_counter() - w, _cpu() - c


def corpus_words(lake: str, limit_docs: int = 20_000) -> Counter:
    """Whitespace tokens of the lake's first documents (fastText's tokens)."""
    import glob

    import pyarrow.parquet as pq

    words: Counter = Counter()
    n = 0
    for path in sorted(glob.glob(os.path.join(lake, "documents", "*", "*.parquet"))):
        for text in pq.read_table(path, columns=["text"]).column("text").to_pylist():
            for p in text.split("\n\n"):
                words.update(p.split("\x1c", 1)[-1].split())
            n += 1
            if n >= limit_docs:
                return words
    return words


def make_fasttext(path: str, words: Counter, dim: int, word_ngrams: int, bucket: int, seed: int = 1) -> dict:
    vocab = [(w, c) for w, c in words.most_common() if "\0" not in w]   # fastText splits on NUL too
    rng = np.random.default_rng(seed)
    inp = rng.normal(0, 0.1, (len(vocab) + bucket, dim)).astype(np.float32)
    out = rng.normal(0, 0.1, (2, dim)).astype(np.float32)
    write_fasttext_model(path, vocab, [("__label__hq", 1), ("__label__cc", 1)], inp, out, word_ngrams, bucket)
    return {"words": len(vocab), "dim": dim, "word_ngrams": word_ngrams, "bucket": bucket,
            "mb": round(os.path.getsize(path) / 2**20, 1)}


def make_arpa(path: str, lake: str) -> dict:
    """A bigram model with absolute discounting and add-one unigram backoff, of the lake's
    normalised paragraphs (the stage's language-model tokens)."""
    import glob

    import pyarrow.parquet as pq

    from warclake.tasks.corpus.signals.normalise import normalise

    uni, bi, ctx = Counter(), Counter(), Counter()
    for f in sorted(glob.glob(os.path.join(lake, "documents", "*", "*.parquet")))[:1]:
        for text in pq.read_table(f, columns=["text"]).column("text").to_pylist()[:5000]:
            for p in text.split("\n\n"):
                seq = ["<s>"] + normalise(p.split("\x1c", 1)[-1]).split() + ["</s>"]
                uni.update(seq[1:])
                for h, w in zip(seq, seq[1:]):
                    bi[(h, w)] += 1
                    ctx[h] += 1
    vocab = sorted(set(uni) | {"<unk>"})
    total = sum(uni.values()) + len(vocab)
    p_uni = {w: (uni[w] + 1) / total for w in vocab}
    seen, followers = Counter(), Counter()
    for (h, w) in bi:
        seen[h] += p_uni[w]
        followers[h] += 1
    lines = ["\\data\\", f"ngram 1={len(vocab) + 1}", f"ngram 2={len(bi)}", "", "\\1-grams:"]
    for w in vocab + ["<s>"]:
        lp = -99.0 if w == "<s>" else math.log10(p_uni[w])
        bo = f"\t{math.log10(0.5 * followers[w] / ctx[w] / (1 - seen[w])):.6f}" if w in ctx else ""
        lines.append(f"{lp:.6f}\t{w}{bo}")
    lines += ["", "\\2-grams:"]
    lines += [f"{math.log10((c - 0.5) / ctx[h]):.6f}\t{h} {w}" for (h, w), c in bi.items()]
    with open(path, "w") as fh:
        fh.write("\n".join(lines + ["", "\\end\\", ""]))
    return {"unigrams": len(vocab), "bigrams": len(bi), "mb": round(os.path.getsize(path) / 2**20, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--docs-per-archive", type=int, default=10_000)
    ap.add_argument("--from-lake", default=None, metavar="LAKE",
                    help="measure on this extracted lake's dump (--dump) instead; its documents are copied")
    ap.add_argument("--dump", default=None, help="--from-lake: the dump")
    ap.add_argument("--dir", default=None, help="work folder (default: /tmp/warclake-model-scores-<docs>)")
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--word-ngrams", type=int, default=2)
    ap.add_argument("--bucket", type=int, default=200_000)
    ap.add_argument("--lm", action="store_true", help="also time a bigram KenLM model per paragraph")
    ap.add_argument("--scorer", choices=("compiled", "package"), default="compiled",
                    help="fastText: the compiled scorer (default) or the fasttext package's predict")
    ap.add_argument("--json", default=None, help="write the figures here too")
    args = ap.parse_args(argv)

    from tools.measure.corpus_scale import write_documents
    from warclake.tasks.corpus.settings import SignatureConfig
    from warclake.tasks.corpus.signals import fasttext_native
    from warclake.tasks.corpus.signals.archive_step import STEP as ARCHIVE_STEP
    from warclake.tasks.corpus.signals.archive_step import archive_key, row_groups, sign_archive
    from warclake.tasks.corpus.signals.models import (
        ScoreModels,
        compiled_fasttext,
        fasttext_lines,
        fasttext_model,
        language_model,
    )
    from warclake.tasks.corpus.signals.score_step import score_archive
    from warclake.tasks.corpus.signals.summaries import finished_archives
    from warclake.tasks.corpus.storage.layout import CorpusLayout

    work = args.dir or f"/tmp/warclake-model-scores-{args.dump or args.docs}"
    lake = os.path.join(work, "lake")
    dump = args.dump or "CC-MAIN-2099-01"
    if args.from_lake:
        if not args.dump:
            ap.error("--from-lake needs --dump")
        for sub in ("documents", "files"):
            dst = os.path.join(lake, sub, f"dump={dump}")
            if not os.path.isdir(dst):
                shutil.copytree(os.path.join(args.from_lake, sub, f"dump={dump}"), dst)
    elif not os.path.isdir(os.path.join(lake, "documents")):
        write_documents(lake, work, args.docs, args.docs_per_archive)
    shutil.rmtree(os.path.join(lake, "corpus"), ignore_errors=True)
    ft_path = os.path.join(work, "quality.bin")
    model_info = make_fasttext(ft_path, corpus_words(lake), args.dim, args.word_ngrams, args.bucket)
    models = {"fasttext": ScoreModels(fasttext=ft_path)}
    if args.scorer == "package":   # the package's path, as where the scorer is not built
        fasttext_native.STATUS, fasttext_native.REASON, fasttext_native._COMPILED = "python", "--scorer package", None
    elif fasttext_native.compiled_module() is None:
        ap.error(f"the compiled scorer is not in use ({fasttext_native.REASON})")
    _, load_s, _ = timed(lambda: compiled_fasttext(ft_path) or fasttext_model(ft_path))
    lm_info = None
    if args.lm:
        arpa = os.path.join(work, "bigram.arpa")
        lm_info = make_arpa(arpa, lake)
        timed(lambda: language_model(arpa))
        models["lm"] = ScoreModels(lm={"*": arpa})
    layout = CorpusLayout(lake)
    sig = SignatureConfig()
    totals = {k: [0.0, 0.0] for k in ["sign", *models, *(f"sign+{m}" for m in models)]}
    docs = 0
    for warc, summary in finished_archives(lake, dump):
        res, wall, cpu = timed(lambda: sign_archive(lake, dump, warc, summary, sig))
        docs += res["documents"]
        totals["sign"][0] += wall
        totals["sign"][1] += cpu
        key = archive_key(layout.documents(dump, warc), summary, sig)
        for name, m in models.items():
            _, wall, cpu = timed(lambda: score_archive(layout, dump, warc, key, m))
            layout.clear_state("model_scores", dump, warc)
            totals[name][0] += wall
            totals[name][1] += cpu
            # the same scores made by the signing pass, from the row groups it reads
            layout.clear_state(ARCHIVE_STEP, dump, warc)
            _, wall, cpu = timed(lambda: sign_archive(lake, dump, warc, summary, sig, m))
            layout.clear_state("model_scores", dump, warc)
            totals[f"sign+{name}"][0] += wall
            totals[f"sign+{name}"][1] += cpu
        print(f"{warc}: {res['documents']} documents", flush=True)
    out = {"documents": docs, "archives": len(finished_archives(lake, dump)), "fasttext_model": model_info,
           "fasttext_scorer": args.scorer,
           "fasttext_load_s": round(load_s, 2), "lm_model": lm_info,
           **{f"{k}_wall_s": round(v[0], 1) for k, v in totals.items()},
           **{f"{k}_cpu_s": round(v[1], 1) for k, v in totals.items()}}
    for k in models:
        # in the signing pass: what signing with the model costs more than signing alone
        out[f"{k}_in_sign_pass_over_sign_cpu_pct"] = round(
            100 * (totals[f"sign+{k}"][1] - totals["sign"][1]) / totals["sign"][1], 1)
        out[f"{k}_over_sign_cpu_pct"] = round(100 * totals[k][1] / totals["sign"][1], 1)
        out[f"{k}_over_sign_wall_pct"] = round(100 * totals[k][0] / totals["sign"][0], 1)
        out[f"{k}_us_per_doc_cpu"] = round(1e6 * totals[k][1] / max(1, docs), 1)
    out["sign_us_per_doc_cpu"] = round(1e6 * totals["sign"][1] / max(1, docs), 1)
    # of the package's fastText step: its input lines alone (reading the text, the kept paragraphs)
    lines_cpu = 0.0
    for warc, _ in finished_archives(lake, dump):
        for group in row_groups(layout.documents(dump, warc), ["text", "paragraph_labels"]):
            lines_cpu += timed(lambda: fasttext_lines(group))[2]
    out["fasttext_lines_us_per_doc_cpu"] = round(1e6 * lines_cpu / max(1, docs), 1)
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

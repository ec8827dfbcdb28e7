"""Train the ``sieve`` model on the TUNING split of gold sets (never the held-back part).

    python -m tools.train_sieve \\
        --gold cleaneval:../shared/data/gold/cleaneval/cleaneval-dev,../shared/data/gold/cleaneval/cleaneval-final

writes ``tasks/extract/boilerplate/sieve.json`` (or ``--out``). The shipped model comes from this
command (the main-content notion: CLEANEVAL's wider notion at half weight; WCXB's pages of
seven types, which hold the modern benchmark's pages with revised truth, in its place; the
Japanese pages of the modern web (``tools/gold/ja_modern.jsonl``, read from copies of their
repositories under ``$WARCLAKE_REPOS``: tools/gold/README.md) at four times a page's weight;
the trees' depth and number, the operating point and the Japanese weight chosen on an inner
split of the tuning pages, reports/boilerplate_eval.md; Dragnet's and WCXB's F1 at it
recorded)::

    WARCLAKE_REPOS=REPOS python -m tools.train_sieve \\
        --gold cleaneval:../shared/data/gold/cleaneval/cleaneval-dev,../shared/data/gold/cleaneval/cleaneval-final \\
        --gold cleaneval:../shared/data/gold/cleaneval/CleanPortalEval-master \\
        --gold readability:../shared/data/gold/mozilla_readability_testpages \\
        --gold wcxb:../shared/data/gold/wcxb_dev --gold dragnet:../shared/data/gold/dragnet \\
        --gold ja:tools/gold/ja_modern.jsonl \\
        --mix cleaneval:cleaneval-dev=0.5 --mix ja=4 --depth 5 --trees 160 --cutoff 0.4 \\
        --cutoff-gold dragnet:../shared/data/gold/dragnet --cutoff-gold wcxb:../shared/data/gold/wcxb_dev \\
        --page-kind-types collection,listing,documentation,service --page-kind-trees 100 \\
        --page-kind-depth 3 --listing-cutoff 0.15

Deterministic on one machine: fixed seed, pages in sorted order, row subsampling from a seeded
generator; the gradient histograms are compiled (``tools.sieve_histograms``) when built and
numpy's otherwise, with the same sums in the same order, so both give the same bytes. Across
machines numpy's exp, log and log1p may differ in the last bit (other SIMD code per CPU), so a
split may pick another feature or edge that parts the training rows the same way. The model
records the arguments it was trained with (``meta.command``), and::

    python -m tools.train_sieve --check [--out MODEL]

(run from the repository root, beside ``../shared/data``, with ``$WARCLAKE_REPOS`` set; about
10 CPU minutes for the shipped model) retrains with them and compares: exit 0 when the bytes are equal or when the model does
the same (same cutoff, F1 at it within 0.001, keep/drop decisions differing on at most 0.1 % of
the training paragraphs: ``compare_models``), 1 saying what differs. The test suite runs it on
a small model trained with ``--pages-per-set`` (``tests/tools/sieve_small.json``), on this CPU
and with numpy's AVX-512 code switched off.
Several ``--gold`` sets may be
mixed, e.g. CLEANEVAL plus Mozilla Readability's test pages::

    python -m tools.train_sieve \\
        --gold cleaneval:../shared/data/gold/cleaneval/cleaneval-dev,../shared/data/gold/cleaneval/cleaneval-final \\
        --gold readability:../shared/data/gold/mozilla_readability_testpages --mix readability=2

``--mix KEY=W`` multiplies the weight of every page of that gold format (or of one set,
``FORMAT:NAME``) by W (default 1; each page otherwise weighs the same). Every set contributes only its tuning split
(``warclake.tasks.evaluation.gold.split_of``: sha1 of the page id — for Readability the case name —
% 5 != 0); the held-back part of the Readability pages is the validation set for model
choices.

Labels: each page's paragraph tokens are aligned with the gold tokens (difflib's matching
blocks over lower-cased metric tokens, junk heuristic off); a paragraph is good when at
least half of its tokens are matched. Rows are weighted by the paragraph's share of its
page's tokens (the page-normalised token metrics care about tokens, each page equally)
blended with a floor so short paragraphs still count.

The operating point (the cutoff on the predicted probability) is chosen in one of two ways:

* ``--cutoff-gold FORMAT:PATH`` (repeatable; the shipped model): on the tuning pages of
  those sets, by what ``warclake eval`` measures — each set's page-averaged token F1 of the
  kept text against its gold text, averaged over the sets with equal weight. Use
  main-content gold here (Dragnet, the modern pages, CleanPortalEval), and sets the model
  was not trained on where possible, so the choice sees honest probabilities.
* ``--cutoff P``: fixed at P, e.g. a value chosen on an inner split of the tuning pages
  (probabilities of pages the model was not trained on); with ``--cutoff-gold`` the F1 at P
  on those sets is recorded (``meta.f1_at_cutoff``, compared by ``--check``).
* otherwise by 4-fold cross-validation over the training pages, maximising the
  page-averaged token F1 computed from the aligned labels (the notion of the training mix).

``--page-kind-types`` also trains the page-kind trees (``page_kind``): over each training
page's summary row, whether its WCXB page type is one of those listed (content spread over
records, cards and sections); a page they call listing-like then takes ``--listing-cutoff``
instead of the model's cutoff, in the cutoff choice and F1 above as at run time.
"""
from __future__ import annotations

import argparse
import difflib
import json
import sys
import time
from pathlib import Path

import numpy as np

from warclake.tasks.evaluation.metrics import tokens
from warclake.tasks.extract.boilerplate import features, page_kind
from warclake.tasks.extract.boilerplate.model import MODEL_FILE, Forest
from warclake.tasks.extract.boilerplate.text import guess_language

DEFAULTS = dict(trees=200, depth=4, lr=0.1, l2=1.0, min_hess=5.0, subsample=0.7, bins=64,
                seed=20240611, weight_floor=0.02)


# ---------------------------------------------------------------- labels
def label_paragraphs(texts: list[str], gold: str, min_share: float = 0.5
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(labels 0/1, token counts) per paragraph text, from a token alignment with gold."""
    toks, owner = [], []
    for i, t in enumerate(texts):
        ts = tokens(t.lower())
        toks += ts
        owner += [i] * len(ts)
    counts = np.bincount(np.array(owner, dtype=np.int64), minlength=len(texts)) \
        if owner else np.zeros(len(texts), dtype=np.int64)
    gold_toks = tokens(gold.lower())
    matched = np.zeros(len(texts), dtype=np.int64)
    if toks and gold_toks:
        sm = difflib.SequenceMatcher(None, toks, gold_toks, autojunk=False)
        own = np.array(owner, dtype=np.int64)
        for a, _, size in sm.get_matching_blocks():
            if size:
                matched += np.bincount(own[a:a + size], minlength=len(texts))
    share = np.divide(matched, counts, out=np.zeros(len(texts)), where=counts > 0)
    return (share >= min_share).astype(np.float64), counts


# ---------------------------------------------------------------- data
def parse_mix(items: list[str]) -> dict[str, float]:
    """``KEY=WEIGHT`` items -> {key: page weight}. KEY is a gold format (``cleaneval``) or
    one set, ``FORMAT:NAME`` with NAME the folder name of the set's first path
    (``cleaneval:cleaneval-dev``); the set's own key wins. Pages not named weigh 1."""
    mix = {}
    for item in items or []:
        fmt, sep, val = item.partition("=")
        if not sep:
            raise ValueError(f"--mix must be FORMAT=WEIGHT, got {item!r}")
        mix[fmt.strip()] = float(val)
    return mix


def set_label(spec: str) -> str:
    """``FORMAT:NAME`` of a gold spec, NAME the folder name of its first path: what ``--mix``
    can name besides the bare format."""
    fmt, _, path = spec.partition(":")
    return f"{fmt}:{Path(path.split(',')[0]).name}"


def build_dataset(specs: list[str], log=print, split: str = "tuning", with_source=False,
                  pages_out: dict | None = None, per_set: int = 0, page_list: list | None = None):
    """Feature rows of the pages of ``split`` (training: always "tuning"). With
    ``with_source`` also the gold FORMAT of each page (one entry per page). ``pages_out``
    ({spec: None}) receives the ``gold_pages`` of those of its specs that are trained on
    (for ``cutoff_on_gold``); ``page_list`` each page's (``GoldPage``, its set's spec, its
    paragraph texts), page ``k`` being the rows of group ``k``."""
    from warclake.tasks.evaluation.gold import decode_page, read_gold
    from warclake.tasks.extract.html_paragraphs import extract_paragraphs

    Xs, ys, ws, groups, toks = [], [], [], [], []
    pages = []
    for spec in specs:
        # the held-back split is never read for training
        got = first_pages(read_gold(spec, split), per_set)
        pages += [(p, set_label(spec), spec, i) for i, p in enumerate(got)]
        if pages_out is not None and spec in pages_out:
            pages_out[spec] = [None] * len(got)
    # sort by (id, format): CLEANEVAL ids are "<set>/<id>", readability ids case names
    pages.sort(key=lambda ps: (ps[0].id, ps[1]))
    source = [fmt for _, fmt, _, _ in pages]
    for k, (page, _, spec, i) in enumerate(pages):
        paras = extract_paragraphs(decode_page(page))
        texts = [p.plain for p in paras]
        X = features.matrix(paras, guess_language(texts)) if paras else None
        if pages_out and pages_out.get(spec) is not None:
            pages_out[spec][i] = (page.gold, texts, X)
        if page_list is not None:
            page_list.append((page, spec, texts))
        if not paras:
            continue
        y, cnt = label_paragraphs(texts, page.gold)
        total = cnt.sum() or 1
        Xs.append(X)
        ys.append(y)
        ws.append(cnt / total)
        toks.append(cnt)
        groups.append(np.full(len(paras), k))
        if log and (k + 1) % 100 == 0:
            log(f"  features: {k + 1}/{len(pages)} pages")
    out = (np.vstack(Xs), np.concatenate(ys), np.concatenate(ws), np.concatenate(groups),
           np.concatenate(toks), len(pages))
    return out + (source,) if with_source else out


def page_weights(share, groups, source, mix: dict[str, float], floor: float) -> np.ndarray:
    """Row weights: the paragraph's token share of its page blended with a per-page floor,
    times the mixing weight of the page's gold set or format."""
    w = (1 - floor) * share + floor / np.maximum(np.bincount(groups)[groups], 1)
    page_mix = np.array([mix.get(src, mix.get(src.partition(":")[0], 1.0)) for src in source]
                        or [1.0])
    return w * page_mix[groups]


# ---------------------------------------------------------------- boosting
def make_bins(X: np.ndarray, n_bins: int) -> list[np.ndarray]:
    """Candidate thresholds per feature: distinct quantiles (a feature's value <= edge k
    falls in bin <= k)."""
    qs = np.linspace(0, 1, n_bins + 1)[1:-1]
    edges = []
    for j in range(X.shape[1]):
        e = np.unique(np.quantile(X[:, j], qs))
        edges.append(e)
    return edges


def binarize(X: np.ndarray, edges: list[np.ndarray]) -> np.ndarray:
    B = np.empty(X.shape, dtype=np.int32)
    for j, e in enumerate(edges):
        B[:, j] = np.searchsorted(e, X[:, j], side="left")
    return B


def numpy_histograms(B, Bt, r, g, h, nb):
    """Gradient and hessian sums per (feature, bin) over rows ``r``: one bincount per feature
    of ``Bt`` (each bin adds its rows in row order; the compiled ``sieve_histograms.histograms``
    reads the rows of ``B`` and adds in the same order, so both give the same bytes)."""
    F = Bt.shape[0]
    gr, hr = g[r], h[r]
    hg, hh = np.empty((F, nb)), np.empty((F, nb))
    for j in range(F):
        bj = Bt[j].take(r)
        hg[j] = np.bincount(bj, gr, minlength=nb)
        hh[j] = np.bincount(bj, hr, minlength=nb)
    return hg, hh


_HIST = None


def histograms():
    """The compiled histograms (``tools.sieve_histograms``, built by ``tools/build_native.py``)
    when built and equal to ``numpy_histograms`` on a fixed sample, else ``numpy_histograms``
    (one warning line)."""
    global _HIST
    if _HIST is None:
        _HIST = numpy_histograms
        try:
            from tools import sieve_histograms as st
        except ImportError as exc:
            print(f"train_sieve: compiled histograms not built ({exc}); using numpy's", file=sys.stderr)
            return _HIST
        rng = np.random.default_rng(7)
        B = rng.integers(0, 9, (4000, 5)).astype(np.uint8)
        Bt = np.ascontiguousarray(B.T.astype(np.int32))
        g, h = rng.normal(size=4000), rng.random(4000)
        r = np.flatnonzero(rng.random(4000) < 0.6)
        if all(a.tobytes() == b.tobytes() for a, b in
               zip(st.histograms(B, r, g, h, 10), numpy_histograms(B, Bt, r, g, h, 10))):
            _HIST = lambda B, Bt, r, g, h, nb: st.histograms(B, r, g, h, nb)  # noqa: E731
        else:
            print("train_sieve: compiled histograms differ from numpy's; using numpy's", file=sys.stderr)
    return _HIST


def fit_forest(X, y, w, prm: dict, log=None) -> Forest:
    hist = histograms()
    rng = np.random.default_rng(prm["seed"])
    n, F = X.shape
    depth = prm["depth"]
    edges = make_bins(X, prm["bins"])
    # one row of bin numbers per feature: a node's rows of one feature are one gather
    B = binarize(X, edges)
    Bt = np.ascontiguousarray(B.T)
    nb = max(len(e) for e in edges) + 1
    B = B.astype(np.uint8) if nb <= 256 else None   # rows of bins for the compiled histograms
    if B is None:
        hist = numpy_histograms
    wsum = w.sum()
    w = w * (n / wsum)                      # mean weight 1 so min_hess has a fixed meaning
    pbar = np.clip((w * y).sum() / w.sum(), 1e-4, 1 - 1e-4)
    base = float(np.log(pbar / (1 - pbar)))
    margin = np.full(n, base)
    n_int, n_leaf = 2 ** depth - 1, 2 ** depth
    feats, thrs, leaves = [], [], []
    lam, min_h = prm["l2"], prm["min_hess"]
    for t in range(prm["trees"]):
        p = 1 / (1 + np.exp(-margin))
        g = w * (p - y)
        h = w * p * (1 - p)
        rows = np.flatnonzero(rng.random(n) < prm["subsample"])
        feat = np.zeros(n_int, dtype=np.int64)
        thr = np.full(n_int, np.inf)
        leaf = np.zeros(n_leaf)
        # nodes of one level: (heap index, rows)
        level = [(0, rows)]
        for d in range(depth):
            nxt = []
            for node, r in level:
                G, H = g[r].sum(), h[r].sum()
                best = None
                if len(r) > 1 and H >= 2 * min_h:
                    # gradient and hessian histograms, feature by feature (each bin adds its
                    # rows in row order, as one bincount over all features would)
                    hg, hh = hist(B, Bt, r, g, h, nb)
                    GL, HL = np.cumsum(hg, 1), np.cumsum(hh, 1)
                    GR, HR = G - GL, H - HL
                    gain = GL ** 2 / (HL + lam) + GR ** 2 / (HR + lam) - G ** 2 / (H + lam)
                    gain[(HL < min_h) | (HR < min_h)] = -np.inf
                    for j, e in enumerate(edges):   # a split above the last edge is empty
                        gain[j, len(e):] = -np.inf
                    k = int(np.argmax(gain))
                    if gain.flat[k] > 1e-9:
                        best = divmod(k, nb)
                if best is None:
                    # pass-through: everything goes left down to the leftmost leaf
                    left, right = r, r[:0]
                else:
                    j, b = best
                    feat[node], thr[node] = j, edges[j][b]
                    m = Bt[j].take(r) <= b
                    left, right = r[m], r[~m]
                nxt += [(2 * node + 1, left), (2 * node + 2, right)]
            level = nxt
        for node, r in level:
            li = node - n_int
            if len(r):
                leaf[li] = -prm["lr"] * g[r].sum() / (h[r].sum() + lam)
        # update all rows (not only the subsample) with this tree
        fr = Forest(feat[None], thr[None], leaf[None], 0.0, depth, features.NAMES)
        margin += fr.margin(X)
        feats.append(feat)
        thrs.append(thr)
        leaves.append(leaf)
        if log and (t + 1) % 50 == 0:
            p = 1 / (1 + np.exp(-margin))
            ll = -(w * (y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))).sum() / w.sum()
            log(f"  tree {t + 1}: weighted logloss {ll:.4f}")
    return Forest(np.array(feats), np.array(thrs), np.array(leaves), base, depth, features.NAMES)


# ---------------------------------------------------------------- cutoff
def page_f1(prob, y, toks, groups, cutoff) -> float:
    """Page-averaged token F1 of keeping paragraphs with prob > cutoff, against the labels."""
    keep = prob > cutoff
    tp = np.bincount(groups, toks * (keep & (y > 0)))
    fp = np.bincount(groups, toks * (keep & (y == 0)))
    fn = np.bincount(groups, toks * (~keep & (y > 0)))
    pred = tp + fp
    gold = tp + fn
    p = np.divide(tp, pred, out=np.zeros_like(tp), where=pred > 0)[pred > 0].mean()
    r = np.divide(tp, gold, out=np.zeros_like(tp), where=gold > 0)[gold > 0].mean()
    return 2 * p * r / (p + r) if p + r else 0.0


def choose_cutoff(X, y, w, groups, toks, prm, folds=4, log=None) -> tuple[float, float]:
    pages = np.unique(groups)
    fold_of = {pg: i % folds for i, pg in enumerate(pages)}
    f = np.array([fold_of[g] for g in groups])
    oof = np.zeros(len(y))
    for k in range(folds):
        tr, te = f != k, f == k
        forest = fit_forest(X[tr], y[tr], w[tr], prm)
        oof[te] = forest.predict_proba(X[te])
        if log:
            log(f"  fold {k + 1}/{folds} done")
    grid = CUTOFF_GRID
    scores = [page_f1(oof, y, toks, groups, c) for c in grid]
    best = int(np.argmax(scores))
    return float(grid[best]), float(scores[best])


CUTOFF_GRID = np.round(np.arange(0.2, 0.81, 0.025), 3)


def first_pages(pages: list, per_set: int) -> list:
    """The first ``per_set`` pages by id (all when 0): a small, fixed training set."""
    return sorted(pages, key=lambda p: p.id)[:per_set] if per_set else pages


def gold_pages(spec: str, log=None, per_set: int = 0) -> list[tuple[str, list[str], np.ndarray | None]]:
    """(gold text, paragraph texts, feature matrix or None when the page has no paragraphs)
    of the tuning pages of ``spec``, in ``read_gold`` order."""
    from warclake.tasks.evaluation.gold import decode_page, read_gold
    from warclake.tasks.extract.html_paragraphs import extract_paragraphs

    out = []
    for page in first_pages(read_gold(spec, "tuning"), per_set):
        paras = extract_paragraphs(decode_page(page))
        texts = [p.plain for p in paras]
        out.append((page.gold, texts, features.matrix(paras, guess_language(texts))
                    if paras else None))
    return out


def _kept_counts(gold: str, texts: list[str]):
    """A page's token table: a function from the kept paragraphs (a boolean per paragraph)
    to ``metrics.token_counts(gold, kept text)`` (the tokens of the "\n"-joined kept
    paragraphs are their tokens in order: a token never spans a line break)."""
    vocab: dict[str, int] = {}
    gid = np.array([vocab.setdefault(t, len(vocab)) for t in tokens(gold)], dtype=np.int64)
    owner, tid = [], []
    for i, t in enumerate(texts):
        ts = tokens(t)
        tid += [vocab.setdefault(x, len(vocab)) for x in ts]
        owner += [i] * len(ts)
    n_vocab = len(vocab)
    gcount = np.bincount(gid, minlength=n_vocab)
    tid_a, owner_a = np.array(tid, dtype=np.int64), np.array(owner, dtype=np.int64)
    n_gold = int(gcount.sum())

    def counts(keep: np.ndarray) -> tuple[float, float, float]:
        kept = np.bincount(tid_a[keep[owner_a]] if len(tid_a) else tid_a, minlength=n_vocab)
        tp = int(np.minimum(kept, gcount).sum())
        fp = int(kept.sum()) - tp
        fn = n_gold - tp
        total = tp + fp + fn
        return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)
    return counts


def cutoff_on_gold(forest: Forest, specs: list[str], log=None,
                   pages: dict | None = None, per_set: int = 0,
                   fixed: float | None = None) -> tuple[float, dict]:
    """The cutoff maximising the mean over ``specs`` of the page-averaged token F1 of the kept
    text against the gold text (tuning pages only; each page's cutoff set by the page-kind
    trees when the forest has them), or ``fixed`` when given; also each set's
    F1 at that cutoff. ``pages`` may hold a spec's ``gold_pages`` already computed (the
    training set's)."""
    from warclake.tasks.evaluation.metrics import prf

    grid = CUTOFF_GRID if fixed is None else [fixed]
    scores = []
    for spec in specs:
        got = (pages or {}).get(spec)
        if got is None:
            got = gold_pages(spec, per_set=per_set)
        counts = {c: [] for c in grid}
        for gold, texts, X in got:
            prob = forest.predict_proba(X) if X is not None else np.zeros(0)
            listing = page_kind.listing_probability(forest, X) if X is not None else 0.0
            page_counts = _kept_counts(gold, texts)
            for c in grid:
                counts[c].append(page_counts(prob > page_kind.moved_cutoff(c, forest, listing)))
        scores.append({c: prf(v)["f1"] for c, v in counts.items()})
        if log:
            log(f"  cutoff scores on {spec.partition(':')[0]}: {len(got)} pages")
    mean = [float(np.mean([s[c] for s in scores])) for c in grid]
    best = float(grid[int(np.argmax(mean))])
    return best, {spec.partition(":")[0] + ":" + Path(spec.partition(":")[2]).name:
                  round(s[best], 4) for spec, s in zip(specs, scores)}


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m tools.train_sieve", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true",
                    help="retrain with the arguments recorded in the model of --out (the shipped "
                         "one by default; run from the repository root) and compare the result "
                         "with it: the same bytes, or the same decisions within the tolerances of "
                         "compare_models")
    ap.add_argument("--out", type=Path,
                    default=Path(features.__file__).with_name(MODEL_FILE), help="model file to write")
    ap.add_argument("--no-cv", action="store_true", help="keep the cutoff at 0.5 (faster)")
    ap.add_argument("--cutoff", type=float, default=None, metavar="P",
                    help="the operating point, fixed (e.g. one chosen on an inner split of the "
                         "tuning pages); with --cutoff-gold their F1 at it is recorded")
    add_training_args(ap)
    return ap


def add_training_args(ap: argparse.ArgumentParser) -> None:
    """The options that say what a model is trained on and how (also
    ``tools.measure.sieve_inner_split``'s)."""
    ap.add_argument("--gold", action="append", metavar="FORMAT:PATH",
                    help="gold set(s) to train on; only their tuning split is used")
    ap.add_argument("--mix", action="append", default=[], metavar="FORMAT=WEIGHT",
                    help="weight of each page of a gold format relative to the others "
                         "(default 1), e.g. readability=2")
    ap.add_argument("--cutoff-gold", action="append", default=[], metavar="FORMAT:PATH",
                    help="choose the cutoff on the tuning pages of these gold sets by their "
                         "mean token F1 (repeatable); default: cross-validation on the labels")
    ap.add_argument("--pages-per-set", type=int, default=0, metavar="N",
                    help="only the first N tuning pages (by id) of each set: a small model, "
                         "for a quick check of the training itself (default: all)")
    ap.add_argument("--page-kind-types", default="", metavar="TYPE,...",
                    help="train the page-kind trees (tasks/extract/boilerplate/page_kind.py): "
                         "pages of these WCXB page types are listing-like, all others not "
                         "(default: none, one cutoff for every page)")
    ap.add_argument("--page-kind-trees", type=int, default=100)
    ap.add_argument("--page-kind-depth", type=int, default=3)
    ap.add_argument("--listing-cutoff", type=float, default=0.15, metavar="P",
                    help="with --page-kind-types: the cutoff of a page the page-kind trees call listing-like")
    for k, v in DEFAULTS.items():
        ap.add_argument(f"--{k.replace('_', '-')}", type=type(v), default=v)


def page_starts(groups: np.ndarray, n_pages: int) -> np.ndarray:
    """Where each page's rows start in ``groups`` (ascending page numbers), and the end:
    page ``k`` is rows ``starts[k]:starts[k + 1]``, empty for a page without paragraphs."""
    return np.searchsorted(groups, np.arange(n_pages + 1))


def fit_page_kind(X: np.ndarray, groups: np.ndarray, types: list[str], args: argparse.Namespace,
                  prm: dict) -> tuple[Forest, dict]:
    """The page-kind trees: page ``k`` (the rows of group ``k``, page type ``types[k]``) is
    listing-like when its type is one of ``--page-kind-types``; pages without paragraphs
    are left out. The tree options are the paragraph model's but for number and depth."""
    kinds = {t.strip() for t in args.page_kind_types.split(",") if t.strip()}
    starts = page_starts(groups, len(types))
    pages = [k for k in range(len(types)) if starts[k + 1] > starts[k]]
    V = np.array([page_kind.vector(X[starts[k]:starts[k + 1]], features.NAMES) for k in pages])
    t = np.array([1.0 if types[k] in kinds else 0.0 for k in pages])
    kind = fit_forest(V, t, np.ones(len(pages)), dict(prm, trees=args.page_kind_trees,
                                                      depth=args.page_kind_depth))
    return kind, {"types": sorted(kinds), "pages": len(pages), "listing_like": int(t.sum()),
                  "trees": args.page_kind_trees, "depth": args.page_kind_depth}


def main(argv=None) -> int:
    ap = parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = ap.parse_args(argv)
    if args.check:
        return check_model(args.out)
    if not args.gold:
        ap.error("--gold is required (or --check)")
    t0 = time.time()
    forest, meta, _, _ = train(args, _command(argv))
    write_model(args.out, forest, meta)
    _log(f"wrote {args.out} in {time.time() - t0:.0f}s")
    return 0


def _log(message: str) -> None:
    print(message, file=sys.stderr)


def train(args: argparse.Namespace, command: list[str]) -> tuple[Forest, dict, np.ndarray, np.ndarray]:
    """The model the arguments describe, its meta, the feature rows it was trained on and
    their pages (a group number per row)."""
    prm = {k: getattr(args, k) for k in DEFAULTS}
    log = _log
    t0 = time.time()
    mix = parse_mix(args.mix)
    known = {spec: None for spec in args.cutoff_gold}
    listed: list = []
    X, y, w, groups, toks, n_pages, source = build_dataset(args.gold, log, with_source=True,
                                                           pages_out=known, per_set=args.pages_per_set,
                                                           page_list=listed)
    w = page_weights(w, groups, source, mix, prm["weight_floor"])
    log(f"{n_pages} pages, {len(y)} paragraphs, {y.mean():.3f} good; features "
        f"{time.time() - t0:.0f}s")
    fixed = args.cutoff is not None
    cutoff, cv_f1 = (0.5, float("nan")) if args.no_cv or args.cutoff_gold or fixed else \
        choose_cutoff(X, y, w, groups, toks, prm, log=log)
    forest = fit_forest(X, y, w, prm, log=log)
    meta = {"trained_on": [s.partition(":")[0] + ":" + ",".join(Path(p).name for p in
                           s.partition(":")[2].split(",")) for s in args.gold],
            "split": "tuning (sha1(page id) % 5 != 0; dragnet: by site)", "pages": n_pages,
            "paragraphs": int(len(y)), "params": prm, "command": command}
    if args.pages_per_set:
        meta["pages_per_set"] = args.pages_per_set
    if args.page_kind_types:
        forest.kind, meta["page_kind"] = fit_page_kind(X, groups, [p.page_type for p, _, _ in listed],
                                                       args, prm)
        forest.listing_cutoff = args.listing_cutoff
        log(f"page kind: {meta['page_kind']['listing_like']} of {meta['page_kind']['pages']} "
            f"pages listing-like")
    if args.cutoff_gold:
        cutoff, at_cutoff = cutoff_on_gold(forest, args.cutoff_gold, log=log, pages=known,
                                           per_set=args.pages_per_set, fixed=args.cutoff)
        meta["cutoff_chosen_on" if not fixed else "f1_at_cutoff"] = at_cutoff
        log(f"cutoff {cutoff} (tuning page token F1 at it: {at_cutoff})")
    elif fixed:
        cutoff = args.cutoff
        log(f"cutoff {cutoff} (fixed)")
    else:
        meta["cv_page_token_f1"] = cv_f1
        log(f"cutoff {cutoff} (cross-validated page token F1 vs labels {cv_f1:.4f})")
    forest.cutoff = cutoff
    if mix:
        meta["mix"] = mix
    return forest, meta, X, groups


def write_model(path: Path, forest: Forest, meta: dict) -> None:
    path.write_text(model_text(forest, meta), encoding="utf-8")


def model_text(forest: Forest, meta: dict) -> str:
    return json.dumps(forest.to_json(meta), separators=(",", ":")) + "\n"


def _command(argv: list[str]) -> list[str]:
    """The training arguments as recorded in the model (without ``--out``, which names a
    file, not the model)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--out":
            skip = True
        elif not a.startswith("--out="):
            out.append(a)
    return out


# Tolerances of a retrained model that is not the same bytes. numpy computes exp, log and log1p
# with other SIMD code on other CPUs (AVX-512 or not), so a feature or a gain can differ in its
# last bit there; a split then picks another feature or edge that parts the rows the same way.
# What must hold is what the model does: the same cutoff, the same F1 on the sets the cutoff was
# chosen on, and the same keep/drop decision on nearly every paragraph it was trained on.
MAX_DECISIONS_DIFFERING = 0.001   # share of the training paragraphs
MAX_F1_DIFFERENCE = 0.001         # per cutoff set, of the rounded F1 recorded in meta


def _row_cutoffs(forest: Forest, X: np.ndarray, groups: np.ndarray | None) -> np.ndarray | float:
    """Each row's cutoff: its page's (``page_kind.page_cutoff``) when the pages are known."""
    if forest.kind is None or groups is None or not len(groups):
        return forest.cutoff
    starts = page_starts(groups, int(groups[-1]) + 1)
    page = [page_kind.page_cutoff(forest, X[a:b]) for a, b in zip(starts[:-1], starts[1:])]
    return np.repeat(np.array(page), np.diff(starts))


def _splits_differing(a: dict, b: dict) -> int:
    """How many of two trees' splits (JSON form) differ in their feature or threshold."""
    return int(np.sum((np.array(a["feature"]) != np.array(b["feature"]))
                      | (np.array(a["threshold"]) != np.array(b["threshold"]))))


def compare_models(shipped: dict, again: dict, X: np.ndarray,
                   groups: np.ndarray | None = None) -> tuple[bool, list[str]]:
    """Whether ``again`` (retrained) does what ``shipped`` does, within the tolerances above,
    judged on the feature rows ``X`` it was trained on (of the pages ``groups``, whose
    cutoffs the page-kind trees set); and lines saying what was compared."""
    a, b = Forest.from_json(shipped), Forest.from_json(again)
    ma, mb = shipped.get("meta", {}), again.get("meta", {})
    problems, lines = [], []
    same = ("features", "depth", "cutoff", "listing_cutoff")
    problems += [f"{k} differs" for k in same if shipped.get(k) != again.get(k)]
    if (a.kind is None) != (b.kind is None):
        problems.append("page-kind trees in one model only")
    problems += [f"meta {k} differs" for k in ("pages", "paragraphs", "params", "command")
                 if ma.get(k) != mb.get(k)]
    fa, fb = (m.get("cutoff_chosen_on") or m.get("f1_at_cutoff", {}) for m in (ma, mb))
    for name in sorted(set(fa) | set(fb)):
        diff = abs(fa.get(name, float("nan")) - fb.get(name, float("nan")))
        lines.append(f"  F1 at the cutoff on {name}: {fa.get(name)} shipped, {fb.get(name)} retrained")
        if not diff <= MAX_F1_DIFFERENCE:
            problems.append(f"F1 on {name} differs by more than {MAX_F1_DIFFERENCE}")
    if not problems:
        nodes = _splits_differing(shipped, again)
        if a.kind is not None and b.kind is not None:
            lines.append(f"  page kind: {_splits_differing(shipped['page_kind'], again['page_kind'])} of "
                         f"{np.size(shipped['page_kind']['feature'])} splits differ")
        pa, pb = a.predict_proba(X), b.predict_proba(X)
        differing = float(np.mean((pa > _row_cutoffs(a, X, groups)) != (pb > _row_cutoffs(b, X, groups))))
        lines.append(f"  {nodes} of {np.size(shipped['feature'])} splits differ; decisions differ on "
                     f"{differing:.4%} of {len(X)} training paragraphs (at most "
                     f"{MAX_DECISIONS_DIFFERING:.2%}); largest probability difference "
                     f"{float(np.max(np.abs(pa - pb))):.2e}")
        if differing > MAX_DECISIONS_DIFFERING:
            problems.append("decisions differ on too many paragraphs")
    return not problems, problems + lines


def check_model(model: Path) -> int:
    """Retrain with the arguments recorded in ``model`` and compare: 0 when the bytes are equal
    or the decisions are (``compare_models``), 1 when not (saying what differs), 2 when the
    model records no command."""
    shipped = model.read_bytes()
    command = json.loads(shipped).get("meta", {}).get("command")
    if not command:
        print(f"{model}: no training command recorded in its meta", file=sys.stderr)
        return 2
    args = parser().parse_args(command)
    forest, meta, X, groups = train(args, command)
    again = model_text(forest, meta).encode("utf-8")
    how = f"python -m tools.train_sieve {' '.join(command)}"
    if again == shipped:
        print(f"{model.name} reproduced byte for byte by: {how}")
        return 0
    ok, lines = compare_models(json.loads(shipped), json.loads(again), X, groups)
    verdict = "reproduced in its decisions (not byte for byte)" if ok else "NOT reproduced"
    print(f"{model.name} {verdict} by: {how}\n" + "\n".join(lines), file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

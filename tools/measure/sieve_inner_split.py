"""Training choices for ``sieve`` compared on an inner split of the TUNING pages.

    python -m tools.measure.sieve_inner_split --gold FORMAT:PATH ... [train_sieve's options]
        [--folds 2] [--cutoffs 0.3,0.35,0.4,0.45,0.5] [--json FILE]

The tuning pages of the ``--gold`` sets (never their held-back part) are parted by site into
``--folds`` folds: the host of the page's URL without ``www.``, or the page's id when it has
no URL. For each fold a model is trained with ``tools.train_sieve``'s own code (features,
labels, weights, ``--mix`` and the tree options as that command takes them) on the pages of
the other folds, and scores the fold's pages, which it has not seen. So every tuning page is
scored once, by a model trained without its site.

Printed, one row per operating point: each set's token F1 (``warclake eval``'s metric over
the set's pages) and, for WCXB pages, the benchmark's page word F1, overall and per page type.
The first row is the cutoff ``train_sieve`` would choose itself (``--cutoff-gold``: the best
mean token F1 on those sets' pages of the training folds; without it, its cross-validation on
the labels), the others the fixed ``--cutoffs``. With ``--page-kind-types`` each fold also
trains the page-kind trees, which set every page's cutoff as at run time. A page with no
paragraph above its cutoff keeps what ``model.labels`` keeps then (``model.kept_above``); the
consent rule, which reads the paragraphs' paths, is left out. This is how the
shipped model's depth, number of trees, cutoff and page kind were chosen
(reports/boilerplate_eval.md); the figures of two candidates often differ by a few
thousandths, about what one split's noise is.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import defaultdict
from urllib.parse import urlsplit

import numpy as np

from tools import train_sieve
from warclake.tasks.evaluation.metrics import prf, word_prf
from warclake.tasks.extract.boilerplate import model, page_kind


def site(url: str, page_id: str) -> str:
    """A page's site: the host of its URL without ``www.``; its id when it has no URL."""
    if not url:
        return page_id
    host = urlsplit(url if "//" in url else "http://" + url).netloc.lower()
    return host[4:] if host.startswith("www.") else host


def fold_of(key: str, folds: int) -> int:
    return int(hashlib.sha1(key.encode("utf-8")).hexdigest(), 16) % folds


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m tools.measure.sieve_inner_split", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    train_sieve.add_training_args(ap)
    ap.add_argument("--folds", type=int, default=2, help="folds of the tuning pages, by site (default 2)")
    ap.add_argument("--cutoffs", default="0.3,0.35,0.4,0.45,0.5",
                    help="fixed operating points to score besides the chosen one (comma-separated)")
    ap.add_argument("--json", default=None, metavar="FILE", help="also write the figures as JSON")
    ap.add_argument("--pages", default=None, metavar="FILE",
                    help="also write each page's out-of-fold result as JSON lines: its id, set, page "
                         "type, fold, page-kind probability, cutoff and each paragraph's probability")
    return ap


def _set_name(spec: str) -> str:
    return train_sieve.set_label(spec)


def inner_split(args: argparse.Namespace, log=None, pages_out=None) -> dict:
    """The figures described above, as {row name: {column: value}} plus the cutoffs chosen;
    ``pages_out`` (a text file) receives each page's result as a JSON line."""
    prm = {k: getattr(args, k) for k in train_sieve.DEFAULTS}
    listed: list = []
    X, y, share, groups, toks, _, source = train_sieve.build_dataset(
        args.gold, log, with_source=True, per_set=args.pages_per_set, page_list=listed)
    w = train_sieve.page_weights(share, groups, source, train_sieve.parse_mix(args.mix),
                                 prm["weight_floor"])
    page_fold = np.array([fold_of(site(p.url, p.id), args.folds) for p, _, _ in listed], dtype=np.int64)
    row_fold = page_fold[groups]
    starts = train_sieve.page_starts(groups, len(listed))
    fixed = [float(c) for c in args.cutoffs.split(",") if c.strip()]
    counts: dict[str, dict] = defaultdict(lambda: defaultdict(list))   # row -> set -> token counts
    words: dict[str, dict] = defaultdict(lambda: defaultdict(list))    # row -> WCXB type -> page F1
    chosen = []
    for k in range(args.folds):
        train_rows = row_fold != k
        forest = train_sieve.fit_forest(X[train_rows], y[train_rows], w[train_rows], prm)
        if args.page_kind_types:
            forest.kind, _ = train_sieve.fit_page_kind(X[train_rows], groups[train_rows],
                                                       [p.page_type for p, _, _ in listed], args, prm)
            forest.listing_cutoff = args.listing_cutoff
        prob, listing = {}, {}
        for i in range(len(listed)):
            a, b = starts[i], starts[i + 1]
            prob[i] = forest.predict_proba(X[a:b]) if b > a else np.zeros(0)
            listing[i] = page_kind.listing_probability(forest, X[a:b])
        if args.cutoff_gold:
            inner = {spec: [(p.gold, texts, X[starts[i]:starts[i + 1]] if texts else None)
                            for i, (p, s, texts) in enumerate(listed) if s == spec and page_fold[i] != k]
                     for spec in args.cutoff_gold}
            cutoff, _ = train_sieve.cutoff_on_gold(forest, args.cutoff_gold, pages=inner)
        else:
            tr_groups = np.unique(groups[train_rows], return_inverse=True)[1]
            cutoff, _ = train_sieve.choose_cutoff(X[train_rows], y[train_rows], w[train_rows], tr_groups,
                                                  toks[train_rows], prm)
        chosen.append(cutoff)
        rows = [("chosen", cutoff)] + [(f"at {c:g}", c) for c in fixed]
        for i, (page, spec, texts) in enumerate(listed):
            if page_fold[i] != k:
                continue
            if pages_out is not None:
                pages_out.write(json.dumps({"id": page.id, "set": _set_name(spec), "type": page.page_type,
                                            "fold": k, "listing": round(listing[i], 5),
                                            "cutoff": page_kind.moved_cutoff(cutoff, forest, listing[i]),
                                            "prob": [round(float(v), 5) for v in prob[i]]}) + "\n")
            table = train_sieve._kept_counts(page.gold, texts)
            for name, c in rows:
                keep = prob[i] > model.kept_above(prob[i], page_kind.moved_cutoff(c, forest, listing[i]))
                counts[name][_set_name(spec)].append(table(keep))
                if spec.startswith("wcxb:"):
                    kept = "\n".join(t for t, on in zip(texts, keep) if on)
                    f1 = word_prf(page.gold, kept)[2]
                    words[name]["all"].append(f1)
                    words[name][page.page_type].append(f1)
        if log:
            log(f"fold {k + 1}/{args.folds}: cutoff {cutoff}")
    result = {"chosen_cutoffs": chosen, "rows": {}}
    for name in counts:
        row = {s: round(prf(v)["f1"], 4) for s, v in sorted(counts[name].items())}
        row.update({f"wcxb {t}": round(float(np.mean(v)), 4) for t, v in sorted(words[name].items())})
        result["rows"][name] = row
    return result


def markdown(result: dict) -> str:
    rows = result["rows"]
    cols = list(next(iter(rows.values())))
    out = ["| cutoff | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    for name, row in rows.items():
        label = f"chosen ({', '.join(f'{c:g}' for c in result['chosen_cutoffs'])})" if name == "chosen" else name
        out.append(f"| {label} | " + " | ".join(f"{row.get(c, float('nan')):.4f}" for c in cols) + " |")
    return "\n".join(out)


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    if not args.gold:
        parser().error("--gold is required")
    t0 = time.time()
    log = lambda m: print(m, file=sys.stderr)  # noqa: E731
    if args.pages:
        with open(args.pages, "w", encoding="utf-8") as pages_out:
            result = inner_split(args, log, pages_out)
    else:
        result = inner_split(args, log)
    print(markdown(result))
    print(f"({time.time() - t0:.0f} s)", file=sys.stderr)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Score the corpus stage's document deduplication (and repeated-text removal) on the
near-duplicate set of :mod:`tools.measure.neardup_set`.

    python -m tools.measure.dedup --out DIR [--seed S] [--threshold T]
                                                [--split heldout|tuning] [--gold DIR]

Builds the set under DIR when it is absent (or was built from another seed), runs
``tools.measure.corpus_dedup.near_duplicate_clusters`` over the documents of one split
(``heldout`` by default: only ``tuning`` may be used to choose a setting) and prints
pairwise precision and recall: a pair of documents is predicted when the function puts
them in one cluster, true when the set made them from one page. Per kind of change, the
pairs of the original page and its copy of that kind (pairs of two copies in their own row);
hard negatives (``same_site``, ``unrelated``) have no true pair, so their row counts the
false pairs that hold one.

Repeated-text removal is scored through ``tools.measure.corpus_repeated.paragraph_decisions``
(``docs -> table(docId, paragraph, kept)``, paragraph = index in the document): the share of
template paragraphs removed on sites with several pages in the set, and the share of
main-content characters lost (and of those whose text the document keeps in no other
paragraph: a later copy dropped loses no text).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations

import pyarrow as pa
import pyarrow.parquet as pq

from tools.measure.neardup_set import DEFAULT_GOLD, KINDS, NEGATIVE_KINDS, build_set, set_exists

DOC_COLUMNS = ["docId", "text", "paragraph_labels", "lang", "url", "date", "dump"]
ROW_ORDER = KINDS + ("between_copies", "original") + NEGATIVE_KINDS


@dataclass
class PairScore:
    true_pairs: int = 0
    predicted_pairs: int = 0
    tp: int = 0

    @property
    def precision(self) -> float | None:
        return self.tp / self.predicted_pairs if self.predicted_pairs else None

    @property
    def recall(self) -> float | None:
        return self.tp / self.true_pairs if self.true_pairs else None

    @property
    def false_pairs(self) -> int:
        return self.predicted_pairs - self.tp


def _pairs(clusters: dict[str, str]) -> set[tuple[str, str]]:
    """Unordered pairs (as sorted tuples) of documents sharing a cluster."""
    members: dict[str, list[str]] = defaultdict(list)
    for doc, c in clusters.items():
        members[c].append(doc)
    out = set()
    for docs in members.values():
        out.update(combinations(sorted(docs), 2))
    return out


def pair_kind(ka: str, kb: str) -> str:
    """The row a pair of documents counts in: a hard negative's kind when either is one,
    the change when the other is the original page, ``between_copies`` for two changed
    copies, ``original`` for two originals."""
    for k in NEGATIVE_KINDS:
        if k in (ka, kb):
            return k
    if ka == "original" or kb == "original":
        return kb if ka == "original" else ka
    return "between_copies"


def pairwise_scores(truth: dict[str, str], kinds: dict[str, str],
                    predicted: dict[str, str]) -> dict[str, PairScore]:
    """Pairwise scores overall (``all``) and per row of :func:`pair_kind` (the rows split
    the pairs, so they add up to ``all``). ``truth`` and ``predicted`` map docId -> cluster;
    a document missing from ``predicted`` is its own cluster."""
    pred = {d: predicted.get(d, f"\0{d}") for d in truth}
    true_pairs, pred_pairs = _pairs(truth), _pairs(pred)
    scores = {k: PairScore() for k in ROW_ORDER + ("all",)}
    for pairs, attr in ((true_pairs, "true_pairs"), (pred_pairs, "predicted_pairs"),
                        (true_pairs & pred_pairs, "tp")):
        for a, b in pairs:
            for key in (pair_kind(kinds[a], kinds[b]), "all"):
                setattr(scores[key], attr, getattr(scores[key], attr) + 1)
    return scores


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def score_table(scores: dict[str, PairScore]) -> str:
    rows = ["| kind | true pairs | predicted pairs | correct | false pairs | precision | recall |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for k in ROW_ORDER + ("all",):
        s = scores[k]
        rows.append(f"| {k} | {s.true_pairs} | {s.predicted_pairs} | {s.tp} | {s.false_pairs} | "
                    f"{_fmt(s.precision)} | {_fmt(s.recall)} |")
    return "\n".join(rows)


def _host(url: str) -> str:
    m = re.match(r"^[a-z]+://([^/?#]+)", url or "")
    return m.group(1).lower() if m else ""


def repeated_text_scores(docs: pa.Table, truth: pa.Table, decisions: pa.Table) -> dict[str, float]:
    """Share of template paragraphs removed on sites with several documents in the set, and
    share of main-content characters lost, from per-paragraph decisions
    (docId, paragraph, kept)."""
    kept = {(d, int(p)): bool(k) for d, p, k in zip(*(decisions.column(c).to_pylist()
                                                      for c in ("docId", "paragraph", "kept")))}
    roles = dict(zip(truth.column("docId").to_pylist(), truth.column("roles").to_pylist()))
    hosts = [_host(u) for u in docs.column("url").to_pylist()]
    per_host = defaultdict(int)
    for h in hosts:
        per_host[h] += 1
    from warclake.tasks.corpus.signals.normalise import normalise

    tmpl = tmpl_removed = main_chars = main_lost = main_gone = 0
    for doc_id, text, host in zip(docs.column("docId").to_pylist(), docs.column("text").to_pylist(), hosts):
        chunks = text.split("\n\n")
        held = {normalise(c.partition("\x1c")[2]) for i, c in enumerate(chunks) if kept.get((doc_id, i), True)}
        for i, (chunk, role) in enumerate(zip(chunks, roles[doc_id])):
            removed = not kept.get((doc_id, i), True)
            if role == "template" and per_host[host] >= 3:
                tmpl += 1
                tmpl_removed += removed
            elif role == "main":
                n = len(chunk.partition("\x1c")[2])
                main_chars += n
                main_lost += n if removed else 0
                main_gone += n if removed and normalise(chunk.partition("\x1c")[2]) not in held else 0
    return {"template_paragraphs": tmpl, "template_removed": tmpl_removed / tmpl if tmpl else 0.0,
            "main_chars": main_chars, "main_lost": main_lost / main_chars if main_chars else 0.0,
            "main_gone": main_gone / main_chars if main_chars else 0.0}


def load_split(out: str, split: str) -> tuple[pa.Table, pa.Table]:
    docs = pq.read_table(os.path.join(out, "documents", f"dump=neardup-{split}", "neardup.parquet"))
    docs = docs.select([c for c in DOC_COLUMNS if c in docs.column_names])
    return docs, pq.read_table(os.path.join(out, "truth", f"{split}.parquet"))


def _ensure_set(out: str, seed: int, gold: str) -> None:
    if set_exists(out, seed):
        return
    print(f"building the near-duplicate set in {out} (seed {seed}) ...", file=sys.stderr)
    build_set(out, seed, gold)


def report(docs: pa.Table, truth: pa.Table, clusters_of, decisions_of, title: str,
           threshold: float | None = None) -> str:
    """The scores of one split as markdown: ``clusters_of(docs, **kw) -> (docId, cluster_id,
    survivor)`` is the deduplication scored, ``decisions_of(docs) -> (docId, paragraph,
    kept)`` the repeated-text removal (None: not scored)."""
    t0 = time.perf_counter()
    kwargs = {} if threshold is None else {"similarity": threshold}
    result = clusters_of(docs, **kwargs)
    secs = time.perf_counter() - t0
    ids = truth.column("docId").to_pylist()
    scores = pairwise_scores(dict(zip(ids, truth.column("cluster").to_pylist())),
                             dict(zip(ids, truth.column("kind").to_pylist())),
                             dict(zip(result.column("docId").to_pylist(), result.column("cluster_id").to_pylist())))
    sim = "its default" if threshold is None else threshold
    out = [f"## Near-duplicate documents: {title}, similarity {sim}\n",
           f"{docs.num_rows} documents, {len(set(truth.column('cluster').to_pylist()))} true clusters, "
           f"near_duplicate_clusters {secs:.1f}s\n", score_table(scores)]
    survivors = defaultdict(int)
    for c, s in zip(result.column("cluster_id").to_pylist(), result.column("survivor").to_pylist()):
        survivors[c] += bool(s)
    bad = sum(1 for n in survivors.values() if n != 1)
    out.append(f"\npredicted clusters: {len(survivors)}, with other than one survivor: {bad}")
    if decisions_of is not None:
        r = repeated_text_scores(docs, truth, decisions_of(docs))
        out.append(f"\n## Repeated-text removal\n\ntemplate paragraphs removed on sites with 3+ documents: "
                   f"{r['template_removed']:.1%} of {r['template_paragraphs']}; main-content characters lost: "
                   f"{r['main_lost']:.2%} of {r['main_chars']} ({r['main_gone']:.2%} whose text the document "
                   "keeps nowhere else)")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    from tools.measure.corpus_dedup import near_duplicate_clusters
    from tools.measure.corpus_repeated import paragraph_decisions

    ap = argparse.ArgumentParser(prog="python -m tools.measure.dedup",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder of the set (built there when absent)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threshold", type=float, default=None,
                    help="similarity passed to near_duplicate_clusters (default: its own)")
    ap.add_argument("--split", choices=("heldout", "tuning"), default="heldout")
    ap.add_argument("--gold", default=DEFAULT_GOLD)
    a = ap.parse_args(argv)
    if a.threshold is not None and not 0.0 < a.threshold <= 1.0:
        print(f"eval_dedup: --threshold must be in (0, 1], not {a.threshold}", file=sys.stderr)
        return 2
    try:
        _ensure_set(a.out, a.seed, a.gold)
    except (FileNotFoundError, ValueError) as e:
        print(f"eval_dedup: {e}", file=sys.stderr)
        return 2
    docs, truth = load_split(a.out, a.split)
    print(report(docs, truth, near_duplicate_clusters, paragraph_decisions,
                 f"split {a.split}, seed {a.seed}", a.threshold))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

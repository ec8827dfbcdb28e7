"""Build and measure the first-pass language identifier (tasks/extract/language_first_pass.py)
against lingua, on the texts extraction hands lingua.

Texts: every lingua call extraction plans (``--langs all``, English screen off) for the
pages of the gold sets (CLEANEVAL, Dragnet, the modern benchmark, Readability) and the
labelled pages and single sentences of ``tools.measure.language``; each with the split of
its page (``tasks.evaluation.gold``: the gold sets' own split, ``split_of`` of
``source/name`` for the others), fixed before anything was tuned. lingua's answer on each
is the reference.

- ``--tune``: the rules of a grid on the tuning part; the one that settles most with at most
  1 % of its answers other than lingua's and no labelled text (the labelled pages and
  sentences, CLEANEVAL's English pages) lingua gets right made wrong.
- default: on the held-back part, per language lingua gives: texts, settled, settled with
  lingua's answer; and lingua's milliseconds saved.

Usage: python -m tools.measure.language_first_pass [--calls FILE] [--tune] [--json]
(``--calls FILE`` keeps the collected texts and lingua's answers between runs.)
"""
from __future__ import annotations

import argparse
import itertools
import json
import pickle
import time
from collections import Counter, defaultdict
from pathlib import Path

from tools.measure.charset import default_root
from warclake.tasks.extract import language_first_pass as first_pass
from warclake.tasks.extract.language import FIRST_LOOK_CHARS, LanguageDetector, LinguaCall


def collect(root: Path | None = None) -> list[dict]:
    """The lingua calls of the development pages, with their split and lingua's answer."""
    from tools.measure.language import _paragraph_text, load_pages, sentences
    from warclake.tasks.evaluation.gold import read_gold, split_of
    from warclake.tasks.extract.charset import decode_body
    from warclake.tasks.extract.html_paragraphs import extract_paragraphs
    from warclake.tasks.extract.record import _leading_text

    root = Path(root) if root else default_root()
    det = LanguageDetector(("all",), screen=False, first_pass=False)
    out = []

    def add(pid: str, split: str, kind: str, text: str, para: str | None, label: str | None = None) -> None:
        call = det.plan(text, para)
        if isinstance(call, LinguaCall):
            t0 = time.process_time()
            res = det.run(call)
            out.append({"id": pid, "split": split, "kind": kind, "text": call.text, "langs": call.langs,
                        "lang": res.lang, "score": res.score, "ms": 1000 * (time.process_time() - t0),
                        "label": label})

    gold = root / "gold"
    for spec in (f"cleaneval:{gold / 'cleaneval'}", f"dragnet:{gold / 'dragnet'}",
                 f"wceb:{gold / 'wceb_modern_1000'}", f"readability:{gold / 'mozilla_readability_testpages'}"):
        for split in ("tuning", "heldout"):
            try:
                pages = read_gold(spec, split)
            except FileNotFoundError:
                continue
            for gp in pages:
                page = decode_body(gp.html, gp.content_type or None)
                try:
                    paras = extract_paragraphs(page.text) if page else None
                except Exception:  # noqa: BLE001 - a page extraction rejects is not judged
                    paras = None
                if paras:   # CLEANEVAL's pages are English, as tools.measure.language labels them
                    add(gp.id, split, "gold page", page.text, _leading_text(paras, det.latin_buffer_chars),
                        "en" if spec.startswith("cleaneval:") else None)
    labelled = load_pages(root, 300)
    for kind, pages in (("labelled page", [p for p in labelled if p.source != "cleaneval"]),
                        ("single sentence", sentences(labelled))):
        for p in pages:
            pid = f"{p.source}/{p.name}"   # a sentence has its page's split
            add(pid, split_of(f"{p.source.split(':')[0]}/{p.name}"), kind, p.text, _paragraph_text(p.text), p.lang)
    return out


def judge(calls: list[dict], rule: first_pass.Rule) -> dict:
    """Per lingua language: texts, settled, settled as lingua; lingua's ms on settled texts."""
    per = defaultdict(Counter)
    saved = total_ms = 0.0
    wrong = []
    for c in calls:
        row = per[c["lang"]]
        row["texts"] += 1
        total_ms += c["ms"]
        got = first_pass.settle(c["text"], c["langs"], rule, first_look=FIRST_LOOK_CHARS)
        if got is None:
            continue
        row["settled"] += 1
        saved += c["ms"]
        if got[0] == c["lang"]:
            row["agree"] += 1
        else:
            wrong.append((c["id"], c["lang"], got[0], " ".join(c["text"].split())[:80]))
            if c.get("label"):   # a labelled text lingua gets right made wrong, or the reverse
                row["labelled_worse"] += c["lang"] == c["label"]
                row["labelled_better"] += got[0] == c["label"]
    n = sum(r["texts"] for r in per.values())
    settled = sum(r["settled"] for r in per.values())
    agree = sum(r["agree"] for r in per.values())
    return {"texts": n, "settled": settled, "agree": agree, "lingua_ms": total_ms, "saved_ms": saved,
            "labelled_worse": sum(r["labelled_worse"] for r in per.values()),
            "labelled_better": sum(r["labelled_better"] for r in per.values()),
            "per_lang": {str(k): dict(v) for k, v in sorted(per.items(), key=lambda kv: -kv[1]["texts"])},
            "wrong": wrong}


# short texts (below 20 known trigrams, about four words) stay lingua's
GRID = {"min_trigrams": (20, 30, 40), "min_margin": (0.1, 0.15, 0.2, 0.25, 0.3, 0.4)}


MAX_DIFFER = 0.01   # of the settled tuning texts, at most this share otherwise than lingua


def tune(calls: list[dict]) -> tuple[first_pass.Rule, dict]:
    """The grid's rule that settles most tuning texts with at most MAX_DIFFER of them
    otherwise than lingua (where the two differ, lingua is often the one wrong: an English
    menu it calls German or Latin from its first 200 characters) and no labelled text that
    lingua gets right made wrong."""
    best = None
    for values in itertools.product(*GRID.values()):
        rule = first_pass.Rule(*values)
        res = judge(calls, rule)
        if res["settled"] - res["agree"] > MAX_DIFFER * res["settled"] or res["labelled_worse"]:
            continue
        if best is None or res["settled"] > best[1]["settled"]:
            best = (rule, res)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", default=None)
    ap.add_argument("--calls", type=Path, help="keep the collected texts and lingua's answers in this file")
    ap.add_argument("--tune", action="store_true", help="choose the rule on the tuning part")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    if a.calls and a.calls.exists():
        calls = pickle.loads(a.calls.read_bytes())
    else:
        calls = collect(a.root)
        if a.calls:
            a.calls.write_bytes(pickle.dumps(calls))
    part = "tuning" if a.tune else "heldout"
    chosen = [c for c in calls if c["split"] == part]
    if a.tune:
        rule, res = tune(chosen)
        print(f"rule {rule}")
    else:
        rule = first_pass.RULE
        res = judge(chosen, rule)
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    print(f"## {part} part: {res['texts']} texts lingua judges, {res['settled']} settled by the first pass "
          f"({res['settled'] / max(1, res['texts']):.1%}), {res['agree']} of them as lingua "
          f"({res['agree'] / max(1, res['settled']):.1%}); of the labelled ones that differ, "
          f"{res['labelled_worse']} lingua had right, {res['labelled_better']} the first pass; lingua's "
          f"{res['saved_ms']:.0f} of {res['lingua_ms']:.0f} ms on them ({rule})")
    for lang, row in res["per_lang"].items():
        print(f"   {lang}: {row.get('settled', 0)}/{row['texts']} settled, {row.get('agree', 0)} as lingua")
    for w in res["wrong"][:20]:
        print("   differs:", *w)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

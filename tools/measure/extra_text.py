"""Where a boilerplate mode's extra text comes from: the tokens it keeps that the gold text
does not have, broken down by kind of paragraph, by class/id word of the paragraph's path
and by page type.

    python -m tools.measure.extra_text --gold dragnet:DIR --gold wceb:DIR \\
        [--split tuning] [--mode sieve] [--top 25]

A kept paragraph is extra when less than half of its tokens align with the gold text (the
alignment the ``sieve`` training labels use); its tokens count as extra text. Shares are of
all extra tokens of a set; "lift" is a path word's share among extra tokens over its share
among correctly kept tokens (words on at least 1 % of the extra tokens, highest lift
first). Kinds are decided in order, first match wins (see ``KINDS``).
Page types: the modern pages' annotated type; Dragnet pages with and without user comments.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from warclake.tasks.evaluation.gold import decode_page, read_gold
from warclake.tasks.evaluation.metrics import tokens
from warclake.tasks.extract.boilerplate import classify
from warclake.tasks.extract.html_paragraphs import extract_paragraphs

_WORD = re.compile(r"[a-z]{3,}")
# (kind, class/id word pattern) — first match on the paragraph's path wins.
KINDS = [
    ("comments", re.compile(r"comment|respon|reply|replies|disqus|discuss|livefyre")),
    ("related / recommended", re.compile(r"relat|recommend|popular|trending|most|also|more|"
                                         r"teaser|promo|outbrain|taboola|next|previous|prev")),
    ("byline / date / meta", re.compile(r"byline|author|meta|date|time|posted|dateline|info")),
    ("caption / credit", re.compile(r"caption|credit|photo|image|img|figure|gallery|media")),
    ("share / tags", re.compile(r"share|social|tag|categor|follow|subscribe|newsletter")),
    ("header / nav / footer / sidebar", re.compile(r"header|nav|menu|footer|sidebar|side|"
                                                   r"widget|breadcrumb|masthead|banner|foot")),
]


def paragraph_kind(path: str, text: str, plain: str) -> str:
    words = " ".join(_WORD.findall(_path_words_text(path)))
    for kind, pat in KINDS:
        if pat.search(words):
            return kind
    last = path.rsplit(">", 1)[-1].split(".", 1)[0].split("#", 1)[0]
    if last in ("h1", "h2", "h3", "h4", "h5", "h6"):
        return "heading"
    if last == "figcaption":
        return "caption / credit"
    linked = sum(len(m) for m in re.findall(r"\x02([^\x03]*)\x03", text))
    if plain and linked >= 0.5 * len(plain):
        return "link list (other)"
    n = len(tokens(plain))
    return "short text (< 10 tokens, other)" if n < 10 else "prose (other)"


def _path_words_text(path: str) -> str:
    """The class and id words of a path, lower-cased (tags left out)."""
    out = []
    for step in path.split(">"):
        out += re.split(r"[.#]", step)[1:]
    return " ".join(out).lower()


def path_words(path: str) -> set[str]:
    return set(_WORD.findall(_path_words_text(path)))


def _page_type(page, wceb_root: Path | None) -> str:
    if page.id.startswith("wceb/") and wceb_root is not None:
        f = wceb_root / "benchmark" / "ground-truth" / f"{page.id.split('/', 1)[1]}.json"
        try:
            rec = json.loads(f.read_text("utf-8"))
            return "modern: " + str(((rec.get("_internal") or {}).get("page_type") or {})
                                    .get("primary") or "unknown")
        except (OSError, ValueError):
            return "modern: unknown"
    return ""


def analyse(spec: str, split: str, mode: str) -> dict:
    from tools.train_sieve import label_paragraphs

    fmt, _, path = spec.partition(":")
    pages = read_gold(spec, split)
    comments = {}
    if fmt == "dragnet":   # the same pages with their comments, to tell comment pages apart
        comments = {p.id: p.gold for p in read_gold(f"dragnet-comments:{path}", split)}
    wceb_root = Path(path) if fmt == "wceb" else None
    kinds, words_extra, words_good = Counter(), Counter(), Counter()
    types = defaultdict(lambda: [0, 0, 0])   # type -> pages, extra tokens, kept tokens
    extra_total = kept_total = gold_total = 0
    comment_tokens = 0
    for page in pages:
        paras = extract_paragraphs(decode_page(page))
        if not paras:
            continue
        labels = classify(mode, paras)
        texts = [p.plain for p in paras]
        good, counts = label_paragraphs(texts, page.gold)
        ptype = _page_type(page, wceb_root)
        if fmt == "dragnet":
            with_c = comments.get(page.id, page.gold)
            ptype = "dragnet: with comments" if with_c != page.gold else "dragnet: no comments"
            in_comments, _ = label_paragraphs(texts, with_c)
        page_extra = page_kept = 0
        for i, (p, lab) in enumerate(zip(paras, labels)):
            if lab != "good":
                continue
            n = int(counts[i])
            page_kept += n
            if good[i]:
                words_good.update({w: n for w in path_words(p.path)})
                continue
            page_extra += n
            kind = paragraph_kind(p.path, p.text, p.plain)
            if fmt == "dragnet" and in_comments[i]:
                kind = "comments"
                comment_tokens += n
            kinds[kind] += n
            for w in path_words(p.path):
                words_extra[w] += n
        extra_total += page_extra
        kept_total += page_kept
        gold_total += len(tokens(page.gold))
        t = types[ptype or fmt]
        t[0] += 1
        t[1] += page_extra
        t[2] += page_kept
    return {"set": spec, "pages": len(pages), "kinds": kinds, "words_extra": words_extra,
            "words_good": words_good, "types": dict(types), "extra": extra_total,
            "kept": kept_total, "gold": gold_total}


def report(res: dict, top: int = 20) -> str:
    ex, kept = res["extra"] or 1, res["kept"] or 1
    good_total = (res["kept"] - res["extra"]) or 1
    name = res["set"].partition(":")[0]
    out = [f"### {name}, {res['pages']} pages: extra text is {res['extra'] / kept:.1%} of the "
           f"kept tokens ({res['extra']:,} of {res['kept']:,})", "",
           "| kind of paragraph | share of extra tokens |", "|---|---:|"]
    out += [f"| {k} | {v / ex:.1%} |" for k, v in res["kinds"].most_common()]
    out += ["", "| class/id word on the path | share of extra tokens | lift (vs. kept gold text) |",
            "|---|---:|---:|"]
    # words on at least 1 % of the extra tokens, the most telling (highest lift) first
    rows = []
    for w, v in res["words_extra"].items():
        share = v / ex
        if share >= 0.01:
            good = res["words_good"].get(w, 0) / good_total
            rows.append((share / good if good else float("inf"), share, w))
    for lift, share, w in sorted(rows, reverse=True)[:top]:
        out.append(f"| {w} | {share:.1%} | {'only extra' if lift == float('inf') else f'{lift:.1f}'} |")
    out += ["", "| page type | pages | extra share of kept tokens | share of all extra tokens |",
            "|---|---:|---:|---:|"]
    for t, (n, e, k) in sorted(res["types"].items(), key=lambda kv: -kv[1][1]):
        out.append(f"| {t} | {n} | {e / (k or 1):.1%} | {e / ex:.1%} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.measure.extra_text",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gold", action="append", required=True, metavar="FORMAT:PATH")
    ap.add_argument("--split", default="tuning", choices=("tuning", "heldout", "all"))
    ap.add_argument("--mode", default="sieve")
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args(argv)
    for spec in args.gold:
        try:
            res = analyse(spec, args.split, args.mode)
        except (ValueError, FileNotFoundError) as e:
            print(f"extra_text: {e}", file=sys.stderr)
            return 2
        print(report(res, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())

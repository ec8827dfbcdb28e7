"""Per-page scores and block-level errors on the Japanese gold (``tools/gold/ja_dev.jsonl``).

    python -m tools.measure.ja_gold [--split tuning] [--extractor sieve --extractor trafilatura]
                                    [--blocks sieve] [--data DATA_ROOT] [--gold FILE]

Prints, per page, the per-page bag-of-tokens F1 (each CJK character a token:
``metrics.token_page_prf``) of each extractor, then the mean page F1 per kind of page and
overall. ``--blocks MODE`` lists, for each page, the paragraphs that MODE labels against the
gold: ``drop`` = a gold block it dropped, ``keep`` = a non-gold block it kept, with the
paragraph's CSS path, the sieve's probability and its text. A paragraph counts as gold when
most of its characters are in lines of the gold (see ``is_gold_block``).

The tuning part is for looking at; quote held-back figures only (``warclake eval --split
heldout``). ``--gold tools/gold/ja_modern.jsonl`` scores the Japanese pages of the modern web,
read from copies of their repositories under ``--data`` or ``$WARCLAKE_REPOS``
(tools/gold/README.md); its held-back part is the final part, scored once.
"""
from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from warclake.tasks.evaluation.gold import decode_page
from warclake.tasks.evaluation.ja_gold import read_entries, read_ja
from warclake.tasks.evaluation.metrics import token_page_prf, tokens
from warclake.tasks.evaluation.runner import get_extractor, page_language

GOLD = Path(__file__).resolve().parents[1] / "gold" / "ja_dev.jsonl"


def _lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def is_gold_block(text: str, gold: str) -> bool:
    """Most of the block's characters sit in lines of the gold: a line equal to a gold line,
    or (20 characters or more) part of one. The drafted truth keeps a block's lines whole;
    short lines must match whole, or a menu entry would match the title that names it."""
    gold_lines = set(_lines(gold))
    flat = " ".join(_lines(gold))
    lines = _lines(text)
    total = sum(len(line) for line in lines)
    inside = sum(len(line) for line in lines
                 if line in gold_lines or (len(line) >= 20 and line in flat))
    return total > 0 and inside / total > 0.5


def block_errors(html: str, gold: str, lang: str, mode: str) -> list[tuple[str, float, str, str]]:
    """(error, probability, path, text) of each paragraph MODE labels against the gold."""
    from warclake.tasks.extract.boilerplate import classify
    from warclake.tasks.extract.html_paragraphs import extract_paragraphs

    paras = extract_paragraphs(html)
    labels = classify(mode, paras, lang or None)
    probs = [float("nan")] * len(paras)
    if mode == "sieve" and paras:
        from warclake.tasks.extract.boilerplate import model, resolve_lang
        probs = list(model.probabilities(paras, resolve_lang(paras, lang or None)))
    out = []
    for p, lab, pr in zip(paras, labels, probs):
        in_gold = is_gold_block(p.plain, gold)
        if in_gold and lab != "good":
            out.append(("drop", pr, p.path, p.plain))
        elif not in_gold and lab == "good" and tokens(p.plain):
            out.append(("keep", pr, p.path, p.plain))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gold", default=str(GOLD))
    ap.add_argument("--data", default="", help="data root (default: ../shared/data), or for pages kept "
                    "in git repositories the folder of their copies (default: $WARCLAKE_REPOS)")
    ap.add_argument("--split", default="tuning", choices=("tuning", "heldout", "all"))
    ap.add_argument("--extractor", action="append", help="default: sieve and trafilatura")
    ap.add_argument("--blocks", metavar="MODE", help="list MODE's wrong paragraphs per page")
    ap.add_argument("--width", type=int, default=90, help="characters of text shown per block")
    args = ap.parse_args(argv)
    names = args.extractor or ["sieve", "trafilatura"]
    kinds = {e["id"]: e["kind"] for e in read_entries(args.gold)}
    pages = read_ja(f"{args.gold},{args.data}" if args.data else args.gold, args.split)
    fns = {n: get_extractor(n) for n in names}
    f1s: dict[str, dict[str, float]] = defaultdict(dict)
    print("| page | kind | " + " | ".join(f"{n} P/R/F1" for n in names) + " |")
    print("|---|---|" + "---:|" * len(names))
    blocks = {}
    for page in pages:
        html = decode_page(page)
        lang = page_language(html, "auto")
        cells = []
        for n, fn in fns.items():
            p, r, f = token_page_prf(page.gold, fn(html, lang))
            f1s[n][page.id] = f
            cells.append(f"{p:.2f} / {r:.2f} / {f:.3f}")
        print(f"| {page.id} | {kinds[page.id]} | " + " | ".join(cells) + " |")
        if args.blocks:
            blocks[page.id] = (lang, block_errors(html, page.gold, lang, args.blocks))
    print(f"\nMean page F1 ({args.split}, {len(pages)} pages):\n")
    by_kind = sorted({kinds[p.id] for p in pages})
    print("| extractor | all | " + " | ".join(by_kind) + " |")
    print("|---|---:|" + "---:|" * len(by_kind))
    for n in names:
        row = [sum(f1s[n].values()) / len(pages)]
        for k in by_kind:
            vals = [v for pid, v in f1s[n].items() if kinds[pid] == k]
            row.append(sum(vals) / len(vals))
        print(f"| {n} | " + " | ".join(f"{v:.3f}" for v in row) + " |")
    for pid, (lang, errs) in blocks.items():
        print(f"\n### {pid} (lang {lang or '?'}): {len(errs)} wrong blocks of {args.blocks}")
        for err, pr, path, text in errs:
            short = " ".join(text.split())[:args.width]
            print(f"  {err} p={pr:.2f} {path}\n       {short}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

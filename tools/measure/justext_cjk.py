"""Smoke measurement of jusText's CJK adaptation (character lengths + function-character
density) on Japanese / Chinese pages with reference text.

    python -m tools.measure.justext_cjk --gold readability:../shared/data/gold/mozilla_readability_testpages \\
        --only hukumusume,yahoo-4,qq,gmw,pixnet [--markdown FILE]

For each page: paragraphs are labelled by aligning them with the reference text (as for
training, ``tools.train_sieve.label_paragraphs``); the function-character density
of reference ("main") and other paragraphs is summarised, and token P/R/F1 (one token per
CJK character) is given for: jusText with the CJK design, jusText as it would run without
it (whitespace words, Latin thresholds, no stoplist: length-only), and keeping everything.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from warclake.tasks.evaluation.gold import decode_page, read_gold
from warclake.tasks.evaluation.metrics import prf, token_counts
from warclake.tasks.extract.boilerplate import clean_text, justext
from warclake.tasks.extract.boilerplate.text import cjk_count, function_char_density, guess_language


def measure(pages) -> tuple[list[dict], dict]:
    from tools.train_sieve import label_paragraphs
    from warclake.tasks.extract.html_paragraphs import extract_paragraphs

    rows = []
    counts = {"cjk": [], "plain": [], "none": []}
    for page in pages:
        paras = extract_paragraphs(decode_page(page))
        texts = [p.plain for p in paras]
        lang = guess_language(texts)
        if lang not in ("ja", "zh"):
            continue
        y, _ = label_paragraphs(texts, page.gold)
        dens = np.array([function_char_density(t, lang) for t in texts])
        big = np.array([cjk_count(t) >= 10 for t in texts])
        main, other = dens[(y > 0) & big], dens[(y == 0) & big]
        outs = {
            "cjk": clean_text(paras, justext.classify(paras, lang)),
            "plain": clean_text(paras, justext.classify(paras, "xx")),
            "none": clean_text(paras, ["good"] * len(paras)),
        }
        row = {"page": page.id, "lang": lang, "main_paras": int(len(main)),
               "other_paras": int(len(other)),
               "main_median": float(np.median(main)) if len(main) else float("nan"),
               "other_median": float(np.median(other)) if len(other) else float("nan"),
               "main_above_high": float((main > justext.CJK_FUNC_HIGH[lang]).mean())
               if len(main) else float("nan"),
               "other_below_low": float((other <= justext.CJK_FUNC_LOW[lang]).mean())
               if len(other) else float("nan")}
        for k, text in outs.items():
            c = token_counts(page.gold, text)
            counts[k].append(c)
            row[f"f1_{k}"] = prf([c])["f1"]
        rows.append(row)
    return rows, {k: prf(v) for k, v in counts.items()}


def markdown(rows, overall) -> str:
    out = ["| page | lang | main / other paragraphs (>=10 CJK chars) | median density main | "
           "median density other | main > HIGH | other <= LOW | F1 jusText-CJK | "
           "F1 jusText-plain | F1 keep-all |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r['page']} | {r['lang']} | {r['main_paras']} / {r['other_paras']} | "
                   f"{r['main_median']:.3f} | {r['other_median']:.3f} | "
                   f"{r['main_above_high']:.2f} | {r['other_below_low']:.2f} | "
                   f"{r['f1_cjk']:.3f} | {r['f1_plain']:.3f} | {r['f1_none']:.3f} |")
    out.append("")
    out.append("| all pages | F1 | precision | recall |")
    out.append("|---|---:|---:|---:|")
    for k, name in (("cjk", "jusText, CJK design"), ("plain", "jusText without it"),
                    ("none", "keep all")):
        m = overall[k]
        out.append(f"| {name} | {m['f1']:.3f} | {m['precision']:.3f} | {m['recall']:.3f} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.measure.justext_cjk", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gold", required=True, metavar="FORMAT:PATH")
    ap.add_argument("--only", help="comma-separated page ids")
    ap.add_argument("--markdown", type=Path, help="append the tables to this file")
    args = ap.parse_args(argv)
    pages = read_gold(args.gold, "all")
    if args.only:
        wanted = set(args.only.split(","))
        pages = [p for p in pages if p.id in wanted]
    rows, overall = measure(pages)
    text = markdown(rows, overall)
    print(text)
    if args.markdown:
        with open(args.markdown, "a", encoding="utf-8") as f:
            f.write("\n" + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

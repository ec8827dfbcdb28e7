"""Does code stay code? The share of the indented code lines of WCXB's truth that an
extractor's output keeps with their indentation.

    python -m tools.measure.code_indent --gold ../shared/data/gold/wcxb_dev \\
        [--split heldout] [--extractor sieve --extractor trafilatura ...]

The lines: every line of a fenced code block (```) of the truth's ``main_content_markdown``
that starts with a space or a tab and holds more than whitespace. A line is kept when the
output has a line equal to it (trailing whitespace aside): the same leading whitespace,
the same inner spacing. Per extractor: lines kept / lines, overall and per page.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)


def indented_code_lines(markdown: str) -> list[str]:
    """The indented lines of the fenced code blocks, trailing whitespace removed."""
    return [line.rstrip() for block in _FENCE.findall(markdown or "") for line in block.split("\n")
            if line.strip() and line[:1] in " \t"]


def kept(lines: list[str], output: str) -> int:
    have = {line.rstrip() for line in output.split("\n")}
    return sum(1 for line in lines if line in have)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.measure.code_indent",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--gold", required=True, type=Path, help="the WCXB split folder (wcxb_dev)")
    ap.add_argument("--split", default="heldout", choices=("heldout", "tuning", "all"))
    ap.add_argument("--extractor", action="append",
                    help="repeatable; default: none, sieve and the installed references")
    args = ap.parse_args(argv)

    from warclake.tasks.evaluation.gold import decode_page
    from warclake.tasks.evaluation.runner import available_extractors, get_extractor, page_language
    from warclake.tasks.evaluation.wcxb import read_wcxb

    names = args.extractor or [n for n in available_extractors()
                               if n in ("none", "sieve", "trafilatura", "resiliparse")]
    fns = {n: get_extractor(n) for n in names}
    totals = dict.fromkeys(names, 0)
    n_lines = n_pages = 0
    rows = []
    for page in read_wcxb(args.gold, args.split):
        truth = json.loads((args.gold / "ground-truth" / f"{page.id.split('/')[1]}.json").read_text("utf-8"))
        lines = indented_code_lines((truth.get("ground_truth") or {}).get("main_content_markdown"))
        if not lines:
            continue
        html = decode_page(page)
        lang = page_language(html, "auto")
        counts = {n: kept(lines, fn(html, lang)) for n, fn in fns.items()}
        for n, c in counts.items():
            totals[n] += c
        n_lines += len(lines)
        n_pages += 1
        rows.append(f"| {page.id} | {len(lines)} | " + " | ".join(str(counts[n]) for n in names) + " |")
    print(f"{args.split} part of {args.gold.name}: {n_pages} pages with indented code, {n_lines} lines\n")
    print("| extractor | lines kept | share |\n|---|---:|---:|")
    for n in names:
        print(f"| {n} | {totals[n]} | {totals[n] / n_lines if n_lines else 0:.3f} |")
    print("\n| page | lines | " + " | ".join(names) + " |\n|---|---:|" + "---:|" * len(names))
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

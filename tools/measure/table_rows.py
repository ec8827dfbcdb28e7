"""How many data-table rows of the WCXB gold an extractor keeps as one paragraph (one line for
a reference tool), cells in order.

    python -m tools.measure.table_rows [--gold ../shared/data/gold/wcxb_dev] [--split heldout]
                                       [--extractor sieve --extractor trafilatura] [--no-rows]

WCXB's gold main text is Markdown: a table row is a line of cells separated by ``|``
(``| a | b |``, mostly written ``a | b``). A data-table row is such a line with two cells or
more holding a word (a cell's words: its text with Markdown's
links, images, emphasis and ``<br>`` reduced to their words, NFKC, lower case, runs of word
characters). For each extractor, the rows counted are those whose every cell's words occur
in the extractor's kept text (so a row the extractor dropped as boilerplate, or never
reached, is not held against the row format); of them, the share kept as one unit, its
cells' words in order in it. A unit is a paragraph labelled good for a boilerplate mode of
warclake (``clean_text``'s paragraphs), a line of the output for a reference tool
(trafilatura's defaults, as ``warclake eval`` calls it). Pages as ``warclake eval`` reads
them (the split of ``tasks/evaluation/wcxb.py``, the charset cascade, the language guess).
On the held-back split the figures are given for the whole of it and for its final part
(``tools/gold/wcxb_final.py``) alone.

``--no-rows`` runs warclake's walk with data rows off (every cell a block of its own, as a
row of one cell is), for a before/after comparison in one checkout.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from pathlib import Path

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_BR = re.compile(r"<br\s*/?>", re.I)
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_RULE_CELL = re.compile(r"^\s*:?-{2,}:?\s*$")
_WORD = re.compile(r"\w+")


def words(text: str) -> str:
    """A text's words, space-joined, with a space at each end (so a find() matches whole words)."""
    return " " + " ".join(_WORD.findall(unicodedata.normalize("NFKC", text).lower())) + " "


def table_rows(markdown: str) -> list[list[str]]:
    """The data-table rows of a Markdown text: per row, the words of each cell holding some."""
    rows = []
    for line in markdown.splitlines():
        line = line.strip()
        if "|" not in line:
            continue
        body = line[1:] if line.startswith("|") else line
        body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
        cells = _CELL_SPLIT.split(body)
        if all(_RULE_CELL.match(c) for c in cells):
            continue   # the header's rule line
        cell_words = [words(_BR.sub(" ", _LINK.sub(r"\1", c.replace("\\|", "|")))) for c in cells]
        cell_words = [w for w in cell_words if w.strip()]
        if len(cell_words) >= 2:
            rows.append(cell_words)
    return rows


def in_order(unit: str, cells: list[str]) -> bool:
    """Every cell's words occur in the unit, each after the one before."""
    at = 0
    for cell in cells:
        found = unit.find(cell, at)
        if found < 0:
            return False
        at = found + len(cell) - 1   # the cells share no word, but may share the space between
    return True


def rows_off() -> None:
    """The paragraph walk with data rows off (both walks): every row is read as blocks."""
    from warclake.tasks.extract import html_paragraphs as hp

    hp.MIN_ROW_CELLS = sys.maxsize
    try:
        from warclake.tasks.native import lexbor_walk
    except ImportError:
        return
    lexbor_walk.configure_rows(hp.ROW_SEP, hp.MAX_CELL_CHARS, sys.maxsize)


def _units(name: str, html: str, lang: str) -> list[str]:
    if name in _REFERENCE:
        return [ln for ln in _REFERENCE[name](html).splitlines() if ln.strip()]
    from warclake.tasks.extract.boilerplate import classify
    from warclake.tasks.extract.html_paragraphs import extract_paragraphs

    paras = extract_paragraphs(html)
    labels = classify(name, paras, lang or None) if name != "none" else None
    return [p.plain for i, p in enumerate(paras) if labels is None or labels[i] == "good"]


def _trafilatura(html: str) -> str:
    import trafilatura

    return trafilatura.extract(html) or ""


_REFERENCE = {"trafilatura": _trafilatura}


def measure(gold: str, split: str, extractors: list[str]) -> dict[tuple[str, str], dict[str, int]]:
    """Counts per (part, extractor): ``split`` whole, and its final part when held back."""
    from tools.gold.wcxb_final import is_final
    from warclake.tasks.evaluation.gold import decode_page
    from warclake.tasks.evaluation.runner import page_language
    from warclake.tasks.evaluation.wcxb import read_wcxb

    truth = Path(gold) / "ground-truth"
    parts = [split] + (["final"] if split == "heldout" else [])
    out = {(part, name): {"pages": 0, "rows": 0, "rows_kept": 0, "one_unit": 0} for part in parts for name in extractors}
    for page in read_wcxb(gold, split):
        record = json.loads((truth / (page.id.split("/", 1)[1] + ".json")).read_text("utf-8"))
        rows = table_rows(record["ground_truth"].get("main_content") or "")
        if not rows:
            continue
        html = decode_page(page)
        lang = page_language(html, "auto")
        for name in extractors:
            try:
                units = [words(u) for u in _units(name, html, lang)]
            except Exception:   # a page the extractor fails on keeps nothing
                units = []
            kept = "".join(units)
            for part in parts:
                if part == "final" and not is_final(page.id):
                    continue
                counts = out[part, name]
                counts["pages"] += 1
                counts["rows"] += len(rows)
                for cells in rows:
                    if all(c in kept for c in cells):
                        counts["rows_kept"] += 1
                        counts["one_unit"] += any(in_order(u, cells) for u in units)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.measure.table_rows", description=__doc__.split("\n\n")[0])
    ap.add_argument("--gold", default="../shared/data/gold/wcxb_dev", help="a WCXB split folder")
    ap.add_argument("--split", default="heldout", choices=("heldout", "tuning", "all"))
    ap.add_argument("--extractor", action="append", help="a boilerplate mode or trafilatura (repeatable); "
                    "default: sieve and trafilatura")
    ap.add_argument("--no-rows", action="store_true", help="warclake's walk with data rows off")
    args = ap.parse_args(argv)
    if args.no_rows:
        rows_off()
    extractors = args.extractor or ["sieve", "trafilatura"]
    result = measure(args.gold, args.split, extractors)
    print(f"{args.gold}{' (data rows off)' if args.no_rows else ''}")
    print("| part | extractor | pages with rows | gold rows | rows whose every cell is kept | kept as one unit, in order | share |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for (part, name), c in result.items():
        share = c["one_unit"] / c["rows_kept"] if c["rows_kept"] else 0.0
        print(f"| {part} | {name} | {c['pages']} | {c['rows']:,} | {c['rows_kept']:,} | {c['one_unit']:,} | {share:.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

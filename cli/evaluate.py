"""``warclake eval``: score boilerplate modes and reference extractors on gold sets.

    warclake eval --gold cleaneval:DIR[,DIR...][@SPLIT] [--gold folder:DIR ...]
                  [--extractor NAME ...] [--split heldout|tuning|all] [--lang auto|en|...]
                  [--markdown FILE]

FORMAT is ``cleaneval``, ``dragnet`` (main content; ``dragnet-comments`` counts the
comments too), ``wceb``, ``wcxb`` (pages labelled by type: a second table gives the page F1
per type), ``folder`` (``<id>.html`` + ``<id>.txt``) or ``readability``
(Mozilla's test pages; smoke checks only). ``--gold`` may repeat; a trailing ``@SPLIT`` overrides ``--split`` for that set (e.g. score
CleanPortalEval whole, ``@all``, next to CLEANEVAL's held-back part). Also runs standalone:
``python -m warclake.cli.evaluate ...``.
"""
from __future__ import annotations

import argparse
import datetime
import shlex
import sys
from pathlib import Path

DEFAULT_SPLIT = "heldout"


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "eval", help="score boilerplate removal against gold sets",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_arguments(p)
    p.set_defaults(handler=run, func=run)
    return p


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gold", action="append", required=True, metavar="FORMAT:PATH[@SPLIT]",
                   help="gold set; FORMAT is cleaneval, dragnet, dragnet-comments, wceb, wcxb, "
                        "folder or readability (repeatable)")
    p.add_argument("--only", metavar="ID,...",
                   help="score only these page ids (e.g. the CJK readability cases)")
    p.add_argument("--extractor", action="append", metavar="NAME",
                   help="extractor to score (repeatable); default: every mode and every "
                        "installed reference (trafilatura, justext-py, resiliparse). The keep-everything "
                        "baseline `none` is always scored")
    p.add_argument("--split", default=DEFAULT_SPLIT, choices=("heldout", "tuning", "all"),
                   help="which part of each gold set (default: heldout)")
    p.add_argument("--lang", default="auto",
                   help="language code for stoplists, or auto to guess per page (default)")
    p.add_argument("--limit", type=int, default=0, help="score only the first N pages per set")
    p.add_argument("--markdown", type=Path, help="write the result tables to this file")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _parse_gold(spec: str, default_split: str) -> tuple[str, str]:
    base, sep, split = spec.rpartition("@")
    if sep and split in ("heldout", "tuning", "all"):
        return base, split
    return spec, default_split


def run(args: argparse.Namespace) -> int:
    from warclake.tasks.evaluation.gold import read_gold
    from warclake.tasks.evaluation.runner import (
        available_extractors,
        environment_note,
        evaluate,
        markdown_table,
        type_table,
    )

    installed = available_extractors()
    names = list(dict.fromkeys(args.extractor or installed))
    if "none" not in names:   # every table shows the keep-everything baseline
        names.insert(0, "none")
    missing = [n for n in names if n not in installed]
    if missing:
        print(f"warclake eval: unknown or not installed extractor(s) {missing}; "
              f"available: {installed}", file=sys.stderr)
        return 2
    sections = []
    for spec in args.gold:
        gold_spec, split = _parse_gold(spec, args.split)
        try:
            pages = read_gold(gold_spec, split)
        except (ValueError, FileNotFoundError) as e:
            print(f"warclake eval: {e}", file=sys.stderr)
            return 2
        if args.only:
            wanted = set(args.only.split(","))
            pages = [pg for pg in pages if pg.id in wanted or pg.id.split("/")[-1] in wanted]
        if args.limit:
            pages = pages[:args.limit]
        title = f"{gold_spec.partition(':')[0]}: {_short(gold_spec)} — split {split}, {len(pages)} pages"
        progress = None if args.quiet else (lambda m: print(f"  {m}", file=sys.stderr, end="\r"))
        results = evaluate(pages, names, args.lang, progress=progress)
        if progress:
            print(file=sys.stderr)
        table = markdown_table(results)
        by_type = type_table(results)
        if by_type:
            table += "\n\nPage F1 by page type (pages of each type in brackets):\n\n" + by_type
        print(f"\n## {title}\n\n{table}")
        sections.append(f"## {title}\n\n{table}\n")
    if args.markdown:
        argv = sys.argv[1:]
        if "eval" in argv:   # run as ``warclake [-v] eval ...``
            cmd = "warclake eval " + " ".join(shlex.quote(a) for a in argv[argv.index("eval") + 1:])
        else:
            cmd = "python -m warclake.cli.evaluate " + " ".join(shlex.quote(a) for a in argv)
        head = ("# Boilerplate removal: evaluation\n\n"
                f"Produced by `{cmd}` on {datetime.date.today().isoformat()} "
                f"({environment_note()}).\n\n"
                "`none` keeps every paragraph: the baseline. "
                "F1 / precision / recall: bag-of-tokens overlap as in the article-extraction "
                "benchmarks (per-page normalised, macro-averaged); shingle-4: the same over "
                "4-token shingles; page F1 / P / R: WCXB's score, per page over the bag of "
                "lowercased words, averaged over pages; empty: pages with no text; edit sim: "
                "CLEANEVAL-style word-level 1 - Levenshtein / max length, page mean; ms/page: "
                "extraction + classification on one core, process CPU time, decoding and I/O "
                "excluded. See `tasks/evaluation/metrics.py`.\n\n")
        existing = _keep_notes(args.markdown)
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(head + "\n".join(sections) + existing, encoding="utf-8")
    return 0


_NOTES_MARK = "<!-- notes: kept across runs -->"


def _keep_notes(path: Path) -> str:
    """Hand-written notes below the marker survive a re-run that rewrites the tables."""
    if not path.exists():
        return ""
    text = path.read_text(encoding="utf-8")
    i = text.find(_NOTES_MARK)
    return "\n" + text[i:] if i >= 0 else ""


def _short(spec: str) -> str:
    paths = spec.partition(":")[2].split(",")
    return ", ".join(Path(p).name for p in paths)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m warclake.cli.evaluate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

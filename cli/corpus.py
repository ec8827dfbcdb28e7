"""``warclake corpus`` and ``warclake export``: the corpus stage over a lake and the export
of its result. ``corpus`` runs the library directly (no Prefect) unless ``--flow`` asks
for the ``corpus-dump`` flow."""
from __future__ import annotations

import sys

from warclake.tasks.corpus.settings import (
    DEFAULT_MEMORY_LIMIT,
    THRESHOLD_RANGES,
    DecisionConfig,
    SignatureConfig,
)


def add_parser(sub) -> None:
    p = sub.add_parser("corpus", help="repeated text, near-duplicates and quality rules over the lake, as decisions")
    p.add_argument("--lake", required=True, help="lake root: a folder or an fsspec URL (s3://bucket/lake)")
    p.add_argument("--dump", default=None,
                   help="judge this dump (and any earlier one not judged yet); default: every dump")
    add_decision_arguments(p)
    p.add_argument("--memory-limit", default=DEFAULT_MEMORY_LIMIT,
                   help="DuckDB memory limit of the global steps (default %(default)s); "
                        "beyond it DuckDB spills to <lake>/corpus/.spill")
    p.add_argument("--threads", type=int, default=None, help="DuckDB threads (default: all cores)")
    p.add_argument("--partitions", type=int, default=SignatureConfig().partitions,
                   help="hash-prefix partitions of the global steps (default %(default)s)")
    p.add_argument("--flow", action="store_true", help="run as the Prefect flow corpus-dump")
    p.add_argument("--dask", default=None, metavar="ADDRESS",
                   help="run the flow's tasks on this Dask scheduler (implies --flow)")
    p.add_argument("--no-report", action="store_true", help="skip the report page")
    p.add_argument("--report-dir", default=None,
                   help="where the report page goes (default: <lake>/reports/corpus/<scope>; "
                        "for a remote lake ./reports/corpus/<scope>)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    p.set_defaults(handler=run_corpus_cmd)

    e = sub.add_parser("export", help="write the corpus as parquet or JSONL shards")
    e.add_argument("--lake", required=True, help="lake root: a folder or an fsspec URL")
    e.add_argument("--out", required=True, help="output folder, or an fsspec URL (s3://bucket/corpus)")
    e.add_argument("--format", choices=("parquet", "jsonl"), default="parquet")
    e.add_argument("--dump", default=None, help="one dump (default: all)")
    e.add_argument("--lang", default=None, help="one language (default: all)")
    e.add_argument("--shard-docs", type=int, default=100_000, help="documents per shard (default %(default)s)")
    e.set_defaults(handler=run_export_cmd)


def add_decision_arguments(p) -> None:
    """What decides the corpus: thresholds, quality rules, the user's models and word lists
    (``warclake corpus``, and ``warclake run --corpus``)."""
    for name, (lo, hi, doc) in THRESHOLD_RANGES.items():
        kind = float if name == "similarity" else int
        p.add_argument("--" + name.replace("_", "-"), type=kind, default=None, metavar="N",
                       help=f"{doc} (default {getattr(DecisionConfig(), name)}; range {lo:g}..{hi:g})")
    p.add_argument("--quality", action="append", default=[], metavar="RULE=VALUE",
                   help="override a quality rule's threshold (repeatable)")
    add_model_arguments(p)
    p.add_argument("--drop-all-copies", action="store_true",
                   help="drop every copy of a duplicate cluster instead of keeping one survivor")
    p.add_argument("--keep-repeats-in-document", action="store_true",
                   help="keep the later copies of a text within one document (no repeated_in_document rule; "
                        "redoes only the decisions)")
    p.add_argument("--judge-whole-pages", action="store_true",
                   help="quality rules measure the whole page, boilerplate included, instead of the text "
                        "the corpus keeps (redoes the per-archive step)")


def add_model_arguments(p) -> None:
    """The user's models and word lists, and their rules' thresholds (tasks/corpus/README.md#model-scores)."""
    from warclake.tasks.corpus.steps.score_rules import SCORE_RULES

    g = p.add_argument_group("model scores and word lists (nothing is downloaded: give your own files)")
    g.add_argument("--fasttext-model", default=None, metavar="PATH",
                   help="a supervised fastText classifier (.bin): the probability of --fasttext-label "
                        "becomes each document's fasttext_score")
    g.add_argument("--fasttext-label", default="__label__hq", metavar="LABEL",
                   help="the label whose probability is the score (default %(default)s)")
    g.add_argument("--lm-model", action="append", default=[], metavar="[LANG=]PATH",
                   help="an n-gram language model (KenLM binary or ARPA), for LANG or every language: "
                        "perplexity per paragraph and per document (repeatable)")
    g.add_argument("--lm-tokens", choices=("words", "chars"), default="words",
                   help="what the language model's tokens are: words of the normalised text split on "
                        "spaces, or its characters (default %(default)s)")
    g.add_argument("--word-list", action="append", default=[], metavar="LANG=PATH",
                   help="a word list of LANG ('*' for every language without its own), one word or "
                        "phrase per line: matches per document (repeatable)")
    for r in SCORE_RULES:
        g.add_argument(r.option, dest="score_" + r.name, type=float, default=None, metavar="N",
                       help=f"{r.doc} (rule {r.name}; range {r.low:g}..{r.high:g}; default: off)")


def _lang_paths(items: list[str], option: str, lang_required: bool) -> dict:
    out = {}
    for item in items:
        lang, sep, path = item.partition("=")
        if not sep:
            if lang_required:
                raise ValueError(f"{option} {item!r}: expected LANG=PATH")
            lang, path = "*", item
        if not lang.strip() or not path.strip():
            raise ValueError(f"{option} {item!r}: expected LANG=PATH")
        out[lang.strip()] = path.strip()
    return out


def score_models(args):
    """The user's models (None when none is given); ValueError for a missing file."""
    from warclake.tasks.corpus.signals.models import ScoreModels

    models = ScoreModels(fasttext=args.fasttext_model, fasttext_label=args.fasttext_label,
                         lm=_lang_paths(args.lm_model, "--lm-model", False), lm_tokens=args.lm_tokens,
                         word_lists=_lang_paths(args.word_list, "--word-list", True))
    return models if models.any else None


def decision_config(args) -> DecisionConfig:
    kw = {n: getattr(args, n) for n in THRESHOLD_RANGES if getattr(args, n, None) is not None}
    quality = {}
    for item in args.quality:
        name, sep, value = item.partition("=")
        try:
            if not sep:
                raise ValueError
            quality[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"--quality {item!r}: expected RULE=NUMBER") from None
    scores = {k[len("score_"):]: v for k, v in vars(args).items() if k.startswith("score_") and v is not None}
    return DecisionConfig(drop_all_copies=args.drop_all_copies, quality=quality, scores=scores,
                          keep_repeats_in_document=args.keep_repeats_in_document, **kw)


def stage_options(args, partitions: int = SignatureConfig().partitions, **kw):
    """The stage's options from the arguments ``add_decision_arguments`` added (and ``kw``)."""
    from warclake.tasks.corpus.stage import StageOptions

    return StageOptions(sig=SignatureConfig(partitions=partitions, judge_whole_pages=args.judge_whole_pages),
                        decide=decision_config(args), models=score_models(args), **kw)


def run_corpus_cmd(args) -> int:
    opts = stage_options(args, partitions=args.partitions, memory_limit=args.memory_limit, threads=args.threads)
    if args.flow or args.dask:   # the flow reads the summaries and checks them, as when a deployment starts it
        from warclake.flows.api_server import api_for_run
        from warclake.flows.corpus_flow import CorpusFailed, corpus_dump
        from warclake.tasks.corpus.checks import check_request
        from warclake.tasks.runtime.run_checks import check_dask_address

        check_request(args.lake, args.dump, opts.decide)   # before Prefect starts: no summary read
        if args.dask:
            check_dask_address(args.dask)
        with api_for_run():   # a Prefect server of the run's own when none is configured
            state = corpus_dump(lake=args.lake, dump=args.dump, options=opts, dask=args.dask,
                                report=not args.no_report, report_dir=args.report_dir)
        if not state.is_completed():   # refused input: 2, as without --flow; a step that failed: 1
            print(f"warclake: error: {state.message}", file=sys.stderr)
            return 2 if isinstance(state.result(raise_on_failure=False), CorpusFailed) else 1
        counts = state.result()
    else:
        from warclake.tasks.corpus.checks import prepare
        from warclake.tasks.corpus.stage import finish
        from warclake.tasks.corpus.storage.run_lock import CorpusLocked

        dumps, archives = prepare(args.lake, args.dump, opts.decide)
        try:
            counts = finish(args.lake, dumps, archives, opts, report=not args.no_report, report_dir=args.report_dir,
                            progress=None if args.quiet else lambda m: print(m, file=sys.stderr))
        except CorpusLocked:
            raise   # refused, as bad input is: 2
        except Exception as exc:   # a step failed (after its retries): 1, as with --flow
            if args.verbose:
                raise
            print(f"warclake: error: the corpus stage failed: {' '.join(str(exc).split()) or type(exc).__name__}",
                  file=sys.stderr)
            return 1
    for dump, st in counts["dumps"].items():
        print(f"{dump}: {st['kept']} of {st['documents']} documents kept, "
              f"{st['paragraphs_dropped']} paragraphs dropped ({st['run_id']})")
    if counts.get("report"):
        print(f"report: {counts['report']}")
    return 0


def run_export_cmd(args) -> int:
    from warclake.tasks.corpus.checks import reachable
    from warclake.tasks.corpus.steps.export import export_corpus

    lake = reachable(args.lake)
    if args.dump:
        lake.require_dump(args.dump)
    info = export_corpus(args.lake, args.out, args.format, args.dump, args.shard_docs, args.lang)
    print(f"{info['documents']} documents in {len(info['shards'])} {args.format} shard(s) under {args.out}")
    return 0

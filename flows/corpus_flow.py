"""The Prefect flow ``corpus-dump``: the corpus stage as mapped tasks.

    checks -> per-archive signatures (one task per archive)
           -> paragraph statistics (one task per dump and partition)
           -> near-duplicate paragraph groups (one task per dump, in order)
           -> candidate pairs and paragraph decisions (per dump and partition)
           -> document decisions (per dump) -> catalogue and report

Every task is a function of warclake.tasks.corpus that skips work already in the lake, so a
re-run after a crash does only what is missing. On Dask (``--dask``) the same tasks run
on the cluster's workers; the lake must then be on a filesystem they share.
"""
from __future__ import annotations

from prefect import flow, get_run_logger, task
from prefect.task_runners import ThreadPoolTaskRunner

from warclake.tasks.corpus import stage
from warclake.tasks.corpus.archive_step import sign_archive
from warclake.tasks.corpus.checks import check_inputs, dumps_to_process
from warclake.tasks.corpus.decide import check_quality_overrides
from warclake.tasks.corpus.settings import DecisionConfig, SignatureConfig


@task(name="corpus-sign-archive", task_run_name="sign {dump}/{warc}", persist_result=False)
def sign_task(lake: str, dump: str, warc: str, summary: dict, sig: SignatureConfig) -> dict:
    return sign_archive(lake, dump, warc, summary, sig)


@task(name="corpus-paragraph-stats", task_run_name="stats {dump} part {part}", persist_result=False)
def stats_task(lake: str, dump: str, part: int, opts: stage.StageOptions) -> bool:
    return stage.stats_task(lake, dump, part, opts)


@task(name="corpus-paragraph-groups", task_run_name="paragraph groups {dump}", persist_result=False)
def groups_task(lake: str, dumps: list[str], dump: str, opts: stage.StageOptions) -> bool:
    return stage.groups_task(lake, dumps, dump, opts)


@task(name="corpus-pairs", task_run_name="pairs {dump} part {part}", persist_result=False)
def pairs_task(lake: str, dumps: list[str], dump: str, part: int, opts: stage.StageOptions) -> bool:
    return stage.pairs_task(lake, dumps, dump, part, opts)


@task(name="corpus-paragraph-decisions", task_run_name="paragraph decisions {dump} part {part}",
      persist_result=False)
def para_decisions_task(lake: str, dumps: list[str], dump: str, part: int, opts: stage.StageOptions) -> bool:
    return stage.para_decisions_task(lake, dumps, dump, part, opts)


@task(name="corpus-document-decisions", task_run_name="document decisions {dump}", persist_result=False)
def doc_decisions_task(lake: str, dumps: list[str], dump: str, opts: stage.StageOptions) -> bool:
    return stage.doc_decisions_task(lake, dumps, dump, opts)


@task(name="corpus-report", persist_result=False)
def report_task(lake: str) -> str:
    from warclake.tasks.catalog import build_catalog
    from warclake.tasks.corpus.report import write_corpus_report

    build_catalog(lake)
    return write_corpus_report(lake)[1]


def _run_name() -> str:
    from prefect.runtime import flow_run

    return f"corpus {flow_run.parameters.get('dump') or 'all dumps'}"


@flow(name="corpus-dump", flow_run_name=_run_name, task_runner=ThreadPoolTaskRunner(max_workers=2),
      persist_result=False)
def corpus_flow(lake: str, dump: str | None = None, thresholds: dict | None = None,
                quality: dict | None = None, drop_all_copies: bool = False, memory_limit: str = "2GB",
                partitions: int = SignatureConfig().partitions, threads: int | None = None,
                report: bool = True) -> dict:
    """Judge ``dump`` (with every earlier dump it is compared against), or every dump."""
    log = get_run_logger()
    opts = stage.StageOptions(sig=SignatureConfig(partitions=partitions),
                              decide=DecisionConfig(drop_all_copies=drop_all_copies, quality=quality or {},
                                                    **(thresholds or {})),
                              memory_limit=memory_limit, threads=threads)
    check_quality_overrides(opts.decide)
    dumps = dumps_to_process(lake, dump)
    archives = check_inputs(lake, dumps)
    signed = [sign_task.submit(lake, d, w, s, opts.sig) for d in dumps for w, s in archives[d]]
    counts = {"signed": sum(f.result()["done"] == "signed" for f in signed)}
    parts = range(opts.sig.partitions)
    for f in [stats_task.submit(lake, d, p, opts) for d in dumps for p in parts]:
        f.result()
    for d in dumps:   # in order: a dump's groups build on the earlier dumps'
        groups_task.submit(lake, dumps, d, opts).result()
    futures = [pairs_task.submit(lake, dumps, d, p, opts) for d in dumps for p in parts]
    futures += [para_decisions_task.submit(lake, dumps, d, p, opts) for d in dumps for p in parts]
    for f in futures:
        f.result()
    for f in [doc_decisions_task.submit(lake, dumps, d, opts) for d in dumps]:
        f.result()
    counts["dumps"] = {d: stage.dump_summary(lake, d, opts.sig.partitions) for d in dumps}
    if report:
        counts["report"] = report_task.submit(lake).result()
    for d, st in counts["dumps"].items():
        log.info("%s: %s of %s documents kept, %s paragraphs dropped", d, st["kept"], st["documents"],
                 st["paragraphs_dropped"])
    return counts


def corpus_dump(lake: str, dump: str | None = None, options: stage.StageOptions | None = None,
                dask: str | None = None, report: bool = True) -> dict:
    """Run the flow (on a Dask cluster when ``dask`` names its scheduler); its counts."""
    from dataclasses import asdict

    from warclake.tasks.corpus.settings import THRESHOLD_RANGES

    opts = options or stage.StageOptions()
    fn = corpus_flow
    if dask:
        from prefect_dask import DaskTaskRunner

        fn = corpus_flow.with_options(task_runner=DaskTaskRunner(address=dask))
    d = asdict(opts.decide)
    return fn(lake=lake, dump=dump, thresholds={k: d[k] for k in THRESHOLD_RANGES}, quality=opts.decide.quality,
              drop_all_copies=opts.decide.drop_all_copies, memory_limit=opts.memory_limit,
              partitions=opts.sig.partitions, threads=opts.threads, report=report)

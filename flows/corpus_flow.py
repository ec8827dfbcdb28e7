"""The Prefect flow ``corpus-dump``: the corpus stage's run (tasks/corpus/stage.py) with its steps as tasks.

    checks -> for each dump, in order:
                per-archive signatures (one task per archive)
                -> model_scores (per partition of the archives; none without a model)
                -> para_stats (per partition) -> para_groups (texts per partition, search per
                   table and bucket, groups over the pairs) -> pairs (per partition)
                -> para_pairs (phases per partition, clusters over the pairs)
                -> para_decisions (per partition) -> doc_decisions
           -> catalogue and report

The run itself (lock, manifests, the steps' order, summaries) is the library's, as without
Prefect; the flow gives it ``OnTasks`` to run each step on. Every task is a function of
warclake.tasks.corpus that skips work already in the lake, so a re-run after a crash does
only what is missing. The global steps' tasks that run in the flow's own process share the
run's contexts (tasks/corpus/storage/run_contexts.py: each state file read at most once per
run); on Dask (``--dask``) the same tasks run on the cluster's workers; the lake must then be
one they all reach: a shared folder or an object store (``s3://...``, read by DuckDB through
fsspec).

``follow_up`` runs the flow after an extraction of the same dump (``extract-dump`` with
``corpus=True``: ``warclake run --corpus``, or ``corpus = true`` in a deployment), so the
corpus stage keeps the extraction's schedule.
"""
from __future__ import annotations

import functools
import traceback
from contextlib import contextmanager
from dataclasses import asdict
from typing import cast

from prefect import flow, get_run_logger, task
from prefect.context import FlowRunContext
from prefect.futures import as_completed, wait
from prefect.states import Completed, Failed, State
from prefect.task_runners import ThreadPoolTaskRunner

from warclake.flows.dump_flow import retry_if_transient
from warclake.tasks.corpus import stage
from warclake.tasks.corpus.checks import prepare
from warclake.tasks.corpus.settings import THRESHOLD_RANGES, DecisionConfig, SignatureConfig
from warclake.tasks.corpus.signals.archive_step import sign_archive
from warclake.tasks.corpus.signals.models import ScoreModels
from warclake.tasks.corpus.storage import run_contexts
from warclake.tasks.corpus.storage.dump_inputs import DumpInputs
from warclake.tasks.corpus.storage.layout import CorpusLayout
from warclake.tasks.corpus.storage.run_lock import CorpusLock
from warclake.tasks.lake.storage_errors import describe, is_storage_client_error, lake_client_errors
from warclake.tasks.runtime.retries import STEP as STEP_RETRY

DEFAULT = stage.StageOptions()   # the flow's defaults are the stage's


class CorpusFailed(Exception):
    """The corpus stage refused its input or failed (the flow run's Failed state holds it)."""


class CorpusStepFailed(Exception):
    """A step of the corpus stage, or the run's own reads and writes of the lake, failed
    after their retries with an error of the storage (the flow run's Failed state holds it)."""


# Every step is idempotent (done = its state file), so a step that met a network or
# storage error (a remote lake) is simply run again, as extraction's archives are
# (tasks/runtime/retries.py: STEP, as the stage without Prefect).
RETRIES = dict(**STEP_RETRY.prefect_options(), retry_condition_fn=retry_if_transient, persist_result=False)


def frames_freed(fn):
    """A step whose exception keeps no local of its frames: the failed state holds the
    exception for the rest of the run, and a DuckDB connection held there would outlive
    it (reported as leaked when the process exits)."""
    @functools.wraps(fn)
    def step(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except BaseException as exc:
            seen: set[int] = set()
            link: BaseException | None = exc
            while link is not None and id(link) not in seen:   # and what it was raised from or during
                seen.add(id(link))
                traceback.clear_frames(link.__traceback__)
                link = link.__cause__ or link.__context__
            raise
    return step


@task(name="corpus-sign-archive", task_run_name="sign {dump}/{warc}", **RETRIES)
@frames_freed
def sign_task(lake: str, dump: str, warc: str, summary: dict, sig: SignatureConfig,
              models: dict | None = None) -> dict:
    return sign_archive(lake, dump, warc, summary, sig, ScoreModels.from_dict(models))


def _step(run: str | None, known: run_contexts.Known | None, lake: str, dumps: list[str], dump: str,
          opts: stage.StageOptions, fn) -> dict:
    """``fn(ctx)`` in the run's context of ``dump``; whether it did work, and the state files
    its context holds for the run's process to pass on (none when it ran there)."""
    ctx = run_contexts.context_of(run, lake, dumps, dump, opts, known)
    done = fn(ctx)
    return {"done": done, "states": run_contexts.states_of(run, ctx)}


@task(name="corpus-step", task_run_name="{step} {phase} {dump} task {task}", **RETRIES)
@frames_freed
def step_task(lake: str, dumps: list[str], dump: str, step: str, phase: str, task: int | None,
              opts: stage.StageOptions, run: str | None = None, known: run_contexts.Known | None = None) -> dict:
    """One task of one phase of a global step (tasks/corpus/stage.py: STEPS)."""
    one = next(p for p in stage.STEPS[step] if p.name == phase)
    return _step(run, known, lake, dumps, dump, opts, lambda ctx: one.run(ctx, task))


@task(name="corpus-report", **RETRIES)
@frames_freed
def report_task(lake: str, report_dir: str | None) -> str:
    return stage.report_step(lake, report_dir)


# the task of each global step of tasks/corpus/stage.py (STEPS), named as the step
STEP_TASKS = {name: step_task.with_options(name=f"corpus-{name.replace('_', '-')}") for name in stage.STEPS}


class OnTasks:
    """The runner of tasks/corpus/stage.py that makes each step a task run: one per archive
    of a dump's per-archive step, one per partition of a global step (submitted at once).
    The tasks in the flow's own process share the run's contexts (``run`` names them); a task
    in another process (Dask) starts from what the run knows (``known``: each dump's inputs,
    and the state files the tasks before it read or wrote)."""

    def __init__(self, lake: str):
        self.lake = lake
        self.run: str | None = None
        self.known: run_contexts.Known | None = None

    @contextmanager
    def started(self, layout: CorpusLayout, known: dict[str, DumpInputs]):
        self.known = run_contexts.Known(known)
        self.run = run_contexts.register(run_contexts.RunContexts(layout, known))
        try:
            yield self
        finally:
            layout.know_states(self.known.states)   # what tasks on other processes read or wrote
            run_contexts.release(self.run)

    def sign(self, lake: str, archives, sig: SignatureConfig, models: ScoreModels | None = None):
        m = models.as_dict() if models is not None else None
        futures = {sign_task.submit(lake, d, w, s, sig, m): (d, w, s) for d, w, s in archives}
        for f in as_completed(list(futures)):
            yield futures[f], f.result()

    def step(self, name: str, ctx: stage.DumpContext) -> int:
        """Each phase of the step in order, its tasks submitted at once."""
        done = 0
        assert self.known is not None, "step() runs inside started()"
        for phase in stage.STEPS[name]:
            tasks = phase.tasks(ctx)
            # the state files this process read listing the tasks (their keys name earlier
            # steps' states) go with what the tasks returned: a worker reads none of them again
            self.known.learn(ctx.layout.known_states())
            known = self.known.snapshot()
            futures = [STEP_TASKS[name].submit(self.lake, ctx.dumps, ctx.dump, name, phase.name, t, ctx.opts,
                                               self.run, known) for t in tasks]
            # every partition ends before one's failure ends the step: a task left running
            # would still hold its DuckDB connection when the process exits
            wait(futures)
            for f in futures:
                res = f.result()
                self.known.gather(res["states"])
                # the states the task read or wrote: the next phases' listings read none of them
                ctx.layout.know_states(res["states"], newer=True)
                done += res["done"]
        return done

    def report(self, lake: str, report_dir: str | None) -> str:
        return report_task.submit(lake, report_dir).result()


def _run_name() -> str:
    from prefect.runtime import flow_run

    return f"corpus {flow_run.parameters.get('dump') or 'all dumps'}"


@flow(name="corpus-dump", flow_run_name=_run_name, task_runner=ThreadPoolTaskRunner(max_workers=2),  # type: ignore[arg-type]
      persist_result=False)
def corpus_flow(lake: str, dump: str | None = None, thresholds: dict | None = None,
                quality: dict | None = None, drop_all_copies: bool = DEFAULT.decide.drop_all_copies,
                keep_repeats_in_document: bool = DEFAULT.decide.keep_repeats_in_document,
                memory_limit: str = DEFAULT.memory_limit, partitions: int = DEFAULT.sig.partitions,
                threads: int | None = DEFAULT.threads, judge_whole_pages: bool = DEFAULT.sig.judge_whole_pages,
                models: dict | None = None,
                report: bool = True, report_dir: str | None = None, lock_wait: float = 0):
    """Judge ``dump`` (with every earlier dump it is compared against), or every dump.

    thresholds: values of the decision thresholds (similarity, template_min_pages, ...);
    quality: quality rule name -> threshold; keep_repeats_in_document: no
    ``repeated_in_document`` rule; judge_whole_pages: the rules measure whole pages, not the
    text the corpus keeps; models: the user's models and word lists
    (``ScoreModels.as_dict``), whose rules' thresholds are ``thresholds["scores"]``. Bad
    input (thresholds out of range, a lake without documents, a dump still being extracted,
    an older lake schema, a lake that does not answer) ends the run Failed with one line, before any work; so does another corpus
    run holding the lake's lock for longer than ``lock_wait`` seconds.
    """
    log = get_run_logger()
    try:
        opts = options_of(thresholds=thresholds, quality=quality, drop_all_copies=drop_all_copies,
                          keep_repeats_in_document=keep_repeats_in_document, memory_limit=memory_limit, partitions=partitions, threads=threads,
                          judge_whole_pages=judge_whole_pages, models=models)
        with lake_client_errors(lake):   # a lake the store's client cannot use: the CLI's one line
            dumps, archives = prepare(lake, dump, opts.decide, lock=False)
            lock = CorpusLock(lake).acquire(wait=lock_wait)   # one run per lake (CorpusLocked names the other)
    except (ValueError, OSError, TypeError) as exc:
        message = " ".join(str(exc).split())
        log.error("%s", message)
        return Failed(message=message, data=CorpusFailed(message))
    try:
        counts = stage.finish(lake, dumps, archives, opts, report=report, report_dir=report_dir,
                              runner=OnTasks(lake), again=log.warning)
    except Exception as exc:
        if not (isinstance(exc, OSError) or is_storage_client_error(exc)):
            raise   # not the storage's: a fault of the stage, with its traceback
        # a step, or the run's own reads and writes, failed after their retries: the
        # error's one line (the stage's without Prefect), not the client's traceback
        message = " ".join(str(exc).split()) if isinstance(exc, OSError) else describe(exc)
        log.error("%s", message)
        traceback.clear_frames(exc.__traceback__)   # the run's DuckDB connections go with it
        return Failed(message=message, data=CorpusStepFailed(message))
    finally:
        lock.release()
    for d, st in counts["dumps"].items():
        log.info("%s: %s of %s documents kept, %s paragraphs dropped", d, st["kept"], st["documents"],
                 st["paragraphs_dropped"])
    return Completed(message=summary_line(counts), data=counts)


def summary_line(counts: dict) -> str:
    return "; ".join(f"{d}: {st['kept']} of {st['documents']} documents kept, "
                     f"{st['paragraphs_dropped']} paragraphs dropped" for d, st in counts["dumps"].items())


def options_of(thresholds: dict | None = None, quality: dict | None = None,
               drop_all_copies: bool = DEFAULT.decide.drop_all_copies,
               keep_repeats_in_document: bool = DEFAULT.decide.keep_repeats_in_document,
               memory_limit: str = DEFAULT.memory_limit, partitions: int = DEFAULT.sig.partitions, threads: int | None = DEFAULT.threads,
               judge_whole_pages: bool = DEFAULT.sig.judge_whole_pages, models: dict | None = None
               ) -> stage.StageOptions:
    """The stage's options from the flow's parameters (``flow_parameters``' inverse); ValueError
    or TypeError for a value out of range, an unknown threshold or a missing model file."""
    return stage.StageOptions(sig=SignatureConfig(partitions=partitions, judge_whole_pages=judge_whole_pages),
                              decide=DecisionConfig(drop_all_copies=drop_all_copies, quality=quality or {},
                                                    keep_repeats_in_document=keep_repeats_in_document,
                                                    **(thresholds or {})),
                              memory_limit=memory_limit, threads=threads, models=ScoreModels.from_dict(models))


def check_options(parameters: dict) -> stage.StageOptions:
    """``options_of``, the quality rules' names checked too, with every mistake a ValueError
    of one line (a name the flow does not take too)."""
    from warclake.tasks.corpus.steps.decide import check_quality_overrides

    try:
        opts = options_of(**parameters)
    except TypeError as exc:
        raise ValueError(f"corpus options: {exc}") from None
    check_quality_overrides(opts.decide)
    return opts


def flow_parameters(options: stage.StageOptions) -> dict:
    """The flow's parameters for these options (the form a deployment stores)."""
    d = asdict(options.decide)
    return dict(thresholds={**{k: d[k] for k in THRESHOLD_RANGES}, **({"scores": d["scores"]} if d["scores"] else {})},
                quality=options.decide.quality,
                drop_all_copies=options.decide.drop_all_copies,
                keep_repeats_in_document=options.decide.keep_repeats_in_document, memory_limit=options.memory_limit,
                partitions=options.sig.partitions, threads=options.threads,
                judge_whole_pages=options.sig.judge_whole_pages,
                models=options.models.as_dict() if options.models else None)


def corpus_dump(lake: str, dump: str | None = None, options: stage.StageOptions | None = None,
                dask: str | None = None, report: bool = True, report_dir: str | None = None) -> State:
    """Run the flow (on a Dask cluster when ``dask`` names its scheduler); its final state."""
    fn = corpus_flow
    if dask:
        from warclake.flows.dask_runner import on_cluster

        fn = corpus_flow.with_options(task_runner=on_cluster(dask))
    return cast(State, fn(lake=lake, dump=dump, report=report, report_dir=report_dir,
                          **flow_parameters(options or stage.StageOptions()), return_state=True))


# The follow-up of an extraction waits this long for another dump's corpus run on the same
# lake (extractions of two dumps may end close together) before it fails.
FOLLOW_UP_LOCK_WAIT = 6 * 3600


def follow_up(lake: str, dump: str, extraction: State, report: bool = True,
              options: dict | None = None) -> State:
    """The corpus stage after a completed extraction of ``dump``, as a sub-flow run: on the
    extraction's Dask cluster when it ran on one; ``options``: its parameters
    (``flow_parameters``). The extraction's state comes back with the corpus stage's line
    added, Failed when the corpus stage failed."""
    runner = getattr(FlowRunContext.get(), "task_runner", None)
    fn = corpus_flow
    if runner is not None and type(runner).__name__ == "DaskTaskRunner":
        fn = corpus_flow.with_options(task_runner=runner.duplicate())
    state = cast(State, fn(lake=lake, dump=dump, report=report, lock_wait=FOLLOW_UP_LOCK_WAIT, return_state=True,
                           **(options or {})))
    data = extraction.result(raise_on_failure=False)
    if state.is_completed():
        if isinstance(data, dict):
            data = {**data, "corpus": state.result()}
        return Completed(message=f"{extraction.message}; corpus: {state.message}", data=data)
    message = f"{extraction.message}; the corpus stage failed: {state.message}"
    return Failed(message=message, data=CorpusFailed(message))

"""The Prefect flow: one flow run per dump, one task per archive.

    resolve inputs -> plan against the lake -> map extraction (bounded in flight)
    -> build the dump's report -> an honest final state

The run itself is the library's (tasks/extract/dump.py: lock, plan, failure records,
figures); the flow gives it its tasks to run each archive's step on, and turns the outcome
into a final state. "Done" is a property of the lake (an archive's summary JSON), so a re-run
does only what is missing, outdated or failed, whatever Prefect's database remembers. The
lake is the cache: no Prefect result cache is kept on top of it (the plan never submits a
done archive, so a task cache would never be asked).
"""
from __future__ import annotations

import contextvars
import queue
import threading
from dataclasses import replace

from prefect import flow, get_run_logger, task
from prefect.context import FlowRunContext
from prefect.futures import wait as prefect_wait
from prefect.states import Cancelled, Completed, Failed
from prefect.task_runners import ThreadPoolTaskRunner

from warclake import __version__
from warclake.flows.progress import RunNotices, archive_logged, quiet_finished_archives, reading
from warclake.flows.recorded import wait_recorded
from warclake.tasks.archive.inputs import resolve_inputs
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.extract.dump import INTERRUPTED, DumpRun, extract_step, run_dump
from warclake.tasks.lake.layout import Lake, check_dump_name
from warclake.tasks.lake.plan import PlanItem
from warclake.tasks.runtime import retries
from warclake.tasks.runtime.run_checks import check_counts
from warclake.tasks.runtime.supervisor import default_workers, supervisor
from warclake.tasks.runtime.transient import is_transient

DEFAULT = ExtractConfig()   # the flow's defaults are the config's
quiet_finished_archives()   # an archive's line says it: not also Prefect's "Finished in state Completed()"

def retry_if_transient(task_, task_run, state) -> bool:
    """The flows' retry condition (the policies of tasks/runtime/retries.py ask ``is_transient``): a
    plain function on purpose, as Prefect ignores a functools.partial here."""
    try:
        state.result()
    except Exception as exc:  # the task's exception comes back out of its state
        return is_transient(exc)
    return False


@task(name="extract-archive", task_run_name="extract {name}",
      **retries.ARCHIVE.prefect_options(), retry_condition_fn=retry_if_transient, persist_result=False)
def extract_archive_task(input_path: str, name: str, dump: str, lake: str, config: ExtractConfig,
                         workers: int) -> dict:
    figures = extract_step(input_path, name, dump, lake, config, workers, progress=lambda n: reading(name, n))
    if figures["status"] != INTERRUPTED:
        archive_logged(get_run_logger(), figures)
    return figures


@task(name="resolve-inputs", **retries.INPUTS.prefect_options(), retry_condition_fn=retry_if_transient,
      persist_result=False)
def resolve_task(inputs: list[str], base_url: str | None) -> list[str]:
    """Expand folders, globs and warc.paths listings (a listing may be remote: retried)."""
    return resolve_inputs(inputs, base_url)


@task(name="report-dump", retries=1, retry_delay_seconds=5, persist_result=False)
def report_task(lake: str, dump: str, out_dir: str | None, nothing_new: bool = False) -> str | None:
    from warclake.flows.report_flow import build_dump_report

    return build_dump_report(lake, dump, out_dir, nothing_new=nothing_new)


# the archives' task runs in threads; each hands its archive to a worker process
THREADS: ThreadPoolTaskRunner = ThreadPoolTaskRunner(max_workers=16)


@flow(name="extract-dump", flow_run_name="extract {dump}", task_runner=THREADS,  # type: ignore[arg-type]
      persist_result=False)
def extract_dump(dump: str, inputs: list[str], lake: str, langs: str = ",".join(DEFAULT.langs),
                 boilerplate: str = DEFAULT.boilerplate, min_lang_score: float = DEFAULT.min_lang_score,
                 min_chars: int = DEFAULT.min_chars, net_timeout: float = DEFAULT.net_timeout,
                 base_url: str | None = None, workers: int | None = None, max_in_flight: int | None = None,
                 report: bool = True, report_dir: str | None = None,
                 retry_delays: list[float] | None = None, record_seconds: float = DEFAULT.record_seconds,
                 worker_memory_mb: int = DEFAULT.worker_memory_mb, corpus: bool = False,
                 corpus_signatures: bool | None = None, corpus_options: dict | None = None,
                 recheck_inputs: bool = DEFAULT.recheck_inputs, plan_threads: int = DEFAULT.plan_threads):
    """Extract one dump into the lake.

    workers: extraction processes (default: all cores); 0 runs in the task's own thread
    (set it for Dask/Ray runners, whose workers are processes already).
    max_in_flight: task runs submitted at once (a dump has ~90k archives; each
    pending future costs memory).
    retry_delays: seconds between attempts after a transient (network/storage) error.
    net_timeout: seconds without a byte before a remote read counts as stalled.
    recheck_inputs: ask each remote input's identity again (a HEAD each), to redo one that
    changed; by default one the lake holds as done is not asked. plan_threads: the plan's
    requests at once.
    record_seconds, worker_memory_mb: a record that takes longer, or grows its worker past
    this memory, is stopped and ledgered timed_out / out_of_memory (workers >= 1).
    corpus: once the dump is extracted without failure, run the corpus stage on it (the
    ``corpus-dump`` flow, as a sub-flow on this run's task runner).
    corpus_signatures: also write the corpus stage's per-archive outputs while extracting
    each archive, so the corpus stage does not read its documents again (None: as ``corpus``).
    corpus_options: the corpus stage's parameters (thresholds, quality, models... as the
    ``corpus-dump`` flow takes them), checked before any extraction.
    """
    log = get_run_logger()
    from warclake.tasks import native

    log.info("warclake %s (%s)", __version__, native.describe_all())   # which paragraph walk runs, first
    resolve, extract, plan_retry = resolve_task, extract_archive_task, retries.INPUTS
    if retry_delays is not None:  # operators (and tests) may want other delays than the default
        delays = list(retry_delays)
        resolve = resolve_task.with_options(retries=len(delays), retry_delay_seconds=delays)
        extract = extract_archive_task.with_options(retries=len(delays), retry_delay_seconds=delays)
        plan_retry = replace(retries.INPUTS, delays=tuple(retry_delays))
    try:  # mistakes in the parameters: one clear line, before any work; then the run's own
        check_dump_name(dump)
        config = ExtractConfig.from_langs(langs, boilerplate=boilerplate,
                                          min_lang_score=min_lang_score, min_chars=min_chars,
                                          net_timeout=net_timeout, record_seconds=record_seconds,
                                          worker_memory_mb=worker_memory_mb, recheck_inputs=recheck_inputs,
                                          plan_threads=plan_threads,
                                          corpus_signatures=corpus if corpus_signatures is None else corpus_signatures)
        check_counts(workers, max_in_flight)
        if corpus_options:
            from warclake.flows.corpus_flow import check_options

            check_options(corpus_options)
        lake_obj = Lake(lake)
        lake_obj.check_writable()
        runner = ArchiveTasks(extract, max_in_flight)
        try:
            run = run_dump(dump, lambda: resolve(list(inputs), base_url), lake_obj, config, runner,
                           workers=workers, retry=plan_retry, notices=RunNotices(log),
                           report=(lambda run: report_task(lake_obj.url, dump, report_dir, nothing_new=run.nothing_new)) if report else None)
        finally:
            if runner.submitted:
                await_recording(log, runner)
    except (ValueError, OSError) as exc:  # DumpLocked, DumpLockLost, no such input, a plan that failed...
        log.error("%s", exc)
        return Failed(message=f"{dump}: {exc}", data=DumpFailed(str(exc), {"dump": dump}))
    state = final_state(run)
    if corpus and state.is_completed():   # after the lock is released: the corpus stage refuses a locked dump
        from warclake.flows.corpus_flow import follow_up

        state = follow_up(lake_obj.url, dump, state, report=report, options=corpus_options)
    return state


def final_state(run: DumpRun):
    """Cancelled after Ctrl-C; Failed when an archive or the report failed (a Failed state
    carries an exception: a plain dict makes Prefect's engine log a crash); else Completed."""
    if run.interrupted:
        return Cancelled(message=run.summary())
    if run.failed or run.report_error:
        return Failed(message=run.summary(), data=DumpFailed(run.summary(), run.counts()))
    return Completed(message=run.summary(), data=run.counts())


def await_recording(log, runner: "ArchiveTasks") -> None:
    """Wait until Prefect's server has recorded the run's archive task runs (flows/recorded.py),
    so the UI shows each archive's outcome and a server stopped after the run loses none."""
    context = FlowRunContext.get()
    assert context is not None and context.flow_run is not None   # called inside the flow run
    done, left = wait_recorded([context.flow_run.id, *runner.shard_runs], runner.submitted)
    if done < runner.submitted or left:
        log.warning("the Prefect server recorded %d of the %d archive task runs in a final state (%d not final)",
                    done, runner.submitted, left)


class ArchiveTasks:
    """The runner of tasks/extract/dump.py that submits each archive's step as a task run,
    at most ``max_in_flight`` at once (default: ``default_in_flight``), and gives back each
    archive as its task run ends: its figures, or the error it failed with after its retries.

    A run of more than ``SHARD_SIZE`` archives puts them in sub-flow runs of that many
    (``extract-shard``), so that each run's graph stays within what the UI draws. A shard's
    sub-flow runs in a thread of its own while the flow hands it archives; the next shard's
    sub-flow run starts shortly before the last archive is handed to the previous one, so
    the workers wait neither for a shard to end nor for the next to start. ``submitted`` counts the task runs submitted, ``shard_runs`` the sub-flow runs."""

    def __init__(self, extract, max_in_flight: int | None):
        self.extract, self.max_in_flight = extract, max_in_flight
        self.submitted = 0
        self.shard_runs: list = []
        self._pending: dict = {}                                 # future -> plan item
        self._lock = threading.Lock()
        self._finished: queue.SimpleQueue = queue.SimpleQueue()  # futures as they finish, or (item, error)

    def submit(self, run: DumpRun, item: PlanItem):
        """Submit one archive's task run (in the flow run, or the sub-flow run, of this thread)."""
        fut = self.extract.submit(item.input, item.name, run.dump, run.lake.url, run.config, run.workers)
        with self._lock:
            self.submitted += 1
            self._pending[fut] = item
        fut.add_done_callback(self._finished.put)
        return fut

    def __call__(self, run: DumpRun, items):
        limit = self.max_in_flight or default_in_flight(run.workers)
        total = len(run.todo)
        sharded = total > SHARD_SIZE
        # archives before a shard's end that the next one is made: its sub-flow run takes a
        # second or two to start, several archives' time when they are small
        early = min(max(limit, 100), SHARD_SIZE // 2)
        shard: Shard | None = None
        next_shard: Shard | None = None
        shards: list[Shard] = []
        handed = given_back = 0
        try:
            while True:
                if handed - given_back >= limit:
                    for done in self._collect():
                        given_back += 1
                        yield done
                item = next(items, None)   # None: every archive submitted, or the run is stopping
                if item is None:
                    break
                handed += 1
                if not sharded:
                    self.submit(run, item)
                    continue
                if shard is None or shard.handed >= SHARD_SIZE:
                    if shard is not None:
                        shard.close()
                    shard = next_shard or Shard(self, run, first=handed, last=min(handed + SHARD_SIZE - 1, total))
                    next_shard = None
                    shards.append(shard)
                shard.hand(item)
                if shard.handed == SHARD_SIZE - early and handed - shard.handed + SHARD_SIZE < total:
                    # the next shard's sub-flow run is made while this one's last archives run:
                    # no archive waits for it
                    first = handed - shard.handed + SHARD_SIZE + 1
                    next_shard = Shard(self, run, first=first, last=min(first + SHARD_SIZE - 1, total))
            if shard is not None:
                shard.close()
            while given_back < handed:
                for done in self._collect():
                    given_back += 1
                    yield done
        finally:
            if next_shard is not None:   # the run stopped before it got an archive
                shards.append(next_shard)
            for s in shards:   # each sub-flow run ends (its futures are done) before the flow run does
                s.close()
                s.thread.join()
                if s.flow_run_id is not None:
                    self.shard_runs.append(s.flow_run_id)

    def _collect(self):
        for done in _next_done(self._finished):
            if isinstance(done, tuple):   # an archive its shard could not submit
                yield done
                continue
            with self._lock:
                item = self._pending.pop(done)
            try:
                outcome = done.result()
            except Exception as exc:  # the archive's task failed for good (after its retries)
                outcome = exc
            yield item, outcome


SHARD_SIZE = 1000   # archives per sub-flow run; Prefect's UI draws a run's graph up to 10,000 nodes
_shards: dict[str, "Shard"] = {}   # a shard's sub-flow run finds its archives here by key


class Shard:
    """Archives ``first`` to ``last`` of a run, submitted in a sub-flow run of their own, in a
    thread of their own, as the flow hands them over (``hand``, then ``close``)."""

    def __init__(self, tasks: ArchiveTasks, run: DumpRun, first: int, last: int):
        self.tasks, self.run, self.handed = tasks, run, 0
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.flow_run_id = None
        self.key = f"{id(self)}"
        self._closed = False
        _shards[self.key] = self
        parent = FlowRunContext.get()
        runner = getattr(parent, "task_runner", None)
        sub = extract_shard if runner is None else extract_shard.with_options(task_runner=runner.duplicate())
        context = contextvars.copy_context()   # the flow run's: the sub-flow run is its child
        self.thread = threading.Thread(target=context.run, args=(self._run, sub, first, last),
                                       name=f"shard-{first}", daemon=True)
        self.thread.start()

    def hand(self, item: PlanItem) -> None:
        self.handed += 1
        self.jobs.put(item)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.jobs.put(None)

    def _run(self, sub, first: int, last: int) -> None:
        try:
            state = sub(dump=self.run.dump, archives=f"{first}-{last}", key=self.key, return_state=True)
            self.flow_run_id = state.state_details.flow_run_id
        except BaseException as exc:  # the sub-flow run could not be made: its archives fail, the run goes on
            self._fail_the_rest(exc)
        finally:
            self._fail_the_rest(RuntimeError("the shard's sub-flow run ended before submitting this archive"))
            _shards.pop(self.key, None)

    def _fail_the_rest(self, exc: BaseException) -> None:
        while True:
            item = self.jobs.get()
            if item is None:
                self.jobs.put(None)   # closed: left for the next look
                return
            self.tasks._finished.put((item, exc if isinstance(exc, Exception) else RuntimeError(str(exc))))


@flow(name="extract-shard", flow_run_name="extract {dump} archives {archives}", task_runner=THREADS,  # type: ignore[arg-type]
      persist_result=False, validate_parameters=False)
def extract_shard(dump: str, archives: str, key: str):
    """Archives of a dump's run (numbers ``archives`` of its plan): each one's task run,
    submitted as the dump's flow hands them over. Failed when one of them failed."""
    shard = _shards[key]
    futures = []
    while (item := shard.jobs.get()) is not None:
        try:
            futures.append(shard.tasks.submit(shard.run, item))
        except Exception as exc:  # not submitted: the archive fails, the others go on
            shard.tasks._finished.put((item, exc))
    shard.jobs.put(None)   # seen: the thread's clean-up stops here too
    prefect_wait(futures)
    failed = [f for f in futures if f.state.is_failed() or _status(f) == "failed"]
    line = f"{dump}: archives {archives}: {len(futures)} submitted, {len(failed)} failed"
    if supervisor().interrupted:
        return Cancelled(message=line)
    return Failed(message=line) if failed else Completed(message=line)


def _status(fut) -> str | None:
    try:
        return fut.result().get("status")
    except Exception:
        return None


class DumpFailed(Exception):
    """Some archives of the dump failed; ``counts`` holds the run's figures."""

    def __init__(self, message: str, counts: dict):
        super().__init__(message)
        self.counts = counts


def _next_done(finished: queue.SimpleQueue) -> list:
    """Block until a submitted future is done; returns it and any others done meanwhile.
    (prefect.futures.wait with a timeout returns only at the timeout unless every future is
    done, which left the workers idle for up to a second after each archive.)"""
    done = [finished.get()]
    while True:
        try:
            done.append(finished.get_nowait())
        except queue.Empty:
            return done


def default_in_flight(workers: int) -> int:
    """Task runs to keep submitted at once: twice what runs at a time, so a worker never
    waits for the flow. With extraction processes of our own that is their number; inline
    (workers 0) it is the task runner's: a Dask cluster's worker threads."""
    slots = workers if workers > 0 else _runner_slots()
    return max(2, 2 * slots)


def _runner_slots() -> int:
    """How many task runs the flow's task runner executes at once: a Dask cluster's worker
    threads, else this machine's cores (threads, for which inline extraction gains nothing
    beyond them)."""
    runner = getattr(FlowRunContext.get(), "task_runner", None)
    try:
        client = getattr(runner, "client", None)  # DaskTaskRunner, once started
        if client is not None:
            return sum(client.nthreads().values())
    except Exception:  # not started, or the cluster does not answer: the default below
        pass
    return default_workers()

"""The Prefect flow: one flow run per dump, one task per archive.

    resolve inputs -> plan against the lake -> map extraction (bounded in flight)
    -> build the dump's report -> an honest final state

"Done" is a property of the lake (an archive's summary JSON), so a re-run does only what
is missing, outdated or failed, whatever Prefect's database remembers. The lake is the
cache: no Prefect result cache is kept on top of it (the plan never submits a done
archive, so a task cache would never be asked).
"""
from __future__ import annotations

import queue
from collections import Counter
from dataclasses import replace

from prefect import flow, get_run_logger, task
from prefect.context import FlowRunContext
from prefect.states import Cancelled, Completed, Failed
from prefect.task_runners import ThreadPoolTaskRunner

from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.lake.dump_lock import DumpLock, DumpLocked
from warclake.tasks.extract.archive import SIGNATURES_LEFT, record_failure
from warclake.tasks.archive.inputs import resolve_inputs
from warclake.tasks.lake.layout import Lake, check_dump_name
from warclake.tasks.lake.plan import plan_dump
from warclake.tasks.runtime import retries
from warclake.tasks.runtime.run_checks import check_counts
from warclake.tasks.lake.storage_errors import lake_client_errors
from warclake.tasks.runtime.transient import PERMANENT_ERRNOS, TRANSIENT, is_transient  # noqa: F401 (used by others)

from warclake.flows.progress import RunProgress, reading
from warclake.tasks.runtime.supervisor import RunInterrupted, default_workers, supervisor

INTERRUPTED = "interrupted"  # an archive's task stopped by Ctrl-C: neither done nor failed


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
    try:
        summary = supervisor().extract(input_path, dump, lake, config, workers,
                                       progress=lambda n: reading(name, n))
    except RunInterrupted:  # left undone, as if never started: not a failure
        return {"warc_file": name, "status": INTERRUPTED}
    where = f"damaged at {summary['error_offset']}: " if summary["error_offset"] is not None else ""
    damage = f" ({where}{summary['error']})" if summary["error"] else ""
    log = get_run_logger()
    log.info("%s: %s, %d records, %d documents%s", name, summary["status"], summary["records"],
             summary["documents"], damage)
    left = summary.get(SIGNATURES_LEFT)
    if left:   # the worker process's own warning is not shown
        log.warning("%s: %s", name, left)
    return {**{k: summary[k] for k in ("warc_file", "status", "records", "documents", "error", "error_offset",
                                       "seconds", "input_bytes", "output_bytes")},
            "damaged": len(summary["skipped"]), **({SIGNATURES_LEFT: left} if left else {})}


@task(name="resolve-inputs", **retries.INPUTS.prefect_options(), retry_condition_fn=retry_if_transient,
      persist_result=False)
def resolve_task(inputs: list[str], base_url: str | None) -> list[str]:
    """Expand folders, globs and warc.paths listings (a listing may be remote: retried)."""
    return resolve_inputs(inputs, base_url)


@task(name="report-dump", retries=1, retry_delay_seconds=5, persist_result=False)
def report_task(lake: str, dump: str, out_dir: str | None) -> str | None:
    from warclake.flows.report_flow import build_dump_report

    return build_dump_report(lake, dump, out_dir)


@flow(name="extract-dump", flow_run_name="extract {dump}", task_runner=ThreadPoolTaskRunner(max_workers=16),
      log_prints=True, persist_result=False)
def extract_dump(dump: str, inputs: list[str], lake: str, langs: str = "ja", boilerplate: str = "none",
                 min_lang_score: float = 0.0, min_chars: int = 0, net_timeout: float = 60.0,
                 base_url: str | None = None, workers: int | None = None, max_in_flight: int | None = None,
                 report: bool = True, report_dir: str | None = None,
                 retry_delays: list[float] | None = None, record_seconds: float = 120.0,
                 worker_memory_mb: int = 8192, corpus: bool = False, corpus_signatures: bool | None = None):
    """Extract one dump into the lake.

    workers: extraction processes (default: all cores); 0 runs in the task's own thread
    (set it for Dask/Ray runners, whose workers are processes already).
    max_in_flight: task runs submitted at once (a dump has ~90k archives; each
    pending future costs memory).
    retry_delays: seconds between attempts after a transient (network/storage) error.
    net_timeout: seconds without a byte before a remote read counts as stalled.
    record_seconds, worker_memory_mb: a record that takes longer, or grows its worker past
    this memory, is stopped and ledgered timed_out / out_of_memory (workers >= 1).
    corpus: once the dump is extracted without failure, run the corpus stage on it (the
    ``corpus-dump`` flow, as a sub-flow on this run's task runner).
    corpus_signatures: also write the corpus stage's per-archive outputs while extracting
    each archive, so the corpus stage does not read its documents again (None: as ``corpus``).
    """
    log = get_run_logger()
    try:  # mistakes in the parameters: one clear line, before any work
        check_dump_name(dump)
        config = ExtractConfig.from_langs(langs, boilerplate=boilerplate,
                                          min_lang_score=min_lang_score, min_chars=min_chars,
                                          net_timeout=net_timeout, record_seconds=record_seconds,
                                          worker_memory_mb=worker_memory_mb,
                                          corpus_signatures=corpus if corpus_signatures is None else corpus_signatures)
        check_counts(workers, max_in_flight)
        lake_obj = Lake(lake)
        lake_obj.check_writable()
        with lake_client_errors(lake_obj.url):   # no credentials, a dead endpoint: the CLI's one line
            lock = DumpLock(lake_obj, dump).acquire()   # one run per dump and lake
    except (ValueError, OSError, DumpLocked) as exc:
        log.error("%s", exc)
        return Failed(message=f"{dump}: {exc}", data=DumpFailed(str(exc), {"dump": dump}))
    try:
        state = _extract_locked(dump, inputs, lake_obj, config, base_url, workers, max_in_flight, report,
                                report_dir, retry_delays, lock)
    finally:
        lock.release()
    if corpus and state.is_completed():   # after the lock is released: the corpus stage refuses a locked dump
        from warclake.flows.corpus_flow import follow_up

        state = follow_up(lake_obj.url, dump, state, report=report)
    return state


def _extract_locked(dump, inputs, lake_obj, config, base_url, workers, max_in_flight, report, report_dir,
                    retry_delays, lock):
    """The flow's work, once the dump's lock is held."""
    log = get_run_logger()
    workers = default_workers() if workers is None else workers
    max_in_flight = max_in_flight or default_in_flight(workers)
    lake_obj.clean_stale_tmp(dump)

    resolve, plan_retry = resolve_task, retries.INPUTS
    if retry_delays is not None:
        resolve = resolve_task.with_options(retries=len(retry_delays), retry_delay_seconds=list(retry_delays))
        plan_retry = replace(retries.INPUTS, delays=tuple(retry_delays))
    try:
        paths = resolve(list(inputs), base_url)
        with lake_client_errors(lake_obj.url, "read"):   # the client's own errors: one line too
            plan = plan_dump(paths, dump, lake_obj, config, retry=plan_retry, progress=log.warning)
    except (OSError, ValueError) as exc:  # no such input, a listing or summary that stayed unreachable...
        log.error("%s", exc)
        return Failed(message=f"{dump}: {exc}", data=DumpFailed(str(exc), {"dump": dump}))
    todo = [p for p in plan if p.todo]
    reasons = Counter(p.reason for p in plan)
    log.info("dump %s: %d archives, %s", dump, len(plan), dict(reasons))

    extract = extract_archive_task
    if retry_delays is not None:  # operators (and tests) may want other delays than the default
        extract = extract_archive_task.with_options(retries=len(retry_delays), retry_delay_seconds=list(retry_delays))

    results: list[dict] = []
    failures: dict[str, str] = {}   # archive -> error, after its retries
    pending: dict = {}              # future -> plan item
    sizes = [(p.identity or {}).get("size") for p in todo]
    progress = RunProgress(dump, len(todo), sum(filter(None, sizes)) or None, len(plan) - len(todo))

    def collect(done_futures):
        for fut in done_futures:
            item = pending.pop(fut)
            try:
                result = fut.result()
                if result["status"] == INTERRUPTED:
                    continue
                results.append(result)
                progress.archive_finished(item.name, result["status"], result["input_bytes"], result)
            except Exception as exc:  # the archive's task failed for good (after its retries)
                error = f"{type(exc).__name__}: {exc}"[:500]
                failures[item.name] = error
                log.error("%s: failed: %s", item.name, error)
                try:  # recorded in the lake, so reports count it and the next run retries it
                    record_failure(item.input, dump, lake_obj, config, error)
                except OSError as write_exc:
                    log.error("%s: the failure could not be recorded in the lake: %s", item.name, write_exc)
                progress.archive_finished(item.name, "failed", (item.identity or {}).get("size"))

    finished: queue.SimpleQueue = queue.SimpleQueue()   # futures, as they finish
    try:
        for item in todo:
            if len(pending) >= max_in_flight:
                collect(_next_done(finished))
            if supervisor().interrupted or lock.lost:   # Ctrl-C, or another run took the dump over
                break
            fut = extract.submit(item.input, item.name, dump, lake_obj.url, config, workers)
            pending[fut] = item
            fut.add_done_callback(finished.put)
        while pending:
            collect(_next_done(finished))
    finally:
        # The worker processes end with the run: a pool left alive keeps a process that
        # runs flows as its child (serve, workers) from ever exiting.
        supervisor().shutdown()

    if supervisor().interrupted:
        lake_obj.clean_stale_tmp(dump)   # what the stopped workers were writing
        message = (f"{dump}: interrupted; {len(results)} archives extracted in this run, "
                   f"{len(todo) - len(results) - len(failures)} left undone (the next run does them)")
        return Cancelled(message=message)
    if lock.lost:
        log.error("%s", lock.lost)
        return Failed(message=f"{dump}: {lock.lost}", data=DumpFailed(lock.lost, {"dump": dump}))

    statuses = Counter(r["status"] for r in results)
    docs = sum(r["documents"] for r in results)
    failed = sorted(failures) + sorted(r["warc_file"] for r in results if r["status"] == "failed")
    report_path = report_error = None
    if report and (results or failures or not todo):
        try:
            report_path = report_task(lake_obj.url, dump, report_dir)
        except Exception as exc:  # a failed report must not hide the extraction's outcome
            report_error = f"{type(exc).__name__}: {exc}"[:500]
            log.error("report of %s failed: %s", dump, report_error)
    summary = (f"{dump}: {len(plan)} archives, {len(plan) - len(todo)} already done, "
               f"{len(results)} extracted ({dict(statuses)}), {docs} documents, "
               f"{len(failed)} failed")
    if failed:
        summary += f" ({', '.join(failed[:3])}{', ...' if len(failed) > 3 else ''})"
    left = sorted(r["warc_file"] for r in results if r.get(SIGNATURES_LEFT))
    if left:   # the corpus step inside extraction gave up on these (each one's reason logged)
        summary += (f"; corpus signatures left to the corpus stage: {len(left)} "
                    f"({', '.join(left[:3])}{', ...' if len(left) > 3 else ''})")
    if report_path:
        summary += f"; report: {report_path}"
    if report_error:
        summary += f"; the report failed: {report_error}"
    data = {"dump": dump, "archives": len(plan), "skipped": len(plan) - len(todo),
            "extracted": len(results), "statuses": dict(statuses), "documents": docs,
            "failed": failed, "errors": failures, "report": report_path, "report_error": report_error,
            "signatures_left": left}
    if failed or report_error:
        # Failed states carry an exception (a plain dict makes Prefect's engine log a crash)
        return Failed(message=summary, data=DumpFailed(summary, data))
    return Completed(message=summary, data=data)


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

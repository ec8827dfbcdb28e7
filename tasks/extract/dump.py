"""One dump's extraction written once: its lock, clean-up, plan, each archive's step (run where the caller says), failure records and figures."""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from warclake.tasks.extract.archive import SIGNATURES_LEFT, record_failure
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.lake.dump_lock import DumpLock, DumpLockLost
from warclake.tasks.lake.layout import Lake, archive_name
from warclake.tasks.lake.lease_lock import LeaseLock
from warclake.tasks.lake.plan import PlanItem, check_unique_names, plan_dump
from warclake.tasks.lake.rollup_feed import RollupFeed
from warclake.tasks.lake.storage_errors import lake_client_errors
from warclake.tasks.runtime import retries
from warclake.tasks.runtime.supervisor import RunInterrupted, default_workers, supervisor

INTERRUPTED = "interrupted"  # an archive's step stopped by Ctrl-C: neither done nor failed
# an archive's figures: what a run keeps of its summary (a flow holds ~90k of them)
FIGURES = ("warc_file", "status", "records", "documents", "error", "error_offset", "seconds", "input_bytes",
           "output_bytes")


def extract_step(input_path: str, name: str, dump: str, lake: str, config: ExtractConfig, workers: int,
                 progress: Callable[[int], None] | None = None) -> dict:
    """One archive extracted (tasks/runtime/supervisor.py: in a watched worker, or in this thread
    with ``workers`` 0): its figures, or status ``interrupted`` when Ctrl-C stopped it."""
    try:
        summary = supervisor().extract(input_path, dump, lake, config, workers, progress=progress)
    except RunInterrupted:  # left undone, as if never started: not a failure
        return {"warc_file": name, "status": INTERRUPTED}
    left = summary.get(SIGNATURES_LEFT)
    return {**{k: summary[k] for k in FIGURES}, "damaged": len(summary["skipped"]),
            **({SIGNATURES_LEFT: left} if left else {})}


@dataclass
class DumpRun:
    """A run of one dump: its settings, its plan and what came of it."""
    dump: str
    lake: Lake
    config: ExtractConfig
    workers: int
    plan: list[PlanItem] = field(default_factory=list)
    results: list[dict] = field(default_factory=list)       # figures of the archives extracted
    failures: dict[str, str] = field(default_factory=dict)  # archive -> error, its step failed for good
    interrupted: bool = False
    seconds: float = 0.0                                     # the archives' steps, from first to last
    report: str | None = None
    report_error: str | None = None

    @property
    def todo(self) -> list[PlanItem]:
        return [p for p in self.plan if p.todo]

    @property
    def nothing_new(self) -> bool:
        """Nothing extracted and nothing failed: the lake holds what it held before the run."""
        return not (self.results or self.failures)

    @property
    def skipped(self) -> int:
        return len(self.plan) - len(self.todo)

    @property
    def failed(self) -> list[str]:
        """Archives whose step failed, then those extracted as ``failed`` (nothing in them to read)."""
        return sorted(self.failures) + sorted(r["warc_file"] for r in self.results if r["status"] == "failed")

    @property
    def signatures_left(self) -> list[str]:
        """Archives whose corpus step inside extraction gave up (each one's reason told)."""
        return sorted(r["warc_file"] for r in self.results if r.get(SIGNATURES_LEFT))

    def summary(self) -> str:
        """The run in one line."""
        if self.interrupted:
            return (f"{self.dump}: interrupted; {len(self.results)} archives extracted in this run, "
                    f"{len(self.todo) - len(self.results) - len(self.failures)} left undone (the next run does them)")
        statuses = Counter(r["status"] for r in self.results)
        line = (f"{self.dump}: {len(self.plan)} archives, {self.skipped} already done, "
                f"{len(self.results)} extracted ({dict(statuses)}), {sum(r['documents'] for r in self.results)} "
                f"documents, {len(self.failed)} failed")
        if self.failed:
            line += f" ({_first(self.failed)})"
        if self.signatures_left:
            line += f"; corpus signatures left to the corpus stage: {len(self.signatures_left)} " \
                    f"({_first(self.signatures_left)})"
        if self.report:
            line += f"; report: {self.report}"
        if self.report_error:
            line += f"; the report failed: {self.report_error}"
        return line

    def counts(self) -> dict:
        """The run's figures (a flow run's result)."""
        return {"dump": self.dump, "archives": len(self.plan), "skipped": self.skipped,
                "extracted": len(self.results), "statuses": dict(Counter(r["status"] for r in self.results)),
                "documents": sum(r["documents"] for r in self.results), "failed": self.failed,
                "errors": self.failures, "report": self.report, "report_error": self.report_error,
                "signatures_left": self.signatures_left}


def _first(names: list[str]) -> str:
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")


class Notices:
    """What a run tells as it goes; each front end says it its own way (here: nothing)."""

    def again(self, line: str) -> None:
        """A summary the store failed to give is read again."""

    def planned(self, run: DumpRun) -> None:
        """The plan is made: ``run.plan``, ``run.todo``."""

    def started(self, item: PlanItem) -> None:
        """An archive's step is handed to the runner."""

    def failed(self, item: PlanItem, exc: Exception) -> None:
        """An archive's step failed for good; its failure is recorded next."""

    def unrecorded(self, item: PlanItem, exc: OSError) -> None:
        """The failure could not be written to the lake."""

    def finished(self, item: PlanItem, figures: dict | None) -> None:
        """An archive is through: its figures, or None when it failed."""

    def report_failed(self, error: str) -> None:
        """The dump's report failed (the run's outcome stands)."""


# How the archives' steps run: called with the run and its archives (an iterator to pull
# one at a time, when there is room: it ends when the run must stop), it yields each
# archive with its figures, or with the exception that failed its step for good.
Runner = Callable[[DumpRun, Iterator[PlanItem]], Iterable[tuple[PlanItem, "dict | Exception"]]]


class InProcess:
    """The steps one after another in this process. ``retry``: a worker's death is worth
    another attempt (tasks/runtime/retries.py: WORKER); an OSError (the input or the lake,
    not the archive's bytes) fails the archive, any other error the run."""

    def __init__(self, retry: retries.RetryPolicy = retries.WORKER, progress: Callable[[int], None] | None = None):
        self.retry, self.progress = retry, progress

    def __call__(self, run: DumpRun, items: Iterator[PlanItem]) -> Iterator[tuple[PlanItem, dict | Exception]]:
        for item in items:
            try:
                outcome = self.retry.run(lambda: extract_step(item.input, item.name, run.dump, run.lake.url,
                                                              run.config, run.workers, self.progress))
            except OSError as exc:
                outcome = exc
            yield item, outcome


def run_dump(dump: str, inputs: list[str] | Callable[[], list[str]], lake: str | Lake, config: ExtractConfig,
             runner: Runner, *, workers: int | None = None, force: bool = False,
             retry: retries.RetryPolicy = retries.INPUTS, notices: Notices | None = None,
             report: Callable[[DumpRun], str | None] | None = None) -> DumpRun:
    """Extract what the lake does not hold as done of ``inputs`` (a function: called once the
    lock is held) into ``lake``, holding the dump's lock; ``force``: every input, done or
    not. ``workers``: extraction processes (None: all cores; 0: in the step's thread);
    ``retry``: how the plan reads a summary again; ``report(run)``: made once the archives are
    through (not after Ctrl-C), under the lock. Raises DumpLocked or DumpLockLost (another
    run holds or took the dump), and the inputs' or the plan's OSError or ValueError."""
    notices = notices or Notices()
    lake = lake if isinstance(lake, Lake) else Lake(lake)
    with lake_client_errors(lake.url):   # no credentials, a dead endpoint: one line
        lock = DumpLock(lake, dump).acquire()   # one run per dump and lake
    try:
        run = DumpRun(dump, lake, config, default_workers() if workers is None else workers)
        lake.clean_stale_tmp(dump)
        paths = inputs() if callable(inputs) else list(inputs)
        if force:
            check_unique_names(paths)
            run.plan = [PlanItem(p, archive_name(p), None, "forced") for p in paths]
        else:
            with lake_client_errors(lake.url, "read"):
                run.plan = plan_dump(paths, dump, lake, config, retry=retry, progress=notices.again)
        notices.planned(run)
        _extract(run, runner, lock, notices)
        if run.interrupted:
            return run
        if lock.lost:
            raise DumpLockLost(lock.lost)
        if report is not None and (not run.nothing_new or not run.todo):
            try:
                run.report = report(run)
            except Exception as exc:  # a failed report must not hide the extraction's outcome
                run.report_error = f"{type(exc).__name__}: {exc}"[:500]
                notices.report_failed(run.report_error)
        return run
    finally:
        lock.release()


def _extract(run: DumpRun, runner: Runner, lock: LeaseLock, notices: Notices) -> None:
    t0 = time.monotonic()
    feed = RollupFeed(run.lake, run.dump) if run.todo else None   # the report's rollup kept near
    try:
        for item, outcome in runner(run, _until_stopped(run.todo, lock, notices)):
            if isinstance(outcome, Exception):
                _record(run, item, outcome, notices)
            elif outcome["status"] != INTERRUPTED:
                run.results.append(outcome)
                notices.finished(item, outcome)
            else:
                continue
            if feed is not None:
                feed.archive_through()
    finally:
        # The worker processes end with the run: a pool left alive keeps a process that
        # runs flows as its child (serve, workers) from ever exiting.
        supervisor().shutdown()
        if supervisor().interrupted:
            run.lake.clean_stale_tmp(run.dump)   # what the stopped workers were writing
        if feed is not None:
            feed.close()
    run.seconds = time.monotonic() - t0
    run.interrupted = supervisor().interrupted


def _until_stopped(items: list[PlanItem], lock: LeaseLock, notices: Notices) -> Iterator[PlanItem]:
    """The archives, until Ctrl-C or another run taking the dump over stops the run."""
    for item in items:
        if supervisor().interrupted or lock.lost:
            return
        notices.started(item)
        yield item


def _record(run: DumpRun, item: PlanItem, exc: Exception, notices: Notices) -> None:
    """A failed archive, recorded in the lake: reports count it and the next run retries it."""
    error = f"{type(exc).__name__}: {exc}"
    run.failures[item.name] = error[:500]
    notices.failed(item, exc)
    try:
        record_failure(item.input, run.dump, run.lake, run.config, error)
    except OSError as write_exc:
        notices.unrecorded(item, write_exc)
    notices.finished(item, None)

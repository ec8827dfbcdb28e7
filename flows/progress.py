"""What a dump's flow run tells as it goes, for whoever watches it: its log lines, a Prefect
progress artifact (the UI shows it on the flow run) and listeners in the same process
(``warclake run`` draws its terminal bars from them). Kept apart from the flow so the flow
stays a plain sequence of steps."""
from __future__ import annotations

import logging
import re
import time
from collections import Counter
from contextlib import contextmanager
from typing import Callable
from uuid import UUID

from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.exceptions import MissingContextError

from warclake.tasks.extract.archive import SIGNATURES_LEFT
from warclake.tasks.extract.dump import DumpRun, Notices

_listeners: list[Callable[[str, dict], None]] = []
UPDATE_EVERY = 1.0  # seconds between two updates of the progress artifact
PROGRESS_EVERY = 60.0   # seconds between two progress lines in the flow run's log
ARCHIVE_RUNS = "extract "   # how an archive's task run name begins (flows/dump_flow.py)


@contextmanager
def listening(fn: Callable[[str, dict], None]):
    """Call ``fn(event, data)`` for the runs of this process while inside the block. Events:
    ``planned`` (archives, bytes, already_done), ``reading`` (name, bytes: an archive's input
    bytes read so far, from its worker) and ``archive`` (name, status, input_bytes, result:
    the archive's summary figures, or None when its task failed)."""
    _listeners.append(fn)
    try:
        yield
    finally:
        _listeners.remove(fn)


class RunProgress:
    """Counts archives as they finish and tells the artifact and the listeners. The artifact's
    progress is the share of the run's archives extracted well: a failed archive never counts
    towards 100, and the description says how many failed."""

    def __init__(self, dump: str, archives: int, total_bytes: int | None, already_done: int):
        self.archives, self.finished, self.failed = archives, 0, 0
        self.dump, self.already_done = dump, already_done
        self._artifact: UUID | None = None
        self._updated = time.monotonic()
        try:
            self._artifact = create_progress_artifact(  # type: ignore[assignment]  # a UUID outside an event loop
                progress=0.0 if archives else 100.0, key=f"progress-{_key(dump)}",
                description=self._description())
        except MissingContextError:  # called outside a flow run: listeners only
            pass
        self._emit("planned", archives=archives, bytes=total_bytes, already_done=already_done)

    def _description(self) -> str:
        text = f"Archives of {self.dump} extracted in this run ({self.already_done} were done already)"
        return text + (f"; {self.failed} of {self.archives} failed" if self.failed else "")

    def archive_finished(self, name: str, status: str, input_bytes: int | None, result: dict | None = None) -> None:
        self.finished += 1
        failed = status == "failed"
        self.failed += failed
        now = time.monotonic()
        # At most one API round-trip a second (and the last one, and each failure): a dump has
        # ~90,000 archives, and every update costs the API server CPU that the workers could use.
        if self._artifact is not None and (failed or self.finished >= self.archives
                                           or now - self._updated >= UPDATE_EVERY):
            update_progress_artifact(self._artifact,
                                     progress=100.0 * (self.finished - self.failed) / max(self.archives, 1),
                                     description=self._description())
            self._updated = now
        self._emit("archive", name=name, status=status, input_bytes=input_bytes, result=result)

    @staticmethod
    def _emit(event: str, **data) -> None:
        for fn in list(_listeners):
            fn(event, data)


class RunNotices(Notices):
    """The notices of tasks/extract/dump.py's run as a flow run's: its log, and the progress
    its artifact and listeners show."""

    def __init__(self, log, every: float = PROGRESS_EVERY):
        self.log, self.every = log, every
        self.dump: str | None = None
        self.progress: RunProgress | None = None
        self._started = self._told = time.monotonic()
        self._bytes = 0

    def again(self, line: str) -> None:
        self.log.warning(line)

    def planned(self, run: DumpRun) -> None:
        self.dump = run.dump
        self.log.info("dump %s: %d archives, %s", run.dump, len(run.plan), dict(Counter(p.reason for p in run.plan)))
        sizes = [(p.identity or {}).get("size") for p in run.todo]
        self.progress = RunProgress(run.dump, len(run.todo), sum(filter(None, sizes)) or None, run.skipped)
        self._started = self._told = time.monotonic()

    def failed(self, item, exc: Exception) -> None:
        self.log.error("%s: failed: %s", item.name, f"{type(exc).__name__}: {exc}"[:500])

    def unrecorded(self, item, exc: OSError) -> None:
        self.log.error("%s: the failure could not be recorded in the lake: %s", item.name, exc)

    def finished(self, item, figures: dict | None) -> None:
        assert self.progress is not None   # planned() came first
        if figures is None:
            self.progress.archive_finished(item.name, "failed", (item.identity or {}).get("size"))
        else:
            self.progress.archive_finished(item.name, figures["status"], figures["input_bytes"], figures)
            self._bytes += figures["input_bytes"] or 0
        now = time.monotonic()
        if now - self._told >= self.every:
            self._told = now
            self.log.info("%s", self.progress_line(now))

    def progress_line(self, now: float) -> str:
        """How far the run is: archives done, failed and left, input MB/s and the time left at that pace."""
        p = self.progress
        assert p is not None
        seconds = max(now - self._started, 1e-9)
        left = p.archives - p.finished
        eta = left * seconds / p.finished if p.finished else None
        return (f"{p.dump}: {p.finished - p.failed} of {p.archives} archives done, {p.failed} failed, {left} left; "
                f"{self._bytes / 1e6 / seconds:.1f} MB/s; ETA {_clock(eta)}")

    def report_failed(self, error: str) -> None:
        self.log.error("report of %s failed: %s", self.dump, error)


def archive_logged(log, figures: dict) -> None:
    """An archive's line in its task run's log (and the reason its corpus signatures were left)."""
    name = figures["warc_file"]
    where = f"damaged at {figures['error_offset']}: " if figures["error_offset"] is not None else ""
    damage = f" ({where}{figures['error']})" if figures["error"] else ""
    log.info("%s: %s, %d records, %d documents%s", name, figures["status"], figures["records"],
             figures["documents"], damage)
    left = figures.get(SIGNATURES_LEFT)
    if left:   # the worker process's own warning is not shown
        log.warning("%s: %s", name, left)


def quiet_finished_archives() -> None:
    """Keep Prefect's "Finished in state Completed()" of an archive's task run out of the logs:
    the archive's own line says how it went (one line per archive, 90,000 in a dump). A task
    run that ends otherwise (failed, crashed) keeps Prefect's line."""
    logger = logging.getLogger("prefect.task_runs")
    if not any(isinstance(f, _ArchiveCompleted) for f in logger.filters):
        logger.addFilter(_ArchiveCompleted())


class _ArchiveCompleted(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (str(getattr(record, "task_run_name", "")).startswith(ARCHIVE_RUNS)
                    and record.levelno == logging.INFO and record.getMessage().startswith("Finished in state Completed("))


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def reading(name: str, bytes_read: int) -> None:
    """An archive's worker has read ``bytes_read`` of its input (for the terminal's bars)."""
    RunProgress._emit("reading", name=name, bytes=bytes_read)


def _key(dump: str) -> str:
    """Artifact keys allow lower-case letters, digits and dashes only."""
    return re.sub(r"[^a-z0-9-]+", "-", dump.lower()).strip("-") or "dump"

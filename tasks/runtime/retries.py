"""Every retry of warclake in one place: which errors are tried again, how often, after
what pauses. What is retried is idempotent (an archive is done when its summary says so, a
corpus step when its state file holds its key), so another attempt never doubles work kept.

    ARCHIVE  an archive's task in the dump flow: a network or storage error
             (``transient.is_transient``; a worker's death is one), again after 2, 8 and
             30 s, each pause up to 30 % longer or shorter (so that archives that failed
             together do not all try again at one instant)
    INPUTS   the dump flow's listing of its inputs (a listing may be remote), and the
             reading of each archive's summary to plan the run (``plan.py``): the same,
             without the spread (the flow's ``retry_delays`` may replace both's pauses)
    STEP     a corpus step (an archive's signatures, a global step), by the stage without
             Prefect and by the corpus flow's tasks: a network or storage error, again
             after 2 and 8 s
    WORKER   an archive in ``warclake extract``: only its worker's death (``WorkerDied``),
             again at once, twice: a second death on one record has that record ledgered
             and reading goes on after it. Any other error fails the archive, and the next
             run does it again.
    RESEND   an archive whose worker died outside any record (before its first, between
             two, while writing: ``DiedOutsideRecord``), by the supervisor that held it
             (tasks/runtime/supervisor.py): again at once, twice, before the caller's own
             policy sees the death

The flows give ``prefect_options()`` to Prefect's task options (with a retry condition that
asks ``worth``); the stage and the CLI call ``run``
(without sleeping through a pause of 0).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from warclake.tasks.archive.reader import TransientInputError
from warclake.tasks.runtime.transient import is_transient


class WorkerDied(TransientInputError):
    """The extraction worker died while it held the archive: worth another attempt."""


class DiedOutsideRecord(WorkerDied):
    """The extraction worker died while no record of the archive was being worked on: nothing
    in the archive to blame."""


@dataclass(frozen=True)
class RetryPolicy:
    delays: tuple[float, ...]                  # the pause before each further attempt
    worth: Callable[[BaseException], bool]     # whether an error is worth another attempt
    jitter: float = 0.0                        # Prefect's spread of each pause (a fraction)

    @property
    def retries(self) -> int:
        return len(self.delays)

    def run(self, fn, what: str = "", progress: Callable[[str], None] | None = None):
        """``fn()``, run again after each delay while it fails with an error worth it; the
        last error is raised."""
        for delay in (*self.delays, None):
            try:
                return fn()
            except Exception as exc:
                if delay is None or not self.worth(exc):
                    raise
                if progress:
                    progress(f"{what}: {' '.join(str(exc).split()) or type(exc).__name__}; again in {delay} s")
                if delay:
                    time.sleep(delay)

    def prefect_options(self) -> dict:
        opts = dict(retries=self.retries, retry_delay_seconds=list(self.delays))
        return dict(opts, retry_jitter_factor=self.jitter) if self.jitter else opts


def _worker_died(exc: BaseException) -> bool:
    return isinstance(exc, WorkerDied)


def _died_outside_record(exc: BaseException) -> bool:
    return isinstance(exc, DiedOutsideRecord)


ARCHIVE = RetryPolicy(delays=(2, 8, 30), worth=is_transient, jitter=0.3)
INPUTS = RetryPolicy(delays=(2, 8, 30), worth=is_transient)
STEP = RetryPolicy(delays=(2, 8), worth=is_transient)
WORKER = RetryPolicy(delays=(0, 0), worth=_worker_died)
RESEND = RetryPolicy(delays=(0, 0), worth=_died_outside_record)

"""Where the CPU-heavy extraction runs, and what happens when a worker dies there.

Prefect's process-pool and Dask task runners start a temporary API server per worker
process when no server is configured (about 11 s each), so in the embedded default the
flow keeps Prefect's tasks in threads and sends each archive to a plain process pool
owned here: all cores, no server. On Dask (or any runner whose workers are already
separate processes), extraction runs inline in the task.

A worker that dies (the OOM killer, a crash in compiled code) breaks the whole pool: the
pool is rebuilt and the archives it held are sent again. Each worker tells its parent which
record it is on (tasks/runtime/record_watch.py), so the parent can stop a record that runs past
``record_seconds`` or grows the worker past ``worker_memory_mb`` and ledger it
(``timed_out`` / ``out_of_memory``), and an archive whose worker died twice on one record
has that record ledgered ``worker_crashed``: reading goes on after it, one page lost.
"""
from __future__ import annotations

import atexit
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import Callable

from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.extract.archive import extract_archive
from warclake.tasks.lake.layout import archive_name
from warclake.tasks.extract.outcomes import Outcome
from warclake.tasks.lake.owners import pid_alive
from warclake.tasks.runtime.record_watch import RecordWatch
from warclake.tasks.runtime.retries import WorkerDied  # noqa: F401 (raised here, caught by callers)

from warclake.tasks.runtime import pool_semaphores as semaphores

log = logging.getLogger(__name__)

_lock = threading.RLock()  # re-entrant: Ctrl-C may stop the workers while this thread holds it
_pool: ProcessPoolExecutor | None = None
_pool_size = 0
POLL = 0.25          # seconds between two looks at a running worker
DEATHS_TO_NARROW = 2  # deaths on one record before it is given up
MAX_REBUILDS = 20    # pools broken under one archive before it counts as failed


class RunInterrupted(Exception):
    """The run was interrupted (Ctrl-C): the archive is left undone, not failed, not retried."""


_interrupted = threading.Event()


def _interrupted_at(name: str) -> RunInterrupted:
    return RunInterrupted(f"{name}: the run was interrupted")


def interrupt() -> None:
    """Stop the run's extraction now: no archive starts any more, the workers are stopped
    (what they held is left undone; its temporaries are removed by the flow)."""
    _interrupted.set()
    kill_workers()


def interrupted() -> bool:
    return _interrupted.is_set()


def reset_interrupt() -> None:
    _interrupted.clear()


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _pool_for(size: int, config: ExtractConfig | None = None) -> ProcessPoolExecutor:
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size != size:
            if _pool is not None:
                _pool.shutdown(wait=True)
            _pool = _new_pool(size, config)
            _pool_size = size
        return _pool


def _new_pool(size: int, config: ExtractConfig | None = None) -> ProcessPoolExecutor:
    # forkserver, not fork: the parent runs Prefect's threads and event loops; the
    # server process imports the extraction modules once, so workers start fast
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["warclake.tasks.extract.archive"])
    semaphores.remove_left_by_dead_runs()
    RecordWatch.remove_left_by_dead_runs()
    pool = ProcessPoolExecutor(max_workers=size, mp_context=ctx, initializer=_init_worker,
                               initargs=(os.getpid(), config))
    semaphores.register(pool)  # named semaphores: removed at the next start if this process is killed
    return pool


def _replace_broken(broken: ProcessPoolExecutor) -> None:
    """A pool with a dead worker refuses all work: the next caller gets a new one."""
    global _pool
    with _lock:
        if _pool is broken:
            _pool = None
    broken.shutdown(wait=False, cancel_futures=True)


def _init_worker(parent: int, config: ExtractConfig | None = None) -> None:
    os.environ.setdefault("DO_NOT_TRACK", "1")
    # Each worker holds the write end of its pool's queues, so a parent killed with -9
    # would leave idle workers waiting for ever (and their named semaphores with them).
    threading.Thread(target=_exit_with, args=(parent,), name="parent-watch", daemon=True).start()
    if config is not None:  # lingua's models load at the worker's start, not in its first archive
        from warclake.tasks.extract.language import LanguageDetector
        LanguageDetector.from_config(config).preload()
        if config.corpus_signatures:   # imported once per worker, not in its first archive
            import warclake.tasks.corpus.signals.archive_step  # noqa: F401
    # A worker's own warnings (damage, resumed downloads) would be written straight to the
    # terminal, through the parent's progress bars: what they say is in the archive's
    # summary, which the parent reports in its line for the archive.
    logging.getLogger("warclake").setLevel(logging.ERROR)
    # Stopped by its pool because another worker died: say so, so the parent does not
    # blame this worker's record.
    signal.signal(signal.SIGTERM, _on_terminate)
    # Ctrl-C reaches the whole process group: the parent decides how workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _exit_with(parent: int) -> None:
    while pid_alive(parent):
        time.sleep(1.0)
    os._exit(0)


_current: RecordWatch | None = None


def _on_terminate(signum, frame) -> None:
    if _current is not None:
        _current.terminated()
    os._exit(128 + signum)


def _extract_watched(input_path: str, dump: str, lake: str, config: ExtractConfig, watch_path: str,
                     skip: dict[int, str]) -> dict:
    """In the worker: extract with the parent watching."""
    global _current
    _current = RecordWatch(watch_path)
    try:
        return extract_archive(input_path, dump, lake, config, watch=_current, skip=skip)
    finally:
        _current.close()
        _current = None


def shutdown() -> None:
    global _pool
    with _lock:
        if _pool is not None:
            _pool.shutdown(wait=True, cancel_futures=True)
            _pool = None


def kill_workers() -> None:
    """Stop every worker now (an interrupted run): their archives are left undone."""
    global _pool
    with _lock:
        pool, _pool = _pool, None
    if pool is None:
        return
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for proc in procs:
        try:
            proc.kill()
        except (OSError, AttributeError):
            pass
    for proc in procs:   # gone before the caller removes what they were writing
        try:
            proc.join(timeout=2)
        except (OSError, AssertionError, AttributeError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)


atexit.register(shutdown)


# Records given up per archive, kept across the flow's retries of it: (dump, archive) -> {offset: outcome}
_given_up: dict[tuple[str, str], dict[int, str]] = {}
_deaths: dict[tuple[str, str], Counter] = {}


def run_extraction(input_path: str, dump: str, lake: str, config: ExtractConfig, workers: int,
                   progress: Callable[[int], None] | None = None) -> dict:
    """Extract one archive in a worker process (workers >= 1) or in this thread (workers == 0).
    ``progress`` is called with the archive's input bytes read so far as the worker reads."""
    try:
        return _run_extraction(input_path, dump, lake, config, workers, progress)
    except Exception:
        if _interrupted.is_set():  # whatever the stopped worker or pool raised
            raise _interrupted_at(archive_name(input_path)) from None
        raise


def _run_extraction(input_path, dump, lake, config, workers, progress) -> dict:
    if _interrupted.is_set():
        raise _interrupted_at(archive_name(input_path))
    if workers <= 0:
        def progress_or_stop(n: int) -> None:
            if _interrupted.is_set():
                raise _interrupted_at(archive_name(input_path))
            if progress is not None:
                progress(n)
        return extract_archive(input_path, dump, lake, config, progress=progress_or_stop)
    key = (dump, archive_name(input_path))
    skip = _given_up.setdefault(key, {})
    deaths = _deaths.setdefault(key, Counter())
    between = 0
    for _ in range(MAX_REBUILDS):
        if _interrupted.is_set():  # no new pool once the run is being stopped
            raise _interrupted_at(key[1])
        pool = _pool_for(workers, config)
        with RecordWatch.create() as watch:
            try:
                fut = pool.submit(_extract_watched, input_path, dump, lake, config, watch.path, dict(skip))
                summary = _watch(fut, watch, config, progress)
            except BrokenProcessPool:
                _replace_broken(pool)
                if _interrupted.is_set():
                    raise _interrupted_at(key[1]) from None
                state = _settled(watch)
                if watch.killed_for:   # stopped here for its record: that record is given up
                    skip[state.offset] = watch.killed_for
                    log.warning("%s: the record at %d was stopped (%s); reading goes on after it",
                                key[1], state.offset, watch.killed_for)
                    continue
                if state.terminated:   # another worker died: this archive is sent again
                    continue
                if not state.busy:   # before or between records: nothing to blame; sent again twice
                    between += 1
                    if between <= 2:
                        continue
                    raise WorkerDied(f"{key[1]}: the extraction worker died outside any record "
                                     f"(after {state.bytes_read} input bytes)") from None
                deaths[state.offset] += 1
                if deaths[state.offset] >= DEATHS_TO_NARROW:
                    skip[state.offset] = Outcome.WORKER_CRASHED.value
                    log.warning("%s: the extraction worker died twice on the record at %d: ledgered "
                                "worker_crashed; reading goes on after it", key[1], state.offset)
                    continue
                raise WorkerDied(f"{key[1]}: the extraction worker died on the record at "
                                 f"{state.offset}") from None
        _given_up.pop(key, None)
        _deaths.pop(key, None)
        return summary
    raise WorkerDied(f"{key[1]}: the extraction pool broke {MAX_REBUILDS} times while it held this archive")


def _settled(watch: RecordWatch, timeout: float = 3.0):
    """The watch of a worker once that worker is gone: the pool fails its futures before it
    stops the other workers, which then mark themselves terminated."""
    state = watch.read()
    deadline = time.monotonic() + timeout
    while state.pid and pid_alive(state.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
        state = watch.read()
    return watch.read()


def _watch(fut, watch: RecordWatch, config: ExtractConfig, progress) -> dict:
    """Wait for the worker's result; stop it if its record runs too long or grows too large."""
    last = -1
    limit = config.worker_memory_mb << 20
    while True:
        try:
            return fut.result(timeout=POLL)
        except FutureTimeout:
            pass
        state = watch.read()
        if progress is not None and state.bytes_read != last:
            last = state.bytes_read
            progress(last)
        if not state.busy or not state.pid:
            continue
        why = None
        if _rss(state.pid) > limit:
            why = Outcome.OUT_OF_MEMORY.value
        elif time.monotonic() - state.started > config.record_seconds:
            why = Outcome.TIMED_OUT.value
        if why and watch.read().offset == state.offset:  # still on that record
            watch.killed_for = why
            try:
                os.kill(state.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _rss(pid: int) -> int:
    """A process's resident memory in bytes (0 when it cannot be read: not Linux, gone)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0

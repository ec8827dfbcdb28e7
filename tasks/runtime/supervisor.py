"""The extraction worker processes of a run and their supervision: one Supervisor per process.

Prefect's process-pool and Dask task runners start a temporary API server per worker
process when no server is configured (about 11 s each), so in the embedded default the
flow keeps Prefect's tasks in threads and each archive goes to a worker process of this
process's :class:`Supervisor`: all cores, no server. On Dask (or any runner whose workers
are already separate processes), extraction runs inline in the task (``workers=0``).

Each worker is a process with a pipe of its own, so a worker that dies (the OOM killer, a
crash in compiled code, a kill) costs only the archive it held: it is replaced and that
archive sent again. Through a watch file mapped by both (:class:`RecordWatch`) the worker
tells its parent which record it is on; the parent stops a record that runs past
``record_seconds`` or grows the worker past ``worker_memory_mb`` and ledgers it
(``timed_out`` / ``out_of_memory``), and a record on which the worker died twice is
ledgered ``worker_crashed``: reading goes on after it, one page lost. A worker that dies
outside any record (before its first, between two, while writing) leaves nothing to blame:
its archive is read again whole (tasks/runtime/retries.py: RESEND).

Ctrl-C (:meth:`Supervisor.on_ctrl_c`): the first press stops the work cleanly, a second
forces. A terminal sends SIGINT to the whole foreground process group: the workers ignore
it (their parent decides how they stop).
"""
from __future__ import annotations

import atexit
import logging
import mmap
import multiprocessing
import os
import signal
import struct
import sys
import tempfile
import threading
import time
import traceback
import zlib
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Callable

from warclake.tasks.extract.archive import extract_archive
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.extract.outcomes import Outcome
from warclake.tasks.lake.layout import Lake, archive_name
from warclake.tasks.lake.owners import pid_alive, remove_dead_tmp, tmp_name
from warclake.tasks.runtime import collector, retries
from warclake.tasks.runtime.retries import DiedOutsideRecord, WorkerDied

log = logging.getLogger(__name__)

POLL = 0.25            # seconds between two looks at a busy worker
DEATHS_TO_NARROW = 2   # deaths on one record before it is given up
MAX_GIVEN_UP = 20      # records given up in one archive before it counts as failed
INTERRUPTED = 130      # the shell's exit code for a command ended by SIGINT


class RunInterrupted(Exception):
    """The run was interrupted (Ctrl-C): the archive is left undone, not failed, not retried."""


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


# -- the watch: where a worker is, readable by its parent while it runs or after it died ---

WATCH_BASE = "warclake-watch"   # watch files are owner-tagged temporaries of this base name

# generation (the worker's count of its writes), pid, record offset (-1: no record), input
# bytes read, record start (CLOCK_MONOTONIC, one clock for every process of the machine)
_STATE = struct.Struct("<qqqqd")
_CHECK = struct.Struct("<I")          # crc32 of the state's bytes
_SLOT = 48                            # a state and its check, two slots in the file


@dataclass(frozen=True)
class WatchState:
    generation: int
    pid: int
    offset: int
    bytes_read: int
    started: float

    @property
    def busy(self) -> bool:
        return self.offset >= 0


NOTHING = WatchState(0, 0, -1, 0, 0.0)   # no state written yet: no record begun


class RecordWatch:
    """``RecordWatch.create()`` in the parent, ``RecordWatch(path)`` in the worker.

    A small file mapped into memory by both sides. No write to shared memory is atomic, and
    a worker can be killed in the middle of one, so the worker writes each state whole into
    the slot of the two that it did not write last, with a checksum; the parent reads the
    valid slot of the higher generation. It thus only ever sees a state the worker really
    was in, never a half-written one (``struct.pack_into`` zero-fills before it writes: read
    half-way, a state said "on the record at 0 since the clock's start", a record to stop
    and ledger ``timed_out``). One write costs about a microsecond, cheap for every record.
    """

    def __init__(self, path: str):
        self.path = path
        with open(path, "r+b") as fh:
            self._map = mmap.mmap(fh.fileno(), 2 * _SLOT)
        self._pid = os.getpid()
        self._generation = 0

    @classmethod
    def create(cls) -> "RecordWatch":
        path = os.path.join(tempfile.gettempdir(), tmp_name(WATCH_BASE))
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, bytes(2 * _SLOT))   # two invalid slots: NOTHING
        os.close(fd)
        return cls(path)

    @staticmethod
    def remove_left_by_dead_runs() -> None:
        """Remove the watch files of parents that were killed (their names carry the owner)."""
        remove_dead_tmp(tempfile.gettempdir(), [WATCH_BASE])

    # worker side
    def record(self, offset: int, bytes_read: int) -> None:
        self._put(offset, bytes_read, time.monotonic())

    def idle(self, bytes_read: int) -> None:
        self._put(-1, bytes_read, 0.0)

    def _put(self, offset: int, bytes_read: int, started: float) -> None:
        generation = self._generation = self._generation + 1
        state = _STATE.pack(generation, self._pid, offset, bytes_read, started)
        at = (generation & 1) * _SLOT
        self._map[at:at + _STATE.size + _CHECK.size] = state + _CHECK.pack(zlib.crc32(state))

    # parent side
    def read(self) -> WatchState:
        """The last state the worker wrote whole (NOTHING before its first)."""
        for _ in range(3):   # a live worker may rewrite both slots during one copy: rare, read again
            raw = self._map[:]
            found = [WatchState(*_STATE.unpack_from(raw, at)) for at in (0, _SLOT)
                     if _CHECK.unpack_from(raw, at + _STATE.size)[0] == zlib.crc32(raw[at:at + _STATE.size])]
            if found:
                return max(found, key=lambda s: s.generation)
        return NOTHING

    def close(self, remove: bool = False) -> None:
        self._map.close()
        if remove:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass

    def __enter__(self) -> "RecordWatch":
        return self

    def __exit__(self, *exc) -> None:
        self.close(remove=True)


# -- a worker process ------------------------------------------------------------------------

def _serve(conn, parent: int, config: ExtractConfig | None) -> None:
    """A worker's life: archives from its parent, one at a time, until the pipe closes."""
    _set_up(parent, config)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):   # its parent ended it (or is gone)
            return
        reply = _extract_watched(*job)
        try:
            conn.send(reply)
        except (BrokenPipeError, ConnectionError):
            return
        except Exception:   # an error that does not pickle: its type and message do
            conn.send(("failed", RuntimeError(f"{type(reply[1]).__name__}: {reply[1]}"), reply[2]))


def _set_up(parent: int, config: ExtractConfig | None) -> None:
    os.environ.setdefault("DO_NOT_TRACK", "1")
    # An idle worker sees its parent go (its pipe closes); a busy one would finish its
    # archive first, writing to the lake for a run that is gone.
    threading.Thread(target=_exit_with, args=(parent,), name="parent-watch", daemon=True).start()
    if config is not None:  # lingua's models load at the worker's start, not in its first archive
        from warclake.tasks.extract.language import LanguageDetector
        LanguageDetector.from_config(config).preload()
        if config.corpus_signatures:   # imported once per worker, not in its first archive
            import warclake.tasks.corpus.signals.archive_step  # noqa: F401
    collector.keep_off_the_hot_path()  # what start-up made is never walked again
    # A worker's own warnings (damage, resumed downloads) would be written straight to the
    # terminal, through the parent's progress bars: what they say is in the archive's
    # summary, which the parent reports in its line for the archive.
    logging.getLogger("warclake").setLevel(logging.ERROR)
    # Ctrl-C reaches the whole process group: the parent decides how workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _exit_with(parent: int) -> None:
    while pid_alive(parent):
        time.sleep(1.0)
    os._exit(0)


def _extract_watched(input_path: str, dump: str, lake: str, config: ExtractConfig, watch_path: str,
                     skip: dict[int, str]) -> tuple:
    """In the worker: extract with the parent watching; ("done", summary) or ("failed", error, traceback)."""
    watch = RecordWatch(watch_path)
    try:
        return "done", extract_archive(input_path, dump, lake, config, watch=watch, skip=skip)
    except Exception as exc:
        return "failed", exc, traceback.format_exc()
    finally:
        watch.close()


class _RemoteTraceback(Exception):
    def __init__(self, tb: str):
        self.tb = tb

    def __str__(self) -> str:
        return self.tb


class _Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, ctx, config: ExtractConfig | None):
        self.conn, theirs = ctx.Pipe()
        # daemon: ended by multiprocessing at exit, should this process exit without shutdown()
        self.proc = ctx.Process(target=_serve, args=(theirs, os.getpid(), config), name="warclake-extract",
                                daemon=True)
        self.proc.start()
        theirs.close()

    def alive(self) -> bool:
        return self.proc.is_alive()

    def kill(self) -> None:
        self.proc.kill()   # a no-op once the process is reaped

    def end(self, timeout: float = 5.0) -> None:
        """Close its pipe (an idle worker exits), kill it if it does not, and reap it."""
        self.conn.close()
        self.proc.join(timeout)
        if self.proc.exitcode is None:
            self.kill()
            self.proc.join(timeout)


class _Lost(Exception):
    """A worker died under an archive: why it was stopped (if the parent stopped it), where it was."""

    def __init__(self, exitcode: int | None, stopped: tuple[int, str] | None, state: WatchState):
        self.exitcode, self.stopped, self.state = exitcode, stopped, state

    def how(self) -> str:
        code = self.exitcode
        if code is not None and code < 0:
            try:
                return signal.Signals(-code).name
            except ValueError:
                return f"signal {-code}"
        return f"exit status {code}"


class _GiveUp(Exception):
    """A record to read past from now on: ``offset`` gets ``outcome`` without being worked on."""

    def __init__(self, offset: int, outcome: str, why: str):
        super().__init__(why)
        self.offset, self.outcome = offset, outcome


# -- the supervisor --------------------------------------------------------------------------

class Supervisor:
    """This process's extraction workers: started as archives come, replaced when they die,
    watched record by record, stopped all at once by Ctrl-C. ``extract`` may be called from
    many threads at once (the flow's task threads): each call waits for a free worker."""

    def __init__(self):
        self._changed = threading.Condition(threading.RLock())  # re-entrant: Ctrl-C may stop the workers meanwhile
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._size = 0
        self._ctx = None
        self._interrupted = threading.Event()
        self.said_ctrl_c = False   # whether the Ctrl-C line was printed (cli/main.py prints one otherwise)
        # kept across the flow's retries of an archive: (dump, archive) -> {offset: outcome}, deaths per offset
        self._given_up: dict[tuple[str, str], dict[int, str]] = {}
        self._deaths: dict[tuple[str, str], Counter] = {}
        atexit.register(self.shutdown)

    # -- the API
    def extract(self, input_path: str, dump: str, lake: str, config: ExtractConfig, workers: int,
                progress: Callable[[int], None] | None = None) -> dict:
        """Extract one archive in a worker process (workers >= 1: at most that many at once)
        or in this thread (workers == 0); its summary. ``progress`` is called with the
        archive's input bytes read so far. Raises RunInterrupted once the run is interrupted,
        WorkerDied when the worker died on a record (worth another attempt)."""
        name = archive_name(input_path)
        try:
            if workers <= 0:
                return self._inline(input_path, dump, lake, config, progress)
            return self._watched(input_path, dump, lake, config, workers, progress)
        except Exception:
            if self.interrupted:   # whatever the stopped worker raised
                raise self._stopped(name) from None
            raise

    @property
    def interrupted(self) -> bool:
        return self._interrupted.is_set()

    def interrupt(self) -> None:
        """Stop the run's extraction now: no archive starts any more, the workers are killed
        (what they held is left undone; its temporaries are removed by the caller)."""
        self._interrupted.set()
        self.kill()

    def reset(self) -> None:
        """A new run: not interrupted."""
        self._interrupted.clear()

    def kill(self) -> None:
        """Kill every worker now, and reap them before the caller removes what they were writing."""
        workers = [*self._idle, *self._busy]   # no lock: this runs in a signal handler too
        for w in workers:
            w.kill()
        for w in workers:
            w.proc.join(2)

    def shutdown(self) -> None:
        """End the workers (the run is over): idle ones exit, busy ones are killed."""
        with self._changed:
            idle, busy = self._idle, list(self._busy)
            self._idle = []
            self._changed.notify_all()
        for w in busy:
            w.kill()
        for w in idle + busy:
            w.end()

    @contextmanager
    def on_ctrl_c(self, unwind: bool = False,
                  message: str = "interrupted: stopping (press Ctrl-C again to force)"):
        """While inside: the first Ctrl-C prints ``message`` (one line) and interrupts the
        extraction (then raises KeyboardInterrupt to unwind, when ``unwind``); a second kills
        the workers and exits at once."""

        def first() -> None:
            self.said_ctrl_c = True
            self.interrupt()
            if unwind:
                raise KeyboardInterrupt

        with _ctrl_c_handled(first, self.kill, message):
            yield

    # -- an archive
    def _inline(self, input_path, dump, lake, config, progress) -> dict:
        name = archive_name(input_path)

        def progress_or_stop(n: int) -> None:
            if self.interrupted:
                raise self._stopped(name)
            if progress is not None:
                progress(n)

        if self.interrupted:
            raise self._stopped(name)
        collector.keep_off_the_hot_path()  # once per process, as in a worker
        return extract_archive(input_path, dump, lake, config, progress=progress_or_stop)

    def _watched(self, input_path, dump, lake, config, workers, progress) -> dict:
        key = (dump, archive_name(input_path))
        skip = self._given_up.setdefault(key, {})
        deaths = self._deaths.setdefault(key, Counter())
        for _ in range(MAX_GIVEN_UP):
            job = (input_path, dump, lake, config, dict(skip))
            try:
                summary = retries.RESEND.run(lambda: self._attempt(job, workers, progress, deaths))
            except _GiveUp as up:
                skip[up.offset] = up.outcome
                log.warning("%s: %s; reading goes on after it", key[1], up)
                continue
            self._given_up.pop(key, None)
            self._deaths.pop(key, None)
            return summary
        raise WorkerDied(f"{key[1]}: {MAX_GIVEN_UP} records given up, the archive counts as failed")

    def _attempt(self, job, workers, progress, deaths) -> dict:
        input_path, dump, lake, config, skip = job
        name = archive_name(input_path)
        worker = self._take(workers, config, name)
        with RecordWatch.create() as watch:
            try:
                reply = self._run(worker, (input_path, dump, lake, config, watch.path, skip), watch, config,
                                  progress)
            except _Lost as lost:
                self._forget(worker)
                try:   # what it was writing: its temporaries (their owner is gone now)
                    (lake if isinstance(lake, Lake) else Lake(lake)).clean_stale_tmp(dump)
                except OSError:
                    pass
                if self.interrupted:
                    raise self._stopped(name) from None
                raise self._blame(name, lost, deaths) from None
            except BaseException:   # this thread stopped waiting (Ctrl-C unwinding...): its work is abandoned
                self._forget(worker, kill=True)
                raise
        self._give_back(worker)
        if reply[0] == "done":
            return reply[1]
        _, exc, tb = reply   # the extraction's own error, raised as if here
        exc.__cause__ = _RemoteTraceback(tb)
        raise exc

    @staticmethod
    def _blame(name: str, lost: _Lost, deaths: Counter) -> Exception:
        """What a lost worker means for its archive: a record given up, a death on a record
        (another attempt), or nothing to blame (read again whole)."""
        if lost.stopped is not None:   # stopped here for its record: that record is given up
            offset, why = lost.stopped
            return _GiveUp(offset, why, f"the record at {offset} was stopped ({why})")
        state = lost.state
        if not state.busy:   # before, between or after records
            return DiedOutsideRecord(f"{name}: the extraction worker died ({lost.how()}) outside any record "
                                     f"(after {state.bytes_read} input bytes)")
        deaths[state.offset] += 1
        if deaths[state.offset] >= DEATHS_TO_NARROW:
            return _GiveUp(state.offset, Outcome.WORKER_CRASHED.value,
                           f"the extraction worker died twice on the record at {state.offset}: ledgered worker_crashed")
        return WorkerDied(f"{name}: the extraction worker died ({lost.how()}) on the record at {state.offset}")

    def _run(self, worker: _Worker, job: tuple, watch: RecordWatch, config: ExtractConfig, progress) -> tuple:
        """Send the job and wait for the worker's reply; stop the worker if its record runs too
        long or grows too large. Raises _Lost when the worker dies."""
        stopped = None
        try:
            worker.conn.send(job)
        except OSError:   # it died while idle
            pass
        last = -1
        limit = config.worker_memory_mb << 20
        while True:
            ready = wait([worker.conn, worker.proc.sentinel], POLL)
            if worker.conn in ready:
                try:
                    return worker.conn.recv()
                except (EOFError, OSError):   # its end closed: it died
                    ready = [worker.proc.sentinel]
            if worker.proc.sentinel in ready:
                worker.proc.join()
                raise _Lost(worker.proc.exitcode, stopped, watch.read())
            state = watch.read()
            if progress is not None and state.bytes_read != last:
                last = state.bytes_read
                progress(last)
            if stopped or not state.busy:
                continue
            why = None
            if _rss(worker.proc.pid) > limit:
                why = Outcome.OUT_OF_MEMORY.value
            elif time.monotonic() - state.started > config.record_seconds:
                why = Outcome.TIMED_OUT.value
            if why and watch.read().generation == state.generation:   # still on that record
                stopped = (state.offset, why)
                worker.kill()

    # -- the workers
    def _take(self, size: int, config: ExtractConfig, name: str) -> _Worker:
        """A worker for an archive: an idle one, a new one while there are fewer than
        ``size``, else the first to be given back."""
        with self._changed:
            self._size = size
            while True:
                if self.interrupted:   # no new worker once the run is being stopped
                    raise self._stopped(name)
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive():
                        self._busy.add(worker)
                        return worker
                    worker.end()   # died while idle: nothing was lost
                if len(self._busy) < size:
                    worker = _Worker(self._context(), config)
                    self._busy.add(worker)
                    return worker
                self._changed.wait(POLL)

    def _give_back(self, worker: _Worker) -> None:
        with self._changed:
            self._busy.discard(worker)
            keep = len(self._idle) + len(self._busy) < self._size and not self.interrupted
            if keep:
                self._idle.append(worker)
            self._changed.notify()
        if not keep:
            worker.end()

    def _forget(self, worker: _Worker, kill: bool = False) -> None:
        """A worker that died (or is killed now) is no longer one of ours."""
        with self._changed:
            self._busy.discard(worker)
            self._changed.notify()
        if kill:
            worker.kill()
        worker.end()

    def _context(self):
        if self._ctx is None:
            # forkserver, not fork: the parent runs Prefect's threads and event loops; the
            # server process imports the extraction modules once, so workers start fast
            self._ctx = multiprocessing.get_context("forkserver")
            self._ctx.set_forkserver_preload([__name__])
            RecordWatch.remove_left_by_dead_runs()
        return self._ctx

    @staticmethod
    def _stopped(name: str) -> RunInterrupted:
        return RunInterrupted(f"{name}: the run was interrupted")


def _rss(pid: int) -> int:
    """A process's resident memory in bytes (0 when it cannot be read: not Linux, gone)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


_this_process: Supervisor | None = None
_made = threading.Lock()


def supervisor() -> Supervisor:
    """This process's supervisor (made at first use; its workers are this process's)."""
    global _this_process
    with _made:
        if _this_process is None:
            _this_process = Supervisor()
        return _this_process


# -- Ctrl-C ---------------------------------------------------------------------------------

@contextmanager
def _ctrl_c_handled(first: Callable[[], None], force: Callable[[], None], message: str):
    """While inside: the first Ctrl-C prints ``message`` (one line) and calls ``first`` (which
    may raise KeyboardInterrupt to unwind); a second calls ``force`` and exits at once."""

    def forced(signum, frame):
        try:
            force()
        finally:
            os._exit(INTERRUPTED)

    def pressed(signum, frame):
        signal.signal(signal.SIGINT, forced)
        # written, not print()ed: inside a flow run Prefect turns prints into log records
        sys.stderr.write(f"warclake: {message}\n")
        sys.stderr.flush()
        first()

    try:
        previous = signal.signal(signal.SIGINT, pressed)
    except ValueError:  # not the main thread (called from a test's thread...): no handler
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)

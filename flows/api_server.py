"""The Prefect API of a run that has none configured: ``prefect server start`` in a process of
the run's own, started and stopped through Prefect's command line and settings only.

Prefect's own temporary server (the default without ``PREFECT_API_URL``) is stopped at exit
with five seconds to finish, and sits in the terminal's process group, so one Ctrl-C stops it
before the run can mark its flow run Cancelled. Task runs are recorded from events (three or
more per archive) by the server's task run recorder, which on SQLite fell behind a dump's
archives and lost what it still held when the server went: about a third of the archives'
task runs were recorded at 1,000 archives. This server:

- runs ``python -m prefect server start`` on a free loopback port, in a process group of its
  own (Ctrl-C at the terminal reaches the run, not the server it reports to), and ends with the
  run: SIGTERM when the run's process dies, on Linux (the parent-death signal), else at exit;
- records task runs in batches (the recorder writes one transaction per event by default);
- is stopped only after the run's logs and events are sent (:func:`drain_senders`) and, in the
  flow, after the server has recorded every task run (:func:`wait_recorded`).

Its database is Prefect's usual one (``PREFECT_HOME``, or ``PREFECT_API_DATABASE_CONNECTION_URL``),
so ``prefect server start`` shows these runs later. The settings in force in this process
(profile, environment) are handed to it, as Prefect does for its temporary server.
"""
from __future__ import annotations

import ctypes
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import contextmanager
from typing import Iterator

log = logging.getLogger(__name__)

STARTUP_SECONDS = 120.0    # a fresh database migrates first; a busy machine is slow
STOP_SECONDS = 30.0        # a graceful stop: the recorder and the event persister flush what they hold
# The server's settings for a run's load, each unless the environment sets it: task runs
# recorded 200 to a transaction; the events that carry them not kept as events, and no
# automations, UI, schedules or late-run marking (nothing is deployed on it): a quarter less
# CPU per archive.
SERVER_SETTINGS = {
    "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE": "200",
    "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_FLUSH_INTERVAL": "1",
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",
    "PREFECT_SERVER_UI_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_SCHEDULER_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_LATE_RUNS_ENABLED": "false",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_LOGGING_LEVEL": "WARNING",
}

_PR_SET_PDEATHSIG = 1
_own: str | None = None   # the API URL of the server this process started, while it runs


def own_api() -> str | None:
    """The API URL of the server this process started for its run (None: none started)."""
    return _own


@contextmanager
def api_for_run() -> Iterator[str | None]:
    """While inside, Prefect reports to a server: the configured one (yields None), or one
    started for this run (yields its API URL), stopped on the way out once what this process
    queued for it is sent."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    global _own
    if PREFECT_API_URL.value():
        yield None
        return
    server = ApiServer()
    try:
        server.start()
        with temporary_settings(updates={PREFECT_API_URL: server.api_url}):
            _own = server.api_url
            try:
                yield server.api_url
            finally:
                drain_senders()
                _own = None
    finally:
        server.stop()


class ApiServer:
    """``prefect server start`` on a free loopback port, for one run."""

    def __init__(self):
        self.port = _free_port()
        self.api_url = f"http://127.0.0.1:{self.port}/api"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        from prefect.settings import get_current_settings

        env = {**SERVER_SETTINGS, **os.environ,
               **get_current_settings().to_environment_variables(exclude_unset=True)}
        env.pop("PREFECT_API_URL", None)   # the server is no client of another
        cmd = [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(self.port)]
        # its banner is for a person starting a server by hand; warnings and errors still show
        self.proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     process_group=0, preexec_fn=_end_with_parent)
        deadline = time.monotonic() + float(os.environ.get("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS",
                                                           STARTUP_SECONDS))
        while not _healthy(self.api_url):
            if self.proc.poll() is not None:
                raise RuntimeError(f"the run's Prefect server exited at start (status {self.proc.returncode})")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the run's Prefect server did not answer within {deadline:.0f} s")
            time.sleep(0.1)

    def stop(self) -> None:
        """SIGTERM (a graceful stop), SIGKILL if it does not end in time."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        log.info("the run's Prefect server (pid %d): %s", proc.pid, _usage(proc.pid))
        proc.terminate()
        try:
            proc.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def drain_senders(timeout: float = 60.0) -> None:
    """Send the logs and events this process has queued for the API, and stop their senders
    (the next ones start with the settings of whoever needs them)."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    def drain() -> None:
        for service in (APILogWorker, EventsWorker):
            service.drain_all(timeout=timeout, at_exit=False)

    # in a thread of its own: inside an event loop drain_all would not block
    sender = threading.Thread(target=drain, name="drain-prefect-senders", daemon=True)
    sender.start()
    sender.join(2 * timeout)


def _end_with_parent() -> None:
    """In the server's process before it runs: SIGTERM when the thread that started it (the
    run's main thread) is gone, so a killed run leaves no server behind."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: stopped by the run on its way out only
        pass


def _usage(pid: int) -> str:
    """A process's CPU seconds and peak memory so far (Linux; for ``-v`` and benchmarks)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            ticks = fh.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/status") as fh:
            peak = next((line.split()[1] for line in fh if line.startswith("VmHWM:")), "?")
    except (OSError, IndexError):
        return "usage unknown"
    cpu = (int(ticks[11]) + int(ticks[12])) / os.sysconf("SC_CLK_TCK")
    return f"{cpu:.1f} s CPU, peak RSS {int(peak) // 1024 if peak.isdigit() else '?'} MB"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(api_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{api_url}/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False

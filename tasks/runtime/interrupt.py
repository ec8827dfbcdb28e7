"""Ctrl-C on a long command: the first press stops the work cleanly, a second one forces.

A terminal sends SIGINT to the whole foreground process group. The extraction workers ignore
it (their parent decides how they stop, tasks/runtime/workers.py); the temporary Prefect API server
of a run is moved out of the group, or it would shut down at once and the run could not
mark its flow run Cancelled. It still ends with the run: Prefect stops it at exit, and the
kernel stops it if the run is killed (parent-death signal).
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from typing import Callable

INTERRUPTED = 130  # the shell's exit code for a command ended by SIGINT
_PR_SET_PDEATHSIG = 1
said = False  # whether the Ctrl-C line was printed (cli/main.py prints one otherwise)


@contextmanager
def on_ctrl_c(first: Callable[[], None], force: Callable[[], None] = lambda: None,
              message: str = "interrupted: stopping (press Ctrl-C again to force)"):
    """While inside: the first Ctrl-C prints ``message`` (one line) and calls ``first`` (which
    may raise KeyboardInterrupt to unwind); a second calls ``force`` and exits at once."""

    def forced(signum, frame):
        try:
            force()
        finally:
            os._exit(INTERRUPTED)

    def pressed(signum, frame):
        global said
        said = True
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


def raise_interrupt() -> None:
    raise KeyboardInterrupt


def _server_process_setup() -> None:
    """In the server's process, before it runs: its own process group, and SIGTERM when the
    thread that started it (the run's main thread) is gone."""
    os.setpgid(0, 0)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: Prefect's own atexit stop remains
        pass


def shield_prefect_server() -> None:
    """Start Prefect's temporary API server (if this run starts one) outside the terminal's
    process group, so one Ctrl-C reaches the run and not the server it reports to."""
    try:
        from prefect.server.api import server
    except ImportError:
        return
    cls = getattr(server, "SubprocessASGIServer", None)
    if cls is None or getattr(cls, "_warclake_shielded", False):
        return
    start = cls._run_uvicorn_command

    def run_uvicorn_command(self):
        real = subprocess.Popen

        def popen(*args, **kw):
            kw.setdefault("preexec_fn", _server_process_setup)
            return real(*args, **kw)

        server.subprocess.Popen = popen
        try:
            return start(self)
        finally:
            server.subprocess.Popen = real

    cls._run_uvicorn_command = run_uvicorn_command
    cls._warclake_shielded = True

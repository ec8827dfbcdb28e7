"""Real servers and processes for the tests: free loopback ports, stopping what a test
started (and whatever that left behind), ``prefect server``, a Dask cluster, an S3 server."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager

from tools.faults.s3 import free_port, moto_server

BIN = os.path.dirname(sys.executable)
QUIET_PREFECT = {"DO_NOT_TRACK": "1", "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
                 "PREFECT_LOGGING_LEVEL": "WARNING"}


def session_members(sid: int) -> dict[int, str]:
    """Live processes (PID -> command line) in the session of a process started with
    start_new_session (Linux /proc)."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
                if int(fields[3]) == sid and fields[0] != "Z":  # stat field 6: session id
                    with open(f"/proc/{entry}/cmdline", "rb") as fh:
                        found[int(entry)] = fh.read().replace(b"\0", b" ").decode(errors="replace")[:200]
            except (OSError, ValueError):
                continue
    return found


def stop(proc: subprocess.Popen, timeout: float = 20, first=signal.SIGTERM) -> dict[int, str]:
    """Stop one process we started, by its PID: ``first``, then SIGKILL after a timeout.

    It was started in its own session, so whatever it left running (flow-run processes,
    extraction pools) is found by session id, given a few seconds to exit on its own, then
    killed and returned for the test to judge.
    """
    if proc.poll() is None:
        proc.send_signal(first)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)
    if sys.platform != "linux":
        return {}
    deadline = time.monotonic() + 5
    while (left := session_members(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return left


def wait_until(ready, proc: subprocess.Popen, log_path, what: str, timeout: float = 90) -> float:
    """Poll ``ready()`` until true; fail with the process's log if it dies or times out."""
    t0 = time.monotonic()
    while not ready():
        if proc.poll() is not None or time.monotonic() - t0 > timeout:
            with open(log_path, "rb") as fh:
                tail = fh.read()[-3000:].decode(errors="replace")
            raise RuntimeError(f"{what} did not start:\n{tail}")
        time.sleep(0.2)
    return time.monotonic() - t0


def http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status < 500
    except OSError:
        return False


@contextmanager
def started(cmd: list[str], log_path, env: dict | None = None, cwd=None):
    """Run ``cmd`` in its own session with output to ``log_path``; stop it (and what it
    spawned) on exit."""
    log = open(log_path, "wb")
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        yield proc
    finally:
        stop(proc)
        log.close()


@contextmanager
def prefect_server(home, python: str = sys.executable):
    """``prefect server start`` on a free loopback port with its own home and sqlite
    database; yields ``{"url", "env", "home"}`` where ``env`` is a client's environment."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = dict(os.environ, **QUIET_PREFECT, PREFECT_HOME=str(home),
               PREFECT_API_DATABASE_CONNECTION_URL=f"sqlite+aiosqlite:///{home}/prefect.db",
               PREFECT_UI_ENABLED="false")
    env.pop("PREFECT_API_URL", None)  # the server must not think it is a client of another one
    log_path = os.path.join(home, "server.log")
    cmd = [python, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    with started(cmd, log_path, env=env) as proc:
        took = wait_until(lambda: http_ok(f"{url}/health"), proc, log_path, "prefect server")
        print(f"\nprefect server healthy in {took:.1f}s")
        client_env = dict(env, PREFECT_API_URL=url)
        client_env.pop("PREFECT_API_DATABASE_CONNECTION_URL")
        yield {"url": url, "env": client_env, "home": home}


@contextmanager
def s3_server(workdir):
    """moto's S3-compatible server on a free loopback port; yields the environment a
    client (boto3, s3fs, warclake) needs to use it."""
    with moto_server(str(workdir)) as (env, _proc):
        yield env


def run_installed(env, *args, timeout=300, extra_env=None):
    p = subprocess.run([str(a) for a in args], cwd=env["work"], env=dict(env["env"], **(extra_env or {})),
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{args}: exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p

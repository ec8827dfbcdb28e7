"""Ctrl-C on `run` and `extract`, sent to the process group as a terminal sends it: real
processes, a real Prefect server for the flow run's state. A page made to hang (the
test-only fault injector, tasks/runtime/fault_injection.py) keeps the work busy when it comes."""
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

from warclake.tasks.archive.reader import ArchiveReader
from warclake.tasks.sample_dump import make_dump

DUMP = "TEST-DUMP"


def a_page_of(dump_dir):
    path = sorted(p for p in os.listdir(dump_dir) if p.endswith(".warc.gz"))[-1]
    with open(os.path.join(dump_dir, path), "rb") as fh:
        return [r.url for r in ArchiveReader(fh) if r.rec_type == "response"][5]


def start(command, lake, dump_dir, env_extra=None, *extra):
    env = {**os.environ, "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120", **(env_extra or {})}
    if "PREFECT_API_URL" not in (env_extra or {}):   # no server configured: `run` starts its own
        env.pop("PREFECT_API_URL", None)
    env["WARCLAKE_TEST_FAULT"] = f"hang:{a_page_of(dump_dir)}"
    cmd = [sys.executable, "-m", "warclake.cli.main", command, "--dump", DUMP, "--lake", str(lake),
           "--langs", "ja,en", *extra, str(dump_dir)]
    return subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def interrupt_when_busy(proc, lake, done_files: int):
    """Wait until ``done_files`` summaries are in the lake (the hanging page is being worked
    on), press Ctrl-C once; returns (exit code, seconds to exit, output)."""
    files = os.path.join(lake, "files", f"dump={DUMP}")
    deadline = time.time() + 300
    try:
        while not (os.path.isdir(files) and len(os.listdir(files)) >= done_files):
            assert proc.poll() is None and time.time() < deadline, proc.stdout.read()
            time.sleep(0.1)
        time.sleep(1.5)
        t0 = time.time()
        os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        return proc.returncode, time.time() - t0, out
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def leftovers(lake):
    found = []
    for root, _dirs, names in os.walk(lake):
        found += [os.path.join(root, n) for n in names if ".tmp" in n or n.endswith(".lock")]
    return found


def test_one_ctrl_c_stops_run_cancels_its_flow_run_and_leaves_nothing(tmp_path, prefect_server):
    dump_dir = tmp_path / "dump"
    make_dump(str(dump_dir), files=3, pages_per_file=30, dump=DUMP, truncate_last=False)
    lake = tmp_path / "lake"
    proc = start("run", lake, dump_dir, prefect_server["env"], "--workers", "2", "--no-report")
    rc, seconds, out = interrupt_when_busy(proc, str(lake), 2)
    assert rc == 130, out
    assert seconds < 30, (seconds, out)   # a few seconds; the bound leaves room for a loaded machine
    assert out.count("interrupted") >= 1 and "Traceback" not in out, out
    assert [line for line in out.splitlines() if line.startswith("warclake:")] == \
        ["warclake: interrupted: stopping (press Ctrl-C again to force)"]
    assert leftovers(str(lake)) == []
    assert len(os.listdir(lake / "files" / f"dump={DUMP}")) == 2  # the hung archive is not done

    req = urllib.request.Request(prefect_server["url"] + "/flow_runs/filter", data=b"{}",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        runs = [fr for fr in json.load(r) if fr["name"] == f"extract {DUMP}"]
    assert [fr["state"]["type"] for fr in runs] == ["CANCELLED"]


def test_one_ctrl_c_on_a_run_with_its_own_server_cancels_its_flow_run_then_stops_the_server(tmp_path):
    """No PREFECT_API_URL: the server `run` starts for itself (flows/api_server.py) is out of
    the terminal's process group, so the one Ctrl-C reaches the run only; the run marks its
    flow run Cancelled there, then stops it."""
    import sqlite3

    from support.procs import session_members

    dump_dir = tmp_path / "dump"
    make_dump(str(dump_dir), files=3, pages_per_file=30, dump=DUMP, truncate_last=False)
    lake, home = tmp_path / "lake", tmp_path / "prefect-home"
    proc = start("run", lake, dump_dir, {"PREFECT_HOME": str(home)}, "--workers", "2", "--no-report")
    rc, seconds, out = interrupt_when_busy(proc, str(lake), 2)
    assert rc == 130 and "Traceback" not in out, out
    assert leftovers(str(lake)) == []
    with sqlite3.connect(home / "prefect.db") as db:
        states = db.execute("SELECT state_type FROM flow_run WHERE name = ?", (f"extract {DUMP}",)).fetchall()
    assert states == [("CANCELLED",)]
    assert session_members(proc.pid) == {}   # the server ended with the run


def test_one_ctrl_c_stops_extract_with_one_line(tmp_path):
    dump_dir = tmp_path / "dump"
    make_dump(str(dump_dir), files=3, pages_per_file=30, dump=DUMP, truncate_last=False)
    lake = tmp_path / "lake"
    proc = start("extract", lake, dump_dir)
    rc, seconds, out = interrupt_when_busy(proc, str(lake), 2)
    assert rc == 130 and seconds < 20, (seconds, out)
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out
    assert out.splitlines()[-1] == "warclake: interrupted: stopping (press Ctrl-C again to force)"
    assert leftovers(str(lake)) == []
    assert len(os.listdir(lake / "files" / f"dump={DUMP}")) == 2


def test_a_second_ctrl_c_forces_run_out_at_once(tmp_path):
    from support.procs import session_members

    dump_dir = tmp_path / "dump"
    make_dump(str(dump_dir), files=3, pages_per_file=30, dump=DUMP, truncate_last=False)
    lake = tmp_path / "lake"
    proc = start("run", lake, dump_dir, None, "--workers", "2", "--no-report")   # its own temporary server
    files = os.path.join(lake, "files", f"dump={DUMP}")
    deadline = time.time() + 300
    try:
        while not (os.path.isdir(files) and len(os.listdir(files)) >= 2):
            assert proc.poll() is None and time.time() < deadline, proc.stdout.read()
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        t0 = time.time()
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130 and time.time() - t0 < 10, out
    assert "Traceback" not in out, out
    time.sleep(2)   # the temporary Prefect server ends with the run (parent-death signal)
    assert session_members(proc.pid) == {}

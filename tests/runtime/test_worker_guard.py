"""Extraction workers that die, hang or swell: real `warclake run` processes, a real killed
worker, and pages made to crash or hang by the test-only fault injector
(tasks/runtime/fault_injection.py)."""
import glob
import os
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq

from warclake.tasks.archive.reader import ArchiveReader
from warclake.tasks.extract.archive import extract_archive
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.lake.layout import Lake
from warclake.tasks.runtime.supervisor import RecordWatch
from warclake.tasks.sample_dump import make_dump

LANGS = "ja,en"


def run_cli(lake, dump_dir, tmp, *extra, fault=None, wait=True):
    env = {**os.environ, "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120", "TMPDIR": str(tmp)}
    env.pop("PREFECT_API_URL", None)
    env.pop("WARCLAKE_TEST_FAULT", None)
    if fault:
        env["WARCLAKE_TEST_FAULT"] = fault
    cmd = [sys.executable, "-m", "warclake.cli.main", "run", "--dump", "TEST-DUMP", "--lake", str(lake),
           "--langs", LANGS, "--no-report", *extra, str(dump_dir)]
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    if not wait:
        return proc
    out, _ = proc.communicate(timeout=400)
    return proc.returncode, out


def response_urls(path):
    with open(path, "rb") as fh:
        return [r.url for r in ArchiveReader(fh) if r.rec_type == "response"]


def ledger(lake, name):
    return pq.read_table(os.path.join(lake, "ledger", "dump=TEST-DUMP", name + ".parquet")).to_pylist()


def doc_ids(lake, name):
    t = pq.read_table(os.path.join(lake, "documents", "dump=TEST-DUMP", name + ".parquet"), columns=["docId", "url"])
    return dict(zip(t.column("url").to_pylist(), t.column("docId").to_pylist()))


def archives(dump_dir):
    return sorted(glob.glob(os.path.join(dump_dir, "*.warc.gz")))


def test_a_page_that_kills_its_worker_or_hangs_costs_that_page_only(tmp_path):
    dump_dir = tmp_path / "dump"
    make_dump(str(dump_dir), files=3, pages_per_file=20, dump="TEST-DUMP", truncate_last=False)
    a, b, c = archives(dump_dir)
    crash_url, hang_url, swell_url = response_urls(a)[7], response_urls(b)[3], response_urls(c)[5]
    reference = tmp_path / "reference"
    config = ExtractConfig.from_langs(LANGS)
    for path in (a, b, c):
        extract_archive(path, "TEST-DUMP", str(reference), config)

    lake = tmp_path / "lake"
    rc, out = run_cli(lake, dump_dir, tmp_path, "--workers", "2", "--record-seconds", "8",
                      "--worker-memory-mb", "1500", fault=f"crash:{crash_url},hang:{hang_url},swell:{swell_url}")
    assert rc == 0, out
    for path, url, outcome in ((a, crash_url, "worker_crashed"), (b, hang_url, "timed_out"),
                               (c, swell_url, "out_of_memory")):
        name = os.path.basename(path)
        rows = ledger(str(lake), name)
        assert [r["url"] for r in rows if r["outcome"] == outcome] == [url], (outcome, out)
        assert len(rows) == len(ledger(str(reference), name))  # every other record read
        expected = doc_ids(str(reference), name)
        expected.pop(url, None)
        assert doc_ids(str(lake), name) == expected         # one page lost, no other
        summary = Lake(str(lake)).read_summary("TEST-DUMP", name)
        assert summary["status"] == "salvaged" and summary["outcomes"][outcome] == 1
        assert outcome in summary["error"]

    # done: a second run leaves them alone
    rc, out = run_cli(lake, dump_dir, tmp_path, "--workers", "2")
    assert rc == 0 and "3 already done" in out, out


def _watch_files(tmp):
    """(pid, record offset) of each extraction worker at work, from its watch file."""
    found = []
    for path in glob.glob(os.path.join(tmp, ".warclake-watch.*.tmp")):
        try:
            watch = RecordWatch(path)
        except (OSError, ValueError):   # gone, or not written yet
            continue
        state = watch.read()
        watch.close()
        found.append((state.pid, state.offset))
    return found


def test_a_killed_worker_is_replaced_and_its_archive_redone_whole(tmp_path):
    dump_dir = tmp_path / "dump"
    make_dump(str(dump_dir), files=2, pages_per_file=30, dump="TEST-DUMP", truncate_last=False)
    a, b = archives(dump_dir)
    slow_url = response_urls(a)[5]
    lake = tmp_path / "lake"
    # The page hangs long enough for the test to kill its worker from outside, as the OOM
    # killer would; the retry hangs on it again until record_seconds gives it up.
    proc = run_cli(lake, dump_dir, tmp_path, "--workers", "1", "--record-seconds", "20",
                   fault=f"hang:{slow_url}", wait=False)
    try:
        deadline = time.time() + 240
        victim = None
        while time.time() < deadline and victim is None and proc.poll() is None:
            busy = [pid for pid, offset in _watch_files(tmp_path) if pid and offset >= 0]
            victim = busy[0] if busy else None
            time.sleep(0.1)
        assert victim, "no worker seen at work"
        time.sleep(0.5)
        os.kill(victim, signal.SIGKILL)
        out, _ = proc.communicate(timeout=400)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, out
    lake_ = Lake(str(lake))
    assert lake_.read_summary("TEST-DUMP", os.path.basename(b))["status"] == "complete"
    rows = ledger(str(lake), os.path.basename(a))
    # one death on the page was retried; the second attempt hung there until its time ran out
    assert [r["url"] for r in rows if r["outcome"] == "timed_out"] == [slow_url]
    assert "BrokenProcessPool" not in out and "documents, 0 failed" in out, out


def _run_hanging_on_a_page(tmp_path):
    """A `run` with one worker, stopped on a page that hangs; the run and its worker's pid."""
    dump_dir = tmp_path / "dump"
    make_dump(str(dump_dir), files=2, pages_per_file=20, dump="TEST-DUMP", truncate_last=False)
    slow_url = response_urls(archives(dump_dir)[0])[2]
    proc = run_cli(tmp_path / "lake", dump_dir, tmp_path, "--workers", "1", fault=f"hang:{slow_url}", wait=False)
    deadline = time.time() + 240
    while time.time() < deadline and not (busy := [pid for pid, offset in _watch_files(tmp_path) if offset >= 0]):
        if proc.poll() is not None:
            raise AssertionError(proc.stdout.read())
        time.sleep(0.1)
    assert busy, "no worker seen at work"
    return proc, busy


def _named_semaphores(pid):
    """The named POSIX semaphores a live process has mapped (``/dev/shm/sem.*``)."""
    with open(f"/proc/{pid}/maps") as fh:
        return {line.split()[-1] for line in fh if "/dev/shm/sem." in line}


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def test_a_run_and_its_workers_hold_no_named_semaphore_a_kill_could_leave_behind(tmp_path):
    # A process pool's queues are locked by named semaphores, which a process group killed
    # at once (run, workers and resource tracker) leaves in /dev/shm for ever. The workers
    # have pipes of their own instead: nothing named to leave.
    proc, workers = _run_hanging_on_a_page(tmp_path)
    try:
        assert {pid: _named_semaphores(pid) for pid in [proc.pid, *workers]} == \
            {pid: set() for pid in [proc.pid, *workers]}
    finally:
        _kill_group(proc)


def test_workers_of_a_run_killed_alone_exit(tmp_path):
    proc, workers = _run_hanging_on_a_page(tmp_path)
    try:
        os.kill(proc.pid, signal.SIGKILL)   # the run alone, as `kill -9 PID` does
        proc.wait(30)
        deadline = time.time() + 30
        while time.time() < deadline and any(os.path.exists(f"/proc/{pid}") for pid in workers):
            time.sleep(0.2)
        assert not [pid for pid in workers if os.path.exists(f"/proc/{pid}")], "workers outlived their run"
    finally:
        _kill_group(proc)   # anything of the group still alive

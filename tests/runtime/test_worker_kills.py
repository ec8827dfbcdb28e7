"""Extraction workers killed with SIGKILL at chosen moments cost nothing: real `warclake run`
and `warclake extract` processes, each worker stopped by the test-only fault injector
(tasks/runtime/fault_injection.py) before its first record, between two records, in the
middle of one and while it writes, killed there, and the archives checked against an
undisturbed extraction. And the watch through which a worker tells its parent where it is,
read while it is written and after a worker died in the middle of a write."""
from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

from warclake.tasks.archive.reader import ArchiveReader
from warclake.tasks.extract.archive import extract_archive
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.lake.layout import Lake
from warclake.tasks.runtime import fault_injection
from warclake.tasks.runtime.supervisor import NOTHING, RecordWatch
from warclake.tasks.sample_dump import make_dump

DUMP = "TEST-DUMP"
LANGS = "ja,en"
MOMENTS = ("stop-start", "stop-before", "stop-in", "stop-write")


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kills") / "dump"
    return make_dump(str(folder), files=4, pages_per_file=30, dump=DUMP, truncate_last=False)


@pytest.fixture(scope="module")
def undisturbed(dump, tmp_path_factory):
    lake = str(tmp_path_factory.mktemp("undisturbed") / "lake")
    for path in dump:
        extract_archive(path, DUMP, lake, ExtractConfig.from_langs(LANGS))
    return lake


def a_page(path, i):
    with open(path, "rb") as fh:
        return [r.url for r in ArchiveReader(fh) if r.rec_type == "response"][i]


def faults(archives) -> str:
    """A moment in each archive: before its first record, before a page's work (the records
    before it done), in the middle of a page's work, and between its outputs' publications."""
    first, second, third, fourth = archives
    name = os.path.basename
    return ",".join([f"stop-start:{name(first)}", f"stop-before:{a_page(second, 9)}",
                     f"stop-in:{a_page(third, 9)}", f"stop-write:{name(fourth)}"])


def kill_at_each_stop(cmd, archives, tmp_path, api=None):
    """Run ``cmd`` (reporting to Prefect's ``api``); each worker that stops, the test kills
    with SIGKILL. Returns the exit status, the output and the moments where a worker was killed."""
    stops = tmp_path / "stops"
    stops.mkdir()
    env = {**os.environ, fault_injection.ENV: faults(archives), fault_injection.STOPS: str(stops),
           "TMPDIR": str(tmp_path)}
    env.pop("PREFECT_API_URL", None)
    if api:
        env["PREFECT_API_URL"] = api
    proc = subprocess.Popen([sys.executable, "-m", "warclake.cli.main", *cmd], env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    killed = []
    try:
        deadline = time.time() + 400   # a bound for a hung run, not a measure
        while proc.poll() is None and time.time() < deadline:
            for moment in sorted(set(os.listdir(stops)) - set(killed)):
                if not moment.startswith("."):   # written whole: the pid of a worker waiting there
                    os.kill(int((stops / moment).read_text()), signal.SIGKILL)
                    killed.append(moment)
            time.sleep(0.05)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, out, killed


def rows(lake, kind, name):
    return pq.read_table(os.path.join(lake, kind, f"dump={DUMP}", name + ".parquet")).to_pylist()


def assert_as_undisturbed(lake, undisturbed, archives, tmp_path):
    for path in archives:
        name = os.path.basename(path)
        got, want = Lake(lake).read_summary(DUMP, name), Lake(undisturbed).read_summary(DUMP, name)
        assert (got["status"], got["error"], got["skipped"]) == ("complete", None, []), got
        assert {k: got[k] for k in ("records", "documents", "outcomes")} == \
            {k: want[k] for k in ("records", "documents", "outcomes")}
        assert rows(lake, "ledger", name) == rows(undisturbed, "ledger", name)
        assert rows(lake, "documents", name) == rows(undisturbed, "documents", name)
    left = [os.path.join(root, n) for root, _, names in os.walk(lake) for n in names if ".tmp" in n]
    assert left == []   # the killed workers' temporaries are gone too
    assert [n for n in os.listdir(tmp_path) if n.startswith(".warclake-watch")] == []


def test_run_with_workers_killed_at_each_moment_writes_what_an_undisturbed_run_writes(dump, undisturbed, tmp_path,
                                                                                    prefect_harness):
    from prefect.settings import PREFECT_API_URL

    lake = str(tmp_path / "lake")
    rc, out, killed = kill_at_each_stop(["run", "--dump", DUMP, "--lake", lake, "--langs", LANGS, "--workers", "2",
                                         "--no-report", os.path.dirname(dump[0])], dump, tmp_path,
                                        api=PREFECT_API_URL.value())
    assert rc == 0, out
    assert sorted(killed) == sorted(MOMENTS), out
    assert "4 extracted ({'complete': 4}), " in out and ", 0 failed" in out, out
    assert_as_undisturbed(lake, undisturbed, dump, tmp_path)


def test_extract_with_its_worker_killed_at_each_moment_writes_what_an_undisturbed_run_writes(
        dump, undisturbed, tmp_path):
    lake = str(tmp_path / "lake")
    rc, out, killed = kill_at_each_stop(["extract", "-q", "--dump", DUMP, "--lake", lake, "--langs", LANGS,
                                         os.path.dirname(dump[0])], dump, tmp_path)
    assert rc == 0, out
    assert sorted(killed) == sorted(MOMENTS), out
    assert "4 archives in" in out and ", 0 failed" in out, out
    assert_as_undisturbed(lake, undisturbed, dump, tmp_path)


# -- the watch -------------------------------------------------------------------------------

WRITES = 200_000


def write_states(path):
    """Record i at offset 1000 + i with i bytes read, then idle: generations 2i + 1 and 2i + 2."""
    watch = RecordWatch(path)
    for i in range(WRITES):
        watch.record(1000 + i, i)
        watch.idle(i)


def written(state) -> bool:
    """Whether ``state`` is one that write_states wrote (or none yet)."""
    if state == NOTHING:
        return True
    i, second = divmod(state.generation - 1, 2)
    if second:
        return (state.offset, state.bytes_read, state.started) == (-1, i, 0.0)
    return state.offset == 1000 + i and state.bytes_read == i and state.started > 0


def test_the_watch_read_while_it_is_written_gives_only_states_the_worker_wrote(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with RecordWatch.create() as watch:
        writer = multiprocessing.get_context("spawn").Process(target=write_states, args=(watch.path,))
        writer.start()
        seen, wrong, last = 0, [], 0
        while writer.is_alive() or seen == 0:
            state = watch.read()
            seen += 1
            if not written(state) or state.generation < last:
                wrong.append(state)
            last = state.generation
        writer.join()
        assert writer.exitcode == 0
        assert wrong == [], f"{len(wrong)} of {seen} reads"
        assert watch.read().generation == 2 * WRITES


@pytest.mark.parametrize("before", ["nothing yet", "idle", "on a record"])
def test_a_worker_killed_in_the_middle_of_a_write_leaves_the_state_before_it(tmp_path, monkeypatch, before):
    """Every point where a write of "on the record at 0" can be cut (its bytes written in order,
    over the slot's old bytes or over zeros) reads as the state before it or the one written,
    never as another: not as a record begun when the clock started."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with RecordWatch.create() as watch:
        if before != "nothing yet":
            watch.record(500, 10)
            watch.record(700, 20)
            if before == "idle":
                watch.idle(30)
        was = watch.read()
        old = watch._map[:]
        watch.record(0, 40)
        new = watch._map[:]
        now = watch.read()
        assert (now.offset, now.bytes_read) == (0, 40)
        changed = [i for i in range(len(new)) if new[i] != old[i]]
        half = len(new) // 2   # the file holds two slots; a write goes into one
        start, end = (0, half) if changed[0] < half else (half, len(new))
        assert changed[-1] < end
        zeros = bytes(len(new))
        for cut in range(start, end + 1):
            for under in (old, zeros):   # the slot's old bytes, or zero-filled first as struct.pack_into does
                watch._map[:] = old[:start] + new[start:cut] + under[cut:end] + old[end:]
                assert watch.read() in (was, now), (cut, watch.read())
        watch._map[:] = old[:start] + new[start:changed[-1]] + old[changed[-1]:]   # all but its last byte
        assert watch.read() == was

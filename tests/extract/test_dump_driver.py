"""The runs written once (tasks/extract/dump.py, tasks/corpus/stage.py) with runners of
their own: where the steps run changes nothing in the lake, and the run records, tells and
stops as its front ends rely on. No Prefect here."""
from __future__ import annotations

import filecmp
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.extract.dump import INTERRUPTED, InProcess, Notices, extract_step, run_dump
from warclake.tasks.lake.dump_lock import DumpLock, DumpLocked, DumpLockLost
from warclake.tasks.lake.layout import Lake
from warclake.tasks.sample_dump import make_dump

DUMP = "D"
CONFIG = ExtractConfig.from_langs("ja,en")


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    d = tmp_path_factory.mktemp("dump")
    return make_dump(str(d), files=3, pages_per_file=10, dump=DUMP, truncate_last=True)


class Told(Notices):
    """Every notice, in order."""

    def __init__(self):
        self.said = []

    def planned(self, run):
        self.said.append(("planned", len(run.plan), run.skipped))

    def started(self, item):
        self.said.append(("started", item.name))

    def failed(self, item, exc):
        self.said.append(("failed", item.name, type(exc).__name__))

    def finished(self, item, figures):
        self.said.append(("finished", item.name, figures and figures["status"]))


def threads(run, items):
    """A runner of its own: every archive's step at once on threads, in this process."""
    with ThreadPoolExecutor(4) as pool:
        futures = [(item, pool.submit(extract_step, item.input, item.name, run.dump, run.lake.url, run.config, 0))
                   for item in items]
        for item, fut in futures:
            try:
                yield item, fut.result()
            except OSError as exc:
                yield item, exc


def lake_files(lake: str) -> list[str]:
    return sorted(os.path.relpath(os.path.join(r, n), lake) for r, _, ns in os.walk(lake) for n in ns
                  if n.endswith(".parquet"))


def test_where_the_steps_run_changes_no_byte_of_the_lake(archives, tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    told = Told()
    run = run_dump(DUMP, archives, a, CONFIG, InProcess(), workers=0, notices=told)
    assert run_dump(DUMP, archives, b, CONFIG, threads, workers=0).summary() == run.summary()
    assert run.counts()["statuses"] == {"complete": 2, "salvaged": 1} and not run.failed
    files = lake_files(a)
    assert files and files == lake_files(b)
    assert all(filecmp.cmp(os.path.join(a, f), os.path.join(b, f), shallow=False) for f in files)
    statuses = {r["warc_file"]: r["status"] for r in run.results}
    assert told.said == [("planned", 3, 0)] + [e for p in archives for n in [os.path.basename(p)]
                                               for e in (("started", n), ("finished", n, statuses[n]))]
    again = run_dump(DUMP, archives, a, CONFIG, InProcess(), workers=0)   # done: nothing to do
    assert again.skipped == 3 and again.results == [] and again.summary().startswith(f"{DUMP}: 3 archives, 3 already")


def test_a_step_that_fails_for_good_is_recorded_and_the_run_goes_on(archives, tmp_path):
    lake = str(tmp_path / "lake")
    gone = archives[1]

    def one_fails(run, items):
        for item in items:
            if item.input == gone:
                yield item, ConnectionResetError("the store went away")
            else:
                yield item, extract_step(item.input, item.name, run.dump, run.lake.url, run.config, 0)

    told = Told()
    run = run_dump(DUMP, archives, lake, CONFIG, one_fails, workers=0, notices=told)
    name = os.path.basename(gone)
    assert run.failed == [name] and run.failures == {name: "ConnectionResetError: the store went away"}
    assert ("failed", name, "ConnectionResetError") in told.said and ("finished", name, None) in told.said
    summary = Lake(lake).read_summary(DUMP, name)
    assert summary["status"] == "failed" and summary["error"] == "ConnectionResetError: the store went away"
    assert run.summary().endswith(f"2 extracted ({{'complete': 1, 'salvaged': 1}}), {run.counts()['documents']} "
                                  f"documents, 1 failed ({name})")
    assert run_dump(DUMP, archives, lake, CONFIG, InProcess(), workers=0).todo[0].reason == "failed"   # tried again


def test_an_interrupted_step_is_neither_done_nor_failed(archives, tmp_path):
    lake = str(tmp_path / "lake")

    def interrupted(run, items):
        for item in items:
            yield item, {"warc_file": item.name, "status": INTERRUPTED}

    run = run_dump(DUMP, archives, lake, CONFIG, interrupted, workers=0)
    assert run.results == [] and run.failures == {} and not run.failed
    assert not os.path.exists(os.path.join(lake, "files", f"dump={DUMP}"))


def test_a_run_whose_lock_is_taken_over_stops_before_its_next_archive(archives, tmp_path, monkeypatch):
    from warclake.tasks.extract import dump as driver

    locks = []

    class Seen(DumpLock):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            locks.append(self)

    monkeypatch.setattr(driver, "DumpLock", Seen)
    started = []

    def taken_over(run, items):
        for item in items:
            started.append(item.name)
            locks[0].lost = "dump D: the lock was taken over by another run"   # what its renewal finds
            yield item, extract_step(item.input, item.name, run.dump, run.lake.url, run.config, 0)

    with pytest.raises(DumpLockLost, match="taken over"):
        run_dump(DUMP, archives, str(tmp_path / "lake"), CONFIG, taken_over, workers=0)
    assert started == [os.path.basename(archives[0])]


def test_the_lock_is_held_for_the_run_and_released_after(archives, tmp_path):
    lake = str(tmp_path / "lake")
    seen = []

    def look(run, items):
        for item in items:
            with pytest.raises(DumpLocked):
                DumpLock(lake, DUMP).acquire()
            seen.append(item.name)
            yield item, extract_step(item.input, item.name, run.dump, run.lake.url, run.config, 0)

    run_dump(DUMP, archives[:1], lake, CONFIG, look, workers=0, force=True)
    assert seen == [os.path.basename(archives[0])]
    DumpLock(lake, DUMP).acquire().release()   # free again


def test_the_corpus_stage_s_runner_sees_each_dump_s_steps_in_order(tmp_path):
    from support.corpus_lake import known_lake
    from warclake.tasks.corpus import stage
    from warclake.tasks.corpus.checks import prepare

    lake = str(tmp_path / "lake")
    known_lake(lake, DUMP)
    calls = []

    class Recording(stage.InProcess):
        def sign(self, lake, archives, sig):
            for job, res in super().sign(lake, archives, sig):
                calls.append(("sign", job[1]))
                yield job, res

        def step(self, name, ctx):
            calls.append((name, ctx.dump))
            return super().step(name, ctx)

    opts = stage.StageOptions()
    counts = stage.finish(lake, *prepare(lake, None, opts.decide), opts, report=False, runner=Recording())
    signed = [c for c in calls if c[0] == "sign"]
    assert counts["signed"] == len(signed) == 2
    assert calls[len(signed):] == [(name, DUMP) for name in stage.STEPS]
    assert counts["dumps"][DUMP]["documents"] > 0

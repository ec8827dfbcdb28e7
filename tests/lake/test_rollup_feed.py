"""A run keeps the dump's rollup near the lake as archives finish (tasks/lake/rollup_feed.py),
so the report at the end of a long run reads only the last archives; what it reports is the
same as a rollup made at the end alone."""
from __future__ import annotations

from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.extract.dump import InProcess, run_dump
from warclake.tasks.lake import rollup, rollup_feed
from warclake.tasks.reporting import run_reports
from warclake.tasks.sample_dump import make_dump

DUMP = "CC-MAIN-2099-01"


def test_a_run_refreshes_the_rollup_as_archives_finish(tmp_path, monkeypatch):
    paths = make_dump(str(tmp_path / "in"), files=7, pages_per_file=4, dump=DUMP, truncate_last=False)
    monkeypatch.setattr(rollup_feed, "ROLLUP_EVERY", 3)
    lake = tmp_path / "lake"
    run = run_dump(DUMP, paths, str(lake), ExtractConfig.from_langs("all"), InProcess(), workers=0)
    assert len(run.results) == 7 and not run.failures
    folder = rollup.lake_folder(str(lake), DUMP)
    with rollup.locked([folder], exclusive=False):
        during = rollup.state(folder, DUMP)
    # refreshed during the run (after 3 and 6 archives, one at a time; a refresh lists the
    # lake when it starts, so it may find the next archive finished too)
    assert 3 <= during.archives <= 7
    at_end = rollup.refresh(str(lake), DUMP)
    assert at_end.archives == 7 and at_end.rolled == 7 - during.archives
    fed = run_reports(str(lake), DUMP)

    # the same figures as a rollup made in one go at the end
    rollup_folder = lake / "rollup"
    for f in sorted(rollup_folder.rglob("*"), reverse=True):
        f.unlink() if f.is_file() else f.rmdir()
    rollup_folder.rmdir()
    once = run_reports(str(lake), DUMP)
    assert {k: v.to_dicts() for k, v in fed.items()} == {k: v.to_dicts() for k, v in once.items()}


def test_no_refresh_on_a_run_with_nothing_to_do(tmp_path, monkeypatch):
    paths = make_dump(str(tmp_path / "in"), files=2, pages_per_file=3, dump=DUMP, truncate_last=False)
    monkeypatch.setattr(rollup_feed, "ROLLUP_EVERY", 1)
    lake = tmp_path / "lake"
    run_dump(DUMP, paths, str(lake), ExtractConfig.from_langs("all"), InProcess(), workers=0)
    folder = rollup.lake_folder(str(lake), DUMP)
    before = sorted(p.name for p in (lake / "rollup").rglob("*.parquet"))
    assert before   # a refresh ran during the first run
    mtime = (lake / "rollup" / f"dump={DUMP}" / rollup.ARCHIVES).stat().st_mtime_ns
    again = run_dump(DUMP, paths, str(lake), ExtractConfig.from_langs("all"), InProcess(), workers=0)
    assert not again.todo
    assert (lake / "rollup" / f"dump={DUMP}" / rollup.ARCHIVES).stat().st_mtime_ns == mtime
    assert folder.endswith(f"dump={DUMP}")

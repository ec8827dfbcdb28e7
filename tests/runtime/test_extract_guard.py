"""`warclake extract` watches its worker as `run` does: a page that hangs or kills its worker
costs that page (real `warclake extract` processes, pages made to hang or crash by the
test-only fault injector, tasks/runtime/fault_injection.py). Worker and engine options that make no
sense, for `extract` and `corpus` alike, end with one line and exit status 2 before any work."""
from __future__ import annotations

import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from warclake.cli.main import main
from warclake.tasks.archive.reader import ArchiveReader
from warclake.tasks.extract.archive import extract_archive
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.lake.layout import Lake
from warclake.tasks.sample_dump import make_dump

DUMP = "TEST-DUMP"
LANGS = "ja,en"


def response_urls(path):
    with open(path, "rb") as fh:
        return [r.url for r in ArchiveReader(fh) if r.rec_type == "response"]


def table(lake, kind, name, columns=None):
    return pq.read_table(os.path.join(lake, kind, f"dump={DUMP}", name + ".parquet"), columns=columns).to_pylist()


def test_a_page_that_hangs_or_kills_the_worker_of_extract_costs_that_page(tmp_path):
    dump_dir = tmp_path / "dump"
    a, b = make_dump(str(dump_dir), files=2, pages_per_file=12, dump=DUMP, truncate_last=False)
    crash_url, hang_url = response_urls(a)[4], response_urls(b)[2]
    reference = str(tmp_path / "reference")
    for path in (a, b):
        extract_archive(path, DUMP, reference, ExtractConfig.from_langs(LANGS))

    lake = str(tmp_path / "lake")
    env = {**os.environ, "WARCLAKE_TEST_FAULT": f"crash:{crash_url},hang:{hang_url}", "TMPDIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "warclake", "extract", "-q", "--dump", DUMP, "--lake", lake,
                           "--langs", LANGS, "--record-seconds", "5", str(dump_dir)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for path, url, outcome in ((a, crash_url, "worker_crashed"), (b, hang_url, "timed_out")):
        name = os.path.basename(path)
        rows = table(lake, "ledger", name)
        assert [r["url"] for r in rows if r["outcome"] == outcome] == [url], (outcome, proc.stdout)
        assert len(rows) == len(table(reference, "ledger", name))   # every other record read
        expected = {r["url"]: r["docId"] for r in table(reference, "documents", name, ["url", "docId"])}
        expected.pop(url, None)
        assert {r["url"]: r["docId"] for r in table(lake, "documents", name, ["url", "docId"])} == expected
        summary = Lake(lake).read_summary(DUMP, name)
        assert summary["status"] == "salvaged" and summary["outcomes"][outcome] == 1
    assert f"{os.path.basename(b)}: salvaged" in proc.stdout


@pytest.mark.parametrize("option, said", [
    (["--workers", "2"], "--workers 2: extract reads one archive at a time"),
    (["--workers", "-1"], "--workers -1: extract reads one archive at a time"),
    (["--record-seconds", "0"], "record_seconds 0.0 is not a positive number"),
    (["--worker-memory-mb", "-5"], "worker_memory_mb -5 is not a positive number"),
])
def test_extract_refuses_worker_options_that_make_no_sense_with_one_line(tmp_path, capsys, option, said):
    archive = make_dump(str(tmp_path / "d"), files=1, pages_per_file=3, truncate_last=False)[0]
    lake = tmp_path / "lake"
    rc = main(["extract", "-q", "--dump", DUMP, "--lake", str(lake), *option, archive])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and said in err, err
    assert not (lake / "files").exists()   # nothing was extracted


@pytest.mark.parametrize("option, said", [
    (["--threads", "0"], "threads 0 is not a positive number"),
    (["--threads", "-2"], "threads -2 is not a positive number"),
    (["--memory-limit", "banana"], "memory limit 'banana' is not a size such as 2GB"),
    (["--memory-limit", "0"], "memory limit '0' is not a size such as 2GB"),
    (["--flow", "--threads", "-2"], "threads -2 is not a positive number"),
    (["--flow", "--memory-limit", "lots"], "memory limit 'lots' is not a size such as 2GB"),
])
def test_corpus_refuses_engine_options_that_make_no_sense_with_one_line(tmp_path, capsys, option, said):
    from support.corpus_lake import known_lake

    lake = str(tmp_path / "lake")
    known_lake(lake, "CC-MAIN-2024-18")
    rc = main(["corpus", "--lake", lake, "--no-report", "-q", *option])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and said in err, err
    assert not os.path.exists(os.path.join(lake, "corpus"))   # before any work (and before Prefect)

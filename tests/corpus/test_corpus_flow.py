"""The corpus-dump flow as real Prefect runs: the same decisions as the library, and as
the extraction's follow-up (``warclake run --corpus``)."""
import glob
import os
import shutil

import pyarrow.parquet as pq
import pytest

from support.corpus_lake import known_lake
from support.corpus_runs import DUMP, decision_bytes, decisions, run
from warclake.flows.corpus_flow import corpus_flow

pytestmark = pytest.mark.usefixtures("prefect_harness")


def test_flow_gives_the_library_s_decisions(tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    known_lake(a, DUMP)
    shutil.copytree(a, b)
    state = corpus_flow(lake=a, return_state=True)
    assert state.is_completed(), state.message
    counts = state.result()
    assert counts["signed"] == 2 and counts["dumps"][DUMP]["kept"] == 11
    assert os.path.exists(counts["report"])
    run(b)
    assert decision_bytes(a) == decision_bytes(b)
    again = corpus_flow(lake=a, return_state=True).result()
    assert again["signed"] == 0


def test_flow_with_a_threshold_out_of_range_fails_with_the_reason(tmp_path):
    a = str(tmp_path / "a")
    known_lake(a, DUMP)
    state = corpus_flow(lake=a, thresholds={"similarity": 2.0}, return_state=True)
    assert state.is_failed() and "similarity" in str(state.result(raise_on_failure=False))


def test_run_with_corpus_extracts_then_judges_the_dump(tmp_path):
    from warclake.cli.main import main
    from warclake.tasks.sample_dump import make_dump

    dump_dir, lake = tmp_path / "dump", tmp_path / "lake"
    make_dump(str(dump_dir), files=2, pages_per_file=12, dump="TEST-DUMP")
    rc = main(["run", "--dump", "TEST-DUMP", "--lake", str(lake), "--langs", "ja,en", "--workers", "0",
               "--no-report", "--corpus", "-q", str(dump_dir)])
    assert rc == 0
    dec = decisions(str(lake), "TEST-DUMP")
    docs = sum(pq.read_metadata(f).num_rows for f in glob.glob(str(lake / "documents" / "dump=TEST-DUMP" / "*.parquet")))
    assert len(dec) == docs > 0


def test_run_with_corpus_takes_the_corpus_stage_s_options(tmp_path):
    from warclake.cli.main import main
    from warclake.tasks.sample_dump import make_dump

    dump_dir, lake = tmp_path / "dump", tmp_path / "lake"
    make_dump(str(dump_dir), files=1, pages_per_file=12, dump="TEST-DUMP")
    args = ["run", "--dump", "TEST-DUMP", "--lake", str(lake), "--langs", "ja,en", "--workers", "0",
            "--no-report", "-q", str(dump_dir)]
    # a threshold no document meets: every document is dropped by that rule
    assert main(args + ["--corpus", "--quality", "gopher_min_words=1000000"]) == 0
    dec = decisions(str(lake), "TEST-DUMP")
    assert dec and not any(r["kept"] for r in dec.values())
    assert all(any(f["rule"] == "gopher_min_words" for f in r["rules"]) for r in dec.values())


@pytest.mark.parametrize("extra, said", [
    (["--quality", "gopher_min_words=5"], "need --corpus"),
    (["--corpus", "--quality", "no_such_rule=1"], "no_such_rule"),
    (["--corpus", "--similarity", "2"], "similarity"),
    (["--corpus", "--fasttext-model", "missing.bin"], "no such file"),
])
def test_run_refuses_bad_corpus_options_before_extracting(tmp_path, capsys, extra, said):
    from warclake.cli.main import main

    lake = tmp_path / "lake"
    rc = main(["run", "--dump", "TEST-DUMP", "--lake", str(lake), "--workers", "0", "-q",
               str(tmp_path / "nothing.warc.gz")] + extra)
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0]
    assert not lake.exists()

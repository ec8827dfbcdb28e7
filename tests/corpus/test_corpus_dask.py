"""The corpus-dump flow on real Dask worker processes (``warclake corpus --flow --dask``):
the library's decisions byte for byte, with the lake on disk and in an S3-compatible store."""
from __future__ import annotations

import os
import shutil

import pytest

from support.corpus_lake import known_lake, write_archive
from support.corpus_runs import DUMP, decision_bytes, judged_known_lake, run
from support.dask_cluster import two_worker_processes
from support.s3_lake import remote_decision_bytes, s3, upload_lake  # noqa: F401  (s3 is a fixture)

pytestmark = pytest.mark.usefixtures("prefect_harness")


@pytest.fixture(scope="module")
def cluster(prefect_harness, s3):  # noqa: F811
    with two_worker_processes() as (c, client):
        yield {"address": c.scheduler_address, "client": client}


def executed(client) -> dict[str, int]:
    """Tasks each worker process has run so far."""
    return client.run(lambda dask_worker: dask_worker.state.executed_count)


@pytest.fixture(scope="module")
def lakes(tmp_path_factory):
    """The known lake untouched, and its decisions from the library run without Prefect."""
    return judged_known_lake(tmp_path_factory.mktemp("lakes"))


def test_cli_flow_on_dask_worker_processes_matches_the_library(cluster, lakes, tmp_path, capsys):
    from warclake.cli.main import main

    lake = str(tmp_path / "lake")
    shutil.copytree(lakes["pristine"], lake)
    before = executed(cluster["client"])
    rc = main(["corpus", "--lake", lake, "--flow", "--dask", cluster["address"], "--no-report"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert f"{DUMP}: 11 of 14 documents kept, 10 paragraphs dropped" in out.out
    after = executed(cluster["client"])
    ran = {w: after[w] - before.get(w, 0) for w in after}
    # 2 archives, 8 partitions of 3 global steps, the dump's document decisions
    assert sum(ran.values()) >= 2 + 3 * 8 + 1 and all(n > 0 for n in ran.values()), ran
    assert decision_bytes(lake) == lakes["decisions"]


def test_dask_with_the_lake_in_s3(cluster, lakes, s3, tmp_path, capsys):  # noqa: F811
    from warclake.cli.main import main

    lake = upload_lake(s3, lakes["pristine"], "dask-lake")
    before = sum(executed(cluster["client"]).values())
    # --dask alone runs the flow
    rc = main(["corpus", "--lake", lake, "--dask", cluster["address"], "--report-dir", str(tmp_path / "report")])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert f"{DUMP}: 11 of 14 documents kept" in out.out
    assert sum(executed(cluster["client"]).values()) - before >= 2 + 3 * 8 + 1
    assert remote_decision_bytes(s3["fs"], lake) == lakes["decisions"]
    assert "exact_duplicate" in (tmp_path / "report" / "corpus.md").read_text()


def test_flow_bad_input_is_one_line_and_exit_2(cluster, tmp_path, capsys):
    """Summaries are read once, in the flow, whose Failed state the command prints as its
    last line; what needs no summary is refused before Prefect starts, in one line."""
    from warclake.cli.main import main
    from warclake.tasks.lake.dump_lock import DumpLock

    old = str(tmp_path / "old")
    write_archive(old, DUMP, "a.warc.gz", [{"docId": "x", "url": "https://x.org/", "text": "p\x1chello"}],
                  schema_version="2")
    rc = main(["corpus", "--lake", old, "--flow", "--dask", cluster["address"], "--no-report"])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert rc == 2 and last.startswith("warclake: error: ") and "schema version 2" in last
    assert not os.path.exists(os.path.join(old, "corpus", "decisions"))

    lake = str(tmp_path / "lake")
    known_lake(lake, DUMP)
    with DumpLock(lake, DUMP):   # an extraction of the dump still running
        rc = main(["corpus", "--lake", lake, "--flow", "--dask", cluster["address"], "--no-report"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "being written" in err[0]
    for args, words in ((["--lake", str(tmp_path / "none")], "no lake at"),
                        (["--lake", lake, "--similarity", "2"], "similarity=2.0 out of range"),
                        (["--lake", lake, "--dask", "tcp://127.0.0.1:9"], "tcp://127.0.0.1:9")):
        rc = main(["corpus", *args, "--flow", "--no-report"])
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2 and len(err) == 1 and words in err[0], (args, err)


def test_an_extraction_on_dask_is_followed_by_the_corpus_stage_on_that_cluster(cluster, tmp_path):
    """``extract-dump`` with ``corpus=True`` (``warclake run --corpus``, ``corpus = true`` in a
    deployment) judges its dump after extracting it, its corpus tasks on the same cluster."""
    from prefect_dask import DaskTaskRunner

    from warclake.flows.dump_flow import extract_dump
    from warclake.tasks.sample_dump import make_dump

    make_dump(str(tmp_path / "dump"), files=2, pages_per_file=12, dump="TEST-DUMP")
    lake = str(tmp_path / "lake")
    before = executed(cluster["client"])
    on_dask = extract_dump.with_options(task_runner=DaskTaskRunner(address=cluster["address"]))
    state = on_dask(dump="TEST-DUMP", inputs=[str(tmp_path / "dump")], lake=lake, langs="ja,en", workers=0,
                    report=False, corpus=True, return_state=True)
    assert state.is_completed(), state.message
    assert "2 extracted" in state.message and "; corpus: TEST-DUMP: " in state.message
    after = executed(cluster["client"])
    # 2 extractions (each signs its archive: corpus_signatures is on with corpus), then
    # 3 x 8 partition steps and the document decisions
    assert sum(after[w] - before.get(w, 0) for w in after) >= 2 + 3 * 8 + 1
    # the library, run on a copy of the extracted lake, decides the same bytes
    copy = str(tmp_path / "copy")
    shutil.copytree(lake, copy, ignore=shutil.ignore_patterns("corpus"))
    run(copy)
    assert decision_bytes(lake) == decision_bytes(copy) and decision_bytes(lake)

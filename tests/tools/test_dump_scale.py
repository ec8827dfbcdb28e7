"""The dump-scale benchmark (tools/measure/dump_scale.py) on a small dump: inputs over HTTP,
the lake on the S3 server, the real ``warclake run`` twice, ``report`` and ``sql``; the
figures it reports agree with each other and with what the runs say."""
import json

import pytest

from tools.measure import dump_scale

pytestmark = pytest.mark.slow   # four processes that start Prefect, and an S3 server
ARCHIVES = 20


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    pytest.importorskip("moto.server")
    pytest.importorskip("s3fs")
    work = tmp_path_factory.mktemp("dump-scale")
    out = work / "figures.json"
    assert dump_scale.main(["--archives", str(ARCHIVES), "--remote", "--latency-ms", "1", "--work", str(work),
                            "--json", str(out), "--every", "0.1"]) == 0
    [r] = json.loads(out.read_text())
    return r


def test_the_run_extracts_every_archive_and_the_rerun_none(figures):
    run, rerun = figures["run"], figures["rerun"]
    assert run["status"] == 0 and rerun["status"] == 0
    assert (run["archives"], run["already_done"], run["submitted"]) == (ARCHIVES, 0, ARCHIVES)
    assert (rerun["archives"], rerun["already_done"]) == (ARCHIVES, ARCHIVES)
    assert run["archives_logged"] == ARCHIVES and rerun["archive_lines"] == 0


def test_task_runs_recorded_are_at_most_those_submitted(figures):
    recorded = sum(figures["run"]["task_runs"].values())
    assert 0 < recorded <= figures["run"]["submitted"]


def test_memory_and_cpu_are_measured_for_every_process(figures):
    run = figures["run"]
    for role in ("flow", "server", "workers", "s3 server"):
        assert run["peak_rss"][role] > 0, role
    for step in ("rerun", "report", "sql"):
        assert figures[step]["peak_rss"]["flow"] > 0 and figures[step]["cpu"] > 0, step
    # the phases cut at the log's lines follow one another and cover the run
    assert [p["phase"] for p in run["phases"]] == ["start", "plan", "extraction", "report", "finish"]
    assert sum(p["wall"] for p in run["phases"]) == pytest.approx(run["wall"], abs=1.0)
    assert run["per_archive_ms"]["cpu"] > 0


def test_remote_requests_are_counted(figures):
    first, rerun = figures["run"]["requests"], figures["rerun"]["requests"]
    assert first["http"].get("GET", 0) >= ARCHIVES   # every archive read over HTTP at least once
    assert first["s3"].get("PUT", 0) >= ARCHIVES     # and its files written to the lake
    assert sum(rerun["http"].values()) + sum(rerun["s3"].values()) > 0   # a re-run lists, at least
    assert figures["sql"]["requests"]["s3"]


def test_the_query_counts_the_documents_the_run_wrote(figures):
    documents = int(figures["run"]["final"].split(" documents")[0].rsplit(" ", 1)[1].replace(",", ""))
    assert figures["sql"]["answer"] == [str(documents)]


def test_the_table_row_shows_the_figures(figures):
    line = dump_scale.row(figures)
    assert line.startswith(f"| {ARCHIVES} | http / s3 (1") and line.count("|") == len(dump_scale.COLUMNS) + 1

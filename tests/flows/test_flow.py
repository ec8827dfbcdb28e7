"""Real Prefect flow runs over generated dumps: incremental, changed input, truncation, retries, remote."""
import os

import pyarrow.parquet as pq
import pytest

from support.http_server import LocalHTTPServer
from warclake.flows.dump_flow import extract_dump
from warclake.tasks.sample_dump import make_dump

pytestmark = pytest.mark.usefixtures("prefect_harness")

LANGS = "ja,en"


def run(dump_dir_or_inputs, lake, **kw):
    inputs = dump_dir_or_inputs if isinstance(dump_dir_or_inputs, list) else [dump_dir_or_inputs]
    kw.setdefault("workers", 0)
    kw.setdefault("report", False)
    return extract_dump(dump="TEST-DUMP", inputs=inputs, lake=str(lake), langs=LANGS, return_state=True, **kw)


def data(state) -> dict:
    """The counts the flow returns with its final state (also for a Failed state)."""
    res = state.result(raise_on_failure=False)
    if isinstance(res, Exception):
        return getattr(res, "counts", {})
    return res if isinstance(res, dict) else {}


def artifact_of(state, kind: str):
    """The data of the flow run's artifact of one type (progress, table, markdown)."""
    import json

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    with get_client(sync_client=True) as client:
        arts = client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[state.state_details.flow_run_id])))
    (art,) = [a for a in arts if a.type == kind]
    return json.loads(art.data) if kind == "table" and isinstance(art.data, str) else art.data


def progress_of(state) -> float:
    """The progress artifact the flow run keeps for the UI."""
    return float(artifact_of(state, "progress"))


def doc_ids(lake):
    d = os.path.join(lake, "documents", "dump=TEST-DUMP")
    ids = []
    for name in sorted(os.listdir(d)):
        if name.endswith(".parquet"):
            ids.extend(pq.read_table(os.path.join(d, name), columns=["docId"]).column("docId").to_pylist())
    return ids


@pytest.fixture
def dump(tmp_path):
    d = tmp_path / "dump"
    make_dump(str(d), files=3, pages_per_file=15, dump="TEST-DUMP", truncate_last=True)
    return d


def test_rerun_does_nothing_and_changed_input_is_redone(dump, tmp_path):
    lake = tmp_path / "lake"
    s1 = run(str(dump), lake)
    assert s1.is_completed(), s1.message
    assert data(s1)["extracted"] == 3 and data(s1)["statuses"] == {"complete": 2, "salvaged": 1}
    first = doc_ids(lake)
    assert first and len(first) == len(set(first))

    s2 = run(str(dump), lake)
    assert s2.is_completed()
    assert data(s2)["extracted"] == 0 and data(s2)["skipped"] == 3
    assert doc_ids(lake) == first

    archive = sorted(p for p in os.listdir(dump) if p.endswith(".warc.gz"))[0]
    st = os.stat(dump / archive)
    os.utime(dump / archive, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    s3 = run(str(dump), lake)
    assert data(s3)["extracted"] == 1 and data(s3)["skipped"] == 2
    assert sorted(doc_ids(lake)) == sorted(first)


def test_deleted_output_is_redone_even_though_prefect_ran_it(dump, tmp_path):
    lake = tmp_path / "lake"
    run(str(dump), lake)
    name = sorted(os.listdir(lake / "files" / "dump=TEST-DUMP"))[0]
    os.unlink(lake / "files" / "dump=TEST-DUMP" / name)
    s = run(str(dump), lake)
    assert data(s)["extracted"] == 1


def test_config_change_redoes_everything(dump, tmp_path):
    lake = tmp_path / "lake"
    run(str(dump), lake)
    s = run(str(dump), lake, boilerplate="justext")
    assert data(s)["extracted"] == 3


def test_truncated_archive_is_salvaged_once_not_retried(dump, tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    lake = tmp_path / "lake"
    last = sorted(p for p in os.listdir(dump) if p.endswith(".warc.gz"))[-1]
    state = run([str(dump / last)], lake)
    assert state.is_completed() and data(state)["statuses"] == {"salvaged": 1}
    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[state.state_details.flow_run_id])))
    extract_runs = [r for r in runs if r.name.startswith("extract ")]
    assert len(extract_runs) == 1 and extract_runs[0].run_count == 1


def test_remote_inputs_from_paths_listing_and_transient_errors_are_retried(dump, tmp_path):
    lake = tmp_path / "lake"
    with LocalHTTPServer(str(dump)) as srv:
        srv.fail_next(3)  # the first requests get 503: a retry must get through
        state = run([f"{srv.url}/warc.paths.gz"], lake, retry_delays=[0.2, 0.5, 1.0, 1.0])
        assert state.is_completed(), state.message
        assert data(state)["extracted"] == 3
    local_lake = tmp_path / "local"
    run(str(dump), local_lake)
    assert sorted(doc_ids(lake)) == sorted(doc_ids(local_lake))


def test_a_dropped_connection_without_range_support_is_retried_by_the_flow_not_salvaged(dump, tmp_path):
    from tools.faults.server import FaultServer

    names = sorted(p for p in os.listdir(dump) if p.endswith(".warc.gz"))
    with FaultServer(str(dump), fault="drop", ranges=False, times=2, max_seconds=300) as srv:
        state = run([f"{srv.url}/{n}" for n in names], tmp_path / "lake", net_timeout=0.5,
                    retry_delays=[0.1, 0.1, 0.1])
    assert state.is_completed(), state.message
    local = run(str(dump), tmp_path / "local")
    assert data(state)["statuses"] == data(local)["statuses"] == {"complete": 2, "salvaged": 1}
    assert sorted(doc_ids(tmp_path / "lake")) == sorted(doc_ids(tmp_path / "local"))


def test_a_second_run_of_a_dump_is_refused_while_another_holds_it(dump, tmp_path):
    import json

    from warclake.tasks.lake.owners import host

    lake = tmp_path / "lake"
    (lake / "locks").mkdir(parents=True)
    (lake / "locks" / "dump=TEST-DUMP.lock").write_text(json.dumps({"host": host(), "pid": os.getpid(),
                                                                    "started": "2026-01-01T00:00:00+00:00"}))
    state = run(str(dump), lake)
    assert state.is_failed() and "being written" in state.message and f"pid {os.getpid()}" in state.message
    assert not (lake / "files").exists()


def test_unreachable_input_fails_the_flow_with_a_message(tmp_path):
    lake = tmp_path / "lake"
    with LocalHTTPServer(str(tmp_path)) as srv:
        url = srv.url
    state = run([f"{url}/gone.warc.gz"], lake, retry_delays=[0.1])
    assert state.is_failed()
    assert "1 failed" in state.message
    assert data(state)["failed"] and data(state)["extracted"] == 0


def test_missing_local_input_is_a_clear_error(tmp_path):
    state = run([str(tmp_path / "nope.warc.gz")], tmp_path / "lake")
    assert state.is_failed()
    assert "does not exist" in state.message and "nope.warc.gz" in state.message


def test_a_vanished_archive_is_counted_failed_everywhere_then_redone(tmp_path):
    """The lake's summary, the report, the returned counts and the final state agree."""
    from warclake.tasks.lake.layout import Lake
    from warclake.tasks.reporting import run_reports

    dump_dir = tmp_path / "dump"
    paths = make_dump(str(dump_dir), files=3, pages_per_file=10, dump="TEST-DUMP", truncate_last=False)
    gone = paths[1]
    kept = open(gone, "rb").read()
    os.unlink(gone)  # listed in warc.paths.gz, gone from the disk
    lake = tmp_path / "lake"
    state = run(str(dump_dir / "warc.paths.gz"), lake, report=True, report_dir=str(tmp_path / "report"))
    name = os.path.basename(gone)
    assert state.is_failed()
    assert "2 extracted" in state.message and "1 failed" in state.message and name in state.message
    assert data(state)["failed"] == [name] and name in data(state)["errors"]
    summary = Lake(str(lake)).read_summary("TEST-DUMP", name)
    assert summary["status"] == "failed" and "FileNotFoundError" in summary["error"]
    per_dump = run_reports(str(lake), "TEST-DUMP")["documents_per_dump"].to_dicts()
    assert per_dump[0]["files"] == 3 and per_dump[0]["failed"] == 1
    assert "failed" in (tmp_path / "report" / "report.md").read_text()
    # the UI's progress artifact: two of three archives extracted, never 100 with one failed
    assert abs(progress_of(state) - 200 / 3) < 0.01
    (row,) = artifact_of(state, "table")   # the report's table artifact counts it too
    assert row["files"] == 3 and row["failed"] == 1

    with open(gone, "wb") as fh:  # back again: only that archive is extracted
        fh.write(kept)
    again = run(str(dump_dir / "warc.paths.gz"), lake)
    assert again.is_completed(), again.message
    assert data(again)["skipped"] == 2 and data(again)["extracted"] == 1
    assert Lake(str(lake)).read_summary("TEST-DUMP", name)["status"] == "complete"


def test_killed_run_then_rerun_gives_exactly_the_uninterrupted_documents(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    dump_dir = tmp_path / "dump"
    make_dump(str(dump_dir), files=8, pages_per_file=150, dump="TEST-DUMP", truncate_last=True)
    lake = tmp_path / "lake"
    files_dir = lake / "files" / "dump=TEST-DUMP"
    cmd = [sys.executable, "-m", "warclake.cli.main", "run", "--dump", "TEST-DUMP", "--lake", str(lake), "--langs", LANGS,
           "--workers", "1", "--max-in-flight", "1", "--no-report", str(dump_dir)]
    env = {**os.environ, "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120"}
    env.pop("PREFECT_API_URL", None)  # its own temporary server, as a user's run would have
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 240
        while time.time() < deadline and proc.poll() is None:
            if files_dir.is_dir() and len(os.listdir(files_dir)) >= 2:
                break
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)  # the whole run, worker processes included
        proc.wait(30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    done_at_kill = len([n for n in os.listdir(files_dir) if n.endswith(".json")])
    assert 1 <= done_at_kill < 8, "the run must be killed part-way for this test to mean anything"

    state = run(str(dump_dir), lake)
    assert state.is_completed(), state.message
    assert data(state)["skipped"] == done_at_kill
    reference = tmp_path / "reference"
    run(str(dump_dir), reference)
    ids = doc_ids(lake)
    assert len(ids) == len(set(ids))
    assert sorted(ids) == sorted(doc_ids(reference))
    leftovers = [n for r, _, fs in os.walk(lake) for n in fs if n.endswith(".tmp")]
    assert leftovers == []


def test_a_run_larger_than_a_shard_puts_its_archives_in_sub_flow_runs(dump, tmp_path, monkeypatch):
    """Each run's graph in the UI stays small: above SHARD_SIZE archives, each shard's task runs
    live in a sub-flow run of the dump's flow run. The lake is the same as without shards."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId, FlowRunFilterParentFlowRunId

    from warclake.flows import dump_flow

    whole = run(str(dump), tmp_path / "whole")
    monkeypatch.setattr(dump_flow, "SHARD_SIZE", 2)
    state = run(str(dump), tmp_path / "lake")
    assert state.is_completed(), state.message
    assert data(state)["statuses"] == {"complete": 2, "salvaged": 1}
    assert sorted(doc_ids(tmp_path / "lake")) == sorted(doc_ids(tmp_path / "whole"))
    with get_client(sync_client=True) as client:
        parent = state.state_details.flow_run_id
        shards = client.read_flow_runs(flow_run_filter=FlowRunFilter(
            parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[parent])))
        assert sorted((r.name, r.state_type.value) for r in shards) == [
            ("extract TEST-DUMP archives 1-2", "COMPLETED"), ("extract TEST-DUMP archives 3-3", "COMPLETED")]
        tasks = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[r.id for r in shards])))
        whole_tasks = client.read_task_runs(flow_run_filter=FlowRunFilter(
            id=FlowRunFilterId(any_=[whole.state_details.flow_run_id])))
    archive_runs = sorted((t.name, t.state_type.value) for t in tasks if t.name.startswith("extract "))
    assert archive_runs == sorted((t.name, "COMPLETED") for t in whole_tasks if t.name.startswith("extract "))
    assert len(archive_runs) == 3

"""The Dask path on a real local cluster: the same lake as the default runner, from the
flow with a DaskTaskRunner and from ``warclake run --dask ADDRESS``."""
import os
import uuid

import pyarrow.parquet as pq
import pytest

from warclake.tasks.sample_dump import make_dump

pytestmark = pytest.mark.usefixtures("prefect_harness")

DUMP = "CC-MAIN-2099-02"
LANGS = "ja,en"


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    # processes=False: the workers are threads of this test process, quick to start; worker
    # processes, and the API they report to, are the test of a run on worker processes below.
    with distributed.LocalCluster(n_workers=2, processes=False, threads_per_worker=1,
                                  dashboard_address=":0") as c:
        yield c


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    d = tmp_path_factory.mktemp("dask") / "dump"
    make_dump(str(d), files=4, pages_per_file=12, dump=DUMP, truncate_last=True)
    return d


def lake_rows(lake):
    """Per archive, the sorted docIds of its parquet file."""
    d = os.path.join(lake, "documents", f"dump={DUMP}")
    return {n: sorted(pq.read_table(os.path.join(d, n), columns=["docId"]).column("docId").to_pylist())
            for n in sorted(os.listdir(d)) if n.endswith(".parquet")}


@pytest.fixture(scope="module")
def reference_lake(dump, tmp_path_factory):
    """The lake the default (thread pool + extraction processes) path writes."""
    from warclake.flows.dump_flow import extract_dump

    lake = tmp_path_factory.mktemp("ref") / "lake"
    state = extract_dump(dump=DUMP, inputs=[str(dump)], lake=str(lake), langs=LANGS, workers=2, report=False,
                         return_state=True)
    assert state.is_completed(), state.message
    rows = lake_rows(lake)
    assert len(rows) == 4 and all(rows.values())
    return rows


def executed_on(cluster) -> int:
    """Tasks the cluster's workers have run so far."""
    return sum(w.state.executed_count for w in cluster.workers.values())


def test_flow_on_dask_matches_the_default_runner(cluster, dump, tmp_path, reference_lake):
    from prefect_dask import DaskTaskRunner

    from warclake.flows.dump_flow import extract_dump

    before = executed_on(cluster)
    lake = tmp_path / "lake"
    on_dask = extract_dump.with_options(task_runner=DaskTaskRunner(address=cluster.scheduler_address))
    state = on_dask(dump=DUMP, inputs=[str(dump)], lake=str(lake), langs=LANGS, workers=0, report=False,
                    return_state=True)
    assert state.is_completed(), state.message
    counts = state.result()
    assert counts["extracted"] == 4 and counts["statuses"] == {"complete": 3, "salvaged": 1}
    assert executed_on(cluster) - before >= 4  # the archives really went through the cluster
    assert lake_rows(lake) == reference_lake

    # a re-run on the cluster finds everything done in the lake
    again = on_dask(dump=DUMP, inputs=[str(dump)], lake=str(lake), langs=LANGS, workers=0, report=False,
                    return_state=True)
    assert again.is_completed() and again.result()["extracted"] == 0 and again.result()["skipped"] == 4


def test_cli_run_with_dask_address(cluster, dump, tmp_path, reference_lake, capsys):
    from warclake.cli.main import main

    before = executed_on(cluster)
    lake = tmp_path / "lake"
    rc = main(["run", "--dump", DUMP, "--lake", str(lake), "--langs", LANGS, "--no-report",
               "--dask", cluster.scheduler_address, str(dump / "warc.paths.gz")])
    assert rc == 0, capsys.readouterr()
    assert "4 extracted" in capsys.readouterr().out
    assert executed_on(cluster) - before >= 4
    assert lake_rows(lake) == reference_lake


def temporary_servers() -> list[int]:
    """On a Dask worker: the ports of the temporary Prefect API servers its process runs."""
    from prefect.server.api.server import SubprocessASGIServer

    return sorted(s.port for s in SubprocessASGIServer._instances.values() if s.running)


def processes_with(variable: str) -> list[int]:
    """Live processes whose environment has ``variable`` (Linux /proc; the user's own)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                marked = variable.encode() in fh.read().split(b"\0")
            with open(f"/proc/{entry}/stat") as fh:
                zombie = fh.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            continue
        if marked and not zombie:
            found.append(int(entry))
    return found


def test_run_on_worker_processes_reports_to_the_runs_api_and_leaves_no_server(dump, tmp_path, reference_lake,
                                                                               monkeypatch):
    """`run --dask` with no Prefect API configured, on two worker processes started without
    PREFECT_API_URL (as `dask worker` is): the workers report to the run's temporary server
    (its flow run has their task runs) and start none of their own, so none is left running
    once the cluster is gone."""
    distributed = pytest.importorskip("distributed")
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
    from prefect.client.schemas.sorting import FlowRunSort
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from warclake.cli.main import main

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    mark = f"WARCLAKE_TEST_CLUSTER={uuid.uuid4().hex}"   # in the workers' environment, and their children's
    lake = tmp_path / "lake"
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0",
                                  env=dict([mark.split("=")])) as c, distributed.Client(c) as client:
        client.wait_for_workers(2, timeout=120)
        # no API configured: the run starts a temporary server (in this process, the harness's)
        with temporary_settings(restore_defaults={PREFECT_API_URL}):
            rc = main(["run", "--dump", DUMP, "--lake", str(lake), "--langs", LANGS, "--no-report", "-q",
                       "--dask", c.scheduler_address, str(dump / "warc.paths.gz")])
        assert rc == 0
        assert lake_rows(lake) == reference_lake
        assert client.run(temporary_servers) == {w: [] for w in client.scheduler_info()["workers"]}
        with get_client(sync_client=True) as api:
            (run,) = api.read_flow_runs(sort=FlowRunSort.START_TIME_DESC, limit=1)
            tasks = api.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run.id])))
        extracted = sorted(t.name for t in tasks if t.name.startswith("extract ") and t.state.is_completed())
        assert extracted == [f"extract {n.replace('.parquet', '')}" for n in reference_lake], [
            (t.name, t.state_name) for t in tasks]
    assert processes_with(mark) == []


def test_on_dask_the_flow_keeps_every_worker_thread_busy():
    """Without --max-in-flight, a run on Dask keeps twice the cluster's worker threads
    submitted (not the two archives of a one-process default)."""
    distributed = pytest.importorskip("distributed")
    from prefect import flow
    from prefect_dask import DaskTaskRunner

    from warclake.flows.dump_flow import default_in_flight
    from warclake.tasks.runtime.supervisor import default_workers

    threads = default_workers() + 3  # unlike anything this machine would give
    with distributed.LocalCluster(n_workers=threads, processes=False, threads_per_worker=1,
                                  dashboard_address=":0") as big:
        @flow(task_runner=DaskTaskRunner(address=big.scheduler_address))
        def in_flight_on_dask() -> int:
            return default_in_flight(0)

        assert in_flight_on_dask() == 2 * threads
    assert default_in_flight(3) == 6  # extraction processes of our own: their number counts

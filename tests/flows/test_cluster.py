"""Scale-out as a deployment does it: a Dask scheduler and two workers as separate processes
running the installed wheel (outside the checkout), reporting to a real ``prefect server``;
the lake local, then on an S3-compatible server on 127.0.0.1."""
import os

import pyarrow.parquet as pq
import pytest

from support import procs
from support.procs import run_installed as run
from warclake.tasks.sample_dump import make_dump

pytestmark = pytest.mark.slow

DUMP = "CC-MAIN-2099-03"
LANGS = "ja,en,de"
ARCHIVES = 4


@pytest.fixture(scope="module")
def dump(wheel_env):
    d = wheel_env["work"] / "cluster-dump"
    make_dump(str(d), files=ARCHIVES, pages_per_file=15, dump=DUMP, truncate_last=True)
    return d / "warc.paths.gz"


def documents(lake: str, filesystem=None) -> dict[str, list[tuple]]:
    """Per archive, its documents as sorted (docId, url, charset, lang, text) rows."""
    import fsspec

    fs = filesystem or fsspec.filesystem("file")
    folder = f"{lake}/documents/dump={DUMP}"
    out = {}
    for path in sorted(fs.ls(folder, detail=False)):
        t = pq.read_table(path, filesystem=fs, columns=["docId", "url", "charset", "lang", "text"])
        out[os.path.basename(path)] = sorted(zip(*(t.column(c).to_pylist() for c in t.column_names)))
    return out


@pytest.fixture(scope="module")
def embedded(wheel_env, dump):
    """The reference: the same command with no cluster and no server."""
    lake = wheel_env["work"] / "embedded-lake"
    run(wheel_env, os.path.join(wheel_env["bin"], "warclake"), "run", "--dump", DUMP, "--lake", lake,
        "--langs", LANGS, "--no-report", dump)
    docs = documents(str(lake))
    assert len(docs) == ARCHIVES and all(docs.values())
    return docs


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    with procs.s3_server(tmp_path_factory.mktemp("s3")) as env:
        yield env


@pytest.fixture(scope="module")
def cluster(wheel_env, prefect_server, s3, tmp_path_factory):
    """``dask scheduler`` + two ``dask worker`` processes of the wheel's environment, set up
    as the cluster recipe says (PREFECT_API_URL and the lake's credentials in their env)."""
    import distributed

    logs = tmp_path_factory.mktemp("dask")
    env = dict(wheel_env["env"], **s3, PREFECT_API_URL=prefect_server["url"])
    address = f"tcp://127.0.0.1:{procs.free_port()}"
    py = wheel_env["python"]
    scheduler = [py, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                 "--port", address.rsplit(":", 1)[1], "--no-dashboard"]
    worker = [py, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny",
              "--no-dashboard"]
    with procs.started(scheduler, logs / "scheduler.log", env=env, cwd=wheel_env["work"]), \
            procs.started(worker + ["--name", "w1"], logs / "w1.log", env=env, cwd=wheel_env["work"]), \
            procs.started(worker + ["--name", "w2"], logs / "w2.log", env=env, cwd=wheel_env["work"]):
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=90)
            yield {"address": address, "client": client, "env": env}


def executed(client) -> dict[str, int]:
    """Tasks each worker has run so far."""
    return client.run(lambda dask_worker: dask_worker.state.executed_count)


def completed_task_runs(server, flow_run_name_part: str = "") -> list[str]:
    """Names of the completed extraction task runs the Prefect server knows of."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import TaskRunFilter, TaskRunFilterName
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: server["url"]}), get_client(sync_client=True) as client:
        runs = client.read_task_runs(task_run_filter=TaskRunFilter(name=TaskRunFilterName(like_="extract ")))
    return [r.name for r in runs if r.state and r.state.is_completed()]


def test_run_on_a_dask_cluster_of_the_wheel_matches_the_embedded_run(wheel_env, dump, embedded, cluster,
                                                                      prefect_server):
    before = executed(cluster["client"])
    lake = wheel_env["work"] / "cluster-lake"
    out = run(wheel_env, os.path.join(wheel_env["bin"], "warclake"), "run", "--dump", DUMP, "--lake", lake,
              "--langs", LANGS, "--no-report", "--dask", cluster["address"], dump,
              extra_env={"PREFECT_API_URL": prefect_server["url"]}).stdout
    assert f"{ARCHIVES} extracted" in out
    after = executed(cluster["client"])
    ran = {w: after[w] - before.get(w, 0) for w in after}
    assert sum(ran.values()) >= ARCHIVES and all(n > 0 for n in ran.values()), ran  # both workers took archives
    assert documents(str(lake)) == embedded
    # the task runs reported to the server the UI reads, not to a temporary one per worker
    assert len([n for n in completed_task_runs(prefect_server) if n.startswith(f"extract {DUMP}-")]) >= ARCHIVES


def test_remote_lake_on_s3_extract_rerun_report_and_sql(wheel_env, dump, embedded, cluster, prefect_server, s3):
    import s3fs

    fs = s3fs.S3FileSystem(client_kwargs={"endpoint_url": s3["AWS_ENDPOINT_URL"]},
                           key=s3["AWS_ACCESS_KEY_ID"], secret=s3["AWS_SECRET_ACCESS_KEY"])
    fs.mkdir("warclake-test")
    lake = "s3://warclake-test/lake"
    exe = os.path.join(wheel_env["bin"], "warclake")
    env = dict(s3, PREFECT_API_URL=prefect_server["url"])
    args = ["run", "--dump", DUMP, "--lake", lake, "--langs", LANGS, "--no-report", "--dask", cluster["address"], dump]

    assert f"{ARCHIVES} extracted" in run(wheel_env, exe, *args, extra_env=env).stdout
    fs.invalidate_cache()
    assert documents("warclake-test/lake", fs) == embedded
    assert len(fs.ls(f"warclake-test/lake/files/dump={DUMP}")) == ARCHIVES

    again = run(wheel_env, exe, *args, extra_env=env).stdout
    assert f"{ARCHIVES} already done, 0 extracted" in again

    run(wheel_env, exe, "report", "--lake", lake, "--dump", DUMP, "--out", "s3-report", extra_env=env)
    assert DUMP in (wheel_env["work"] / "s3-report" / "report.html").read_text()
    n_docs = sum(len(v) for v in embedded.values())
    out = run(wheel_env, exe, "sql", "--lake", lake, "--csv", "-c",
              "SELECT count(*) AS n, count(DISTINCT warc_file) AS files FROM documents", extra_env=env).stdout
    assert out.split() == ["n,files", f"{n_docs},{ARCHIVES}"]

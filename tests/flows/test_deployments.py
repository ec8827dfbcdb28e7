"""Deployments: the config file, the newest-dump lookup, and smoke tests against a real
``prefect server`` on 127.0.0.1 (served with ``warclake.deployments.serve``, and deployed from
``deployments/prefect.yaml`` to a process work pool with a worker)."""
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import pyarrow.parquet as pq
import pytest

from conftest import REPO
from support.http_server import LocalHTTPServer
from support.procs import free_port, stop
from warclake.tasks.sample_dump import make_dump

BIN = os.path.dirname(sys.executable)
LANGS = "ja,en"


def sample_root(root, dumps=("CC-MAIN-2099-01", "CC-MAIN-2099-05", "CC-MAIN-2098-52"), files=2):
    """A folder of dumps, one sub-folder each, plus a stray folder that is not a dump."""
    for d in dumps:
        make_dump(str(root / d), files=files, pages_per_file=8, dump=d, truncate_last=False)
    (root / "CC-MAIN-latest-tmp").mkdir()
    return root


def lake_docs(lake, dump):
    d = os.path.join(lake, "documents", f"dump={dump}")
    if not os.path.isdir(d):
        return {}
    return {n: pq.read_table(os.path.join(d, n), columns=["docId"]).num_rows
            for n in sorted(os.listdir(d)) if n.endswith(".parquet")}


# -- without a server ----------------------------------------------------------------------

def test_newest_dump_on_a_folder_and_over_http(tmp_path):
    from warclake.deployments.newest import dump_inputs, list_dumps, newest_dump

    root = sample_root(tmp_path / "dumps")
    assert list_dumps(str(root)) == ["CC-MAIN-2098-52", "CC-MAIN-2099-01", "CC-MAIN-2099-05"]
    assert newest_dump(str(root)) == "CC-MAIN-2099-05"
    assert dump_inputs(str(root), "CC-MAIN-2099-05") == [str(root / "CC-MAIN-2099-05" / "warc.paths.gz")]
    os.unlink(root / "CC-MAIN-2099-05" / "warc.paths.gz")
    assert dump_inputs(str(root), "CC-MAIN-2099-05") == [str(root / "CC-MAIN-2099-05")]
    with pytest.raises(FileNotFoundError, match="no dump folder"):
        newest_dump(str(tmp_path / "dumps" / "CC-MAIN-2099-01"))

    with LocalHTTPServer(str(tmp_path)) as srv:  # a web server's folder index
        url = f"{srv.url}/dumps/"
        assert newest_dump(url) == "CC-MAIN-2099-05"
        assert dump_inputs(url, "CC-MAIN-2099-01") == [f"{srv.url}/dumps/CC-MAIN-2099-01/warc.paths.gz"]


def write_config(path, text):
    path.write_text(text)
    return str(path)


def check_from(folder, cfg, capsys) -> tuple[str, str]:
    """``serve --check`` run from ``folder`` (relative paths resolve there): its stdout, stderr."""
    from warclake.deployments.serve import main

    cwd = os.getcwd()
    os.chdir(folder)
    try:
        assert main(["--config", cfg, "--check"]) == 0
    finally:
        os.chdir(cwd)
    return capsys.readouterr()


def test_config_check_lists_deployments_with_absolute_paths(tmp_path, capsys):
    cfg = write_config(tmp_path / "d.toml", """
[defaults]
lake = "lake"
langs = "ja,en"
workers = 0
[[dump]]
dump = "CC-MAIN-2099-01"
inputs = "dumps/CC-MAIN-2099-01"
cron = "0 3 * * *"
timezone = "Asia/Tokyo"
[[dump]]
dump = "CC-MAIN-2099-05"
name = "second"
inputs = ["s3://bucket/CC-MAIN-2099-05/warc.paths.gz"]
base_url = "s3://bucket/"
dask = "tcp://127.0.0.1:8786"
[newest]
root = "dumps"
cron = "0 4 * * 1"
""")
    out, err = check_from(tmp_path, cfg, capsys)
    specs = {s["name"]: s for s in json.loads(out)}
    assert set(specs) == {"CC-MAIN-2099-01", "second", "newest"}
    first = specs["CC-MAIN-2099-01"]
    assert first["flow_name"] == "extract-dump" and first["cron"] == "0 3 * * *"
    assert first["timezone"] == "Asia/Tokyo"
    assert first["parameters"] == {"dump": "CC-MAIN-2099-01", "inputs": [str(tmp_path / "dumps" / "CC-MAIN-2099-01")],
                                   "lake": str(tmp_path / "lake"), "langs": "ja,en", "workers": 0}
    assert specs["second"]["parameters"]["inputs"] == ["s3://bucket/CC-MAIN-2099-05/warc.paths.gz"]
    assert specs["second"]["dask"] == "tcp://127.0.0.1:8786" and specs["second"]["cron"] is None
    newest = specs["newest"]
    assert newest["flow_name"] == "extract-newest-dump"
    assert newest["parameters"]["root"] == str(tmp_path / "dumps")
    # no dumps/ folder there: the newest-dump deployment is served paused, with a warning
    assert newest["paused"] is True and "does not exist" in err and "served paused" in err


def test_newest_deployment_is_active_once_its_folder_exists(tmp_path, capsys):
    cfg = write_config(tmp_path / "d.toml", '[defaults]\nlake = "lake"\n[newest]\nroot = "dumps"\ncron = "0 4 * * 1"\n')
    (tmp_path / "dumps").mkdir()
    out, err = check_from(tmp_path, cfg, capsys)
    assert json.loads(out)[0]["paused"] is False and err == ""


@pytest.mark.parametrize("text, message", [
    ('[[dump]]\ndump = "X"\ninputs = ["a"]\nlake = "l"\nlangz = "ja"\n', "unknown key(s) ['langz']"),
    ('[[dump]]\ninputs = ["a"]\nlake = "l"\n', "needs a 'dump' name"),
    ('[[dump]]\ndump = "X"\ninputs = ["a"]\n', "missing ['lake']"),
    ('[newest]\nlake = "l"\n', "missing ['root']"),
    ('[dumps]\n', "unknown table(s) ['dumps']"),
    ('[defaults]\nlake = "l"\nworkerz = 2\n[newest]\nroot = "r"\n', "[defaults]: unknown key(s) ['workerz']"),
    ('[[dump]]\ndump = "X"\ninputs = ["a"]\nlake = "l"\n[[dump]]\ndump = "X"\ninputs = ["b"]\nlake = "l"\n',
     "duplicate deployment names"),
    ('[defaults]\nlake = "l"\nboilerplate = "justtext"\n[[dump]]\ndump = "X"\ninputs = ["a"]\n',
     "unknown boilerplate mode 'justtext': choose from none, justext, density, bte, sieve"),
    ('[[dump]]\ndump = "X"\ninputs = ["a"]\nlake = "l"\nworkers = -1\n', "workers -1 is not a count"),
    ('[[dump]]\ndump = "X"\ninputs = ["a"]\nlake = "l"\nmax_in_flight = 0\n', "max_in_flight 0 is not a positive"),
    ('[newest]\nroot = "r"\nlake = "l"\nlangs = "jp"\n', "unknown target language(s) ['jp']"),
    ('[newest]\nroot = "r"\nlake = "l"\n[newest.corpus_options]\nquality = { no_such_rule = 1 }\n',
     "no_such_rule"),
])
def test_config_mistakes_are_named(tmp_path, capsys, text, message):
    from warclake.deployments.serve import main

    assert main(["--config", write_config(tmp_path / "bad.toml", text), "--check"]) == 2
    assert message in capsys.readouterr().err


def test_shipped_config_and_prefect_yaml_are_valid(capsys):
    import yaml

    from warclake.deployments.serve import main

    assert main(["--check"]) == 0
    specs = json.loads(capsys.readouterr().out)
    assert {"CC-MAIN-2099-01", "newest"} <= {s["name"] for s in specs}
    assert all(s["parameters"]["corpus"] is True for s in specs)
    with open(os.path.join(REPO, "deployments", "prefect.yaml")) as fh:
        doc = yaml.safe_load(fh)
    import importlib

    from prefect import Flow

    for dep in doc["deployments"]:
        module, _, fn = dep["entrypoint"].rpartition(".")
        flow_obj = getattr(importlib.import_module(module), fn)
        assert isinstance(flow_obj, Flow), dep["entrypoint"]
        assert dep["work_pool"]["name"] == "warclake" and dep["schedules"][0]["cron"]
        # every parameter is one of the flow's, and the corpus stage follows each extraction
        assert set(dep["parameters"]) <= set(flow_obj.parameters.properties), dep["name"]
        assert dep["parameters"]["corpus"] is True


@pytest.mark.usefixtures("prefect_harness")
def test_a_deployment_with_corpus_judges_its_dump_after_extracting_it(tmp_path):
    """The deployment as serve builds it (no server: Prefect's temporary API), run with its
    stored parameters, the way a scheduled run starts it."""
    from warclake.deployments.serve import flow_and_options, load_config
    from warclake.tasks.corpus.checks import prepare
    from warclake.tasks.corpus.settings import DecisionConfig
    from warclake.tasks.corpus.stage import StageOptions, run_stage

    root = sample_root(tmp_path / "dumps", dumps=("CC-MAIN-2099-01",))
    cfg = write_config(tmp_path / "d.toml", f"""
[defaults]
lake = "{tmp_path / 'lake'}"
langs = "{LANGS}"
workers = 0
report = false
corpus = true
[[dump]]
dump = "CC-MAIN-2099-01"
inputs = ["{root / 'CC-MAIN-2099-01' / 'warc.paths.gz'}"]
cron = "30 2 * * *"
""")
    (spec,) = load_config(cfg)
    flow_obj, options = flow_and_options(spec)
    deployment = flow_obj.to_deployment(**options)
    assert deployment.name == "CC-MAIN-2099-01" and deployment.parameters["corpus"] is True
    assert deployment.entrypoint == "warclake.flows.dump_flow.extract_dump"
    assert [s.schedule.cron for s in deployment.schedules] == ["30 2 * * *"]

    state = flow_obj(**deployment.parameters, return_state=True)
    assert state.is_completed(), state.message
    assert "2 extracted" in state.message and "; corpus: CC-MAIN-2099-01: " in state.message
    counts = state.result()["corpus"]["dumps"]["CC-MAIN-2099-01"]
    lake = str(tmp_path / "lake")
    docs = sum(lake_docs(lake, "CC-MAIN-2099-01").values())
    assert counts["documents"] == docs > 0 and 0 < counts["kept"] <= docs
    decided = pq.read_table(os.path.join(lake, "corpus", "decisions", "documents", "dump=CC-MAIN-2099-01",
                                         "decisions.parquet"))
    assert decided.num_rows == docs
    # the follow-up left nothing to do: the library's run on the lake finds every step done
    again = run_stage(lake, *prepare(lake, None, DecisionConfig()), StageOptions())
    assert again["signed"] == 0 and again["partitions"] == 0

    # a dump whose extraction fails is not judged: its run says why and stays Failed
    (root / "CC-MAIN-2099-01" / "CC-MAIN-2099-01-00001.warc.gz").unlink()
    broken = flow_obj(**{**deployment.parameters, "lake": str(tmp_path / "lake2")}, return_state=True)
    assert broken.is_failed() and "corpus" not in broken.message
    # (its archives that were extracted have their per-archive signatures: corpus_signatures)
    assert not os.path.exists(tmp_path / "lake2" / "corpus" / "decisions")
    assert os.listdir(tmp_path / "lake2" / "corpus" / "state") == ["signatures"]


# -- against a real server --------------------------------------------------------------------

def api(server):
    """Prefect settings pointing this process at the test's server (overrides any harness)."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    return temporary_settings({PREFECT_API_URL: server["url"]})


def wait_for_deployments(server, names, proc, timeout=60):
    from prefect.client.orchestration import get_client

    t0 = time.monotonic()
    with api(server), get_client(sync_client=True) as client:
        while True:
            found = {}
            for n in names:
                try:
                    found[n] = client.read_deployment_by_name(n)
                except Exception:  # not registered yet
                    pass
            if len(found) == len(names):
                return found
            if proc.poll() is not None or time.monotonic() - t0 > timeout:
                raise AssertionError(f"deployments {sorted(set(names) - set(found))} never appeared")
            time.sleep(0.5)


def run_and_wait(server, runs: dict, timeout=120):
    """Start deployment runs (name -> parameter overrides) at once and wait for all to end."""
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment

    with api(server):
        started = {n: run_deployment(n, parameters=p, timeout=0, as_subflow=False) for n, p in runs.items()}
        t0 = time.monotonic()
        with get_client(sync_client=True) as client:
            while True:
                now = {n: client.read_flow_run(fr.id) for n, fr in started.items()}
                if all(fr.state.is_final() for fr in now.values()):
                    return now
                if time.monotonic() - t0 > timeout:
                    raise AssertionError({n: fr.state.name for n, fr in now.items()})
                time.sleep(0.5)


def retry_from_ui(server, flow_run_id):
    """What the UI's Retry button on a failed flow run sends."""
    req = urllib.request.Request(
        f"{server['url']}/flow_runs/{flow_run_id}/set_state", method="POST",
        headers={"Content-Type": "application/json"},
        data=json.dumps({"state": {"type": "SCHEDULED", "name": "AwaitingRetry", "message": "Retry from the UI"},
                         "force": False}).encode())
    with urllib.request.urlopen(req, timeout=10) as r:
        assert json.load(r)["status"] == "ACCEPT"


def wait_final(server, flow_run_id, timeout=120):
    from prefect.client.orchestration import get_client

    t0 = time.monotonic()
    with api(server), get_client(sync_client=True) as client:
        while True:
            fr = client.read_flow_run(flow_run_id)
            if fr.state.is_final():  # the retry request made it Scheduled (AwaitingRetry) at once
                return fr
            if time.monotonic() - t0 > timeout:
                raise AssertionError(fr.state)
            time.sleep(0.5)


@pytest.fixture
def dask_cluster(prefect_server, tmp_path):
    """``dask scheduler`` and one ``dask worker`` on loopback, started the way the README says
    (the worker with PREFECT_API_URL, so its task runs report to the server); yields a client."""
    distributed = pytest.importorskip("distributed")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = []
    try:
        for args in (["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                     ["worker", address, "--nthreads", "2", "--no-nanny", "--no-dashboard"]):
            log = open(tmp_path / f"dask-{args[0]}.log", "wb")
            procs.append((subprocess.Popen([os.path.join(BIN, "dask"), *args], cwd=REPO, env=prefect_server["env"],
                                           stdout=log, stderr=subprocess.STDOUT, start_new_session=True), log))
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(1, timeout=60)
            yield client
    finally:
        for proc, log in reversed(procs):
            stop(proc)
            log.close()


def executed_on(client) -> int:
    """Tasks the cluster's workers have run so far."""
    return sum(client.run(lambda dask_worker: dask_worker.state.executed_count).values())


@pytest.mark.slow
def test_serve_deploys_schedules_runs_and_retries_from_the_ui(prefect_server, dask_cluster, tmp_path):
    t0 = time.monotonic()
    root = sample_root(tmp_path / "dumps")
    lake = tmp_path / "lake"
    # The per-dump deployment sends its archives to the Dask cluster (configuration only);
    # the newest-dump one uses the default path, extraction in a spawned worker process.
    cfg = write_config(tmp_path / "dumps.toml", f"""
[defaults]
lake = "{lake}"
langs = "{LANGS}"
report = false
[[dump]]
dump = "CC-MAIN-2099-01"
inputs = ["{root / 'CC-MAIN-2099-01' / 'warc.paths.gz'}"]
cron = "15 3 29 2 *"
dask = "{dask_cluster.scheduler.address}"
[newest]
root = "{root}"
cron = "0 4 29 2 *"
workers = 1
""")  # schedules that cannot fire during the test (29 February only)
    # One archive of the listing is not there yet (a mirror still downloading): that run fails.
    late = root / "CC-MAIN-2099-01" / "CC-MAIN-2099-01-00001.warc.gz"
    os.rename(late, tmp_path / "late.warc.gz")
    # a short poll so the test does not wait the default 10 s for the served runs to start
    env = dict(prefect_server["env"], PREFECT_RUNNER_POLL_FREQUENCY="1")
    log = open(tmp_path / "serve.log", "wb")
    # SIGINT back to its default in the child: a test run started in the background ignores it,
    # and the child would inherit that and never see our Ctrl-C
    serve = subprocess.Popen([sys.executable, "-m", "warclake.deployments.serve", "--config", cfg, "--limit", "2"],
                             cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    logtail = lambda: (tmp_path / "serve.log").read_text()[-3000:]  # noqa: E731
    try:
        deps = wait_for_deployments(prefect_server, ["extract-dump/CC-MAIN-2099-01", "extract-newest-dump/newest"],
                                    serve)
        per_dump = deps["extract-dump/CC-MAIN-2099-01"]
        assert [s.schedule.cron for s in per_dump.schedules] == ["15 3 29 2 *"]
        assert per_dump.parameters["dump"] == "CC-MAIN-2099-01" and per_dump.parameters["lake"] == str(lake)
        assert [s.schedule.cron for s in deps["extract-newest-dump/newest"].schedules] == ["0 4 29 2 *"]

        runs = run_and_wait(prefect_server, {"extract-dump/CC-MAIN-2099-01": None, "extract-newest-dump/newest": None})
        newest, failed = runs["extract-newest-dump/newest"], runs["extract-dump/CC-MAIN-2099-01"]
        assert newest.state.is_completed(), (newest.state.message, logtail())
        assert failed.state.is_failed(), (failed.state.message, logtail())
        assert "1 extracted" in failed.state.message and "1 failed" in failed.state.message
        assert list(lake_docs(lake, "CC-MAIN-2099-01")) == ["CC-MAIN-2099-01-00000.warc.gz.parquet"]

        # The archive arrives; Retry in the UI re-runs the flow run, which redoes only that archive.
        os.rename(tmp_path / "late.warc.gz", late)
        retry_from_ui(prefect_server, failed.id)
        retried = wait_final(prefect_server, failed.id)
        assert retried.state.is_completed(), (retried.state.message, logtail())
        assert retried.run_count == 2
        assert "1 already done, 1 extracted" in retried.state.message
        assert executed_on(dask_cluster) == 3  # both archives, then the retried one

        # A mode mistyped in the UI's parameters: refused before any work, one line in the log
        bad = run_and_wait(prefect_server, {"extract-newest-dump/newest": {"boilerplate": "justtext"}})
        bad = bad["extract-newest-dump/newest"]
        assert bad.state.is_failed() and "unknown boilerplate mode 'justtext'" in bad.state.message
    finally:
        left = stop(serve, first=signal.SIGINT)  # Ctrl-C, the way serve is meant to be stopped
        log.close()
    assert serve.returncode == 0 and not left, (serve.returncode, left, logtail())
    # the expected failures (a missing archive, a bad parameter) are lines, not tracebacks
    served = (tmp_path / "serve.log").read_text()
    assert "unexpected exception" not in served and "Traceback" not in served, served[-5000:]
    # stopping serve paused its deployments: no runs pile up while nothing serves them
    from prefect.client.orchestration import get_client

    with api(prefect_server), get_client(sync_client=True) as client:
        assert client.read_deployment_by_name("extract-dump/CC-MAIN-2099-01").paused
    names = ["CC-MAIN-2099-01-00000.warc.gz.parquet", "CC-MAIN-2099-01-00001.warc.gz.parquet"]
    docs = lake_docs(lake, "CC-MAIN-2099-01")
    assert list(docs) == names and all(docs.values())
    # the newest dump was picked at run time; the older ones were left alone
    assert list(lake_docs(lake, "CC-MAIN-2099-05")) == [n.replace("2099-01", "2099-05") for n in names]
    assert lake_docs(lake, "CC-MAIN-2098-52") == {}
    print(f"serve smoke test: {time.monotonic() - t0:.1f}s")


def prefect_cli(server, *args, timeout=180):  # a hang guard: the CLI takes 25-60 s on a busy 2-core box
    r = subprocess.run([os.path.join(BIN, "prefect"), *args], cwd=REPO, env=server["env"], capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, (args, r.stdout[-2000:], r.stderr[-2000:])
    return r.stdout


@pytest.mark.slow
def test_prefect_yaml_deploys_to_a_process_pool_and_a_worker_runs_it(prefect_server, tmp_path):
    t0 = time.monotonic()
    root = sample_root(tmp_path / "dumps", dumps=("CC-MAIN-2099-01",))
    lake = tmp_path / "lake"
    prefect_cli(prefect_server, "work-pool", "create", "warclake", "--type", "process")
    # The worker starts while we deploy (both take seconds to import Prefect). Its pull step
    # moves each run into this checkout; a short poll keeps the test quick.
    env = dict(prefect_server["env"], WARCLAKE_HOME=REPO, PREFECT_WORKER_QUERY_SECONDS="1")
    log = open(tmp_path / "worker.log", "wb")
    worker = subprocess.Popen([os.path.join(BIN, "prefect"), "worker", "start", "--pool", "warclake"],
                              cwd=str(tmp_path), env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        # one deployment, as deployments/README.md shows, then all of them
        out = prefect_cli(prefect_server, "deploy", "--prefect-file", "deployments/prefect.yaml", "--name",
                          "CC-MAIN-2099-01", "--no-prompt")
        assert "extract-dump/CC-MAIN-2099-01" in out and "CC-MAIN-2024-22" not in out
        out = prefect_cli(prefect_server, "deploy", "--prefect-file", "deployments/prefect.yaml", "--all",
                          "--no-prompt")
        assert "extract-dump/CC-MAIN-2099-01" in out

        from prefect.client.orchestration import get_client

        with api(prefect_server), get_client(sync_client=True) as client:
            dep = client.read_deployment_by_name("extract-dump/CC-MAIN-2099-01")
            assert dep.work_pool_name == "warclake" and [s.schedule.cron for s in dep.schedules] == ["30 2 * * *"]
            assert dep.parameters["inputs"] == ["demo/dump/warc.paths.gz"]  # relative to the worker's checkout
            remote = client.read_deployment_by_name("extract-dump/CC-MAIN-2024-22")
            assert [s.active for s in remote.schedules] == [False]
            newest = client.read_deployment_by_name("extract-newest-dump/newest")
            assert newest.entrypoint == "warclake.deployments.newest.extract_newest_dump"

        runs = run_and_wait(prefect_server, {
            "extract-dump/CC-MAIN-2099-01": {"inputs": [str(root / "CC-MAIN-2099-01")], "lake": str(lake),
                                             "langs": LANGS, "workers": 1, "report": False}})
        fr = runs["extract-dump/CC-MAIN-2099-01"]
        assert fr.state.is_completed(), (fr.state.message, (tmp_path / "worker.log").read_text()[-3000:])
    finally:
        left = stop(worker)
        log.close()
    assert not left, left
    assert len(lake_docs(lake, "CC-MAIN-2099-01")) == 2
    print(f"prefect.yaml + worker smoke test: {time.monotonic() - t0:.1f}s")


def test_a_run_against_a_prefect_server_leaves_every_archive_task_run_recorded_and_final(prefect_server, tmp_path):
    """`warclake run` with PREFECT_API_URL set: a few hundred tiny archives (task runs ~1,000
    times faster than real ones), each archive's task run on the server, none left Running."""
    dump, archives = "CC-MAIN-2099-06", 300
    make_dump(str(tmp_path / "dump"), files=archives, pages_per_file=2, dump=dump, truncate_last=False)
    p = subprocess.run([sys.executable, "-m", "warclake.cli.main", "run", "--dump", dump, "--lake",
                        str(tmp_path / "lake"), "--langs", "all", "--workers", "1", "-q", "--no-report",
                        str(tmp_path / "dump")], env=prefect_server["env"], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    (run,) = [fr for fr in post(prefect_server, "/flow_runs/filter", {}) if fr["name"] == f"extract {dump}"]
    by_state = {}
    for state in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED", "PENDING", "RUNNING", "SCHEDULED"):
        n = post(prefect_server, "/task_runs/count", {"flow_runs": {"id": {"any_": [run["id"]]}},
                                                      "task_runs": {"name": {"like_": "extract "},
                                                                    "state": {"type": {"any_": [state]}}}})
        if n:
            by_state[state] = n
    assert by_state == {"COMPLETED": archives}


def post(server, path: str, body: dict):
    req = urllib.request.Request(server["url"] + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)

import atexit
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

import pytest

os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
# A Prefect home of this test process (each xdist worker has its own): the temporary servers
# that `warclake run` starts keep their database there, never in the user's ~/.prefect, and
# two workers never share one sqlite database.
os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="warclake-tests-prefect-")
atexit.register(shutil.rmtree, os.environ["PREFECT_HOME"], ignore_errors=True)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED_DATA = os.path.join(os.path.dirname(REPO), "shared", "data")
sys.path.insert(0, HERE)  # test helpers (lakegen, http_server, procs) import as plain modules

import procs  # noqa: E402  (needs the path above)


def shared_data(*parts: str) -> str:
    """A path under the shared development data (``../shared/data`` beside the checkout)."""
    return os.path.join(SHARED_DATA, *parts)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "shared_data(*parts): needs ../shared/data/<parts>; skipped when absent, "
                   "failed when absent under CI (where it is always provided)")


# Tests that start Prefect (a temporary API or a server), build the wheel, or start a cluster:
# ``-m "not slow"`` leaves the core suite, which needs no server.
_SLOW_FIXTURES = {"prefect_harness", "prefect_server", "wheel_env"}


# ``./dev test`` runs on two pytest-xdist workers (pyproject.toml: ``-n 2 --dist loadfile``):
# each file is one unit of work, so its module fixtures (S3 servers, lakes) are made once.
# The files that use a costly session fixture (``wheel_env``, ``prefect_server``) form one
# unit, so the wheel is built and ``prefect server`` started on one worker only.
_SERVER_FILES = {"test_cluster.py", "test_deployments.py", "test_interrupt.py", "test_wheel.py"}
# Units start in this order, the longest first (measured with --durations), so that no
# long file starts last and ends the run alone; the rest follow in file order.
_LONG_FIRST = ["test_corpus_ops.py", "test_train_sieve.py", "servers", "test_worker_guard.py",
               "test_corpus_remote.py", "test_dump_lock_remote.py", "test_flow.py", "test_native_features.py",
               "test_fast_paths.py", "test_html_limits.py", "test_corpus_dask.py", "test_native_walk.py",
               "test_corpus.py"]


def _unit(nodeid: str) -> str:
    name = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    return "servers" if name in _SERVER_FILES else name


@pytest.hookimpl(optionalhook=True)   # a hook of xdist: none without it (-p no:xdist)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with the units above (xdist's ``loadgroup`` marks do not reach
    pytest 9's node ids)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FileUnits(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(nodeid)

    return FileUnits(config, log)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    if os.environ.get("PYTEST_XDIST_WORKER"):   # the order the workers are given the units in
        rank = {name: i for i, name in enumerate(_LONG_FIRST)}
        items.sort(key=lambda item: rank.get(_unit(item.nodeid), len(rank)))   # stable: file order otherwise


def pytest_runtest_setup(item):
    for mark in item.iter_markers("shared_data"):
        path = shared_data(*mark.args)
        if not os.path.exists(path):
            msg = f"shared development data not found: {path}"
            if os.environ.get("CI"):
                pytest.fail(msg + " (CI provides it: a wrong path would turn this check into a skip)")
            pytest.skip(msg)


@pytest.fixture(scope="session")
def prefect_harness():
    """A real, temporary Prefect API and database for the whole session (~5 s to start)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=60):
        yield


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory):
    """``prefect server start`` on 127.0.0.1 with its own home and database (10-20 s)."""
    with procs.prefect_server(tmp_path_factory.mktemp("prefect-home")) as server:
        yield server


@pytest.fixture(scope="session")
def wheel_env(tmp_path_factory):
    """warclake built as a wheel and installed into a fresh virtualenv outside the checkout.

    The wheel is built without network (``--no-build-isolation``) and installed with
    ``--no-deps``; its third-party dependencies are made visible by a ``.pth`` line naming
    the test environment's site-packages. A ``.pth`` line only extends ``sys.path`` (the
    ``.pth`` files there are not run), so the checkout's editable install stays invisible:
    ``import warclake`` finds the wheel's copy or nothing.
    """
    root = tmp_path_factory.mktemp("wheel")
    dist, venv, src = root / "dist", root / "venv", root / "src"
    # Built from a copy of the files git knows (tracked or not ignored): a stale build/ or
    # a stray file in the checkout cannot slip into the wheel.
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        if os.path.isfile(os.path.join(REPO, rel)):
            os.makedirs(src / os.path.dirname(rel), exist_ok=True)
            shutil.copy2(os.path.join(REPO, rel), src / rel)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(dist), str(src)], check=True, capture_output=True)
    wheel = next(dist.glob("warclake-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    with open(os.path.join(purelib, "warclake_test_dependencies.pth"), "w") as fh:
        fh.write("\n".join(sorted(ours)) + "\n")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True)
    work = root / "work"
    work.mkdir()
    env = dict(os.environ, **procs.QUIET_PREFECT, PREFECT_HOME=str(root / "prefect-home"))
    env.pop("PYTHONPATH", None)
    return {"wheel": wheel, "venv": venv, "python": python, "bin": str(venv / "bin"),
            "work": work, "env": env}

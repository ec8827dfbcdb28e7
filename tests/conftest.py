import atexit
import json
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
# no two workers share one sqlite database.
os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="warclake-tests-prefect-")
atexit.register(shutil.rmtree, os.environ["PREFECT_HOME"], ignore_errors=True)
# the first pass's trigram table (tasks/extract/trigram_cache.py): one per session, not the user's
os.environ["WARCLAKE_CACHE_DIR"] = tempfile.mkdtemp(prefix="warclake-tests-cache-")
atexit.register(shutil.rmtree, os.environ["WARCLAKE_CACHE_DIR"], ignore_errors=True)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED_DATA = os.path.join(os.path.dirname(REPO), "shared", "data")
sys.path.insert(0, HERE)  # test helpers (lakegen, http_server, procs) import as plain modules
sys.path.insert(1, REPO)  # the development tools: ``tools.NAME`` (not shipped in the wheel)

from support import procs  # noqa: E402  (needs the path above)


def shared_data(*parts: str) -> str:
    """A path under the shared development data (``../shared/data`` beside the checkout)."""
    return os.path.join(SHARED_DATA, *parts)


def pytest_addoption(parser):
    parser.addoption("--record-durations", action="store_true",
                     help="write each test file's seconds (setup, call, teardown) into tests/durations.json")


_measured: dict[str, float] = {}


def pytest_runtest_logreport(report):
    unit = _unit(report.nodeid)
    _measured[unit] = _measured.get(unit, 0.0) + report.duration


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if not config.getoption("record_durations") or hasattr(config, "workerinput"):
        return   # an xdist worker: its reports reach the controller, which writes the file
    durations = merged_durations(read_durations(), _measured, unit_names())
    tmp = DURATIONS + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(durations, fh, indent=1)
        fh.write("\n")
    os.replace(tmp, DURATIONS)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "shared_data(*parts): needs ../shared/data/<parts>; skipped when absent, "
                   "failed when absent under CI (where it is always provided)")


# Tests that start Prefect (a temporary API or a server), build the wheel, or start a cluster:
# ``-m "not slow"`` leaves the core suite, which needs no server.
_SLOW_FIXTURES = {"prefect_harness", "prefect_server", "wheel_env"}


# ``./dev test`` runs on three pytest-xdist workers (pyproject.toml: ``-n 3 --dist loadfile``):
# each file is one unit of work, so its module fixtures (S3 servers, lakes) are made once.
# The files that use a costly session fixture (``wheel_env``, ``prefect_server``) form one
# unit, so the wheel is built and ``prefect server`` started on one worker only.
_SERVER_FILES = {"test_cluster.py", "test_deployments.py", "test_interrupt.py", "test_wheel.py"}
# Units start the longest first, as tests/durations.json lists their seconds, so that no
# long file starts last and ends the run alone; units not listed there follow in file
# order. `./dev durations` runs the suite and writes what it measured into that file.
DURATIONS = os.path.join(HERE, "durations.json")


def read_durations(path: str = DURATIONS) -> dict[str, float]:
    try:
        with open(path) as fh:
            return {str(unit): float(s) for unit, s in json.load(fh).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def longest_first(durations: dict[str, float]) -> list[str]:
    return sorted(durations, key=lambda unit: (-durations[unit], unit))


def merged_durations(old: dict[str, float], measured: dict[str, float], units: set[str]) -> dict[str, float]:
    """The file's durations after a run: the units measured take their new seconds, the
    others keep theirs, and units whose files are gone are dropped."""
    out = {u: s for u, s in old.items() if u in units}
    out.update({u: round(s, 1) for u, s in measured.items() if u in units})
    return {u: out[u] for u in longest_first(out)}


def suite_files() -> list[str]:
    """The test files there are, as paths under tests/ (``<package>/test_*.py``)."""
    return sorted(os.path.relpath(os.path.join(d, name), HERE) for d, _, names in os.walk(HERE)
                  for name in names if name.startswith("test_") and name.endswith(".py"))


def unit_names() -> set[str]:
    """The units of the test files there are (a file's name, or "servers")."""
    return {_unit(path) for path in suite_files()}


_LONG_FIRST = longest_first(read_durations())


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

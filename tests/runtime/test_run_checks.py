"""Parameters checked before any work, from the command line and from a flow run's
parameters (what the UI and deployments/dumps.toml send): one line, at once."""
import socket
import time

import pytest

from warclake.cli.main import main
from warclake.tasks.sample_dump import make_dump


@pytest.fixture(scope="module")
def dump_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("dump")
    make_dump(str(d), files=1, pages_per_file=5, dump="D")
    return d


def closed_port() -> int:
    with socket.socket() as s:   # bound, never listening: a connect is refused
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("options, words", [
    (["--workers", "-1"], "workers -1 is not a count"),
    (["--max-in-flight", "0"], "max_in_flight 0 is not a positive number"),
    (["--record-seconds", "0"], "record_seconds 0.0 is not a positive number"),
    (["--dask", "tcp://127.0.0.1:{port}"], "no Dask scheduler answers at tcp://127.0.0.1:"),
    (["--dask", "http://nowhere"], "is not tcp://HOST:PORT"),
])
def test_run_refuses_bad_counts_and_an_unreachable_cluster_in_one_line(dump_dir, tmp_path, capsys, options, words):
    options = [o.format(port=closed_port()) for o in options]
    t0 = time.monotonic()
    rc = main(["run", "--dump", "D", "--lake", str(tmp_path / "lake"), *options, str(dump_dir)])
    err = capsys.readouterr().err
    assert rc == 2 and words in err and len(err.strip().splitlines()) == 1, err
    assert time.monotonic() - t0 < 10   # before Prefect starts (its server alone takes longer)
    assert not (tmp_path / "lake" / "files").exists()


def test_an_unknown_boilerplate_mode_is_refused_with_the_known_ones(dump_dir, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "--dump", "D", "--lake", str(tmp_path / "lake"), "--boilerplate", "justtext", str(dump_dir)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "justtext" in err and "justext" in err and "sieve" in err


@pytest.mark.usefixtures("prefect_harness")
@pytest.mark.parametrize("params, words", [
    ({"boilerplate": "justtext"}, "unknown boilerplate mode 'justtext': choose from none, justext"),
    ({"workers": -1}, "workers -1 is not a count"),
    ({"max_in_flight": 0}, "max_in_flight 0 is not a positive number"),
    ({"corpus": True, "corpus_options": {"thresholds": {"similarity": 2.0}}}, "similarity=2.0 out of range"),
    ({"corpus": True, "corpus_options": {"qualiti": {}}}, "corpus options:"),
])
def test_a_flow_run_with_bad_parameters_fails_at_once_with_one_line(dump_dir, tmp_path, params, words):
    from warclake.flows.dump_flow import extract_dump

    state = extract_dump(dump="D", inputs=[str(dump_dir)], lake=str(tmp_path / "lake"), report=False,
                         return_state=True, **params)
    assert state.is_failed() and words in state.message
    assert not (tmp_path / "lake" / "files").exists()   # no archive was touched


@pytest.mark.usefixtures("prefect_harness")
def test_the_newest_dump_flow_checks_its_dask_address_first(tmp_path):
    from warclake.deployments.newest import extract_newest_dump

    (tmp_path / "dumps" / "CC-MAIN-2099-01").mkdir(parents=True)
    t0 = time.monotonic()
    state = extract_newest_dump(root=str(tmp_path / "dumps"), lake=str(tmp_path / "lake"),
                                dask=f"tcp://127.0.0.1:{closed_port()}", return_state=True)
    assert state.is_failed() and "no Dask scheduler answers" in state.message
    assert time.monotonic() - t0 < 30

"""An archive's summary the store fails to give while a run plans its work, on moto's S3
server behind the faulting proxy: only a missing summary means "not done". A 500 for a
moment is read again (nothing extracted twice); a refusal that lasts (403) ends the run
with one line naming the summary, and nothing is written. Real flow runs (``extract-dump``)
and the real CLI (``warclake extract``) in a process of its own."""
from __future__ import annotations

import os
import subprocess
import sys
import urllib.parse

import pytest

from support.s3_lake import ONE_CLIENT_ATTEMPT, s3_fixture
from warclake.tasks.sample_dump import make_dump

pytestmark = pytest.mark.usefixtures("prefect_harness")

BUCKET = "warclake-summaries"
DUMP = "CC-MAIN-2099-01"

s3 = s3_fixture(BUCKET)


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    return make_dump(str(tmp_path_factory.mktemp("dump")), files=2, pages_per_file=3, dump=DUMP,
                     truncate_last=False)


@pytest.fixture
def one_client_attempt(s3, monkeypatch):
    """The storage client tries each request once: its own retries would hide the fault."""
    import s3fs

    for k, v in ONE_CLIENT_ATTEMPT.items():
        monkeypatch.setenv(k, v)
    s3fs.S3FileSystem.clear_instance_cache()
    yield
    s3fs.S3FileSystem.clear_instance_cache()


def summary_reads(name: str):
    """A read of the summaries: one's GET or HEAD, or the listing of their folder."""
    return lambda r: (r.method in ("GET", "HEAD") and r.under(f"/{name}/files/")) or \
        (r.is_list and f"{name}/files/" in urllib.parse.unquote(r.query))


def lake_writes(reqs, name: str) -> list[str]:
    """What a run wrote into the lake (its dump lock's writes aside)."""
    return [r.path for r in reqs if r.method in ("PUT", "POST", "DELETE") and r.under(f"/{name}/")
            and not r.under(f"/{name}/locks/")]


def extract(url: str, archives: list[str]):
    from warclake.flows.dump_flow import extract_dump

    return extract_dump(dump=DUMP, inputs=archives, lake=url, workers=0, report=False, retry_delays=[2, 2],
                        return_state=True)


def test_the_flow_reads_a_summary_again_and_ends_a_lasting_refusal_with_one_line(s3, archives, one_client_attempt):
    proxy, url = s3["proxy"], f"s3://{BUCKET}/flow"
    first = extract(url, archives)
    assert first.is_completed() and "2 extracted" in first.message, first.message

    proxy.reset_counts()
    rule = proxy.answer(summary_reads("flow"), 500, "InternalError", seconds=1)
    try:
        state = extract(url, archives)
    finally:
        proxy.clear()
    assert rule.hits >= 1
    assert state.is_completed() and "2 already done, 0 extracted" in state.message, state.message
    assert lake_writes(proxy.taken(), "flow") == []   # nothing extracted again

    proxy.reset_counts()
    proxy.answer(summary_reads("flow"), 403, "AccessDenied")
    try:
        state = extract(url, archives)
    finally:
        proxy.clear()
    assert state.is_failed(), state.message
    assert len(state.message.splitlines()) == 1 and state.message.startswith(f"{DUMP}: "), state.message
    assert "Access Denied" in state.message or "AccessDenied" in state.message, state.message
    assert f"/flow/files/dump={DUMP}/" in state.message, state.message
    assert lake_writes(proxy.taken(), "flow") == []


def test_the_cli_reads_a_summary_again_and_ends_a_lasting_refusal_with_one_line(s3, archives):
    proxy, url = s3["proxy"], f"s3://{BUCKET}/cli"

    def cli(*extra) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "warclake", "extract", "--dump", DUMP, "--lake", url,
                               "--workers", "0", *extra, *archives], capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, **s3["env"], **ONE_CLIENT_ATTEMPT))

    assert cli("-q").returncode == 0
    proxy.reset_counts()
    rule = proxy.answer(summary_reads("cli"), 500, "InternalError", seconds=1)
    try:
        done = cli()
    finally:
        proxy.clear()
    assert done.returncode == 0, done.stderr[-3000:]
    assert rule.hits >= 1 and "its summary" in done.stderr, done.stderr[-3000:]   # the attempt said
    assert "2 of 2 archives done already" in done.stdout, done.stdout
    assert lake_writes(proxy.taken(), "cli") == []

    proxy.reset_counts()
    proxy.answer(summary_reads("cli"), 403, "AccessDenied")
    try:
        refused = cli("-q")
    finally:
        proxy.clear()
    lines = refused.stderr.strip().splitlines()
    assert refused.returncode == 2 and len(lines) == 1 and lines[0].startswith("warclake: error: "), refused.stderr
    assert f"/cli/files/dump={DUMP}/" in lines[0], lines
    assert lake_writes(proxy.taken(), "cli") == []


def test_a_lasting_error_ends_the_planning_without_trying_every_archive(s3, one_client_attempt, tmp_path):
    """A store that keeps failing (500) ends the planning of a dump of many archives once
    an archive's summary has had its attempts, not after every archive has had its own."""
    from warclake.tasks.extract.config import ExtractConfig
    from warclake.tasks.lake.plan import plan_dump
    from warclake.tasks.runtime.retries import RetryPolicy
    from warclake.tasks.runtime.transient import is_transient

    proxy, url = s3["proxy"], f"s3://{BUCKET}/many"
    paths = []
    for i in range(64):
        paths.append(str(tmp_path / f"{DUMP}-{i:05d}.warc.gz"))
        open(paths[-1], "wb").close()
    proxy.reset_counts()
    proxy.answer(summary_reads("many"), 500, "InternalError")
    try:
        with pytest.raises(OSError, match="InternalError|Internal Error|reading s3://"):
            plan_dump(paths, DUMP, url, ExtractConfig(), threads=4,
                      retry=RetryPolicy(delays=(0.2,), worth=is_transient))
    finally:
        proxy.clear()
    reads = [r for r in proxy.taken() if summary_reads("many")(r)]
    assert 2 <= len(reads) <= 2 * 8, len(reads)   # the threads' archives at most, each tried twice

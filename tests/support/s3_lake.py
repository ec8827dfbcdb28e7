"""moto's S3 server behind the counting proxy (tools/faults/s3.py), its settings in this process's
environment, and a filesystem that talks to the server itself, past the proxy: what the
remote-lake tests of the corpus stage and of the dump lock share, the server and archive
of the unusable-lake tests, and the race of two processes that take a lock at the same instant."""
from __future__ import annotations

import os
import posixpath
import signal
import subprocess
import sys
import time
from contextlib import contextmanager

import pytest

from support import procs
from tools.faults.s3 import S3Proxy
from warclake.tasks.sample_dump import make_dump


@contextmanager
def s3_behind_proxy(workdir, bucket: str):
    """Yields {"env": the client's environment, "fs": a direct s3fs filesystem, "proxy": S3Proxy}."""
    s3fs = pytest.importorskip("s3fs")
    with procs.s3_server(workdir) as env, S3Proxy(env["AWS_ENDPOINT_URL"]) as proxy, \
            pytest.MonkeyPatch.context() as mp:
        client_env = dict(env, AWS_ENDPOINT_URL=proxy.url)
        for k, v in client_env.items():
            mp.setenv(k, v)
        # fsspec keeps one filesystem per set of arguments: one made for another module's
        # server would still point at its endpoint
        s3fs.S3FileSystem.clear_instance_cache()
        fs = s3fs.S3FileSystem(client_kwargs={"endpoint_url": env["AWS_ENDPOINT_URL"]}, skip_instance_cache=True)
        fs.mkdir(bucket)
        try:
            yield {"env": client_env, "fs": fs, "proxy": proxy}
        finally:
            s3fs.S3FileSystem.clear_instance_cache()


def s3_fixture(bucket: str):
    """The module fixture ``s3`` of a test file: ``s3_behind_proxy`` with the file's own
    bucket, one server for all of the file's tests (``s3 = s3_fixture(BUCKET)``)."""
    @pytest.fixture(scope="module", name="s3")
    def s3(tmp_path_factory):
        with s3_behind_proxy(tmp_path_factory.mktemp("s3"), bucket) as s3:
            yield s3
    return s3


def server_and_archive_fixtures(dump: str):
    """The module fixtures ``server`` (moto's S3 server, its settings: no proxy) and
    ``archive`` (one small archive of ``dump``) of a test file
    (``server, archive = server_and_archive_fixtures(DUMP)``)."""
    @pytest.fixture(scope="module", name="server")
    def server(tmp_path_factory):
        pytest.importorskip("s3fs")
        with procs.s3_server(tmp_path_factory.mktemp("s3")) as env:
            yield env

    @pytest.fixture(scope="module", name="archive")
    def archive(tmp_path_factory):
        return make_dump(str(tmp_path_factory.mktemp("dump")), files=1, pages_per_file=3, dump=dump,
                         truncate_last=False)[0]
    return server, archive


def kill_when_held(proxy: S3Proxy, held, proc, timeout: float = 180) -> None:
    """Once the request ``held`` by the proxy is seen, SIGKILL ``proc``'s process group (a
    run killed in the middle of that request), then drop the request."""
    try:
        assert held.seen.wait(timeout), "the run never made the held request"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        proxy.release(held, drop=True)


RACE = """
import sys, time
from {module} import {lock}, {locked}
lock = {lock}(sys.argv[1]{args})
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))   # both try at the same instant
try:
    lock.acquire()
except {locked} as exc:
    print("refused", exc)
else:
    print("held")
    time.sleep(2)
    lock.release()
"""


def race_for_lock(url: str, env: dict, module: str, lock: str, locked: str, args: str = "") -> None:
    """Three times, two processes take ``module.lock(url{args})`` at the same instant: one
    holds it and the other is refused."""
    code = RACE.format(module=module, lock=lock, locked=locked, args=args)
    for _ in range(3):
        at = time.time() + 4
        ps = [subprocess.Popen([sys.executable, "-c", code, url, str(at)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=dict(os.environ, **env))
              for _ in range(2)]
        outs = [p.communicate(timeout=60) for p in ps]
        said = sorted(o.split()[0] for o, _ in outs if o)
        assert said == ["held", "refused"], outs


# The storage client (botocore) tries each request once, as its own environment variables
# say: a test of an error the client meets (a reset connection, an endpoint where nothing
# listens) sees it at once instead of after the client's own attempts and pauses.
ONE_CLIENT_ATTEMPT = {"AWS_MAX_ATTEMPTS": "1", "AWS_RETRY_MODE": "standard"}


BUCKET = "warclake-corpus"


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """The server, its settings in this process's environment (s3fs and botocore read them),
    and a client filesystem."""
    s3fs = pytest.importorskip("s3fs")
    with procs.s3_server(tmp_path_factory.mktemp("s3")) as env, pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        # fsspec keeps one filesystem per set of arguments: one made for another module's
        # server would still point at its endpoint
        s3fs.S3FileSystem.clear_instance_cache()
        fs = s3fs.S3FileSystem(client_kwargs={"endpoint_url": env["AWS_ENDPOINT_URL"]})
        fs.mkdir(BUCKET)
        yield {"env": env, "fs": fs}
        s3fs.S3FileSystem.clear_instance_cache()


def upload_lake(s3, local: str, name: str) -> str:
    """A copy of a local lake in the bucket; its URL."""
    s3["fs"].put(local, f"{BUCKET}/{name}", recursive=True)
    return f"s3://{BUCKET}/{name}"


def remote_decision_bytes(fs, url: str) -> dict[str, bytes]:
    root = url[len("s3://"):] + "/corpus/decisions"
    fs.invalidate_cache()
    return {posixpath.relpath(p, root): fs.cat_file(p)
            for p in sorted(fs.find(root)) if p.endswith(".parquet")}

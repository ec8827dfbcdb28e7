"""moto's S3 server behind the counting proxy (s3_proxy.py), its settings in this process's
environment, and a filesystem that talks to the server itself, past the proxy: what the
remote-lake tests of the dump lock and of the corpus stage's reads share."""
from __future__ import annotations

from contextlib import contextmanager

import pytest

import procs
from s3_proxy import S3Proxy


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

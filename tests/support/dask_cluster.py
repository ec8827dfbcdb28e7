"""A real Dask cluster for the tests: a scheduler and two worker processes."""
from __future__ import annotations

from contextlib import contextmanager

import pytest


@contextmanager
def two_worker_processes():
    """The cluster and its client. The workers inherit this process's environment at start:
    the Prefect API the flow reports to (else each worker would start a temporary API server
    of its own) and the S3 server's settings (its endpoint, so the proxy sees their requests)."""
    distributed = pytest.importorskip("distributed")
    from prefect.settings import PREFECT_API_URL

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PREFECT_API_URL", PREFECT_API_URL.value())
        with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                      dashboard_address=None) as c, distributed.Client(c) as client:
            client.wait_for_workers(2, timeout=120)
            yield c, client

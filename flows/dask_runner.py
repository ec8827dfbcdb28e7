"""prefect-dask's DaskTaskRunner, with the run's Prefect API given to the Dask workers.

prefect-dask sends each task the settings it was submitted under, and a Dask worker's task
reports to the API those settings name. A run with no ``PREFECT_API_URL`` of its user's
reports to a server of its own on this machine's loopback (flows/api_server.py, or Prefect's
temporary server for a flow called from Python): the workers report to it when they all reach
it, and start nothing. A worker that cannot (a worker on another machine does not reach this
machine's loopback) is given no API address, so each worker process starts a temporary server
of its own (about 11 s each) and its task runs are seen nowhere; the run says why.

A worker process outlives the run: the logs and events its tasks left queued are sent before
the run's server goes, and its senders stopped, or the next run's would go to the old address
(Prefect keeps one events sender per process whatever the API).
"""
from __future__ import annotations

import logging
import urllib.request
from typing import Any, cast

from prefect.context import FlowRunContext
from prefect.futures import PrefectFuture
from prefect.task_runners import TaskRunner
from prefect.settings import PREFECT_API_URL, temporary_settings
from prefect_dask import DaskTaskRunner as _PrefectDaskTaskRunner

from warclake.flows.api_server import drain_senders, own_api

log = logging.getLogger(__name__)


class DaskTaskRunner(_PrefectDaskTaskRunner):
    """The same runner (same name, same arguments): tasks carry the run's temporary API."""

    _api: str | None = None
    _unreachable = False
    _api_decided = False

    def submit(self, task, parameters, wait_for=None, dependencies=None):
        api = self._api_for_workers()
        if self._unreachable:   # no address the workers cannot reach
            with temporary_settings(restore_defaults={PREFECT_API_URL}):
                return super().submit(task, parameters, wait_for, dependencies)
        if api is None:
            return super().submit(task, parameters, wait_for, dependencies)
        with temporary_settings(updates={PREFECT_API_URL: api}):
            return super().submit(task, parameters, wait_for, dependencies)

    def _api_for_workers(self) -> str | None:
        if not self._api_decided:
            self._api_decided = True
            api = temporary_api()
            if api is not None:
                answered = self.client.run(ready_for, api)   # every worker, once per run
                if all(answered.values()):
                    self._api = api
                else:
                    self._unreachable = True
                    log.warning("Dask workers %s cannot reach this run's temporary Prefect API (%s): each "
                                "starts one of its own; set PREFECT_API_URL to a server they all reach",
                                sorted(w for w, ok in answered.items() if not ok), api)
        return self._api

    def __exit__(self, *exc) -> None:
        if self._api is not None and self._client is not None:
            try:   # while the run's server is up
                self._client.run(drain_senders)
            except Exception as err:   # a worker gone meanwhile: its last logs are lost, nothing else
                log.warning("Dask workers' last logs and events may not have reached the run's API: %s", err)
        super().__exit__(*exc)


def on_cluster(address: str) -> TaskRunner[PrefectFuture[Any]]:
    """A DaskTaskRunner for the cluster at ``address``, typed as the task runner a flow's
    ``with_options`` takes (prefect-dask declares its futures' type otherwise than Prefect's
    flows expect; the runner is one at run time)."""
    return cast("TaskRunner[PrefectFuture[Any]]", DaskTaskRunner(address=address))


def temporary_api() -> str | None:
    """The address of the run's API when it is a server started for this run: ours
    (flows/api_server.py) or Prefect's temporary one (a configured ``PREFECT_API_URL``
    reaches the workers without help)."""
    own = own_api()
    if own is not None:
        return own
    if PREFECT_API_URL.value():
        return None
    client = getattr(FlowRunContext.get(), "client", None)
    url = str(getattr(client, "api_url", "") or "").rstrip("/")
    return url if url.startswith(("http://", "https://")) else None


def ready_for(api: str) -> bool:
    """On a worker: whether the API answers there (its senders made for another API stopped)."""
    drain_senders()
    try:
        with urllib.request.urlopen(f"{api}/health", timeout=10) as r:
            return r.status == 200
    except OSError:
        return False

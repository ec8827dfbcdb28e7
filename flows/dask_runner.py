"""prefect-dask's DaskTaskRunner, with the run's Prefect API given to the Dask workers.

prefect-dask sends each task the settings it was submitted under, and a Dask worker's task
reports to the API those settings name. A run with no ``PREFECT_API_URL`` reports to a
temporary API server that Prefect started for it, whose address is in no setting: each
worker process then started a temporary server of its own (about 11 s each), recorded its
task runs there rather than in the run, and left the server running when the worker was
killed. Here the tasks are submitted with the run's own server as their API, so the workers
report to it and start nothing, unless a worker cannot reach it (a worker on another machine
does not reach this machine's loopback): then they are left as before, and told why.

A worker process outlives the run: the logs and events its tasks left queued are sent before
the run's server goes, and its senders stopped, or the next run's would go to the old address
(Prefect keeps one events sender per process whatever the API).
"""
from __future__ import annotations

import logging
import threading
import urllib.request

from prefect.context import FlowRunContext
from prefect.settings import PREFECT_API_URL, temporary_settings
from prefect_dask import DaskTaskRunner as _PrefectDaskTaskRunner

log = logging.getLogger(__name__)


class DaskTaskRunner(_PrefectDaskTaskRunner):
    """The same runner (same name, same arguments): tasks carry the run's temporary API."""

    _api: str | None = None
    _api_decided = False

    def submit(self, task, parameters, wait_for=None, dependencies=None):
        api = self._api_for_workers()
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


def temporary_api() -> str | None:
    """The address of the run's API when it is a temporary server Prefect started in this
    process (a configured ``PREFECT_API_URL`` reaches the workers without help)."""
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


def drain_senders() -> None:
    """On a worker: send the logs and events queued in this process and stop their senders
    (the next ones start with the settings of the task that needs them)."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    def drain() -> None:
        for service in (APILogWorker, EventsWorker):
            service.drain_all(timeout=10, at_exit=False)

    # in a thread of its own: the worker calls this in its event loop, where drain_all would not block
    sender = threading.Thread(target=drain, name="drain-prefect-senders", daemon=True)
    sender.start()
    sender.join(30)

"""Whether Prefect's server has recorded a run's task runs.

A task run's states reach the server as events, which its task run recorder writes to the
database some time later: a flow run that ends while the recorder still holds them shows
task runs missing or left Running in the UI, and a server that stops then loses them. A
dump's flow waits at its end until the server has recorded every archive's task run in a
final state (:func:`wait_recorded`), for as long as the recording moves on.
"""
from __future__ import annotations

import time
from uuid import UUID

ARCHIVE_RUNS = "extract "   # how every archive's task run name begins (flows/dump_flow.py)
FINAL = ["COMPLETED", "FAILED", "CANCELLED", "CRASHED"]
NOT_FINAL = ["SCHEDULED", "PENDING", "RUNNING", "PAUSED", "CANCELLING"]
STALLED = 30.0              # seconds without one more task run recorded: give up waiting
POLL = 0.5


def count_archive_runs(flow_run_ids: list[UUID], final: bool | None = None) -> int:
    """Archive task runs the server holds for these flow runs: all, or only those in a final
    state (``final`` True) or not (False)."""
    from prefect.client.orchestration import get_client

    task_runs: dict = {"name": {"like_": ARCHIVE_RUNS}}
    if final is not None:
        task_runs["state"] = {"type": {"any_": FINAL if final else NOT_FINAL}}
    body = {"flow_runs": {"id": {"any_": [str(i) for i in flow_run_ids]}}, "task_runs": task_runs}
    with get_client(sync_client=True) as client:
        response = client.request("POST", "/task_runs/count", json=body)
        response.raise_for_status()
        return int(response.json())


def wait_recorded(flow_run_ids: list[UUID], submitted: int, stalled: float = STALLED) -> tuple[int, int]:
    """Wait until the server holds ``submitted`` archive task runs of these flow runs, none of
    them left in a state that is not final, or until ``stalled`` seconds pass with none more
    recorded. Returns (recorded in a final state, recorded but not final)."""
    last, since = -1, time.monotonic()
    while True:
        done, left = count_archive_runs(flow_run_ids, final=True), count_archive_runs(flow_run_ids, final=False)
        if done >= submitted and left == 0:
            return done, left
        if done != last:
            last, since = done, time.monotonic()
        elif time.monotonic() - since > stalled:
            return done, left
        time.sleep(POLL)

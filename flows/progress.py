"""How far a dump's run is, for whoever watches it: a Prefect progress artifact (the UI shows
it on the flow run) and listeners in the same process (``warclake run`` draws its terminal
bars from them). Kept apart from the flow so the flow stays a plain sequence of steps."""
from __future__ import annotations

import re
import time
from contextlib import contextmanager
from typing import Callable

from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.exceptions import MissingContextError

_listeners: list[Callable[[str, dict], None]] = []
UPDATE_EVERY = 1.0  # seconds between two updates of the progress artifact


@contextmanager
def listening(fn: Callable[[str, dict], None]):
    """Call ``fn(event, data)`` for the runs of this process while inside the block. Events:
    ``planned`` (archives, bytes, already_done), ``reading`` (name, bytes: an archive's input
    bytes read so far, from its worker) and ``archive`` (name, status, input_bytes, result:
    the archive's summary figures, or None when its task failed)."""
    _listeners.append(fn)
    try:
        yield
    finally:
        _listeners.remove(fn)


class RunProgress:
    """Counts archives as they finish and tells the artifact and the listeners. The artifact's
    progress is the share of the run's archives extracted well: a failed archive never counts
    towards 100, and the description says how many failed."""

    def __init__(self, dump: str, archives: int, total_bytes: int | None, already_done: int):
        self.archives, self.finished, self.failed = archives, 0, 0
        self.dump, self.already_done = dump, already_done
        self._artifact = None
        self._updated = time.monotonic()
        try:
            self._artifact = create_progress_artifact(
                progress=0.0 if archives else 100.0, key=f"progress-{_key(dump)}",
                description=self._description())
        except MissingContextError:  # called outside a flow run: listeners only
            pass
        self._emit("planned", archives=archives, bytes=total_bytes, already_done=already_done)

    def _description(self) -> str:
        text = f"Archives of {self.dump} extracted in this run ({self.already_done} were done already)"
        return text + (f"; {self.failed} of {self.archives} failed" if self.failed else "")

    def archive_finished(self, name: str, status: str, input_bytes: int | None, result: dict | None = None) -> None:
        self.finished += 1
        failed = status == "failed"
        self.failed += failed
        now = time.monotonic()
        # At most one API round-trip a second (and the last one, and each failure): a dump has
        # ~90,000 archives, and every update costs the API server CPU that the workers could use.
        if self._artifact is not None and (failed or self.finished >= self.archives
                                           or now - self._updated >= UPDATE_EVERY):
            update_progress_artifact(self._artifact,
                                     progress=100.0 * (self.finished - self.failed) / max(self.archives, 1),
                                     description=self._description())
            self._updated = now
        self._emit("archive", name=name, status=status, input_bytes=input_bytes, result=result)

    @staticmethod
    def _emit(event: str, **data) -> None:
        for fn in list(_listeners):
            fn(event, data)


def reading(name: str, bytes_read: int) -> None:
    """An archive's worker has read ``bytes_read`` of its input (for the terminal's bars)."""
    RunProgress._emit("reading", name=name, bytes=bytes_read)


def _key(dump: str) -> str:
    """Artifact keys allow lower-case letters, digits and dashes only."""
    return re.sub(r"[^a-z0-9-]+", "-", dump.lower()).strip("-") or "dump"

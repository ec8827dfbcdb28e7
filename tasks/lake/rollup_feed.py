"""Keeping a dump's rollup near the lake while a run extracts it.

Every ``every`` archives through, the rollup is refreshed in a background thread (one refresh
at a time), so the report at the end of a whole dump's run rolls up only the last archives
instead of all of them. A refresh that fails is only logged: the report's own refresh does
its work again. Local lakes only; a remote lake's rollup is made in a temporary folder by
each report (tasks/lake/rollup.py).
"""
from __future__ import annotations

import logging
import threading

from warclake.tasks.lake.layout import Lake

log = logging.getLogger(__name__)

ROLLUP_EVERY = 2000   # archives through between two refreshes (rollup.PART_ARCHIVES)


class RollupFeed:
    def __init__(self, lake: Lake, dump: str, every: int | None = None):
        self.lake, self.dump, self.every = lake, dump, every or ROLLUP_EVERY
        self.local: bool | None = None if lake.is_local else False   # can it hold its rollup: asked at the first refresh
        self.through = 0
        self.refreshes = 0
        self._thread: threading.Thread | None = None

    def archive_through(self) -> None:
        """An archive is through (done or failed): refresh once ``every`` have been."""
        self.through += 1
        if self.local is False or self.through % self.every:
            return
        from warclake.tasks.lake import rollup   # DuckDB: only once a refresh is due

        if self.local is None:
            self.local = rollup.can_hold(rollup.lake_folder(self.lake.url, self.dump))
            if not self.local:
                return
        if self._thread is not None and self._thread.is_alive():
            return   # the last refresh still runs: the next multiple of ``every`` starts another
        self._thread = threading.Thread(target=self._refresh, name=f"rollup-{self.dump}", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Wait for a refresh under way (the report's refresh would wait for its lock anyway)."""
        if self._thread is not None:
            self._thread.join()

    def _refresh(self) -> None:
        from warclake.tasks.lake import rollup

        try:
            rollup.refresh(self.lake.url, self.dump)
            self.refreshes += 1
        except Exception as exc:  # the report's refresh does it again; the run goes on
            log.warning("dump %s: the rollup was not refreshed during the run: %s", self.dump, exc)

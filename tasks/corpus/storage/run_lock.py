"""One corpus run per lake: ``<lake>/corpus/lock.json``, a lease (``tasks/lake/lease_lock.py``)
on a local folder and on S3.

A run writes the tables of every dump up to the one it judges (and the manifests, the
catalogue, the report), so the lock is the lake's, not a dump's. It is re-entrant within a
process: the library's ``finish`` and ``run_stage`` both take it.
"""
from __future__ import annotations

import logging
import os

from warclake.tasks.corpus.storage.layout import ROOT
from warclake.tasks.lake.layout import Lake
from warclake.tasks.lake.lease_lock import LeaseLock, who

log = logging.getLogger(__name__)

DEFAULT_TTL = float(os.environ.get("WARCLAKE_CORPUS_LOCK_TTL", 120))


class CorpusLocked(OSError):
    """Another run holds the lake's corpus lock (an OSError: one line, exit status 2)."""


class CorpusLockLost(OSError):
    """This run's lease was taken over (it was not renewed in time): it must stop writing."""


class CorpusLock(LeaseLock):
    """``with CorpusLock(lake): ...`` -- CorpusLocked when another live run holds it."""

    locked_error = CorpusLocked
    lost_error = CorpusLockLost
    reentrant = True

    def __init__(self, lake: str | Lake, ttl: float = DEFAULT_TTL):
        super().__init__(lake, f"{ROOT}/lock.json", ttl)

    def describe_locked(self, holder: dict, modified: float) -> str:
        return (f"the corpus stage of the lake at {self.lake.url} is being run by another run "
                f"({who(holder, modified)}); wait for it to finish, or delete {self.url} if that run is gone")

    def describe_lost(self) -> str:
        return (f"the corpus lock of the lake at {self.lake.url} was taken over by another run "
                "(not renewed in time); this run stopped before its next step")

    def took_over(self, holder: dict, modified: float) -> None:
        log.warning("corpus lock of %s: taken over from a run that is gone (%s)", self.lake.url,
                    who(holder, modified))

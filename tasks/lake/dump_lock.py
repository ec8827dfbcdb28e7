"""One writer per dump and lake: ``<lake>/locks/dump=<DUMP>.lock``, a lease
(``lease_lock.py``) on a local folder and on S3.

Two runs of the same dump on the same lake would extract every archive twice and clean up
each other's files. The lock is created only if absent and names its holder; a second run
stops at once with one line naming it. A lock whose holder is gone is taken over with a
warning: at once when the holder was a process of this host, after ``ttl`` seconds without
renewal when it ran elsewhere. The holder checks between archives that its lease is still
its own (``check``) and stops when it is not.
"""
from __future__ import annotations

import logging
import os

from warclake.tasks.lake.layout import Lake, check_dump_name
from warclake.tasks.lake.lease_lock import LeaseLock, who

log = logging.getLogger(__name__)

DEFAULT_TTL = float(os.environ.get("WARCLAKE_DUMP_LOCK_TTL", 120))


class DumpLocked(OSError):
    """Another run holds the dump's lock (an OSError: the CLI prints it as one line)."""


class DumpLockLost(OSError):
    """This run's lease on the dump was taken over (not renewed in time): it must stop."""


class DumpLock(LeaseLock):
    """``with DumpLock(lake, dump): ...`` -- raises DumpLocked when another run holds it
    (this process's own earlier ``acquire`` too: a dump has one writer)."""

    locked_error = DumpLocked
    lost_error = DumpLockLost

    def __init__(self, lake: str | Lake, dump: str, ttl: float = DEFAULT_TTL):
        self.dump = check_dump_name(dump)
        super().__init__(lake, f"locks/dump={self.dump}.lock", ttl)

    def describe_locked(self, holder: dict, modified: float) -> str:
        return (f"dump {self.dump} is being written to this lake by another run ({who(holder, modified)}); "
                f"wait for it to finish, or delete {self.url} if that run is gone")

    def describe_lost(self) -> str:
        return (f"dump {self.dump}: the lock was taken over by another run (not renewed in time); "
                "this run stopped before its next archive")

    def took_over(self, holder: dict, modified: float) -> None:
        log.warning("dump %s: taking over the lock of a run that is gone (%s)", self.dump, who(holder, modified))

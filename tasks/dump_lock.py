"""One writer per dump and lake: ``<lake>/locks/dump=<DUMP>.lock``.

Two runs of the same dump on the same lake would extract every archive twice and clean up
each other's files. The lock file is created atomically (O_EXCL) and names its holder
(host, pid, start time); a second run stops at once with one line naming it. A lock left
by a dead process of this host is taken over with a warning. On another host the pid
cannot be checked: that lock stays until its run ends or someone removes the file.

Local lakes only: object stores have no atomic create-if-absent that fsspec offers
everywhere, so runs on a remote lake are not coordinated (see the README).
"""
from __future__ import annotations

import fcntl
import json
import logging
import os
import posixpath
from datetime import datetime, timezone

from .lake import Lake, check_dump_name, remove_quietly
from .owners import host, pid_alive, process_start

log = logging.getLogger(__name__)


class DumpLocked(OSError):
    """Another run holds the dump's lock (an OSError: the CLI prints it as one line)."""


class DumpLock:
    """``with DumpLock(lake, dump): ...`` -- raises DumpLocked when another run holds it."""

    def __init__(self, lake: str | Lake, dump: str):
        self.lake = lake if isinstance(lake, Lake) else Lake(lake)
        self.path = posixpath.join(self.lake._root, "locks", f"dump={check_dump_name(dump)}.lock")
        self.dump = dump
        self.held = False

    def acquire(self) -> "DumpLock":
        if not self.lake.is_local:
            return self
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        me = {"host": host(), "pid": os.getpid(), "pid_start": process_start(os.getpid()),
              "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        try:
            return self._create(me)
        except FileExistsError:
            pass
        # Taking over is check-then-replace: under a guard, so two runs that both find the
        # holder dead cannot both win (the second finds the first's live lock).
        with open(self.path + ".guard", "a") as guard:
            fcntl.flock(guard, fcntl.LOCK_EX)
            holder = self._holder()
            if os.path.exists(self.path):
                if not self._dead(holder):
                    raise DumpLocked(self._describe(holder))
                log.warning("dump %s: taking over the lock of a run that is gone (%s)", self.dump, _who(holder))
                remove_quietly(self.path)
            try:
                return self._create(me)
            except FileExistsError:
                raise DumpLocked(self._describe(self._holder())) from None

    def _create(self, me: dict) -> "DumpLock":
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "w") as fh:
            json.dump(me, fh)
        self.held, self._me = True, me
        return self

    def check(self) -> None:
        """DumpLocked if a live run holds the lock now (a quick look before starting Prefect;
        the lock itself is taken by the flow)."""
        if self.lake.is_local and os.path.exists(self.path):
            holder = self._holder()
            if not self._dead(holder):
                raise DumpLocked(self._describe(holder))

    def release(self) -> None:
        """Remove the lock if it is still ours (a run that took it over keeps its own)."""
        if self.held and self._holder() == self._me:
            remove_quietly(self.path)
        self.held = False

    def _holder(self) -> dict | None:
        try:
            with open(self.path) as fh:
                return json.load(fh)
        except (OSError, ValueError):
            return None

    @staticmethod
    def _dead(holder: dict | None) -> bool:
        if not holder or holder.get("host") != host():
            return False   # unreadable (being written) or another host: not ours to judge
        try:
            return not pid_alive(int(holder["pid"]), holder.get("pid_start"))
        except (KeyError, TypeError, ValueError):
            return False

    def _describe(self, holder: dict | None) -> str:
        return (f"dump {self.dump} is being written to this lake by another run ({_who(holder)}); "
                f"wait for it to finish, or delete {self.path} if that run is gone")

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()


def _who(holder: dict | None) -> str:
    if not holder:
        return "holder unknown: the lock file is empty or unreadable"
    return f"pid {holder.get('pid')} on {holder.get('host')}, since {holder.get('started')}"

"""Which process owns a temporary or lock file, and whether it is gone.

Temporary names carry an owner tag ``<host>~<pid>+<start>`` (``start``: the process's start
time, which tells a reused pid from the writer), so a run cleaning up after a killed one
removes only files whose process is dead, never those of a run still writing. A pid is only
checked on its own host; a file of another host counts as abandoned once it has
not been touched for ``FOREIGN_GRACE`` seconds (a live writer adds to it far more often).
"""
from __future__ import annotations

import os
import re
import socket
import time
import uuid
from functools import lru_cache
from typing import Iterable

FOREIGN_GRACE = 6 * 3600
_TAG = re.compile(r"\.(?P<host>[A-Za-z0-9_-]+)~(?P<pid>\d+)(?:\+(?P<start>\d+))?~[0-9a-f]+"
                  r"\.tmp(?:\.wal)?$")


def host() -> str:
    """This host's name, reduced to characters safe in a file name."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", socket.gethostname()) or "host"


def owner_tag() -> str:
    pid = os.getpid()
    start = _own_start(pid)
    return f"{host()}~{pid}" + ("" if start is None else f"+{start}")


@lru_cache(maxsize=4)
def _own_start(pid: int) -> str | None:
    """This process's start mark (keyed by pid, as a forked child has its own)."""
    return process_start(pid)


def tmp_name(base: str) -> str:
    """A fresh hidden temporary name for ``base``, tagged with its owner."""
    return f".{base}.{owner_tag()}~{uuid.uuid4().hex[:12]}.tmp"


def is_tmp_name(name: str) -> bool:
    """A temporary of ours (or of a version before owner tags): ``.<base>.<...>.tmp[.wal]``."""
    return name.startswith(".") and name.endswith((".tmp", ".tmp.wal"))


def pid_alive(pid: int, started: str | None = None) -> bool:
    """Whether local process ``pid`` runs (and, given its start mark, is still the same one).
    A zombie (killed, not yet reaped by its new parent) has stopped writing: not alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    stat = proc_stat(pid)
    if stat is not None and stat[0] == "Z":
        return False
    return started is None or stat is None or stat[19] == started


def process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), which tells a reused pid
    from the original; None where /proc is not there."""
    stat = proc_stat(pid)
    return None if stat is None else stat[19]


def proc_stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state first); None without /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
        fields = stat.rsplit(")", 1)[1].split()
        return fields if len(fields) > 19 else None
    except (OSError, IndexError):
        return None


def owner_gone(name: str, path: str) -> bool:
    """Whether the temporary file ``path`` (named ``name``) was left by a process that is gone.

    Names without an owner tag come from versions that wrote none: gone. Tags of other
    hosts go by age; a tag without a start mark (no /proc) goes by the pid alone."""
    m = _TAG.search(name)
    if m is None:
        return True
    if m.group("host") == host():
        return not pid_alive(int(m.group("pid")), m.group("start"))
    try:
        return time.time() - os.path.getmtime(path) > FOREIGN_GRACE
    except OSError:
        return False


def remove_dead_tmp(folder: str, bases: Iterable[str] | None = None) -> int:
    """Remove the temporaries in ``folder`` whose owner is gone (only those of the files
    named in ``bases``, when given: a folder a user chose may hold others' hidden files);
    how many were removed. Those of a writer still running stay."""
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return 0
    prefixes = None if bases is None else tuple(f".{b}." for b in bases)
    n = 0
    for name in names:
        if not is_tmp_name(name) or (prefixes is not None and not name.startswith(prefixes)):
            continue
        path = os.path.join(folder, name)
        if owner_gone(name, path):
            try:
                os.unlink(path)
                n += 1
            except FileNotFoundError:  # another cleaner was first
                pass
    return n

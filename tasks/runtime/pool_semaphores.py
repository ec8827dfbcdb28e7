"""The named semaphores of the extraction pool, removed even when their process was killed.

A process pool started by fork-server makes five named POSIX semaphores (``/dev/shm/sem.mp-*``,
two queues' locks). Python removes them when the process exits, or its resource tracker
does when the process dies alone; a process group killed at once (kill -9 of a run and its
children) takes the tracker with it and the names stay for ever. So each process lists its
pools' names in a small file, ``<tmp>/warclake-semaphores/<pid>-<start>``, removed when it
exits normally; the next pool to start removes the names of processes that are gone.
"""
from __future__ import annotations

import atexit
import os
import tempfile
from multiprocessing.synchronize import SemLock

from warclake.tasks.lake.owners import pid_alive, process_start

try:
    from _multiprocessing import sem_unlink
except ImportError:  # no named semaphores on this platform
    sem_unlink = None


def _dir() -> str:
    return os.path.join(tempfile.gettempdir(), "warclake-semaphores")


def _own_file() -> str:
    return os.path.join(_dir(), f"{os.getpid()}-{process_start(os.getpid()) or 0}")


def names(pool) -> list[str]:
    """The names of a ProcessPoolExecutor's semaphores (its call and result queues' locks)."""
    found = []
    for queue in (getattr(pool, "_call_queue", None), getattr(pool, "_result_queue", None)):
        for value in vars(queue).values() if queue is not None else ():
            if isinstance(value, SemLock) and getattr(value._semlock, "name", None):
                found.append(value._semlock.name)
    return found


def register(pool) -> None:
    found = names(pool)
    if not found or sem_unlink is None:
        return
    os.makedirs(_dir(), exist_ok=True)
    with open(_own_file(), "a") as fh:
        fh.write("".join(f"{n}\n" for n in found))
    atexit.register(_forget)


def _forget() -> None:
    """At a normal exit Python removes the names itself: the list is not needed."""
    try:
        os.unlink(_own_file())
    except FileNotFoundError:
        pass


def remove_left_by_dead_runs() -> int:
    """Remove the semaphores listed by processes that are gone; returns how many were there."""
    if sem_unlink is None or not os.path.isdir(_dir()):
        return 0
    removed = 0
    for entry in os.listdir(_dir()):
        pid, _, start = entry.partition("-")
        if not pid.isdigit() or pid_alive(int(pid), start if start not in ("", "0") else None):
            continue
        path = os.path.join(_dir(), entry)
        try:
            with open(path) as fh:
                listed = fh.read().split()
        except OSError:
            continue
        for name in listed:
            try:
                sem_unlink(name)
                removed += 1
            except (FileNotFoundError, OSError):
                pass
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    return removed

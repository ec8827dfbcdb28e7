"""A local lock's renewal writes a temporary beside the lock and renames it into place: a
run killed between the two leaves that temporary behind. It never counts as the lock, and
the next run that takes the lock removes it (its writer is gone), never the temporary of a
renewal still running. A real process, stopped at that instant and killed."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from warclake.tasks.corpus.storage.run_lock import CorpusLock
from warclake.tasks.lake.dump_lock import DumpLock
from warclake.tasks.lake.owners import tmp_name

# Takes the lock with a short lease, then stops its renewal after the temporary is written,
# before it is renamed into place: where a kill leaves the temporary behind.
HOLDER = """
import os, sys, time
from {module} import {lock}
lock = {lock}(sys.argv[1]{args}, ttl=0.6).acquire()
rename = os.replace
def stopped(src, dst):
    if dst == lock.path:
        print("renewing", flush=True)
        time.sleep(600)
    return rename(src, dst)
os.replace = stopped
time.sleep(600)
"""

LOCKS = {"dump": (DumpLock, ', "CC-MAIN-2099-01"', ("CC-MAIN-2099-01",)),
         "corpus": (CorpusLock, "", ())}


def temporaries(folder: str, lock_path: str) -> list[str]:
    base = os.path.basename(lock_path)
    return sorted(n for n in os.listdir(folder) if n.startswith(f".{base}.") and n.endswith(".tmp"))


@pytest.mark.parametrize("kind", sorted(LOCKS))
def test_a_renewal_killed_halfway_leaves_a_temporary_the_next_holder_removes(tmp_path, kind):
    cls, args, extra = LOCKS[kind]
    lake = str(tmp_path / "lake")
    os.makedirs(lake)
    code = HOLDER.format(module=cls.__module__, lock=cls.__name__, args=args)
    p = subprocess.Popen([sys.executable, "-c", code, lake], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "renewing"
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
    lock = cls(lake, *extra)
    folder = os.path.dirname(lock.path)
    left = temporaries(folder, lock.path)
    assert len(left) == 1 and f"~{p.pid}" in left[0], left
    # a renewal of a run still going (this process) is not the killed run's to lose
    live = os.path.join(folder, tmp_name(os.path.basename(lock.path)))
    open(live, "w").close()

    with lock:   # the killed run's lock is taken over, and its temporary removed
        assert lock.held and str(os.getpid()) in open(lock.path).read()
        assert temporaries(folder, lock.path) == [os.path.basename(live)]
        lock.renew()
        assert temporaries(folder, lock.path) == [os.path.basename(live)]
    assert not os.path.exists(lock.path)

"""One writer per dump on a remote lake: real `warclake extract` processes writing to moto's
S3 server through a proxy on 127.0.0.1 that can hold a request (so a run is caught while it
writes), a holder killed with SIGKILL, a lease taken over from another host, and the corpus
stage refusing a dump whose extraction still runs."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from support.s3_lake import kill_when_held, race_for_lock, s3_fixture
from warclake.tasks.sample_dump import make_dump

BUCKET = "warclake-dump-lock"
DUMP = "CC-MAIN-2099-01"


s3 = s3_fixture(BUCKET)


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    return make_dump(str(tmp_path_factory.mktemp("dump")), files=2, pages_per_file=4, dump=DUMP,
                     truncate_last=False)


def extract(s3, url: str, inputs, env=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "warclake", "extract", "-q", "--dump", DUMP, "--lake", url,
                             "--langs", "all", *inputs], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, **s3["env"], **(env or {})), start_new_session=True)


def finished(p: subprocess.Popen, timeout: float = 300) -> tuple[int, str, str]:
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err


def documents_put(name: str, archive: str):
    """The upload of one archive's documents file into lake ``name``."""
    base = os.path.basename(archive)
    return lambda r: r.method == "PUT" and r.under(f"/{name}/documents/") and r.under(base)


def lock_key(name: str) -> str:
    return f"{name}/locks/dump={DUMP}.lock"


def lock_exists(s3, name: str) -> bool:
    s3["fs"].invalidate_cache()
    return s3["fs"].exists(f"{BUCKET}/{lock_key(name)}")


def summaries(s3, name: str) -> list[str]:
    s3["fs"].invalidate_cache()
    try:
        return sorted(os.path.basename(p) for p in s3["fs"].ls(f"{BUCKET}/{name}/files/dump={DUMP}"))
    except FileNotFoundError:
        return []


def test_a_second_extraction_of_a_dump_on_s3_is_refused_while_the_first_writes(s3, archives):
    name = "two"
    url = f"s3://{BUCKET}/{name}"
    proxy = s3["proxy"]
    # the first run finishes archive 0, then is caught uploading archive 1's documents
    held = proxy.hold(documents_put(name, archives[1]))
    a = extract(s3, url, archives)
    try:
        assert held.seen.wait(180), "the first run never wrote its second archive"
        assert lock_exists(s3, name)
        code, out, err = finished(extract(s3, url, archives))
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1, err
        assert f"dump {DUMP} is being written to this lake by another run (pid {a.pid} on " in lines[0], lines
        # the corpus stage refuses the dump too, with one line, before any work
        corpus = subprocess.run([sys.executable, "-m", "warclake", "corpus", "--lake", url, "--no-report", "-q"],
                                capture_output=True, text=True, env=dict(os.environ, **s3["env"]), timeout=300)
        lines = corpus.stderr.strip().splitlines()
        assert corpus.returncode == 2 and len(lines) == 1, corpus.stderr
        assert f"dump {DUMP} is being written" in lines[0] and f"pid {a.pid}" in lines[0], lines
        s3["fs"].invalidate_cache()
        assert not s3["fs"].exists(f"{BUCKET}/{name}/corpus")   # the corpus stage wrote nothing
    finally:
        proxy.release(held)
    code, out, err = finished(a)
    assert code == 0, err
    assert "2 archives in" in out
    assert summaries(s3, name) == [os.path.basename(p) + ".json" for p in archives]
    assert not lock_exists(s3, name)   # released at the end


def test_the_lock_of_a_killed_extraction_is_taken_over_by_the_next_run(s3, archives):
    name = "killed"
    url = f"s3://{BUCKET}/{name}"
    proxy = s3["proxy"]
    held = proxy.hold(documents_put(name, archives[1]))
    a = extract(s3, url, archives)
    kill_when_held(proxy, held, a)
    assert lock_exists(s3, name)   # left behind by the killed run
    code, out, err = finished(extract(s3, url, archives))
    assert code == 0, err
    assert "taking over the lock of a run that is gone" in err and f"pid {a.pid} on " in err, err
    assert "1 of 2 archives done already" in out   # archive 0 was complete; only archive 1 redone
    assert summaries(s3, name) == [os.path.basename(p) + ".json" for p in archives]
    assert not lock_exists(s3, name)


def test_an_extraction_whose_lease_is_taken_over_stops_before_its_next_archive(s3, archives):
    name = "lost"
    url = f"s3://{BUCKET}/{name}"
    proxy = s3["proxy"]
    # a lease of 3 s: renewed every second, so the run notices within a second that it lost it
    held = proxy.hold(documents_put(name, archives[0]))
    a = extract(s3, url, archives, env={"WARCLAKE_DUMP_LOCK_TTL": "3"})
    try:
        assert held.seen.wait(180)
        # another run that judged the lock stale writes its own over it
        s3["fs"].call_s3("put_object", Bucket=BUCKET, Key=lock_key(name), Body=b"{}",
                         Metadata={"owner": "other", "host": "elsewhere", "pid": "7", "ttl": "600",
                                   "started": "now"})
        time.sleep(3)
    finally:
        proxy.release(held)
    code, out, err = finished(a)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1, err
    assert f"dump {DUMP}: the lock was taken over by another run" in lines[0], lines
    assert summaries(s3, name) == [os.path.basename(archives[0]) + ".json"]   # archive 1 never started
    head = s3["fs"].call_s3("head_object", Bucket=BUCKET, Key=lock_key(name))
    assert head["Metadata"]["owner"] == "other"   # the other run's lock is left alone


def test_a_lock_of_another_host_is_taken_over_once_its_lease_expires(s3):
    from warclake.tasks.lake.dump_lock import DumpLock, DumpLocked

    url = f"s3://{BUCKET}/lease"
    s3["fs"].call_s3("put_object", Bucket=BUCKET, Key=lock_key("lease"), Body=b"{}",
                     Metadata={"owner": "x", "host": "elsewhere", "pid": "1", "ttl": "2", "started": "then"})
    with pytest.raises(DumpLocked, match="pid 1 on elsewhere"):
        DumpLock(url, DUMP).acquire()
    time.sleep(5)
    with DumpLock(url, DUMP, ttl=600) as mine:
        head = s3["fs"].call_s3("head_object", Bucket=BUCKET, Key=lock_key("lease"))
        assert head["Metadata"]["owner"] == mine.meta["owner"]
        with pytest.raises(DumpLocked, match=f"pid {os.getpid()} on "):
            DumpLock(url, DUMP).acquire()   # one writer per dump, in this process too
        DumpLock(url, "CC-MAIN-2099-02").acquire().release()   # other dumps are not held up
    assert not lock_exists(s3, "lease")


@pytest.mark.parametrize("where", ["s3", "local"])
def test_two_extractions_that_start_together_one_gets_the_dump(s3, tmp_path, where):
    url = f"s3://{BUCKET}/race" if where == "s3" else str(tmp_path / "race")
    race_for_lock(url, s3["env"], "warclake.tasks.lake.dump_lock", "DumpLock", "DumpLocked", args=', "D"')


def test_a_lock_file_left_on_a_local_lake_names_its_holder_as_before(tmp_path):
    """A local lock is the same lease: its file holds the holder as JSON."""
    from warclake.tasks.lake.dump_lock import DumpLock

    with DumpLock(str(tmp_path), DUMP) as lock:
        with open(tmp_path / "locks" / f"dump={DUMP}.lock") as fh:
            holder = json.load(fh)
        assert holder["pid"] == str(os.getpid()) and holder["owner"] == lock.meta["owner"]
        lock.renew()
        lock.check()
    assert not (tmp_path / "locks" / f"dump={DUMP}.lock").exists()

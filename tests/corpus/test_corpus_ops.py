"""The corpus stage's operations on a remote lake, against moto's S3 server behind a proxy
on 127.0.0.1 that counts requests and breaks connections: the per-dump manifest (reads of
the global steps that do not grow with the archives; a killed run never leaves it claiming
an archive that is not complete), the lake's corpus lock (two real processes), and a
network fault healed by the flow's retries, or ending the run with one line."""
from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from support.corpus_runs import DUMP, judged_known_lake, split_lake
from support.s3_lake import ONE_CLIENT_ATTEMPT, kill_when_held, race_for_lock, s3_fixture

BUCKET = "warclake-ops"


s3 = s3_fixture(BUCKET)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The known lake (two archives), and its decisions judged on local disk."""
    return judged_known_lake(tmp_path_factory.mktemp("ref"))


def upload(s3, local: str, name: str) -> str:
    s3["fs"].put(local, f"{BUCKET}/{name}", recursive=True)
    return f"s3://{BUCKET}/{name}"


def remote_decisions(s3, url: str) -> dict[str, bytes]:
    fs = s3["fs"]
    root = url[len("s3://"):] + "/corpus/decisions"
    fs.invalidate_cache()
    return {os.path.relpath(p, root): fs.cat_file(p) for p in sorted(fs.find(root)) if p.endswith(".parquet")}


def cli(s3, *args, env=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "warclake", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, **s3["env"], **(env or {})),
                            start_new_session=True)


def finished(p: subprocess.Popen, timeout: float = 300) -> tuple[int, str, str]:
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err


def manifest(s3, url: str) -> dict:
    s3["fs"].invalidate_cache()
    data = json.loads(s3["fs"].cat_file(f"{url[5:]}/corpus/manifest/dump={DUMP}/signatures.json"))
    return {w: k for w, k in data["archives"]}


def state_key(s3, url: str, warc: str):
    path = f"{url[5:]}/corpus/state/signatures/dump={DUMP}/{warc}.json"
    s3["fs"].invalidate_cache()
    return json.loads(s3["fs"].cat_file(path))["key"] if s3["fs"].exists(path) else None


# -- 1. the manifest ---------------------------------------------------------------------

def metadata_requests(reqs) -> dict:
    return {"list": sum(r.is_list for r in reqs),
            "json_reads": sum(r.method in ("GET", "HEAD") and r.path.endswith(".json") for r in reqs),
            "archive_state_reads": sum(r.under("/corpus/state/signatures/") and r.method in ("GET", "HEAD")
                                       for r in reqs)}


def global_step_requests(s3, url: str) -> tuple[dict, dict]:
    """Requests of the global steps of the dump: doing them, then finding them done."""
    from warclake.tasks.corpus.stage import GLOBAL_STEPS, DumpContext, StageOptions
    from warclake.tasks.corpus.storage.layout import CorpusLayout

    out = []
    for _ in range(2):
        s3["proxy"].reset_counts()
        ctx = DumpContext.build(CorpusLayout(url), [DUMP], DUMP, StageOptions())
        for _, step in GLOBAL_STEPS:
            step(ctx)
        out.append(metadata_requests(s3["proxy"].taken()))
    return out[0], out[1]


def test_the_global_steps_read_one_manifest_however_many_archives(s3, reference, tmp_path):
    from warclake.tasks.corpus.checks import prepare
    from warclake.tasks.corpus.stage import GLOBAL_STATE_STEPS, StageOptions, run_stage
    from warclake.tasks.corpus.storage.dump_inputs import dump_inputs
    from warclake.tasks.corpus.storage.layout import CorpusLayout

    counts = {}
    for n in (2, 6):
        local = str(tmp_path / f"lake{n}")
        split_lake(reference["pristine"], local, n)
        url = upload(s3, local, f"manifest-{n}")
        opts = StageOptions()
        dumps, archives = prepare(url, None, opts.decide)
        run_stage(url, dumps, archives, opts)
        assert sorted(manifest(s3, url)) == [f"arch-{i:05d}.warc.gz" for i in range(n)]
        # the global steps again from scratch, counted
        s3["fs"].rm([f"{BUCKET}/manifest-{n}/corpus/state/{s}" for s in GLOBAL_STATE_STEPS], recursive=True)
        counts[n] = global_step_requests(s3, url)
        # without its manifest, a dump's inputs are found from every archive's state file
        # (and the manifest written again): what each global step read before
        before = dump_inputs(CorpusLayout(url), DUMP)
        s3["fs"].rm(f"{BUCKET}/manifest-{n}/corpus/manifest", recursive=True)
        s3["proxy"].reset_counts()
        assert dump_inputs(CorpusLayout(url), DUMP) == before
        counts[n] += (metadata_requests(s3["proxy"].taken()),)
        assert sorted(manifest(s3, url)) == [f"arch-{i:05d}.warc.gz" for i in range(n)]
    print("\nmetadata requests (doing the global steps, finding them done, rebuilding the manifest):",
          json.dumps(counts))
    for doing, done, rebuild in counts.values():
        assert doing["archive_state_reads"] == 0 and done["archive_state_reads"] == 0
    assert counts[2][0] == counts[6][0] and counts[2][1] == counts[6][1]   # O(1) in archives
    assert counts[2][2]["archive_state_reads"] == 2 and counts[6][2]["archive_state_reads"] == 6


def test_a_killed_redo_never_leaves_the_manifest_claiming_an_archive_not_complete(s3, reference):
    url = upload(s3, reference["pristine"], "crash")
    code, out, err = finished(cli(s3, "corpus", "--lake", url, "--no-report", "-q"))
    assert code == 0, err
    first = manifest(s3, url)
    assert sorted(first) == ["arch-00000.warc.gz", "arch-00001.warc.gz"]
    # archive 1 extracted again: a new summary, so its per-archive step is redone
    summary = f"{BUCKET}/crash/files/dump={DUMP}/arch-00001.warc.gz.json"
    s = json.loads(s3["fs"].cat_file(summary))
    s3["fs"].pipe(summary, json.dumps({**s, "finished": "2024-06-01T00:00:00+00:00"}).encode())
    proxy = s3["proxy"]
    held = proxy.hold(lambda r: r.method == "PUT" and r.under("/corpus/docsigs/") and r.under("arch-00001"))
    p = cli(s3, "corpus", "--lake", url, "--no-report", "-q")
    try:
        assert held.seen.wait(120), "the redo never wrote its outputs"
        during = manifest(s3, url)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(30)
    finally:
        proxy.release(held, drop=True)
    after = manifest(s3, url)
    # the archive being redone was dropped before its files were touched; every archive the
    # manifest names is complete, with the key of its state file
    assert sorted(during) == sorted(after) == ["arch-00000.warc.gz"]
    for warc, key in after.items():
        assert state_key(s3, url, warc) == key
    assert state_key(s3, url, "arch-00001.warc.gz") is None
    # the run again: the lock of the killed run is taken over, the archive redone
    code, out, err = finished(cli(s3, "corpus", "--lake", url, "--no-report", "-q"))
    assert code == 0, err
    done = manifest(s3, url)
    assert done["arch-00001.warc.gz"]["finished"] == "2024-06-01T00:00:00+00:00"
    assert done["arch-00001.warc.gz"] == state_key(s3, url, "arch-00001.warc.gz")
    assert f"{DUMP}: 11 of 14 documents kept" in out
    # a manifest lost is rebuilt from the state files: the same inputs, the same decisions
    decided = remote_decisions(s3, url)
    s3["fs"].rm(f"{BUCKET}/crash/corpus/manifest", recursive=True)
    s3["fs"].rm(f"{BUCKET}/crash/corpus/state/doc_decisions", recursive=True)
    code, out, err = finished(cli(s3, "corpus", "--lake", url, "--no-report", "-q"))
    assert code == 0, err
    assert remote_decisions(s3, url) == decided and manifest(s3, url) == done


# -- 3. one run per lake -------------------------------------------------------------------

def test_two_runs_on_one_remote_lake_one_writes(s3, reference):
    url = upload(s3, reference["pristine"], "two-runs")
    proxy = s3["proxy"]
    held = proxy.hold(lambda r: r.method == "PUT" and r.under("/two-runs/corpus/decisions/documents/"))
    a = cli(s3, "corpus", "--lake", url, "--no-report", "-q")
    try:
        assert held.seen.wait(180), "the first run never reached its document decisions"
        code, out, err = finished(cli(s3, "corpus", "--lake", url, "--no-report", "-q"))
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1, err
        assert f"pid {a.pid} on " in lines[0] and "is being run by another run" in lines[0], lines
    finally:
        proxy.release(held)
    code, out, err = finished(a)
    assert code == 0, err
    assert remote_decisions(s3, url) == reference["decisions"]
    s3["fs"].invalidate_cache()
    assert not s3["fs"].exists(f"{BUCKET}/two-runs/corpus/lock.json")   # released

    # a run killed while it holds the lock: the next run on this host takes it over
    url = upload(s3, reference["pristine"], "two-runs-killed")
    held = proxy.hold(lambda r: r.method == "PUT" and r.under("/two-runs-killed/corpus/pairs/"))
    a = cli(s3, "corpus", "--lake", url, "--no-report", "-q")
    kill_when_held(proxy, held, a)
    code, out, err = finished(cli(s3, "corpus", "--lake", url, "--no-report", "-q"))
    assert code == 0, err
    assert "taken over from a run that is gone" in err and f"pid {a.pid}" in err
    assert remote_decisions(s3, url) == reference["decisions"]


@pytest.mark.parametrize("where", ["s3", "local"])
def test_two_processes_that_start_together_one_gets_the_lock(s3, tmp_path, where):
    url = f"s3://{BUCKET}/race" if where == "s3" else str(tmp_path / "race")
    race_for_lock(url, s3["env"], "warclake.tasks.corpus.storage.run_lock", "CorpusLock", "CorpusLocked")


HOLD = """
import sys, time
from warclake.tasks.corpus.storage.run_lock import CorpusLock
with CorpusLock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(4)
"""


@pytest.mark.parametrize("where", ["s3", "local"])
def test_a_run_that_may_wait_takes_the_lock_once_the_other_run_ends(s3, tmp_path, where):
    """What an extraction's corpus follow-up does when another dump's corpus run holds the lake."""
    from warclake.tasks.corpus.storage.run_lock import CorpusLock, CorpusLocked

    url = f"s3://{BUCKET}/wait" if where == "s3" else str(tmp_path / "wait")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, url], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, **s3["env"]))
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(CorpusLocked, match=f"pid {holder.pid} on"):
            CorpusLock(url).acquire()
        t0 = time.monotonic()
        lock = CorpusLock(url).acquire(wait=60)
        assert time.monotonic() - t0 > 1   # it waited for the holder to let go
        lock.release()
    finally:
        holder.wait(30)
    assert holder.returncode == 0


def test_a_lease_not_renewed_is_taken_over_and_the_old_holder_stops(s3):
    from warclake.tasks.corpus.storage.run_lock import CorpusLock, CorpusLocked, CorpusLockLost

    url = f"s3://{BUCKET}/lease"
    path = f"{BUCKET}/lease/corpus/lock.json"
    # a holder on another host, its lease 2 s, written and never renewed
    s3["fs"].call_s3("put_object", Bucket=BUCKET, Key="lease/corpus/lock.json", Body=b"{}",
                     Metadata={"owner": "x", "host": "elsewhere", "pid": "1", "ttl": "2", "started": "then"})
    with pytest.raises(CorpusLocked, match="pid 1 on elsewhere"):
        CorpusLock(url).acquire()
    time.sleep(5)
    mine = CorpusLock(url, ttl=600).acquire()
    assert json.loads(s3["fs"].cat_file(path))["owner"] == mine.meta["owner"]
    mine.renew()
    mine.check()
    # someone else's write over it (a run that judged it stale): this run learns at its renewal
    s3["fs"].pipe(path, b"{}")
    mine.renew()
    with pytest.raises(CorpusLockLost, match="taken over by another run"):
        mine.check()
    mine.release()
    assert s3["fs"].cat_file(path) == b"{}"   # not removed: it is not ours any more


# -- 2. network faults ----------------------------------------------------------------------

# the storage client tries each request once (its own retries would hide the fault); the
# flow's retry messages are logged at INFO
NO_CLIENT_RETRIES = dict(ONE_CLIENT_ATTEMPT, PREFECT_LOGGING_LEVEL="INFO")


def under_fault(s3, url: str, *args: str, env: dict = NO_CLIENT_RETRIES) -> tuple[int, str, str]:
    """A corpus run (no report) with the fault the caller gave the proxy; the fault is
    cleared once the run ends, however it ends."""
    try:
        return finished(cli(s3, "corpus", "--lake", url, "--no-report", *args, env=env))
    finally:
        s3["proxy"].clear()


def fails_for_good(s3, url: str, flow: tuple, rule) -> tuple[str, list[str], str]:
    """A corpus run while ``rule``'s requests fail for ever: it must end with exit 1 and one
    error line, the last; returns that line, stderr's lines and stderr."""
    s3["proxy"].fail(rule)
    code, out, err = under_fault(s3, url, "-q", *flow, env=dict(NO_CLIENT_RETRIES, PREFECT_LOGGING_LEVEL="WARNING"))
    lines = err.strip().splitlines()
    said = [ln for ln in lines if ln.startswith("warclake: error:")]
    assert code == 1 and len(said) == 1 and lines[-1] == said[0], err[-3000:]
    return said[0], lines, err


def pairs_writes(name: str):
    return lambda r: r.method == "PUT" and r.under(f"/{name}/corpus/pairs/")


@pytest.mark.parametrize("how", ["library", "flow"])
def test_a_network_fault_is_healed_by_a_retry_and_a_permanent_one_ends_with_one_line(s3, reference, how):
    proxy = s3["proxy"]
    flow = ["--flow"] if how == "flow" else []
    url = upload(s3, reference["pristine"], f"faults-{how}")
    # every write of the pairs step has its connection reset for 5 seconds: longer than the
    # storage client's own attempts, shorter than the stage's retries (2 s, then 8 s)
    rule = proxy.fail(pairs_writes(f"faults-{how}"), seconds=5)
    code, out, err = under_fault(s3, url, *flow)
    assert code == 0, err
    assert rule.hits >= 1
    assert ("Retry 1/2" if flow else ": pairs: Could not connect to the endpoint URL") in err, err[-3000:]
    assert f"{DUMP}: 11 of 14 documents kept" in out
    assert remote_decisions(s3, url) == reference["decisions"]

    # the same fault for ever: the run fails after its retries, with one line and exit 1
    url = upload(s3, reference["pristine"], f"faults-{how}-permanent")
    said, lines, err = fails_for_good(s3, url, flow, pairs_writes(f"faults-{how}-permanent"))
    assert "Could not connect to the endpoint URL" in said and "/corpus/pairs/" in said, said
    if not flow:   # without Prefect, nothing but that line (the flow's own log comes before it)
        assert len(lines) == 1, err
    s3["fs"].invalidate_cache()
    assert not s3["fs"].exists(f"{BUCKET}/faults-{how}-permanent/corpus/lock.json")   # released on failure


def state_reads_of(name: str):
    return lambda r: r.method == "GET" and r.under(f"/{name}/corpus/state/")


def corpus_writes(reqs, name: str) -> list[str]:
    """The outputs and state files a run wrote (its lock's writes aside)."""
    return [r.path for r in reqs if r.method in ("PUT", "POST", "DELETE") and r.under(f"/{name}/corpus/")
            and not r.under("/corpus/lock.json")]


@pytest.fixture(scope="module")
def judged(s3, reference) -> str:
    """The known lake in the bucket, judged: the name of its folder."""
    from warclake.tasks.corpus.checks import prepare
    from warclake.tasks.corpus.stage import StageOptions, run_stage

    url = upload(s3, reference["pristine"], "judged")
    opts = StageOptions()
    run_stage(url, *prepare(url, None, opts.decide), opts)
    return "judged"


@pytest.mark.parametrize("how", ["library", "flow"])
def test_a_state_file_the_store_fails_to_give_is_read_again_not_redone(s3, reference, judged, how):
    """A re-run over a judged dump whose state files the store fails to give for a moment
    (500 InternalError): the step is retried, not taken for undone, so nothing is written
    again; a refusal that lasts (403 AccessDenied) ends the run with one line."""
    proxy = s3["proxy"]
    flow = ["--flow"] if how == "flow" else []
    url = f"s3://{BUCKET}/{judged}"
    proxy.reset_counts()
    rule = proxy.answer(state_reads_of(judged), 500, "InternalError", seconds=1)
    code, out, err = under_fault(s3, url, *flow)
    assert code == 0, err[-3000:]
    assert rule.hits >= 1 and "InternalError" in err, err[-3000:]
    assert corpus_writes(proxy.taken(), judged) == []   # every step found done, none redone
    assert f"{DUMP}: 11 of 14 documents kept" in out
    assert remote_decisions(s3, url) == reference["decisions"]
    if flow:
        return   # a failure that lasts ends a flow run with one line: the network fault test above

    # no retry helps a refusal: one line, exit 1, nothing redone
    proxy.reset_counts()
    proxy.answer(state_reads_of(judged), 403, "AccessDenied")
    code, out, err = under_fault(s3, url, "-q")
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("warclake: error: the corpus stage failed:"), err
    assert "AccessDenied" in lines[0] and "/corpus/state/" in lines[0], lines
    assert corpus_writes(proxy.taken(), judged) == []


def manifest_writes(name: str, after: int = 0):
    """The writes of the dump's manifest (signatures.json) but the first ``after``."""
    seen = itertools.count()
    return lambda r: (r.method == "PUT" and r.under(f"/{name}/corpus/manifest/") and r.under("/signatures.json")
                      and next(seen) >= after)


@pytest.mark.parametrize("how", ["library", "flow"])
def test_a_manifest_write_is_retried_and_a_lasting_failure_ends_with_one_line(s3, reference, how):
    """The run's own writes of the manifest (the last one, as the per-archive step ends)
    are retried as a step is; when they fail for good, the run ends with the error's one
    line (the flow run Failed, not the storage client's traceback) and exit 1."""
    proxy = s3["proxy"]
    flow = ["--flow"] if how == "flow" else []
    name = f"manifest-{how}"
    url = upload(s3, reference["pristine"], name)
    # the first write (the manifest rebuilt before the archives are signed) goes through;
    # the last one's connection is reset for 5 s: healed by the run's retries (2 s, 8 s)
    rule = proxy.fail(manifest_writes(name, after=1), seconds=5)
    code, out, err = under_fault(s3, url, *flow)
    assert code == 0, err[-3000:]
    assert rule.hits >= 1 and "manifest: Could not connect to the endpoint URL" in err, err[-3000:]
    assert f"{DUMP}: 11 of 14 documents kept" in out
    assert remote_decisions(s3, url) == reference["decisions"]
    assert len(manifest(s3, url)) == 2   # both archives, as the retried write left it

    name += "-permanent"
    url = upload(s3, reference["pristine"], name)
    said, _, err = fails_for_good(s3, url, flow, manifest_writes(name))
    assert "Could not connect to the endpoint URL" in said and "/corpus/manifest/" in said, said
    assert "Traceback" not in err, err[-3000:]
    assert not s3["fs"].exists(f"{BUCKET}/{name}/corpus/decisions")   # no global step ran

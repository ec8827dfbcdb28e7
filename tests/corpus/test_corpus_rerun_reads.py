"""A corpus run over a dump already judged reads a fixed number of objects, however many
archives the dump has: each archive's extraction summary is read once, when it first appears
or changes (its listing's ETag or size and time), not on every run; and a run reads each of
the global steps' state files and manifests at most once, however many steps and later dumps
name it in their keys. What DuckDB asks about the corpus tables' files is answered from a
listing of their folders, not a HEAD per file and question. Counted through the proxy in
front of moto's S3 server; a changed or failed summary is still noticed."""
from __future__ import annotations

import json
import os
import urllib.parse
from collections import Counter

import pytest

from support.corpus_lake import known_lake
from support.corpus_runs import DUMP, second_dump, split_lake
from support.dask_cluster import two_worker_processes
from support.s3_lake import s3_fixture

BUCKET = "warclake-rerun"


s3 = s3_fixture(BUCKET)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("known") / "lake")
    known_lake(root, DUMP)
    return root


def judge(url: str) -> dict:
    """What `warclake corpus --no-report` does: every check, then every step."""
    from warclake.tasks.corpus.checks import prepare
    from warclake.tasks.corpus.stage import StageOptions, run_stage

    opts = StageOptions()
    dumps, archives = prepare(url, None, opts.decide)
    return run_stage(url, dumps, archives, opts)


def state_reads(reqs) -> Counter:
    """Reads (GET or HEAD) of each state file and manifest of the corpus stage, by path."""
    return Counter(urllib.parse.unquote(r.path) for r in reqs if r.method in ("GET", "HEAD") and not r.is_list
                   and (r.under("/corpus/state/") or r.under("/corpus/manifest/")))


def table_requests(reqs) -> dict:
    """What DuckDB's reads of the corpus tables (their parquet files) cost besides the reads
    themselves: HEADs of those files, and listings of their folders."""
    files = {urllib.parse.unquote(r.path) for r in reqs if r.method == "GET" and not r.is_list
             and r.under("/corpus/") and r.path.endswith(".parquet")}
    folders = {f.rsplit("/", 1)[0].split("/", 2)[2] + "/" for f in files}   # as a listing's prefix
    return {"table_files": len(files), "table_folders": len(folders),
            "table_heads": sum(r.method == "HEAD" and urllib.parse.unquote(r.path) in files for r in reqs),
            "table_lists": sum(r.is_list and urllib.parse.parse_qs(r.query).get("prefix", [""])[0] in folders
                               for r in reqs)}


def requests_of(s3, fn) -> tuple[object, dict]:
    s3["proxy"].reset_counts()
    out = fn()
    reqs = s3["proxy"].taken()
    reads = state_reads(reqs)
    return out, {"get": sum(r.method == "GET" and not r.is_list for r in reqs),
                 "head": sum(r.method == "HEAD" for r in reqs),
                 "list": sum(r.is_list for r in reqs),
                 "summary_reads": sum(r.method in ("GET", "HEAD") and r.under("/files/") for r in reqs),
                 "state_reads": sum(reads.values()), "state_objects_read": sorted(reads),
                 "most_reads_of_a_state_object": max(reads.values(), default=0),
                 "read_twice": sorted(k for k, v in reads.items() if v > 1), **table_requests(reqs)}


def assert_tables_read_from_listings(counts: dict) -> None:
    """DuckDB asks its filesystem about each file it reads (exists, size, time) on every
    query: answered from one listing of each folder, not a HEAD per file and question."""
    assert counts["table_files"] > 0 and counts["table_heads"] == 0, counts
    assert counts["table_lists"] <= counts["table_files"], counts


def global_state_objects(s3, prefix: str) -> list[str]:
    """Paths of the global steps' state files and the manifests, as the proxy sees them:
    what a run over judged dumps must read (once each) to find its steps done."""
    from warclake.tasks.corpus.stage import GLOBAL_STATE_STEPS

    found = s3["fs"].find(f"{prefix}/corpus/state") + s3["fs"].find(f"{prefix}/corpus/manifest")
    return sorted("/" + f for f in found
                  if "/corpus/manifest/" in f or f.split("/corpus/state/")[1].split("/")[0] in GLOBAL_STATE_STEPS)


def brief(counts: dict) -> dict:
    return {k: v for k, v in counts.items() if k != "state_objects_read"}


def test_a_rerun_of_a_judged_dump_reads_the_same_objects_for_2_and_6_archives(s3, pristine, tmp_path):
    counts = {}
    for n in (2, 6):
        local = str(tmp_path / f"lake{n}")
        split_lake(pristine, local, n)
        s3["fs"].put(local, f"{BUCKET}/rerun-{n}", recursive=True)
        url = f"s3://{BUCKET}/rerun-{n}"
        first, counts[f"first {n}"] = requests_of(s3, lambda: judge(url))
        assert first["signed"] == n and counts[f"first {n}"]["summary_reads"] >= n
        again, counts[n] = requests_of(s3, lambda: judge(url))
        assert again["signed"] == 0 and again["partitions"] == 0   # nothing to do
        # each state file and manifest read once to find the steps done, none twice
        assert counts[n]["state_objects_read"] == global_state_objects(s3, f"{BUCKET}/rerun-{n}")
        assert counts[f"first {n}"]["most_reads_of_a_state_object"] == counts[n]["most_reads_of_a_state_object"] == 1
    print("\nrequests of a run (first, then again):", json.dumps({k: brief(v) for k, v in counts.items()}))
    assert counts[2]["summary_reads"] == counts[6]["summary_reads"] == 0
    assert brief(counts[2]) == brief(counts[6])   # O(1) in archives


def two_dump_lake(s3, tmp_path, name: str) -> str:
    """The known lake with a second dump, extracted and not yet judged, uploaded under
    ``name``: its URL."""
    import shutil

    local = str(tmp_path / "two")
    second_dump(local, known_lake(local, DUMP))
    shutil.rmtree(os.path.join(local, "corpus"), ignore_errors=True)
    s3["fs"].put(local, f"{BUCKET}/{name}", recursive=True)
    return f"s3://{BUCKET}/{name}"


def test_a_run_over_two_dumps_reads_each_state_file_once(s3, pristine, tmp_path):
    """The later dump's keys name the earlier dump's statistics, groups and pairs: read once
    per run, not once per step or dump that names them."""
    url = two_dump_lake(s3, tmp_path, "two-dumps")
    first, counts_first = requests_of(s3, lambda: judge(url))
    assert first["signed"] == 3
    again, counts = requests_of(s3, lambda: judge(url))
    assert again["signed"] == 0 and again["partitions"] == 0
    print("\nrequests of a run over two dumps (first, then again):", json.dumps([brief(counts_first), brief(counts)]))
    assert_tables_read_from_listings(counts_first)
    assert counts_first["most_reads_of_a_state_object"] == counts["most_reads_of_a_state_object"] == 1
    assert counts["state_objects_read"] == global_state_objects(s3, f"{BUCKET}/two-dumps")


def flow_runs_read_each_state_once(s3, flow, url: str, name: str, what: str) -> dict:
    """A first flow run over the two-dump lake ``name`` at ``url`` and a re-run: each reads
    every state file and manifest at most once, the re-run all of the global steps' state
    files; returns the first run's request counts."""
    def flow_run() -> dict:
        state = flow(lake=url, report=False, return_state=True)
        assert state.is_completed(), state.message
        return state.result()

    first, counts_first = requests_of(s3, flow_run)
    assert first["signed"] == 3
    again, counts = requests_of(s3, flow_run)
    assert again["signed"] == 0
    print(f"\nrequests of {what} over two dumps (first, then again):",
          json.dumps([brief(counts_first), brief(counts)]))
    assert counts["state_objects_read"] == global_state_objects(s3, f"{BUCKET}/{name}")
    assert counts_first["most_reads_of_a_state_object"] == counts["most_reads_of_a_state_object"] == 1, \
        (counts_first["read_twice"], counts["read_twice"])
    return counts_first


def test_a_flow_run_reads_each_state_file_once(s3, prefect_harness, tmp_path):
    """The flow's tasks (on its default runner, threads of one process) share the run's
    state files and manifests as the stage without Prefect does: each read at most once per
    flow run, over two dumps, on the first run and on a re-run with nothing to do."""
    from warclake.flows.corpus_flow import corpus_flow

    url = two_dump_lake(s3, tmp_path, "flow")

    counts_first = flow_runs_read_each_state_once(s3, corpus_flow, url, "flow", "a flow run")
    assert_tables_read_from_listings(counts_first)


def test_a_changed_or_failed_summary_is_still_noticed(s3, pristine, tmp_path):
    from warclake.tasks.corpus.checks import prepare
    from warclake.tasks.corpus.settings import DecisionConfig

    local = str(tmp_path / "lake")
    split_lake(pristine, local, 3)
    s3["fs"].put(local, f"{BUCKET}/changed", recursive=True)
    url = f"s3://{BUCKET}/changed"

    def finished() -> tuple[dict, dict]:
        (_, archives), counts = requests_of(s3, lambda: prepare(url, None, DecisionConfig()))
        return dict(archives[DUMP]), counts

    archives, counts = finished()
    assert sorted(archives) == [f"arch-0000{i}.warc.gz" for i in range(3)] and counts["summary_reads"] == 3
    assert finished()[1]["summary_reads"] == 0
    files = f"{BUCKET}/changed/files/dump={DUMP}"
    # archive 1 extracted again (a new summary): only its summary is read, and what the
    # stage keys its step on (the summary's "finished") is the new one
    s = json.loads(s3["fs"].cat_file(f"{files}/arch-00001.warc.gz.json"))
    s3["fs"].pipe(f"{files}/arch-00001.warc.gz.json", json.dumps({**s, "finished": "2024-06-01T00:00:00+00:00"}).encode())
    archives, counts = finished()
    assert counts["summary_reads"] == 1, counts
    assert archives["arch-00001.warc.gz"]["finished"] == "2024-06-01T00:00:00+00:00"
    # archive 2's extraction failed on its redo: it leaves the dump's finished archives
    s = json.loads(s3["fs"].cat_file(f"{files}/arch-00002.warc.gz.json"))
    s3["fs"].pipe(f"{files}/arch-00002.warc.gz.json", json.dumps({**s, "status": "failed"}).encode())
    archives, counts = finished()
    assert counts["summary_reads"] == 1 and sorted(archives) == ["arch-00000.warc.gz", "arch-00001.warc.gz"]
    # a summary removed leaves too; a record of the summaries lost is rebuilt by reading each
    s3["fs"].rm(f"{files}/arch-00001.warc.gz.json")
    s3["fs"].rm(f"{BUCKET}/changed/corpus/manifest/dump={DUMP}/summaries.json")
    archives, counts = finished()
    assert sorted(archives) == ["arch-00000.warc.gz"] and counts["summary_reads"] == 2


def test_a_local_lake_notices_a_summary_rewritten_in_place(pristine, tmp_path):
    """A local summary's identity is its size, modification time and inode."""
    import shutil

    from warclake.tasks.corpus.storage.layout import CorpusLayout
    from warclake.tasks.corpus.storage.manifest import read_manifest

    lake = str(tmp_path / "lake")
    shutil.copytree(pristine, lake)
    assert judge(lake)["signed"] == 2
    assert judge(lake)["signed"] == 0
    path = os.path.join(lake, "files", f"dump={DUMP}", "arch-00000.warc.gz.json")
    with open(path) as fh:
        s = json.load(fh)
    with open(path, "w") as fh:   # same inode; same length
        json.dump({**s, "finished": s["finished"].replace("2024-05-01", "2024-05-02")}, fh)
    assert judge(lake)["signed"] == 1
    assert read_manifest(CorpusLayout(lake), DUMP)["arch-00000.warc.gz"]["finished"].startswith("2024-05-02")


@pytest.fixture(scope="module")
def cluster(s3, prefect_harness):
    with two_worker_processes() as (c, _):
        yield c.scheduler_address


def test_a_flow_run_on_dask_reads_each_state_file_once(s3, cluster, tmp_path):
    """On Dask worker processes a task cannot share the run's layout: it starts from what the
    flow passes it (each dump's inputs from the manifests the flow wrote, and the state
    files the tasks of earlier phases returned), so each state file and manifest is still
    read at most once per flow run, over two dumps, first run and re-run."""
    from prefect_dask import DaskTaskRunner

    from warclake.flows.corpus_flow import corpus_flow

    url = two_dump_lake(s3, tmp_path, "dask")
    on_dask = corpus_flow.with_options(task_runner=DaskTaskRunner(address=cluster))

    flow_runs_read_each_state_once(s3, on_dask, url, "dask", "a flow run on Dask")

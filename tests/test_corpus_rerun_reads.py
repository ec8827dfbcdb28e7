"""A corpus run over a dump already judged reads a fixed number of objects, however many
archives the dump has: each archive's extraction summary is read once, when it first appears
or changes (its listing's ETag or size and time), not on every run. Counted through the proxy
in front of moto's S3 server; a changed or failed summary is still noticed."""
from __future__ import annotations

import json
import os

import pytest

from corpus_lake import known_lake
from s3_lake import s3_behind_proxy
from test_corpus import DUMP
from test_corpus_ops import split_lake

BUCKET = "warclake-rerun"


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    with s3_behind_proxy(tmp_path_factory.mktemp("s3"), BUCKET) as s3:
        yield s3


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


def requests_of(s3, fn) -> tuple[object, dict]:
    s3["proxy"].reset_counts()
    out = fn()
    reqs = s3["proxy"].taken()
    return out, {"get": sum(r.method == "GET" and not r.is_list for r in reqs),
                 "head": sum(r.method == "HEAD" for r in reqs),
                 "list": sum(r.is_list for r in reqs),
                 "summary_reads": sum(r.method in ("GET", "HEAD") and r.under("/files/") for r in reqs)}


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
    print("\nrequests of a run (first, then again):", json.dumps(counts))
    assert counts[2]["summary_reads"] == counts[6]["summary_reads"] == 0
    assert counts[2] == counts[6]   # O(1) in archives


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

    from warclake.tasks.corpus.layout import CorpusLayout
    from warclake.tasks.corpus.manifest import read_manifest

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

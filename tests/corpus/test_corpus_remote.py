"""The corpus stage on a lake in an object store: moto's S3-compatible server on 127.0.0.1,
read and written through s3fs, DuckDB reading its parquet through that filesystem. The
decisions must be the bytes a local run writes; bad remote input is one line."""
from __future__ import annotations

import json
import os
import posixpath
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from support import procs
from support.corpus_runs import DUMP, judged_known_lake
from support import s3_lake
from support.s3_lake import BUCKET, ONE_CLIENT_ATTEMPT, remote_decision_bytes, upload_lake

s3 = s3_lake.s3   # the fixture: an S3-compatible server on 127.0.0.1 with the bucket


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "warclake", *args], capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})), timeout=300)


@pytest.fixture(scope="module")
def local_reference(tmp_path_factory):
    """The known lake, judged on local disk: the decisions a remote run must equal."""
    return judged_known_lake(tmp_path_factory.mktemp("local"))


def test_a_remote_lake_gives_the_local_decisions_reports_and_exports(s3, local_reference, tmp_path):
    from warclake.tasks.corpus.checks import prepare
    from warclake.tasks.corpus.stage import StageOptions, finish
    from warclake.tasks.corpus.steps.export import export_corpus
    from warclake.tasks.lake.catalog import connect_catalog

    fs = s3["fs"]
    lake = upload_lake(s3, local_reference["pristine"], "lake")
    opts = StageOptions()
    dumps, archives = prepare(lake, None, opts.decide)
    res = finish(lake, dumps, archives, opts, report=True, report_dir=str(tmp_path / "report"))
    assert res["signed"] == 2 and res["dumps"][DUMP]["kept"] == 11
    assert remote_decision_bytes(fs, lake) == local_reference["decisions"]
    # every table of the stage is in the bucket, and no temporary was left there
    fs.invalidate_cache()
    written = fs.find(f"{BUCKET}/lake/corpus")
    for table in ("paragraphs", "docsigs", "para_hosts", "para_paths", "pairs", "state"):
        assert any(f"/corpus/{table}/" in p for p in written), table
    assert not [p for p in written if posixpath.basename(p).startswith(".")]
    assert "site_template" in (tmp_path / "report" / "corpus.md").read_text()

    # a re-run finds everything done in the bucket
    again = finish(lake, *prepare(lake, None, opts.decide), opts, report=False)
    assert again["signed"] == 0 and again["partitions"] == 0

    # SQL over the remote lake: the corpus views, in memory, through fsspec
    con = connect_catalog(lake)
    kept = dict(con.sql("SELECT docId, text FROM corpus_documents").fetchall())
    con.close()
    exp = local_reference["exp"]
    assert len(kept) == 11 and exp["orig"] in kept and exp["copy"] not in kept

    # export: shards into the bucket, and into a local folder, the same rows
    info = export_corpus(lake, f"s3://{BUCKET}/export", "parquet", shard_docs=4)
    assert [s["documents"] for s in info["shards"]] == [4, 4, 3]
    local = export_corpus(lake, str(tmp_path / "export"), "parquet", shard_docs=4)
    fs.invalidate_cache()
    manifest = json.loads(fs.cat_file(f"{BUCKET}/export/_manifest.json"))
    assert manifest["documents"] == local["documents"] == 11
    remote_rows = pq.read_table(f"{BUCKET}/export", filesystem=fs).to_pylist()
    assert remote_rows == pq.read_table(str(tmp_path / "export")).to_pylist()
    assert set(kept) == {r["docId"] for r in remote_rows}


def test_the_cli_on_a_remote_lake_and_its_bad_input(s3, local_reference, tmp_path):
    lake = upload_lake(s3, local_reference["pristine"], "cli-lake")
    p = cli("corpus", "--lake", lake, "--report-dir", str(tmp_path / "report"), "-q")
    assert p.returncode == 0, p.stderr
    assert f"{DUMP}: 11 of 14 documents kept" in p.stdout
    assert remote_decision_bytes(s3["fs"], lake) == local_reference["decisions"]
    p = cli("export", "--lake", lake, "--out", f"s3://{BUCKET}/cli-export", "--format", "jsonl")
    assert p.returncode == 0 and "11 documents in 1 jsonl shard(s)" in p.stdout, p.stderr

    s3["fs"].mkdir(f"{BUCKET}-empty")
    s3["fs"].pipe(f"{BUCKET}-empty/lake/files/dump={DUMP}/.keep", b"")   # a lake folder, no summary
    dead = f"http://127.0.0.1:{procs.free_port()}"   # nothing listens there
    cases = [
        ([f"s3://{BUCKET}-missing/lake"], {}, "no lake at s3://"),
        ([f"s3://{BUCKET}-empty/lake"], {}, "no finished documents"),
        ([lake, "--similarity", "0.1"], {}, "similarity=0.1 out of range"),
        ([lake], {"AWS_ENDPOINT_URL": dead, **ONE_CLIENT_ATTEMPT}, "cannot read the lake at s3://"),
    ]
    for args, env, words in cases:
        p = cli("corpus", "--lake", *args, env=env)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and words in lines[0], (args, p.stderr)
    p = cli("export", "--lake", lake, "--out", str(tmp_path / "x"), env={"AWS_ENDPOINT_URL": dead, **ONE_CLIENT_ATTEMPT})
    assert p.returncode == 2 and "cannot read the lake" in p.stderr and len(p.stderr.strip().splitlines()) == 1

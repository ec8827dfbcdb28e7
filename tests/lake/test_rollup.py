"""The per-dump rollup: after every change to the lake (an archive added, redone, removed,
its summary broken or failed) the reports read from it say what the files on disk say,
counted here in Python; only what changed is read again; a crash leaves the last commit."""
import json
from collections import Counter
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from support.lakegen import make_lake
from warclake.tasks.lake import rollup
from warclake.tasks.lake.catalog import build_catalog
from warclake.tasks.reporting import run_reports

D = "CC-MAIN-2024-10"


def on_disk(root: Path, dump: str):
    """The finished archives' summaries, documents and ledger rows, read with json and pyarrow."""
    summaries = {}
    for p in sorted((root / "files" / f"dump={dump}").glob("*.json")):
        try:
            summaries[p.name[:-5]] = json.loads(p.read_text())
        except ValueError:
            continue  # not done, as the extractor treats it
    done = [n for n, s in summaries.items() if s["status"] != "failed"]
    docs = [r for n in done for r in pq.read_table(root / "documents" / f"dump={dump}" / f"{n}.parquet").to_pylist()]
    ledger = [r for n in done for r in pq.read_table(root / "ledger" / f"dump={dump}" / f"{n}.parquet").to_pylist()]
    return summaries, docs, ledger


def assert_exact(root: Path, dump: str = D):
    summaries, docs, ledger = on_disk(root, dump)
    t = run_reports(root, dump)
    (row,) = t["documents_per_dump"].to_dicts()
    assert (row["files"], row["failed"], row["documents"], row["records"]) == (
        len(summaries), sum(s["status"] == "failed" for s in summaries.values()), len(docs),
        sum(s["records"] for s in summaries.values()))
    assert {r["outcome"]: (r["records"], r["bytes_in"]) for r in t["outcome_share"].to_dicts()} == {
        o: (n, sum(x["bytes_in"] for x in ledger if x["outcome"] == o))
        for o, n in Counter(x["outcome"] for x in ledger).items()}
    assert {r["charset_source"]: r["documents"] for r in t["charset_source_share"].to_dicts()} == dict(
        Counter(d["charset_source"] or "unknown" for d in docs))
    return t


def redo(root: Path, name: str, keep_docs: int) -> None:
    """As a re-extraction does: new documents, then a new summary."""
    path = root / "documents" / f"dump={D}" / f"{name}.parquet"
    pq.write_table(pq.read_table(path).slice(0, keep_docs), path)
    spath = root / "files" / f"dump={D}" / f"{name}.json"
    summary = json.loads(spath.read_text())
    summary["documents"] = keep_docs
    spath.write_text(json.dumps(summary))


@pytest.fixture
def lake(tmp_path):
    return make_lake(tmp_path / "lake", dumps={D: 6}, records=40, salvaged=1, failed=1, running=1)


def test_every_change_is_counted_and_only_what_changed_is_read(lake):
    root = lake.root
    names = [f.warc_file for f in lake.files]
    first = rollup.refresh(root, D, part_archives=2)
    assert first.rolled == 6 and first.archives == 6    # the running archive has no summary yet
    assert len(first.parts) == 3                       # 5 counted archives (one failed), 2 a part
    assert_exact(root)
    assert rollup.refresh(root, D, part_archives=2).rolled == 0

    redone = names[2]
    redo(root, redone, keep_docs=1)
    st = rollup.refresh(root, D, part_archives=2)
    assert st.rolled == 2 and st.version != first.version  # it, and the other archive of its part
    assert_exact(root)

    # a redo begins by removing the summary: the archive's documents are no longer counted
    (root / "files" / f"dump={D}" / f"{names[3]}.json").unlink()
    st = rollup.refresh(root, D, part_archives=2)
    assert st.archives == 5 and st.rolled <= 1
    assert_exact(root)

    # the running archive finishes: only it is read
    running = next(f for f in lake.files if not f.done)
    make_lake(root.parent / "other", dumps={D: 7}, records=40, salvaged=1, failed=1, running=0)
    for kind, ext in (("documents", "parquet"), ("ledger", "parquet"), ("files", "json")):
        src = root.parent / "other" / kind / f"dump={D}" / f"{running.warc_file}.{ext}"
        (root / kind / f"dump={D}" / src.name).write_bytes(src.read_bytes())
    st = rollup.refresh(root, D, part_archives=2)
    assert st.rolled == 1
    assert_exact(root)


def test_a_broken_summary_is_not_done_until_it_parses(lake):
    root = lake.root
    rollup.refresh(root, D)
    good = next(f for f in lake.files if f.status == "complete")
    spath = root / "files" / f"dump={D}" / f"{good.warc_file}.json"
    text = spath.read_text()
    spath.write_text(text[:40])                 # as if the disk filled up mid-write
    t = assert_exact(root)
    assert t["documents_per_dump"]["files"][0] == len(lake.done_files) - 1
    spath.write_text(text)
    assert_exact(root)


def test_a_failed_archive_keeps_no_counts_and_is_counted_when_redone(lake):
    root = lake.root
    rollup.refresh(root, D)
    ok = next(f for f in lake.files if f.status == "complete")
    spath = root / "files" / f"dump={D}" / f"{ok.warc_file}.json"
    summary = json.loads(spath.read_text())
    spath.write_text(json.dumps(dict(summary, status="failed")))  # its files are still there
    t = assert_exact(root)
    assert t["documents_per_dump"]["failed"][0] == 2
    spath.write_text(json.dumps(summary))
    assert_exact(root)


def test_a_crash_before_the_commit_leaves_the_last_rollup(lake, monkeypatch):
    root = lake.root
    before = rollup.refresh(root, D, part_archives=2)
    redo(root, lake.files[0].warc_file, keep_docs=0)

    def crash(self, name, query, meta=None):
        if name == rollup.ARCHIVES:
            raise RuntimeError("killed")
        return publish(self, name, query, meta)

    publish = rollup._Refresh._publish
    monkeypatch.setattr(rollup._Refresh, "_publish", crash)
    with pytest.raises(RuntimeError):
        rollup.refresh(root, D, part_archives=2)
    folder = Path(rollup.lake_folder(root, D))
    after = rollup.state(str(folder), D)
    assert (after.version, after.parts) == (before.version, before.parts)
    orphans = set(folder.glob("part-*.parquet")) - {Path(p) for p in after.parts}
    assert orphans                                     # written, but named by no commit
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    # the catalogue's view leaves the part no commit names out
    build_catalog(root)
    con = duckdb.connect(str(root / "warclake.duckdb"), read_only=True)
    counted = con.execute("SELECT sum(n) FROM rollup_counts WHERE fact = 'documents'").fetchone()[0]
    assert counted == sum(len(f.documents) for f in lake.done_files if f.status != "failed")
    con.close()
    monkeypatch.undo()
    assert rollup.refresh(root, D, part_archives=2).rolled == 2
    assert_exact(root)


def test_files_of_an_older_schema_version_still_read_with_the_rest(lake):
    """Mid re-extraction to a new schema version the lake holds both; the catalogue then binds
    its parquet views by name."""
    root = lake.root
    build_catalog(root)
    cat = duckdb.connect(str(root / "warclake.duckdb"), read_only=True)
    assert cat.execute("SELECT warclake_mixed_schemas()").fetchone()[0] is False
    cat.close()
    old = next(f for f in lake.files if f.status == "complete")
    path = root / "documents" / f"dump={D}" / f"{old.warc_file}.parquet"
    pq.write_table(pq.read_table(path).drop_columns(["lang_score"]), path)
    spath = root / "files" / f"dump={D}" / f"{old.warc_file}.json"
    spath.write_text(json.dumps(dict(json.loads(spath.read_text()), schema_version="3")))
    run_reports(root, D)   # the report's rollup learns the versions; then the catalogue
    build_catalog(root)
    cat = duckdb.connect(str(root / "warclake.duckdb"), read_only=True)
    assert cat.execute("SELECT warclake_mixed_schemas()").fetchone()[0] is True
    assert cat.execute("SELECT count(*), count(lang_score) FROM documents").fetchone() == (
        sum(len(f.documents) for f in lake.files), sum(len(f.documents) for f in lake.files) - len(old.documents))
    cat.close()

"""Bad input of the corpus stage beyond tests/corpus/test_corpus.py's: documents of an older
schema under a current summary, a dump whose archives all failed, a dump being extracted
when one of several dumps is asked for; each one line from the command, nothing written."""
from __future__ import annotations

import json
import os

import pyarrow.parquet as pq
import pytest

from support.corpus_lake import known_lake, write_archive
from support.corpus_runs import DUMP
from warclake.cli.main import main


def corpus_cli(capsys, *args) -> tuple[int, list[str]]:
    rc = main(["corpus", *args, "--no-report", "-q"])
    return rc, capsys.readouterr().err.strip().splitlines()


def test_documents_without_the_columns_the_stage_reads(tmp_path, capsys):
    lake = str(tmp_path / "lake")
    write_archive(lake, DUMP, "a.warc.gz", [{"docId": "x", "url": "https://x.org/", "text": "p\x1chello"}])
    path = os.path.join(lake, "documents", f"dump={DUMP}", "a.warc.gz.parquet")
    t = pq.read_table(path)
    pq.write_table(t.drop(["paragraph_labels"]), path)   # as an older extractor wrote them
    rc, err = corpus_cli(capsys, "--lake", lake)
    assert rc == 2 and len(err) == 1 and "older lake schema" in err[0] and "paragraph_labels" in err[0]
    assert not os.path.exists(os.path.join(lake, "corpus", "decisions"))


def test_a_dump_whose_archives_all_failed_has_no_documents(tmp_path, capsys):
    lake = str(tmp_path / "lake")
    write_archive(lake, DUMP, "a.warc.gz", [{"docId": "x", "url": "https://x.org/", "text": "p\x1chello"}])
    summary = os.path.join(lake, "files", f"dump={DUMP}", "a.warc.gz.json")
    with open(summary) as fh:
        s = json.load(fh)
    with open(summary, "w") as fh:
        json.dump({**s, "status": "failed", "error": "not an archive"}, fh)
    rc, err = corpus_cli(capsys, "--lake", lake, "--dump", DUMP)
    assert rc == 2 and len(err) == 1 and f"dump {DUMP} at {lake} has no finished documents" in err[0]


def test_an_earlier_dump_being_extracted_stops_a_later_dump_s_run(tmp_path, capsys):
    """A dump is judged against every earlier one: an earlier dump still being written
    would be read half-done, so the run stops, naming it."""
    from warclake.tasks.lake.dump_lock import DumpLock

    lake = str(tmp_path / "lake")
    known_lake(lake, DUMP)
    later = "CC-MAIN-2024-22"
    write_archive(lake, later, "b.warc.gz", [{"docId": "y", "url": "https://y.org/", "text": "p\x1chello there"}])
    with DumpLock(lake, DUMP):
        rc, err = corpus_cli(capsys, "--lake", lake, "--dump", later)
    assert rc == 2 and len(err) == 1 and DUMP in err[0] and "being written" in err[0]
    assert not os.path.exists(os.path.join(lake, "corpus"))


@pytest.mark.parametrize("args, words", [
    (["--partitions", "0"], "partitions 0 out of range"),
    (["--quality", "no_such_rule=1"], "no_such_rule"),
    (["--quality", "gopher_min_words"], "expected RULE=NUMBER"),
    (["--notice-min-domains", "1"], "notice_min_domains=1 out of range"),
])
def test_settings_out_of_range_are_refused_before_the_lake_is_read(tmp_path, capsys, args, words):
    rc, err = corpus_cli(capsys, "--lake", str(tmp_path / "no-lake-here"), *args)
    assert rc == 2 and len(err) == 1 and words in err[0], err

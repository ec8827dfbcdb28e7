"""``warclake show ID``: a document's ledger row and its WARC record, read again at its
offset from a local archive or over HTTP (a Range request to a real server on 127.0.0.1)."""
import os

import pyarrow.parquet as pq
import pytest

from support.http_server import LocalHTTPServer
from tools.faults.server import FaultServer
from warclake.cli.main import main
from warclake.tasks.extract.archive import extract_archive
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.sample_dump import make_dump


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    d = tmp_path_factory.mktemp("dump")
    return make_dump(str(d), files=2, pages_per_file=8, truncate_last=False)


def rows(lake: str, kind: str) -> list[dict]:
    folder = os.path.join(lake, kind, "dump=D")
    return [r for f in sorted(os.listdir(folder)) for r in pq.read_table(os.path.join(folder, f)).to_pylist()]


def documents(lake: str) -> list[dict]:
    return rows(lake, "documents")


def show(capsys, *argv) -> tuple[int, str, str]:
    rc = main(["show", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_a_docid_shows_its_ledger_row_and_the_record_behind_it(dump, tmp_path, capsys):
    lake = str(tmp_path / "lake")
    for path in dump:
        extract_archive(path, "D", lake, ExtractConfig.from_langs("ja"))
    doc = documents(lake)[3]
    rc, out, _ = show(capsys, "--lake", lake, doc["docId"])
    assert rc == 0
    assert f"warc_offset: {doc['warc_offset']}" in out and "outcome: kept" in out
    assert f"WARC-Record-ID: <urn:uuid:{doc['docId']}>" in out
    assert f"WARC-Target-URI: {doc['url']}" in out and "HTTP/1.1 200" in out
    # the payload's head: the page's own words, which the document's text holds too
    head = out.split("payload (", 1)[1].split("\n", 1)[1]
    last = doc["text"].split("\n\n")[-1].split("\x1c", 1)[1]
    assert "<html" in head.lower() and last[:12] in head   # decoded with the page's charset


def test_file_and_offset_name_any_record(dump, tmp_path, capsys):
    lake = str(tmp_path / "lake")
    extract_archive(dump[0], "D", lake, ExtractConfig.from_langs("ja"))
    ledger = rows(lake, "ledger")
    req = next(r for r in ledger if r["record_type"] == "request")
    rc, out, _ = show(capsys, "--lake", lake, f"{req['warc_file']}:{req['warc_offset']}")
    assert rc == 0 and "outcome: not_response" in out and "WARC-Type: request" in out
    rc, _, err = show(capsys, "--lake", lake, f"{req['warc_file']}:{req['warc_offset'] + 1}")
    assert rc == 2 and "no record" in err
    rc, _, err = show(capsys, "--lake", lake, "00000000-0000-0000-0000-000000000000")
    assert rc == 2 and err.count("\n") == 1 and "no document with docId" in err


def test_a_remote_archive_is_read_at_the_offset_by_a_range_request(dump, tmp_path, capsys):
    lake = str(tmp_path / "lake")
    name = os.path.basename(dump[1])
    with LocalHTTPServer(os.path.dirname(dump[1])) as srv:
        extract_archive(f"{srv.url}/{name}", "D", lake, ExtractConfig.from_langs("ja"))
        doc = documents(lake)[-1]
        before = srv.requests
        rc, out, _ = show(capsys, "--lake", lake, doc["docId"])
        assert srv.requests == before + 1   # one Range request, not the whole archive
    assert rc == 0 and f"WARC record at {srv.url}/{name} offset {doc['warc_offset']}" in out
    assert f"WARC-Record-ID: <urn:uuid:{doc['docId']}>" in out


def test_a_server_without_range_support_is_one_clear_error(dump, tmp_path, capsys):
    lake = str(tmp_path / "lake")
    name = os.path.basename(dump[0])
    with FaultServer(os.path.dirname(dump[0]), ranges=False, max_seconds=60) as srv:
        extract_archive(f"{srv.url}/{name}", "D", lake, ExtractConfig.from_langs("ja"))
        doc = documents(lake)[1]
        rc, out, err = show(capsys, "--lake", lake, doc["docId"])
    assert rc == 2 and "does not answer Range requests" in err and "outcome: kept" in out

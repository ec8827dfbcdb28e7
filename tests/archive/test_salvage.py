"""Damaged archives: reading resumes after any damage, loses only the damaged record, and
never calls a damaged archive complete (real Common Crawl records, damaged in one place)."""
import gzip
import io
import os
import re
import zlib

import pyarrow.parquet as pq
import pytest

from conftest import shared_data
from warclake.tasks.archive.reader import ArchiveReader
from warclake.tasks.extract.archive import extract_archive
from warclake.tasks.extract.config import ExtractConfig

CC = shared_data("warc", "resiliparse", "tests", "data")
CFG = ExtractConfig.from_langs("all")
pytestmark = pytest.mark.shared_data("warc", "resiliparse")


def members(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of every gzip member."""
    spans, pos = [], 0
    while pos < len(data):
        d = zlib.decompressobj(31)
        d.decompress(data[pos:])
        end = len(data) - len(d.unused_data)
        spans.append((pos, end))
        pos = end
    return spans


@pytest.fixture(scope="module")
def cc_gz():
    return open(os.path.join(CC, "warcfile.warc.gz"), "rb").read()


@pytest.fixture(scope="module")
def whole(cc_gz, tmp_path_factory):
    """The undamaged archive's summary and documents."""
    root = tmp_path_factory.mktemp("whole")
    path = root / "cc.warc.gz"
    path.write_bytes(cc_gz)
    summary = extract_archive(str(path), "D", str(root / "lake"), CFG)
    return summary, docs_of(root / "lake", "cc.warc.gz")


def docs_of(lake, name):
    table = pq.read_table(os.path.join(lake, "documents", "dump=D", name + ".parquet"),
                          columns=["docId", "warc_offset", "text"])
    return {r["docId"]: (r["warc_offset"], r["text"]) for r in table.to_pylist()}


def extract(tmp_path, data: bytes, name="bad.warc.gz"):
    path = tmp_path / name
    path.write_bytes(data)
    summary = extract_archive(str(path), "D", str(tmp_path / "lake"), CFG)
    return summary, docs_of(tmp_path / "lake", name)


def recompressed(data: bytes, span, edit) -> bytes:
    """The archive with one member's text edited and the member compressed again."""
    a, b = span
    return data[:a] + gzip.compress(edit(gzip.decompress(data[a:b])), mtime=0) + data[b:]


def assert_only_lost(whole, got, lost_offsets, shift_from=None, shift=0):
    """Every document of the undamaged archive is there (same id, same text) except those
    of the records at ``lost_offsets``; offsets past ``shift_from`` moved by ``shift``."""
    summary, docs = whole
    expected = {i: (o + shift if shift_from is not None and o >= shift_from else o, t)
                for i, (o, t) in docs.items() if o not in lost_offsets}
    assert {i: v for i, v in got.items() if i in expected} == expected
    assert len(expected) >= len(docs) - len(lost_offsets) > 0


def test_the_undamaged_archive_is_complete(whole):
    summary, docs = whole
    assert summary["status"] == "complete" and summary["skipped"] == [] and summary["records"] == 50
    assert len(docs) > 10


def test_inflate_error_inside_a_member_loses_that_record_only(cc_gz, whole, tmp_path):
    """An inflate error inside a member (warcio swallows it and stops): the next member is read."""
    spans = members(cc_gz)
    a, b = spans[20]
    bad = cc_gz[:a + 40] + bytes(x ^ 0xFF for x in cc_gz[a + 40:a + 60]) + cc_gz[a + 60:]
    s, docs = extract(tmp_path, bad)
    assert s["status"] == "salvaged" and s["records"] == 49
    assert [(k["offset"], k["length"]) for k in s["skipped"]] == [(a, b - a)]
    assert "inflate" in s["skipped"][0]["reason"]
    assert_only_lost(whole, docs, {a})


def test_content_length_past_the_end_of_its_member_breaks_that_record_only(cc_gz, whole, tmp_path):
    """A Content-Length that overruns the member is damage of that record only."""
    spans = members(cc_gz)
    a, b = next(m for m in spans[30:] if b"WARC-Type: response" in gzip.decompress(cc_gz[m[0]:m[1]])[:400])
    bad = recompressed(cc_gz, (a, b), lambda t: re.sub(rb"Content-Length: (\d+)",
                                                       lambda m: b"Content-Length: %d" % (int(m[1]) + 5000), t, 1))
    s, docs = extract(tmp_path, bad)
    assert s["status"] == "salvaged" and s["records"] == 50  # the record is read, as record_broken
    assert s["outcomes"]["record_broken"] == 1 and s["skipped"][0]["offset"] == a
    shift = len(bad) - len(cc_gz)
    assert_only_lost(whole, docs, {a}, shift_from=b, shift=shift)


def test_a_corrupt_first_member_loses_the_warcinfo_only(cc_gz, whole, tmp_path):
    """A corrupt warcinfo member costs that record only, not the whole archive."""
    a, b = members(cc_gz)[0]
    bad = cc_gz[:a + 30] + b"\0" * 40 + cc_gz[a + 70:]
    s, docs = extract(tmp_path, bad)
    assert s["status"] == "salvaged" and s["records"] == 49
    assert [(k["offset"], k["length"]) for k in s["skipped"]] == [(0, b)]
    assert_only_lost(whole, docs, {0})
    # the gzip magic itself destroyed: still found to be a gzip archive
    s, docs = extract(tmp_path, b"XX" + cc_gz[2:], "magic.warc.gz")
    assert s["status"] == "salvaged" and s["records"] == 49
    assert_only_lost(whole, docs, {0})


def test_a_malformed_header_is_skipped_exactly(cc_gz, whole, tmp_path):
    """After `Content-Length: abc` the break is at that record and the resume at
    the next member; the skipped range says so."""
    spans = members(cc_gz)
    a, b = spans[12]
    bad = recompressed(cc_gz, (a, b), lambda t: re.sub(rb"Content-Length: \d+", b"Content-Length: abc", t, 1))
    end = b + len(bad) - len(cc_gz)
    s, docs = extract(tmp_path, bad)
    assert s["status"] == "salvaged" and s["records"] == 49 and s["error_offset"] == a
    assert [(k["offset"], k["length"]) for k in s["skipped"]] == [(a, end - a)]
    assert "Content-Length" in s["error"]
    assert_only_lost(whole, docs, {a}, shift_from=b, shift=end - b)


@pytest.mark.parametrize("how", ["crc", "length", "deletion"])
def test_damage_in_a_late_member_is_never_complete(cc_gz, whole, tmp_path, how):
    """A CRC flip or an 80-byte deletion in a late member makes the archive `salvaged`, never
    `complete` with a record missing (the member trailer: CRC32, then the inflated length)."""
    spans = members(cc_gz)
    a, b = spans[45]
    at = {"crc": b - 6, "length": b - 2}.get(how)
    bad = (cc_gz[:at] + bytes([cc_gz[at] ^ 1]) + cc_gz[at + 1:] if at
           else cc_gz[:a + 100] + cc_gz[a + 180:])
    s, docs = extract(tmp_path, bad)
    assert s["status"] == "salvaged" and s["records"] == 49
    assert s["skipped"][0]["offset"] == a
    assert_only_lost(whole, docs, {a}, shift_from=b, shift=len(bad) - len(cc_gz))


def test_a_cut_plain_warc_is_salvaged_without_a_phantom_record(tmp_path):
    """A plain .warc cut anywhere but between records, even inside a WARC header, is `salvaged`."""
    data = open(os.path.join(CC, "warcfile.warc"), "rb").read()
    starts = [m.start() for m in re.finditer(rb"WARC/1\.[01]\r\n", data)]
    cuts = [starts[10] + 40,                    # inside a WARC header
            starts[10] + 8,                     # inside the version line
            (starts[20] + starts[21]) // 2,     # inside a block
            starts[30] - 2]                     # inside the blank lines after a record
    for cut in cuts:
        reader = ArchiveReader(io.BytesIO(data[:cut]))
        recs = [(r.rec_type, r.offset, r.complete()) for r in reader]
        assert all(t for t, _, _ in recs), cut  # no phantom record of type ''
        assert [o for _, o, ok in recs if ok] == [o for o in starts if o < cut][:len([o for _, o, ok in recs if ok])]
        assert not reader.clean and reader.skipped[-1].offset + reader.skipped[-1].length == cut
        s, _ = extract(tmp_path, data[:cut], "cut.warc")
        assert s["status"] == "salvaged", cut
    assert extract(tmp_path, data[:starts[30]], "at.warc")[0]["status"] == "complete"  # cut between records


def test_plain_warc_resumes_after_a_damaged_record(tmp_path):
    data = open(os.path.join(CC, "warcfile.warc"), "rb").read()
    starts = [m.start() for m in re.finditer(rb"WARC/1\.[01]\r\n", data)]
    good = extract(tmp_path, data, "good.warc")
    assert good[0]["status"] == "complete"
    # a Content-Length too large runs into the next records; they are found again
    bad = re.sub(rb"Content-Length: (\d+)", lambda m: b"Content-Length: %d" % (int(m[1]) + 3000),
                 data[starts[15]:], 1)
    s, docs = extract(tmp_path, data[:starts[15]] + bad, "long.warc")
    shift = len(bad) - (len(data) - starts[15])
    assert s["status"] == "salvaged" and s["records"] == 50
    assert_only_lost(good, docs, {starts[15]}, shift_from=starts[16], shift=shift)
    # a malformed Content-Length: that record is skipped, up to the next one exactly
    bad = re.sub(rb"Content-Length: \d+", b"Content-Length: abc", data[starts[20]:], 1)
    s, docs = extract(tmp_path, data[:starts[20]] + bad, "abc.warc")
    shift = len(bad) - (len(data) - starts[20])
    assert s["status"] == "salvaged" and s["records"] == 49 and s["error_offset"] == starts[20]
    assert [(k["offset"], k["length"]) for k in s["skipped"]] == [(starts[20], starts[21] + shift - starts[20])]
    assert_only_lost(good, docs, {starts[20]}, shift_from=starts[21], shift=shift)
    # a changed byte inside a page of a record that still ends where it should: its
    # WARC-Block-Digest no longer matches; the record is read as written (as warcio reads
    # it) and the mismatch recorded, nothing skipped
    k = next(k for k in range(25, 49) if b"WARC-Type: response" in data[starts[k]:starts[k] + 100])
    at = starts[k + 1] - 200
    s, docs = extract(tmp_path, data[:at] + bytes([data[at] ^ 0x20]) + data[at + 1:], "flip.warc")
    assert s["status"] == "complete" and s["skipped"] == [] and s["quirks"] == {"digest_mismatch": 1}
    assert s["outcomes"] == good[0]["outcomes"] and len(docs) == len(good[1])
    ledger = pq.read_table(tmp_path / "lake" / "ledger" / "dump=D" / "flip.warc.parquet").to_pylist()
    assert [r["warc_offset"] for r in ledger if r["quirks"]] == [starts[k]]


def filler_record(size: int) -> bytes:
    """A plain WARC resource record of ``size`` bytes written by warcio (with its digest)."""
    from warcio.warcwriter import WARCWriter

    out = io.BytesIO()
    writer = WARCWriter(out, gzip=False)
    writer.write_record(writer.create_warc_record("urn:filler", "resource", payload=io.BytesIO(b"x" * size),
                                                  warc_content_type="application/octet-stream"))
    return out.getvalue()


def docs_by_offset(lake, name):
    """(warc_offset, text) of every document, in order (the archive holds records twice)."""
    table = pq.read_table(os.path.join(lake, "documents", "dump=D", name + ".parquet"),
                          columns=["warc_offset", "text"])
    return sorted((r["warc_offset"], r["text"]) for r in table.to_pylist())


@pytest.mark.parametrize("lands", ["past the end", "inside a later record"])
def test_a_content_length_overrun_of_many_mib_loses_no_later_record(tmp_path, lands):
    """A plain WARC record whose Content-Length is raised by tens of MiB: every record it
    ran over is read again (the whole archive after it, 60 MiB of it in warcio-written
    records) while memory stays flat; only the damaged record is skipped."""
    import tracemalloc

    data = open(os.path.join(CC, "warcfile.warc"), "rb").read()
    starts = [m.start() for m in re.finditer(rb"WARC/1\.[01]\r\n", data)]
    k = 17  # a response record with a document
    assert b"WARC-Type: response" in data[starts[k]:starts[k + 1]]
    tail = filler_record(20 << 20) * 3 + data
    good = data + tail
    (tmp_path / "good.warc").write_bytes(good)
    g = extract_archive(str(tmp_path / "good.warc"), "D", str(tmp_path / "lake"), CFG)
    assert g["status"] == "complete" and g["records"] == 103
    # the damaged record's block would end past the archive's end, or inside the second copy
    rest = len(good) - starts[k + 1]
    over = 1 << 30 if lands == "past the end" else rest - len(data) + (starts[30] + starts[31]) // 2
    bad = re.sub(rb"Content-Length: (\d+)", lambda m: b"Content-Length: %d" % (int(m[1]) + over),
                 data[starts[k]:starts[k + 1]], 1)
    shift = len(bad) - (starts[k + 1] - starts[k])
    (tmp_path / "bad.warc").write_bytes(data[:starts[k]] + bad + data[starts[k + 1]:] + tail)

    s = extract_archive(str(tmp_path / "bad.warc"), "D", str(tmp_path / "lake"), CFG)
    assert s["status"] == "salvaged" and s["records"] == 103 and s["documents"] == g["documents"] - 1
    assert [(k["offset"], k["length"]) for k in s["skipped"]] == [(starts[k], starts[k + 1] + shift - starts[k])]
    assert "Content-Length" in s["error"]
    expected = [(o + shift if o > starts[k] else o, t)
                for o, t in docs_by_offset(tmp_path / "lake", "good.warc") if o != starts[k]]
    assert docs_by_offset(tmp_path / "lake", "bad.warc") == expected and len(expected) > 20

    # streamed, not held: reading it keeps well under the 60 MiB the record ran over
    tracemalloc.start()
    try:
        with open(tmp_path / "bad.warc", "rb") as fh:
            reader = ArchiveReader(fh)
            assert sum(r.complete() for r in reader) == 102
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, peak


@pytest.mark.parametrize("digest", [True, False])
def test_an_overrun_that_ends_before_blank_lines_inside_a_later_record_loses_nothing(tmp_path, digest):
    """A Content-Length that runs over later records and ends exactly where a later
    response's HTTP head ends: blank lines follow, as after a whole block, then the page.
    The records it ran over are read again (found by the record's digest failing, or
    without a digest by the non-record after it), not skipped as garbage."""
    data = open(os.path.join(CC, "warcfile.warc"), "rb").read()
    starts = [m.start() for m in re.finditer(rb"WARC/1\.[01]\r\n", data)]
    k, j = 17, 26
    assert b"WARC-Type: response" in data[starts[j]:starts[j] + 100]
    head_end = data.index(b"\r\n\r\n", data.index(b"\r\n\r\n", starts[j]) + 4)  # WARC head, then HTTP head
    record = data[starts[k]:starts[k + 1]]
    if not digest:  # as a writer that sets none would have it (same length)
        record = record.replace(b"WARC-Block-Digest:", b"X-Block-Digest-No:", 1)
    block_start = starts[k] + record.index(b"\r\n\r\n") + 4
    old = re.search(rb"Content-Length: (\d+)", record)
    new_length = head_end - block_start
    assert len(str(new_length)) == len(old[1])  # the record keeps its size: offsets stay
    record = record.replace(old[0], b"Content-Length: %d" % new_length, 1)
    good = extract(tmp_path, data, "good.warc")
    s, docs = extract(tmp_path, data[:starts[k]] + record + data[starts[k + 1]:], "over.warc")
    assert s["status"] == "salvaged" and s["records"] == 50
    assert [(x["offset"], x["length"]) for x in s["skipped"]] == [(starts[k], starts[k + 1] - starts[k])]
    assert "Content-Length" in s["error"]
    assert_only_lost(good, docs, {starts[k]})


def test_garbage_between_members_and_at_the_end_loses_nothing(cc_gz, whole, tmp_path):
    spans = members(cc_gz)
    at = spans[25][0]
    junk = os.urandom(300).replace(b"\x1f", b"\x00")
    s, docs = extract(tmp_path, cc_gz[:at] + junk + cc_gz[at:] + b"trailing bytes")
    assert s["status"] == "salvaged" and s["records"] == 50
    assert [(k["offset"], k["length"]) for k in s["skipped"]] == [(at, 300), (len(cc_gz) + 300, 14)]
    assert_only_lost(whole, docs, set(), shift_from=at, shift=300)


def test_a_cut_at_every_member_boundary_plus_or_minus_one_is_salvaged(cc_gz):
    spans = members(cc_gz)
    for _, end in spans[::7]:
        for cut in (end - 1, end + 1):
            if cut > len(cc_gz):
                continue
            reader = ArchiveReader(io.BytesIO(cc_gz[:cut]))
            seen = [r.offset for r in reader if r.complete()]
            assert seen == [a for a, b in spans if b <= cut], cut
            assert not reader.clean, cut


def test_fuzzer_slice_finds_nothing():
    from tools.fuzz.archives import COUNTS, run

    out = io.StringIO()
    totals = run(300, seed=7, timeout=20, root=shared_data("warc"), out=out)
    assert totals["cases"] == 300
    assert {c: totals.get(c, 0) for c in COUNTS} == {c: 0 for c in COUNTS}, out.getvalue()


@pytest.mark.parametrize("case", [14531, 18485])
def test_fuzzer_cases_that_once_failed_find_nothing(case):
    """18485: an overrun of 21 MiB ending before a later record's blank lines lost 90
    records; 14531: a flip in a plain header counted as damage reported complete."""
    from tools.fuzz.archives import COUNTS, run

    out = io.StringIO()
    totals = run(0, seed=2026, timeout=60, root=shared_data("warc"), only=case, out=out)
    assert {c: totals.get(c, 0) for c in COUNTS} == {c: 0 for c in COUNTS}, out.getvalue()


def test_a_damaged_archive_over_http_reads_as_the_local_file(cc_gz, tmp_path):
    """Resynchronising never seeks: an archive streamed over HTTP loses no more."""
    from support.http_server import LocalHTTPServer

    spans = members(cc_gz)
    a = spans[33][0]
    served = tmp_path / "www"
    served.mkdir()
    (served / "bad.warc.gz").write_bytes(cc_gz[:a + 50] + b"\0" * 100 + cc_gz[a + 150:])
    local = extract_archive(str(served / "bad.warc.gz"), "D", str(tmp_path / "local"), CFG)
    with LocalHTTPServer(str(served)) as srv:
        remote = extract_archive(f"{srv.url}/bad.warc.gz", "D", str(tmp_path / "remote"), CFG)
    assert remote["status"] == local["status"] == "salvaged"
    assert remote["skipped"] == local["skipped"] and remote["records"] == local["records"] == 49
    assert docs_of(tmp_path / "remote", "bad.warc.gz") == docs_of(tmp_path / "local", "bad.warc.gz")

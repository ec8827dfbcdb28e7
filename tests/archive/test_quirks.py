"""Archives as other tools write them: warcio reads every record, and so does warclake,
keeping every page and recording the quirk (ledger ``quirks``, summary ``quirks``)."""
import gzip
import io
import random
import re
import zlib

import brotli
import duckdb
import pyarrow.parquet as pq
import pytest
import zstandard
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from warclake.tasks.extract.archive import extract_archive
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.lake.catalog import build_catalog

CFG = ExtractConfig.from_langs("ja")
PAGES = 4


def page(i: int) -> bytes:
    return (f"<html><head><title>ページ {i}</title></head><body><p>図書館は朝九時に開いて夜遅くまで"
            f"開いているので、学生は授業の後にそこで勉強することができます。{i}</p></body></html>").encode()


def archive(gz: bool = False, encoding: str | None = None, body=lambda b: b) -> bytes:
    """PAGES response records as warcio writes them; ``body`` codes each payload and
    ``encoding`` is the Content-Encoding header it gets."""
    out = io.BytesIO()
    w = WARCWriter(out, gzip=gz)
    for i in range(PAGES):
        headers = [("Content-Type", "text/html; charset=utf-8")]
        if encoding:
            headers.append(("Content-Encoding", encoding))
        http = StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")
        w.write_record(w.create_warc_record(f"http://example.jp/{i}", "response",
                                            payload=io.BytesIO(body(page(i))), http_headers=http))
    return out.getvalue()


def warcio_pages(data: bytes) -> int:
    """Response records warcio reads with their whole HTML."""
    n = 0
    for rec in ArchiveIterator(io.BytesIO(data)):
        if rec.rec_type == "response":
            n += b"</html>" in rec.content_stream().read()
    return n


def extract(tmp_path, data: bytes, name: str):
    path = tmp_path / name
    path.write_bytes(data)
    lake = tmp_path / "lake"
    summary = extract_archive(str(path), "D", str(lake), CFG)
    docs = pq.read_table(lake / "documents" / "dump=D" / f"{name}.parquet").to_pylist()
    ledger = pq.read_table(lake / "ledger" / "dump=D" / f"{name}.parquet").to_pylist()
    return summary, docs, ledger


def warc_header_lines(data: bytes, eol: bytes, blank_lines_too: bool) -> bytes:
    """Every WARC header's line ends (and those of the blank lines after each block) made
    ``eol``; Content-Length counts only the block, so it stays right."""
    out, pos = [], 0
    for m in re.finditer(rb"WARC/1\.[01]\r\n", data):
        out.append(data[pos:m.start()])
        end = data.index(b"\r\n\r\n", m.start()) + 4
        header = data[m.start():end]
        length = int(re.search(rb"Content-Length: (\d+)", header).group(1))
        out.append(header.replace(b"\r\n", eol) + data[end:end + length])
        pos = end + length
        if blank_lines_too:
            assert data[pos:pos + 4] == b"\r\n\r\n"
            out.append(eol + eol)
            pos += 4
    out.append(data[pos:])
    return b"".join(out)


@pytest.mark.parametrize("eol,quirk", [(b"\r\r\n", "cr_cr_lf_lines"), (b"\n", "lf_lines")])
@pytest.mark.parametrize("blank_lines_too", [True, False])
def test_header_line_ends_of_other_writers_cost_nothing(tmp_path, eol, quirk, blank_lines_too):
    data = warc_header_lines(archive(), eol, blank_lines_too)
    assert data != archive() and warcio_pages(data) == PAGES
    s, docs, ledger = extract(tmp_path, data, "lines.warc")
    assert (s["status"], s["records"], s["documents"], s["skipped"]) == ("complete", PAGES, PAGES, [])
    assert s["quirks"] == {quirk: PAGES}
    assert {r["quirks"] for r in ledger} == {quirk}
    assert sorted(d["url"] for d in docs) == [f"http://example.jp/{i}" for i in range(PAGES)]


def test_the_files_view_counts_each_archives_quirks(tmp_path):
    data = warc_header_lines(archive(), b"\n", blank_lines_too=True)
    extract(tmp_path, data, "lines.warc")
    con = duckdb.connect(str(build_catalog(tmp_path / "lake")), read_only=True)
    assert con.sql("SELECT warc_file, quirks FROM files").fetchall() == [("lines.warc", {"lf_lines": PAGES})]


def test_a_digest_that_does_not_match_an_intact_record_keeps_the_page(tmp_path):
    data = archive()
    m = list(re.finditer(rb"WARC-Block-Digest: sha1:([A-Z2-7]{32})", data))[2]
    data = data[:m.start(1)] + b"A" * 32 + data[m.end(1):]   # another tool's wrong digest
    assert warcio_pages(data) == PAGES
    s, docs, ledger = extract(tmp_path, data, "digest.warc")
    assert (s["status"], s["documents"], s["skipped"], s["quirks"]) == ("complete", PAGES, [], {"digest_mismatch": 1})
    assert [r["outcome"] for r in ledger if r["quirks"] == "digest_mismatch"] == ["kept"]


def test_a_wrong_content_length_that_lands_on_blank_lines_is_still_found_by_its_digest(tmp_path):
    """The digest still tells a Content-Length that ran over later records and happened to
    end on blank lines before a record: those records are read again, not lost."""
    data = archive()
    starts = [m.start() for m in re.finditer(rb"WARC/1\.0\r\n", data)]
    k = 1
    header_end = data.index(b"\r\n\r\n", starts[k]) + 4
    # the block of record k now reaches to the end of record k + 1's block
    new_length = starts[k + 2] - 4 - header_end
    bad = re.sub(rb"Content-Length: \d+", b"Content-Length: %d" % new_length, data[starts[k]:], count=1)
    data = data[:starts[k]] + bad
    s, docs, _ = extract(tmp_path, data, "overrun.warc")
    assert s["status"] == "salvaged" and "Content-Length" in s["error"]
    assert s["quirks"] == {} and len(docs) == PAGES - 1   # only the record with the wrong length


def test_reserved_gzip_flags_are_read_when_the_member_checks_out(tmp_path):
    """zlib refuses a member header with reserved FLG bits (RFC 1952 asks readers to); ISA-L
    inflates it, and the member's CRC32 and length prove every byte was read."""
    data = bytearray(archive(gz=True))
    members = [m.start() for m in re.finditer(rb"\x1f\x8b\x08", bytes(data))]
    members = [i for i in members if gzip.decompress(bytes(data[i:]))[:5] == b"WARC/"]
    for i in members[1:3]:
        data[i + 3] |= 0xE0
    data = bytes(data)
    with pytest.raises(zlib.error, match="unknown header flags"):
        zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[members[1]:])
    s, docs, ledger = extract(tmp_path, data, "flags.warc.gz")
    assert (s["status"], s["documents"], s["skipped"]) == ("complete", PAGES, [])
    assert s["quirks"] == {"gzip_reserved_flags": 2}
    assert [r["warc_offset"] for r in ledger if r["quirks"]] == members[1:3]


def test_a_damaged_member_with_reserved_flags_is_not_complete(tmp_path):
    data = bytearray(archive(gz=True))
    i = [m.start() for m in re.finditer(rb"\x1f\x8b\x08", bytes(data))][2]
    data[i + 3] |= 0x80
    data[i + 40] ^= 0xFF   # and its deflate data damaged
    s, docs, _ = extract(tmp_path, bytes(data), "flags-bad.warc.gz")
    assert s["status"] == "salvaged" and s["skipped"][0]["offset"] == i and len(docs) == PAGES - 1


def raw_deflate(b: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(b) + c.flush()


CODINGS = {  # id: (Content-Encoding, how the body is coded)
    "gzip": ("gzip", lambda b: gzip.compress(b, mtime=0)),
    "gzip-two-members": ("gzip", lambda b: gzip.compress(b[:40]) + gzip.compress(b[40:])),
    "x-gzip": ("x-gzip", lambda b: gzip.compress(b, mtime=0)),
    "deflate-zlib": ("deflate", zlib.compress),   # as the RFC says
    "deflate-raw": ("deflate", raw_deflate),      # as some servers send it
    "br": ("br", brotli.compress),
    "zstd": ("zstd", lambda b: zstandard.ZstdCompressor().compress(b)),
    "gzip-then-br": ("gzip, br", lambda b: brotli.compress(gzip.compress(b, mtime=0))),
    "identity": ("identity", lambda b: b),
}


@pytest.mark.parametrize("coding", list(CODINGS))
@pytest.mark.parametrize("gz", [False, True])
def test_every_content_encoding_a_browser_sends_is_undone(tmp_path, coding, gz):
    header, code = CODINGS[coding]
    data = archive(gz=gz, encoding=header, body=code)
    s, docs, ledger = extract(tmp_path, data, "enc.warc.gz" if gz else "enc.warc")
    assert (s["status"], s["documents"], s["quirks"]) == ("complete", PAGES, {}), s["outcomes"]
    assert all("図書館" in d["text"] for d in docs)
    assert {r["payload_bytes"] for r in ledger if r["outcome"] == "kept"} == {len(page(i)) for i in range(PAGES)}


def test_a_body_stored_decoded_under_its_content_encoding_is_read_as_it_is(tmp_path):
    """Some writers store the decoded body and keep the header (warcio reads it plain too)."""
    s, docs, ledger = extract(tmp_path, archive(encoding="br"), "stored.warc")
    assert (s["status"], s["documents"]) == ("complete", PAGES)
    assert s["quirks"] == {"content_encoding_not_applied": PAGES}


def test_a_body_that_does_not_decode_is_its_own_outcome(tmp_path):
    noise = b"<!-- " + random.Random(1).randbytes(40_000).hex().encode() + b" -->"

    def broken(b: bytes) -> bytes:   # damaged at its start, or far into it (gzip has a CRC;
        coded = gzip.compress(b + noise)  # brotli has no check and may decode damage as text)
        at = 12 if b.endswith(b"0</p></body></html>") else len(coded) // 2
        return coded[:at] + bytes(x ^ 0x5A for x in coded[at:at + 100]) + coded[at + 100:]

    s, docs, ledger = extract(tmp_path, archive(encoding="gzip", body=broken), "bad-gzip.warc")
    assert s["outcomes"]["content_encoding_failed"] == PAGES and s["outcomes"]["charset_failed"] == 0
    s, docs, ledger = extract(tmp_path, archive(encoding="compress"), "unknown.warc")
    assert s["outcomes"]["content_encoding_failed"] == PAGES and docs == []


def test_a_coded_body_cut_short_gives_what_decoded(tmp_path):
    """A response the server cut short: its page as far as it came, the quirk recorded."""
    s, docs, _ = extract(tmp_path, archive(encoding="gzip", body=lambda b: gzip.compress(b * 20)[:-30]),
                         "cut-gzip.warc")
    assert s["documents"] == PAGES and s["quirks"] == {"content_encoding_truncated": PAGES}

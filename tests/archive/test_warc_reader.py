"""The archive reader: offsets, salvage of cut/corrupt archives, transient errors."""
import io
import os

import pytest
from warcio.archiveiterator import ArchiveIterator

from conftest import shared_data
from warclake.tasks.archive.reader import ArchiveReader, TransientInputError
from warclake.tasks.sample_dump import make_dump

SHARED = shared_data("warc")


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    d = tmp_path_factory.mktemp("dump")
    return make_dump(str(d), files=1, pages_per_file=12, truncate_last=False)[0]


def record_offsets(data: bytes) -> list[int]:
    it = ArchiveIterator(io.BytesIO(data))
    return [it.get_record_offset() for _ in it]


def read_all(data: bytes):
    reader = ArchiveReader(io.BytesIO(data))
    seen = []
    for rec in reader:
        if rec.rec_type == "response":
            rec.read_payload()
        seen.append(rec.offset)
    return reader, seen


def test_reads_every_record_with_its_offset(archive):
    data = open(archive, "rb").read()
    reader, seen = read_all(data)
    assert seen == record_offsets(data)
    assert len(seen) == 1 + 12 * 3
    assert reader.broken is None


def test_cut_at_many_offsets_keeps_complete_records_and_never_raises(archive):
    data = open(archive, "rb").read()
    offsets = record_offsets(data)
    ends = offsets[1:] + [len(data)]
    for cut in range(0, len(data), max(1, len(data) // 97)):
        reader, seen = read_all(data[:cut])
        complete_before = [o for o, e in zip(offsets, ends) if e <= cut]
        # every record that fits entirely before the cut is read, in order
        assert seen[: len(complete_before)] == complete_before, cut
        # at most the one record straddling the cut comes in addition
        assert len(seen) <= len(complete_before) + 1
        if cut not in ends and cut > 0:
            assert reader.broken is not None, cut
            assert reader.broken.offset >= (complete_before[-1] if complete_before else 0)


def test_garbage_is_a_break_at_offset_zero():
    reader, seen = read_all(os.urandom(4096))
    assert seen == [] and reader.broken is not None and reader.broken.offset == 0
    assert reader.broken.error.isprintable()


def test_empty_input_has_no_records_and_no_break():
    reader, seen = read_all(b"")
    assert seen == [] and reader.broken is None


class FlakyStream(io.BytesIO):
    """A stream that fails like a dropped connection after some bytes."""

    def __init__(self, data, fail_after):
        super().__init__(data)
        self.fail_after = fail_after

    def read(self, size=-1):
        if self.tell() >= self.fail_after:
            raise ConnectionResetError("peer reset")
        return super().read(size if size is not None and size >= 0 else -1)


def test_stream_errors_are_transient_not_corruption(archive):
    data = open(archive, "rb").read()
    reader = ArchiveReader(FlakyStream(data, len(data) // 2))
    with pytest.raises(TransientInputError):
        for rec in reader:
            pass


@pytest.mark.shared_data("warc")
def test_real_clipped_common_crawl_record_is_salvaged():
    with open(os.path.join(SHARED, "resiliparse/tests/data/clipped.warc.gz"), "rb") as fh:
        reader = ArchiveReader(fh)
        recs = [r.rec_type for r in reader]
    assert recs == ["response"]
    assert reader.broken is not None and reader.broken.offset == 0


def test_corrupt_member_in_the_middle_is_skipped_and_reading_resumes(archive):
    data = open(archive, "rb").read()
    offsets = record_offsets(data)
    victim = offsets[10]  # a record in the middle: overwrite its compressed bytes with garbage
    ends = offsets[11]
    bad = data[:victim + 12] + bytes(b ^ 0x5A for b in data[victim + 12:ends - 8]) + data[ends - 8:]
    reader, seen = read_all(bad)
    assert reader.broken is not None and reader.broken.offset == victim
    assert [(s.offset, s.length) for s in reader.skipped] == [(victim, ends - victim)]
    assert seen == offsets[:10] + offsets[11:]  # everything but the corrupt record


class Unseekable(io.BytesIO):
    """An HTTP body: forward reads only."""

    def seekable(self):
        return False

    def seek(self, *a):
        raise io.UnsupportedOperation("seek")


def test_unseekable_streams_resume_after_a_corrupt_member(archive):
    data = open(archive, "rb").read()
    offsets = record_offsets(data)
    bad = data[:offsets[10] + 12] + b"\0" * 200 + data[offsets[10] + 212:]
    reader = ArchiveReader(Unseekable(bad))
    seen = [r.offset for r in reader]
    assert seen == offsets[:10] + offsets[11:]
    assert reader.broken.offset == offsets[10] and not reader.clean
    assert [(s.offset, s.length) for s in reader.skipped] == [(offsets[10], offsets[11] - offsets[10])]


@pytest.mark.shared_data("warc")
def test_arc_records_get_the_same_document_ids_on_every_run(tmp_path):
    """warcio makes up a random WARC-Record-ID for each converted ARC record; the ids must
    not follow it, or a re-run would change every ARC document's docId."""
    import pyarrow.parquet as pq

    from warclake.tasks.extract.archive import extract_archive
    from warclake.tasks.extract.config import ExtractConfig

    arc = os.path.join(SHARED, "warcio/test/data/example.arc.gz")
    ids = []
    for run in range(2):
        s = extract_archive(arc, "D", str(tmp_path / f"lake{run}"), ExtractConfig.from_langs("all"))
        assert s["documents"] >= 1
        path = tmp_path / f"lake{run}" / "documents" / "dump=D" / "example.arc.gz.parquet"
        ids.append(pq.read_table(path, columns=["docId"]).column("docId").to_pylist())
    assert ids[0] == ids[1]


def test_a_stream_error_swallowed_by_the_caller_is_raised_again(archive):
    """The extractor turns payload errors into an outcome; a dropped connection must still
    end the archive as transient, not as a damaged record."""
    data = open(archive, "rb").read()
    reader = ArchiveReader(FlakyStream(data, len(data) // 2))
    with pytest.raises(TransientInputError):
        for rec in reader:
            try:
                rec.read_payload()
            except Exception:
                pass
            rec.complete()
    assert reader.skipped == []

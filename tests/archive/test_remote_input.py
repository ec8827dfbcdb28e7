"""Remote inputs over a server that breaks on purpose (real sockets on 127.0.0.1): a broken,
short or stalled body is resumed or retried, never recorded as a damaged archive."""
import os

import pyarrow.parquet as pq
import pytest

from tools.faults.server import FaultServer
from warclake.flows.dump_flow import is_transient
from warclake.tasks.archive.reader import TransientInputError
from warclake.tasks.extract.archive import extract_archive
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.lake.layout import Lake
from warclake.tasks.sample_dump import make_dump

# Tiny timeout: a stalled read gives up fast; the server stalls far longer than that.
CFG = ExtractConfig.from_langs("ja,en", net_timeout=0.5, net_resumes=3)
STALL = 30.0


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    d = tmp_path_factory.mktemp("dump")
    path = make_dump(str(d), files=1, pages_per_file=40, truncate_last=False)[0]
    return path


@pytest.fixture(scope="module")
def undamaged(archive, tmp_path_factory):
    lake = str(tmp_path_factory.mktemp("local"))
    summary = extract_archive(archive, "D", lake, CFG)
    return summary, outputs(lake, os.path.basename(archive))


def outputs(lake: str, name: str):
    """What a user compares: every document and every ledger row."""
    read = lambda kind: pq.read_table(os.path.join(lake, kind, "dump=D", name + ".parquet")).to_pylist()  # noqa: E731
    return read("documents"), read("ledger")


def serve(archive, **kw) -> FaultServer:
    return FaultServer(os.path.dirname(archive), stall=STALL, max_seconds=120, **kw)


@pytest.mark.parametrize("fault", ["drop", "short", "stall", "truncate", "unsized"])
def test_a_broken_body_is_resumed_and_gives_the_undamaged_outputs(archive, undamaged, tmp_path, fault):
    with serve(archive, fault=fault, times=2) as srv:
        s = extract_archive(f"{srv.url}/{os.path.basename(archive)}", "D", str(tmp_path), CFG)
        assert srv.gets == 3   # the first GET and its resumes, nothing from byte 0 again
    assert s["status"] == "complete" and s["skipped"] == []
    assert s["records"] == undamaged[0]["records"] and s["bytes_read"] == undamaged[0]["bytes_read"]
    assert outputs(str(tmp_path), os.path.basename(archive)) == undamaged[1]


@pytest.mark.parametrize("fault", ["drop", "short", "stall", "truncate", "unsized"])
def test_without_range_support_a_broken_body_is_transient_not_salvaged(archive, undamaged, tmp_path, fault):
    name = os.path.basename(archive)
    with serve(archive, fault=fault, ranges=False) as srv:
        with pytest.raises(TransientInputError) as err:
            extract_archive(f"{srv.url}/{name}", "D", str(tmp_path), CFG)
        assert is_transient(err.value)
        assert srv.gets == 1   # no resume loop on a server that cannot resume
        assert Lake(str(tmp_path)).read_summary("D", name) is None   # not done, not salvaged
        s = extract_archive(f"{srv.url}/{name}", "D", str(tmp_path), CFG)   # the flow's retry
    assert s["status"] == "complete"
    assert outputs(str(tmp_path), name) == undamaged[1]


def test_resumes_are_bounded_then_the_attempt_is_transient(archive, tmp_path):
    name = os.path.basename(archive)
    with serve(archive, fault="short", after=1000, times=1000) as srv:
        with pytest.raises(TransientInputError, match="no resume left"):
            extract_archive(f"{srv.url}/{name}", "D", str(tmp_path), CFG)
        assert srv.gets == 1 + CFG.net_resumes
    assert Lake(str(tmp_path)).read_summary("D", name) is None


def test_a_server_error_is_transient_and_the_retry_gets_through(archive, undamaged, tmp_path):
    name = os.path.basename(archive)
    with serve(archive, fault="5xx") as srv:
        with pytest.raises(TransientInputError) as err:
            extract_archive(f"{srv.url}/{name}", "D", str(tmp_path), CFG)
        assert is_transient(err.value)
        s = extract_archive(f"{srv.url}/{name}", "D", str(tmp_path), CFG)
    assert s["status"] == "complete" and outputs(str(tmp_path), name) == undamaged[1]


def test_a_missing_remote_archive_is_not_retried(archive, tmp_path):
    with serve(archive) as srv:
        with pytest.raises(FileNotFoundError) as err:
            extract_archive(f"{srv.url}/gone.warc.gz", "D", str(tmp_path), CFG)
    assert not is_transient(err.value)


def test_network_settings_do_not_make_outputs_outdated():
    assert ExtractConfig.from_langs("ja", net_timeout=0.5).fingerprint() == ExtractConfig.from_langs("ja").fingerprint()
    with pytest.raises(ValueError, match="net_timeout"):
        ExtractConfig.from_langs("ja", net_timeout=0)


def test_a_paths_listing_cut_short_is_resumed_not_read_short(tmp_path):
    import gzip

    from warclake.tasks.archive.inputs import read_paths_listing

    names = [f"crawl-data/x/{i:05d}.warc.gz" for i in range(2000)]
    (tmp_path / "warc.paths.gz").write_bytes(gzip.compress("\n".join(names).encode()))
    with FaultServer(str(tmp_path), fault="short", max_seconds=60) as srv:
        got = read_paths_listing(f"{srv.url}/warc.paths.gz", "https://data.example/")
    assert got == [f"https://data.example/{n}" for n in names]


@pytest.mark.parametrize("fault", ["truncate", "unsized"])
def test_a_reply_shorter_than_the_file_is_never_a_done_salvaged_archive(archive, undamaged, tmp_path, fault):
    """A well-formed reply that stops at half the file (its Content-Length says so, or it has
    none and the connection closes) while HEAD gave the whole size: no summary, not salvaged;
    the next healthy read gives every document."""
    name = os.path.basename(archive)
    with serve(archive, fault=fault, ranges=False, times=1) as srv:
        url = f"{srv.url}/{name}"
        with pytest.raises(TransientInputError, match=f"of {os.path.getsize(archive)}"):
            extract_archive(url, "D", str(tmp_path), CFG)
        assert Lake(str(tmp_path)).read_summary("D", name) is None
        assert not os.path.exists(os.path.join(str(tmp_path), "documents", "dump=D", name + ".parquet"))
        s = extract_archive(url, "D", str(tmp_path), CFG)
    assert s["status"] == "complete" and s["documents"] == undamaged[0]["documents"] > 0
    assert outputs(str(tmp_path), name) == undamaged[1]


def test_a_reply_longer_than_the_head_said_is_transient(archive, tmp_path):
    from warclake.tasks.archive.remote_stream import RemoteStream

    name = os.path.basename(archive)
    with serve(archive) as srv:
        with pytest.raises(TransientInputError, match="changed meanwhile"):
            RemoteStream(f"{srv.url}/{name}", timeout=5, expected_size=os.path.getsize(archive) - 10)
        with RemoteStream(f"{srv.url}/{name}", timeout=5, expected_size=os.path.getsize(archive)) as s:
            assert s.read() == open(archive, "rb").read()


def test_an_fsspec_input_that_ends_before_its_listed_size_is_transient(archive):
    import fsspec

    from warclake.tasks.archive.inputs import input_identity, open_input

    data = open(archive, "rb").read()
    with fsspec.open("memory://bucket/a.warc.gz", "wb") as fh:
        fh.write(data)
    url = "memory://bucket/a.warc.gz"
    assert input_identity(url)["size"] == len(data)
    with open_input(url, size=len(data)) as fh:
        assert fh.read() == data
    with open_input(url, size=len(data) + 100) as fh:   # the store listed more than it gave
        with pytest.raises(TransientInputError, match=f"gave {len(data)} bytes where its size is"):
            while fh.read(1 << 16):
                pass


def test_an_input_s_identity_is_asked_over_one_kept_alive_connection(archive, tmp_path):
    from support.http_server import LocalHTTPServer
    from warclake.tasks.archive.inputs import input_identity
    from warclake.tasks.archive.remote_stream import http_head

    os.makedirs(tmp_path / "folder")
    with LocalHTTPServer(os.path.dirname(archive)) as srv:
        url = f"{srv.url}/{os.path.basename(archive)}"
        first = input_identity(url)
        assert first["size"] == os.path.getsize(archive) and first["last_modified"]
        assert all(input_identity(url) == first for _ in range(5))
        with pytest.raises(FileNotFoundError, match="HTTP 404"):
            input_identity(f"{srv.url}/gone.warc.gz")
        assert srv.connections == 1 and len(srv.taken()) == 7   # a 404 keeps the connection too
    with LocalHTTPServer(str(tmp_path)) as srv:
        assert http_head(f"{srv.url}/folder")["Content-Type"].startswith("text/html")   # 301 to folder/, followed
        assert [m for m, _ in srv.taken()] == ["HEAD", "HEAD"]

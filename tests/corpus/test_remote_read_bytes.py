"""How the corpus stage reads a small object (a state file, a manifest) of a remote lake:
one ranged GET; an empty object (which S3 answers with 416) reads as b"", and any other
failure surfaces as it came, without a second read. Against moto's S3 server behind the
proxy, which breaks connections and answers errors on purpose."""
from __future__ import annotations

import pytest

from support.s3_lake import s3_fixture

BUCKET = "warclake-read-bytes"


s3 = s3_fixture(BUCKET)


@pytest.fixture
def proxy(s3):
    s3["proxy"].clear()
    s3["proxy"].reset_counts()
    yield s3["proxy"]
    s3["proxy"].clear()


def gets_of(proxy, key: str) -> list:
    return [r for r in proxy.taken() if r.method == "GET" and r.under(key)]


def test_an_empty_object_reads_as_empty_bytes_with_one_get(s3, proxy):
    from warclake.tasks.corpus.storage.layout import read_bytes

    s3["fs"].pipe_file(f"{BUCKET}/lake/empty.json", b"")
    s3["fs"].pipe_file(f"{BUCKET}/lake/full.json", b'{"key": 1}')
    assert read_bytes(f"s3://{BUCKET}/lake/full.json") == b'{"key": 1}'
    proxy.reset_counts()
    assert read_bytes(f"s3://{BUCKET}/lake/empty.json") == b""
    assert [r.range for r in gets_of(proxy, "empty.json")] == ["bytes=0-"]


def test_the_416_of_an_empty_object_is_what_s3fs_raises_as_told(s3):
    """The one error read_bytes takes for an empty object, as s3fs raises it from the server's reply."""
    from warclake.tasks.lake.layout import is_range_past_end

    s3["fs"].pipe_file(f"{BUCKET}/lake/zero", b"")
    with pytest.raises(OSError) as got:
        s3["fs"].cat_file(f"{BUCKET}/lake/zero", start=0)
    assert is_range_past_end(got.value)
    with pytest.raises(FileNotFoundError) as missing:
        s3["fs"].cat_file(f"{BUCKET}/lake/absent", start=0)
    assert not is_range_past_end(missing.value)


def test_an_error_reply_surfaces_without_a_second_read(s3, proxy):
    """An error s3fs raises as an OSError other than the 416 (a 500 would too, after
    botocore's own retries, which take seconds)."""
    from warclake.tasks.corpus.storage.layout import read_bytes

    key = "lake/state-403.json"
    s3["fs"].pipe_file(f"{BUCKET}/{key}", b'{"key": 1}')
    proxy.answer(lambda r: r.method == "GET" and r.under(key), 403, "AccessDenied")
    with pytest.raises(PermissionError):
        read_bytes(f"s3://{BUCKET}/{key}")
    gets = gets_of(proxy, key)
    assert [r.range for r in gets] == ["bytes=0-"], gets
    assert not any(r.method == "HEAD" for r in proxy.taken())
    proxy.clear()
    assert read_bytes(f"s3://{BUCKET}/{key}") == b'{"key": 1}'


def test_a_broken_connection_surfaces_without_a_second_read(s3, proxy):
    from warclake.tasks.corpus.storage.layout import read_bytes

    key = "lake/state-reset.json"
    s3["fs"].pipe_file(f"{BUCKET}/{key}", b'{"key": 2}')
    proxy.fail(lambda r: r.method == "GET" and r.under(key))
    with pytest.raises(Exception) as got:
        read_bytes(f"s3://{BUCKET}/{key}")
    assert "connect" in str(got.value).lower(), got.value
    gets = gets_of(proxy, key)
    assert gets and all(r.range == "bytes=0-" for r in gets), gets
    proxy.clear()
    assert read_bytes(f"s3://{BUCKET}/{key}") == b'{"key": 2}'

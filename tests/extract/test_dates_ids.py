from datetime import datetime, timezone

from warclake.tasks.extract.dates import document_date, parse_http_date, parse_warc_date
from warclake.tasks.extract.doc_id import doc_id


def utc(*a):
    return datetime(*a, tzinfo=timezone.utc)


def test_date_is_minimum_of_the_three():
    d = document_date("2024-05-20T10:00:00Z", "Mon, 20 May 2024 09:00:00 GMT", "Tue, 02 Jan 2018 03:04:05 GMT")
    assert d == utc(2018, 1, 2, 3, 4, 5)


def test_dates_before_1999_are_ignored():
    assert document_date("2024-05-20T10:00:00Z", None, "Thu, 01 Jan 1970 00:00:00 GMT") == utc(2024, 5, 20, 10)
    assert document_date(None, None, "Thu, 01 Jan 1970 00:00:00 GMT") is None


def test_unparsable_values_are_ignored():
    assert document_date("2008-10-294T05:21:46-0700", "garbage", "") is None
    assert parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT") == utc(1994, 11, 6, 8, 49, 37)
    assert parse_warc_date("20080430204825") == utc(2008, 4, 30, 20, 48, 25)
    assert parse_warc_date("2020-08-08T17:02:46.123Z") == datetime(2020, 8, 8, 17, 2, 46, 123000, tzinfo=timezone.utc)


def test_doc_id_from_record_id_or_stable_fallback():
    assert doc_id("<urn:uuid:0b1f7e3c-8d5a-4f2e-9c6b-1a2b3c4d5e6f>", "a.warc.gz", 5) == "0b1f7e3c-8d5a-4f2e-9c6b-1a2b3c4d5e6f"
    fallback = doc_id("<urn:x:not-a-uuid>", "a.warc.gz", 5)
    assert fallback == doc_id(None, "a.warc.gz", 5)
    assert fallback != doc_id(None, "a.warc.gz", 6)

"""Per-archive extraction into the lake: accounting, contract columns, atomicity, bad input."""
import io
import os
import uuid

import pyarrow.parquet as pq
import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from conftest import shared_data
from support.lakegen import read_lake, write_warc
from warclake.tasks.extract.archive import extract_archive
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.extract.outcomes import ALL_OUTCOMES
from warclake.tasks.lake.layout import Lake
from warclake.tasks.sample_dump import make_dump

CFG = ExtractConfig.from_langs("ja,en")


def record_lengths(path):
    """warc_offset -> WARC Content-Length of every record, read with warcio directly."""
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as fh:
        it = ArchiveIterator(fh)
        return {it.get_record_offset(): int(rec.rec_headers.get_header("Content-Length")) for rec in it}


JA = "<p>これは日本語の文章です。今日はとても良い天気なので、公園まで散歩に行きました。</p>".encode()
EN = (b"<p>This is an English paragraph about the weather, which was very nice today, so we went "
      b"for a walk in the park and talked about many things.</p>")


def test_every_record_is_accounted_for_once_and_documents_follow_the_contract(tmp_path):
    rid = str(uuid.uuid4())
    path = tmp_path / "a.warc.gz"
    records = [
        ("http://ja.example/1", 200, "text/html; charset=utf-8",
         b'<html><body><div class="c" id="m"><p>' + JA[3:-4] + b' <a href="/x">\xe3\x83\xaa\xe3\x83\xb3\xe3\x82\xaf</a></p></div></body></html>',
         {"WARC-Record-ID": f"<urn:uuid:{rid}>"}),
        ("http://en.example/2", 200, "text/html", b"<html><body>" + EN + b"</body></html>", {}),
        ("http://x.example/3", 404, "text/html", JA, {}),
        ("http://x.example/4", 200, "image/png", b"\x89PNG....", {}),
        ("http://x.example/5", 200, "text/html", JA, {"WARC-Truncated": "length"}),
        ("http://ru.example/6", 200, "text/html; charset=windows-1251",
         "<p>Это русский текст о погоде, которая сегодня была очень хорошей.</p>".encode("cp1251"), {}),
        ("http://x.example/7", 200, "text/html", b"   ", {}),
        ("http://x.example/8", 200, "text/html", b"<html><body><script>var a=1;</script></body></html>", {}),
        # Japanese only outside the body: the language passes, no paragraph remains
        ("http://x.example/9", 200, "text/html; charset=utf-8",
         "<html><head><title>日本語のタイトルです。これはテストのためのページですから、本文はありません。</title>"
         "</head><body><script>var a=1;</script></body></html>".encode(), {}),
    ]
    write_warc(path, records)
    summary = extract_archive(str(path), "D", str(tmp_path / "lake"), CFG)
    docs, ledger, s2 = read_lake(str(tmp_path / "lake"), "D", "a.warc.gz")
    assert summary == s2
    assert summary["status"] == "complete" and summary["records"] == 18 == len(ledger)
    assert sum(summary["outcomes"].values()) == summary["records"]
    assert set(summary["outcomes"]) == set(ALL_OUTCOMES)
    by_url = {r["url"]: r["outcome"] for r in ledger if r["record_type"] == "response"}
    assert by_url == {
        "http://ja.example/1": "kept", "http://en.example/2": "kept", "http://x.example/3": "http_status",
        "http://x.example/4": "not_text", "http://x.example/5": "warc_truncated",
        "http://ru.example/6": "lang_rejected", "http://x.example/7": "empty", "http://x.example/8": "lang_undetermined",
        "http://x.example/9": "empty",
    }
    assert summary["outcomes"]["not_response"] == 9
    assert len({r["warc_offset"] for r in ledger}) == 18
    ja = next(d for d in docs if d["url"] == "http://ja.example/1")
    assert ja["docId"] == rid
    assert ja["lang"] == "ja" and ja["charset"] == "utf-8" and ja["charset_source"] == "header"
    assert ja["text"].startswith("body>div.c#m>p\x1cこれは日本語の文章です。")
    assert ja["text"].endswith("\x02リンク\x03")
    assert ja["date"].year == 2018  # Last-Modified is the earliest of the three dates
    en = next(d for d in docs if d["url"] == "http://en.example/2")
    assert en["lang"] == "en" and en["text"] == "body>p\x1c" + EN[3:-4].decode()
    assert en["paragraph_labels"] is None and en["boilerplate"] == "none"
    offsets = {r["url"]: r["warc_offset"] for r in ledger if r["record_type"] == "response"}
    assert ja["warc_offset"] == offsets["http://ja.example/1"]
    # bytes_in is the record's size for every outcome; payload_bytes the body's, once it was read
    assert {r["warc_offset"]: r["bytes_in"] for r in ledger} == record_lengths(path)
    bodies = {url: body for url, _, _, body, _ in records}
    payloads = {r["url"]: r["payload_bytes"] for r in ledger if r["record_type"] == "response"}
    not_read = {"http_status", "not_text", "warc_truncated"}  # settled on the headers
    assert payloads == {url: None if by_url[url] in not_read else len(bodies[url]) for url in bodies}
    assert all(r["payload_bytes"] is None for r in ledger if r["outcome"] == "not_response")


def test_language_settings_of_the_config_reach_the_detector(tmp_path):
    path = tmp_path / "late.warc.gz"
    late = b"<html><body>" + b"<span>-</span>" * 60 + JA + b"</body></html>"   # markup a reader sees
    write_warc(path, [("http://ja.example/late", 200, "text/html; charset=utf-8", late, {})])
    wide = extract_archive(str(path), "D", str(tmp_path / "wide"), ExtractConfig.from_langs("ja"))
    narrow = extract_archive(str(path), "D", str(tmp_path / "narrow"),
                             ExtractConfig.from_langs("ja", lang_window_chars=500))
    assert wide["outcomes"]["kept"] == 1
    assert narrow["outcomes"]["lang_rejected"] == 1  # the Japanese starts past 500 characters
    assert narrow["config"]["lang_window_chars"] == 500
    assert narrow["config_fingerprint"] != wide["config_fingerprint"]


def test_all_keeps_short_pages_and_pages_without_letters(tmp_path):
    path = tmp_path / "short.warc.gz"
    write_warc(path, [
        ("http://en.example/short", 200, "text/html; charset=utf-8",
         b'<html><body><p>Read the <a href="/guide">installation guide</a> before you start.</p></body></html>', {}),
        ("http://x.example/digits", 200, "text/html", b"<html><body><p>2024-05-20 12:30</p></body></html>", {}),
    ])
    summary = extract_archive(str(path), "D", str(tmp_path / "all"), ExtractConfig.from_langs("all"))
    docs, _, _ = read_lake(str(tmp_path / "all"), "D", "short.warc.gz")
    assert summary["outcomes"]["kept"] == 2
    assert {d["url"]: d["lang"] for d in docs} == {"http://en.example/short": "en", "http://x.example/digits": None}
    strict = extract_archive(str(path), "D", str(tmp_path / "strict"),
                             ExtractConfig.from_langs("all", min_chars=1000))
    assert strict["outcomes"]["lang_undetermined"] == 2 and strict["outcomes"]["kept"] == 0


def test_oversize_records_count_their_whole_payload(tmp_path):
    import gzip

    page = b"<html><body>" + JA * 40 + b"</body></html>"
    path = tmp_path / "big.warc.gz"
    with open(path, "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        for url, hdrs, body in [
            ("http://ja.example/small", [("Content-Type", "text/html; charset=utf-8")], JA),
            ("http://ja.example/big", [("Content-Type", "text/html; charset=utf-8")], page),
            # the limit applies to the decoded payload, and so does payload_bytes
            ("http://ja.example/gzip", [("Content-Type", "text/html; charset=utf-8"),
                                        ("Content-Encoding", "gzip")], gzip.compress(page)),
        ]:
            http = StatusAndHeaders("200 OK", hdrs, protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http))
    cfg = ExtractConfig.from_langs("ja", max_payload=len(JA) + 10)
    extract_archive(str(path), "D", str(tmp_path / "lake"), cfg)
    _, ledger, _ = read_lake(str(tmp_path / "lake"), "D", path.name)
    got = {r["url"]: (r["outcome"], r["payload_bytes"]) for r in ledger}
    assert got == {"http://ja.example/small": ("kept", len(JA)),
                   "http://ja.example/big": ("oversize", len(page)),
                   "http://ja.example/gzip": ("oversize", len(page))}
    assert {r["warc_offset"]: r["bytes_in"] for r in ledger} == record_lengths(path)


def one_page_cut_inside_its_body(tmp_path, copies: int):
    """A plain WARC of one response of ``copies`` x JA, cut 10 x JA before its end; and the
    uncut file."""
    whole = tmp_path / "whole.warc"
    with open(whole, "wb") as fh:
        w = WARCWriter(fh, gzip=False)
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
        w.write_record(w.create_warc_record("http://ja.example/1", "response", payload=io.BytesIO(JA * copies),
                                            http_headers=http))
    cut = tmp_path / "cut.warc"
    cut.write_bytes(whole.read_bytes()[:-len(JA) * 10])
    return cut, whole


def test_a_damaged_record_over_the_payload_cap_is_broken_not_oversize(tmp_path):
    """The cap must not hide damage: a cut inside a big record's body gives record_broken."""
    cut, _ = one_page_cut_inside_its_body(tmp_path, 200)  # the cut lies past the cap
    s = extract_archive(str(cut), "D", str(tmp_path / "lake"), ExtractConfig.from_langs("ja", max_payload=len(JA) * 20))
    _, ledger, _ = read_lake(str(tmp_path / "lake"), "D", cut.name)
    assert s["status"] == "salvaged"
    assert [(r["outcome"], r["payload_bytes"]) for r in ledger] == [("record_broken", None)]


def test_boilerplate_labels_one_per_paragraph(tmp_path):
    make_dump(str(tmp_path / "d"), files=1, pages_per_file=10, truncate_last=False)
    src = next(p for p in os.listdir(tmp_path / "d") if p.endswith(".warc.gz"))
    extract_archive(str(tmp_path / "d" / src), "D", str(tmp_path / "lake"),
                    ExtractConfig.from_langs("ja,en", boilerplate="justext"))
    docs, _, _ = read_lake(str(tmp_path / "lake"), "D", src)
    assert docs
    for d in docs:
        assert len(d["paragraph_labels"]) == len(d["text"].split("\n\n"))
        assert set(d["paragraph_labels"]) <= {"good", "bad"}


def test_truncated_archive_is_salvaged_with_everything_before_the_cut(tmp_path):
    paths = make_dump(str(tmp_path / "d"), files=1, pages_per_file=20, truncate_last=False)
    data = open(paths[0], "rb").read()
    whole = extract_archive(paths[0], "D", str(tmp_path / "lake"), CFG)
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(data[: len(data) * 2 // 3])
    part = extract_archive(str(cut), "D", str(tmp_path / "lake"), CFG)
    assert part["status"] == "salvaged" and part["error"] and part["error_offset"] > 0
    docs_whole, ledger_whole, _ = read_lake(str(tmp_path / "lake"), "D", os.path.basename(paths[0]))
    docs_part, ledger_part, _ = read_lake(str(tmp_path / "lake"), "D", "cut.warc.gz")
    before = [d["docId"] for d in docs_whole if d["warc_offset"] < part["error_offset"]]
    assert [d["docId"] for d in docs_part] == before
    assert sum(part["outcomes"].values()) == part["records"] == len(ledger_part)
    sizes = {r["warc_offset"]: r["bytes_in"] for r in ledger_whole}
    assert all(r["bytes_in"] == sizes[r["warc_offset"]] for r in ledger_part)
    assert whole["status"] == "complete"


def test_a_record_the_archive_ends_inside_has_its_declared_size_and_no_payload(tmp_path):
    cut, whole = one_page_cut_inside_its_body(tmp_path, 20)
    s = extract_archive(str(cut), "D", str(tmp_path / "lake"), CFG)
    _, ledger, _ = read_lake(str(tmp_path / "lake"), "D", cut.name)
    assert s["status"] == "salvaged"
    assert [(r["outcome"], r["payload_bytes"]) for r in ledger] == [("record_broken", None)]
    assert ledger[0]["bytes_in"] == record_lengths(whole)[0]


@pytest.mark.parametrize("content", [b"", b"not a warc at all\n" * 50, os.urandom(3000),
                                     b"<html><body>an HTML page, not an archive</body></html>"])
def test_bad_input_is_recorded_not_raised(tmp_path, content):
    p = tmp_path / "bad.warc.gz"
    p.write_bytes(content)
    s = extract_archive(str(p), "D", str(tmp_path / "lake"), CFG)
    assert s["records"] == 0 and s["documents"] == 0
    # an empty file (a broken download) is no more an archive than garbage is: never done
    assert s["status"] == "failed" and s["error"]
    assert ("0 bytes" in s["error"]) == (not content)
    assert Lake(str(tmp_path / "lake")).read_summary("D", "bad.warc.gz") == s
    from warclake.tasks.lake.plan import plan_dump

    assert [i.reason for i in plan_dump([str(p)], "D", str(tmp_path / "lake"), CFG)] == ["failed"]


def test_missing_input_raises_file_not_found_and_writes_nothing(tmp_path):
    with pytest.raises(FileNotFoundError):
        extract_archive(str(tmp_path / "nope.warc.gz"), "D", str(tmp_path / "lake"), CFG)
    assert not (tmp_path / "lake" / "files").exists() or not os.listdir(tmp_path / "lake" / "files")


def test_rerun_gives_identical_documents(tmp_path):
    paths = make_dump(str(tmp_path / "d"), files=1, pages_per_file=15, truncate_last=False)
    extract_archive(paths[0], "D", str(tmp_path / "l1"), CFG)
    extract_archive(paths[0], "D", str(tmp_path / "l2"), CFG)
    name = os.path.basename(paths[0])
    d1, _, _ = read_lake(str(tmp_path / "l1"), "D", name)
    d2, _, _ = read_lake(str(tmp_path / "l2"), "D", name)
    assert d1 == d2
    # nothing but the three published files, no temporaries left behind
    for kind in ("documents", "ledger", "files"):
        assert os.listdir(tmp_path / "l1" / kind / "dump=D") == [name + (".json" if kind == "files" else ".parquet")]


@pytest.mark.shared_data("warc")
def test_real_archives_finish_with_accounted_records(tmp_path):
    root = shared_data("warc")
    inputs = [os.path.join(r, f) for r, _, fs in os.walk(root) for f in fs
              if f.endswith((".warc", ".warc.gz", ".arc", ".arc.gz"))]
    assert len(inputs) >= 10
    statuses = {}
    for p in inputs:
        name = os.path.relpath(p, root).replace(os.sep, "_")
        link = tmp_path / name
        link.symlink_to(p)
        s = extract_archive(str(link), "REAL", str(tmp_path / "lake"), ExtractConfig.from_langs("all"))
        assert sum(s["outcomes"].values()) == s["records"]
        statuses[name] = s["status"]
    assert statuses["resiliparse_tests_data_warcfile.warc.gz"] == "complete"
    assert statuses["resiliparse_tests_data_clipped.warc.gz"] == "salvaged"
    assert statuses["resiliparse_tests_data_clueweb-quirk.warc.gz"] == "complete"


def test_wet_conversion_records_become_documents_and_wat_records_are_metadata(tmp_path):
    wet = tmp_path / "a.warc.wet.gz"
    text = ("今日は朝から雨が降っていたので、駅まで歩くのに時間がかかりました。\n"
            "  図書館では毎週土曜日に   読み聞かせの会が開かれています。 \n\n")
    with open(wet, "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        w.write_record(w.create_warc_record("http://ja.example/wet", "conversion",
                                            payload=io.BytesIO(text.encode()), warc_content_type="text/plain"))
        w.write_record(w.create_warc_record("http://ja.example/wat", "metadata",
                                            payload=io.BytesIO(b'{"Envelope": {}}'),
                                            warc_content_type="application/json"))
    s = extract_archive(str(wet), "D", str(tmp_path / "lake"), CFG)
    docs, ledger, _ = read_lake(str(tmp_path / "lake"), "D", wet.name)
    assert [r["outcome"] for r in ledger] == ["kept", "metadata"]
    assert [r["payload_bytes"] for r in ledger] == [len(text.encode()), None]
    assert {r["warc_offset"]: r["bytes_in"] for r in ledger} == record_lengths(wet)
    assert s["documents"] == 1
    assert docs[0]["text"] == ("\x1c今日は朝から雨が降っていたので、駅まで歩くのに時間がかかりました。\n\n"
                               "\x1c図書館では毎週土曜日に 読み聞かせの会が開かれています。")
    assert docs[0]["lang"] == "ja" and docs[0]["charset"] == "utf-8"


def test_remote_lake_through_fsspec(tmp_path):
    """A lake on a non-local fsspec filesystem (fsspec's in-memory one stands in for s3://)."""
    import fsspec

    from warclake.tasks.lake.plan import plan_dump

    paths = make_dump(str(tmp_path / "d"), files=2, pages_per_file=10, truncate_last=False)
    lake = "memory://warclake-test-lake"
    for p in paths:
        extract_archive(p, "D", lake, CFG)
    fs = fsspec.filesystem("memory")
    names = sorted(fs.ls("/warclake-test-lake/files/dump=D", detail=False))
    assert [n.rsplit("/", 1)[-1] for n in names] == [os.path.basename(p) + ".json" for p in paths]
    with fs.open(f"/warclake-test-lake/documents/dump=D/{os.path.basename(paths[0])}.parquet", "rb") as fh:
        docs = pq.read_table(fh).to_pylist()
    local = extract_archive(paths[0], "D", str(tmp_path / "local"), CFG)
    assert len(docs) == local["documents"] > 0
    assert [i.reason for i in plan_dump(paths, "D", lake, CFG)] == ["done", "done"]
    import tempfile  # staging files for a remote lake live in the local temp dir: none left behind
    names = {os.path.basename(p) for p in paths}
    assert not [n for n in os.listdir(tempfile.gettempdir())
                if n.endswith(".tmp") and any(n.startswith(f".{b}.") for b in names)]
    fs.rm("/warclake-test-lake", recursive=True)


def test_corruption_in_the_middle_loses_only_the_broken_record(tmp_path):
    from warcio.archiveiterator import ArchiveIterator

    paths = make_dump(str(tmp_path / "d"), files=1, pages_per_file=20, truncate_last=False)
    data = open(paths[0], "rb").read()
    it = ArchiveIterator(io.BytesIO(data))
    offsets = [it.get_record_offset() for _ in it]
    responses = [o for o, r in zip(offsets, ledger_types(paths[0])) if r == "response"]
    victim = responses[5]
    nxt = offsets[offsets.index(victim) + 1]
    bad = tmp_path / "bad.warc.gz"
    bad.write_bytes(data[:victim + 12] + bytes(b ^ 0x5A for b in data[victim + 12:nxt - 8]) + data[nxt - 8:])
    whole = extract_archive(paths[0], "D", str(tmp_path / "lake"), CFG)
    s = extract_archive(str(bad), "D", str(tmp_path / "lake"), CFG)
    assert s["status"] == "salvaged" and s["error_offset"] == victim
    assert [(k["offset"], k["length"]) for k in s["skipped"]] == [(victim, nxt - victim)]
    assert s["records"] == whole["records"] - 1
    docs_whole, _, _ = read_lake(str(tmp_path / "lake"), "D", os.path.basename(paths[0]))
    docs_bad, _, _ = read_lake(str(tmp_path / "lake"), "D", "bad.warc.gz")
    assert [d["docId"] for d in docs_bad] == [d["docId"] for d in docs_whole if d["warc_offset"] != victim]


def ledger_types(path):
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as fh:
        return [r.rec_type for r in ArchiveIterator(fh)]


def test_ja_extraction_never_loads_lingua_even_on_undeclared_latin_pages(tmp_path):
    from warclake.tasks.extract.language import built_detectors

    path = tmp_path / "mixed.warc.gz"
    czech = "<html><body><p>Příliš žluťoučký kůň úpěl ďábelské ódy u řeky.</p></body></html>"
    write_warc(path, [
        ("http://cz.example/1", 200, "text/html", czech.encode("iso-8859-2"), {}),
        ("http://ja.example/2", 200, "text/html; charset=utf-8", b"<html><body>" + JA + b"</body></html>", {}),
    ])
    before = set(built_detectors())
    summary = extract_archive(str(path), "D", str(tmp_path / "lake"), ExtractConfig.from_langs("ja"))
    assert summary["outcomes"]["kept"] == 1 and summary["outcomes"]["lang_rejected"] == 1
    assert set(built_detectors()) == before


def test_pages_finished_in_batches_equal_pages_finished_one_by_one(tmp_path):
    """extract_archive holds pages waiting for lingua and finishes them together: the lake
    must hold what finishing every record on its own gives, rows in the archive's order."""
    from support.tricky_pages import page
    from warclake.tasks.archive.reader import ArchiveReader
    from warclake.tasks.extract.archive import PAGE_BATCH
    from warclake.tasks.extract.record import Context, process_record

    words = {"en": "the house of the river and the story that was told there",
             "de": "das Haus am Fluss und die Geschichte die dort erzählt wurde",
             "ru": "дом у реки и история которая там была рассказана"}
    records = []
    for seed in range(3 * PAGE_BATCH + 7):
        lang = list(words)[seed % 3]
        if seed % 5 == 0:
            body = page(seed).encode("utf-8", "surrogatepass")
        else:
            body = f"<html><body><p>{(words[lang] + ' ') * (1 + seed % 4)}</p><p>{seed}</p></body></html>".encode()
        records.append((f"http://s{seed % 7}.example/{seed}", 200, "text/html; charset=utf-8", body, {}))
        if seed % 9 == 0:  # records that need no language decision, between the pages
            records.append((f"http://s.example/{seed}.png", 200, "image/png", b"\x89PNG", {}))
            records.append((f"http://s.example/gone{seed}", 404, "text/html", b"<p>gone</p>", {}))
    path = tmp_path / "mixed.warc.gz"
    write_warc(path, records)
    config = ExtractConfig.from_langs("all", boilerplate="sieve")
    extract_archive(str(path), "D", str(tmp_path / "lake"), config)
    docs, ledger, _ = read_lake(str(tmp_path / "lake"), "D", path.name)

    ctx = Context(dump="D", warc_name=path.name, config=config)
    with open(path, "rb") as fh:
        one_by_one = [(rec.offset, process_record(rec, ctx)) for rec in ArchiveReader(fh)]
    assert [(r["warc_offset"], r["outcome"], r["lang"]) for r in ledger] == \
        [(offset, res.outcome.value, res.lang) for offset, res in one_by_one]
    expected = [res.document for _, res in one_by_one if res.document is not None]
    assert len(docs) == len(expected) > 2 * PAGE_BATCH
    assert {d["lang"] for d in docs} >= {"en", "de", "ru"}
    for got, want in zip(docs, expected):
        assert (got["warc_offset"], got["text"], got["lang"], got["paragraph_labels"]) == \
            (want["warc_offset"], want["text"], want["lang"], want["paragraph_labels"])
        assert got["lang_score"] == pytest.approx(want["lang_score"], rel=1e-6)  # stored as float32


def test_documents_text_is_written_plain_and_every_reader_reads_it(tmp_path):
    """The unique columns carry no dictionary (text, docId, url) and the text no statistics;
    pyarrow, DuckDB's views and polars read the same documents, a look-up by docId included."""
    import polars as pl

    from warclake.tasks.lake.catalog import connect_catalog

    path = make_dump(str(tmp_path / "dump"), files=1, pages_per_file=40, dump="D", truncate_last=False)[0]
    summary = extract_archive(path, "D", str(tmp_path / "lake"), ExtractConfig.from_langs("all"))
    docs_file = Lake(str(tmp_path / "lake")).path("documents", "D", os.path.basename(path))
    meta = pq.ParquetFile(docs_file).metadata
    assert summary["documents"] == meta.num_rows > 10
    chunks = {meta.row_group(0).column(i).path_in_schema: meta.row_group(0).column(i) for i in range(meta.num_columns)}
    for name in ("text", "docId", "url"):
        assert not any("DICTIONARY" in e for e in chunks[name].encodings), name
    assert not chunks["text"].is_stats_set
    assert chunks["docId"].is_stats_set and chunks["url"].is_stats_set
    assert any("DICTIONARY" in e for e in chunks["lang"].encodings) and chunks["lang"].is_stats_set
    assert any("DICTIONARY" in e for e in chunks["paragraph_labels.list.element"].encodings)

    rows = pq.read_table(docs_file).to_pylist()
    con = connect_catalog(str(tmp_path / "lake"))
    by_duckdb = con.execute("SELECT docId, text, url, lang FROM documents ORDER BY warc_offset").fetchall()
    assert by_duckdb == [(r["docId"], r["text"], r["url"], r["lang"]) for r in rows]
    one = rows[len(rows) // 2]
    assert con.execute("SELECT text FROM documents WHERE docId = ?", [one["docId"]]).fetchall() == [(one["text"],)]
    con.close()
    frame = pl.read_parquet(docs_file)
    assert frame["text"].to_list() == [r["text"] for r in rows] and frame["docId"].n_unique() == len(rows)

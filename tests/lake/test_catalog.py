"""The DuckDB catalogue: views over a generated lake, from any working directory, rebuilt
under a reader's feet, and the text macros checked against the Python paragraph model."""
from collections import Counter

import duckdb
import pytest

from support.lakegen import make_lake
from warclake.tasks.extract.paragraph import split_document
from warclake.tasks.lake.catalog import (
    CATALOG_NAME,
    build_catalog,
    charset_label_sql,
    connect_catalog,
    install_views,
    read_sql,
    sql_literal,
)


def count(con, sql, params=None):
    return con.execute(sql, params or []).fetchone()[0]


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    return make_lake(tmp_path_factory.mktemp("lake") / "lake")


def test_views_work_from_another_working_directory(lake, tmp_path, monkeypatch):
    path = build_catalog(lake.root)
    assert path == lake.root / CATALOG_NAME
    monkeypatch.chdir(tmp_path)  # nothing of the lake is reachable by a relative path here
    con = duckdb.connect(str(path), read_only=True)
    all_docs = sum(len(f.documents) for f in lake.files)
    all_ledger = sum(len(f.ledger) for f in lake.files)
    assert count(con, "SELECT count(*) FROM documents") == all_docs
    assert count(con, "SELECT count(*) FROM ledger") == all_ledger
    assert count(con, "SELECT count(*) FROM files") == len(lake.done_files)
    # the input still being extracted (no summary yet) is left out of the done_* views
    assert count(con, "SELECT count(*) FROM done_documents") == len(lake.done_documents())
    assert count(con, "SELECT count(*) FROM done_ledger") == len(lake.done_ledger())
    assert len(lake.done_documents()) < all_docs
    # files/*.json: outcome counts come through as a map, per input
    g = lake.done_files[0]
    got = dict(con.execute("SELECT outcomes FROM files WHERE warc_file = ?", [g.warc_file]).fetchone()[0])
    assert got == dict(Counter(r["outcome"] for r in g.ledger))
    per_dump = {r[0]: r[1:] for r in con.execute(
        "SELECT dump, files, salvaged, failed, documents FROM dumps").fetchall()}
    for dump in {f.dump for f in lake.files}:
        done = [f for f in lake.done_files if f.dump == dump]
        assert per_dump[dump] == (len(done), sum(f.status == "salvaged" for f in done),
                                  sum(f.status == "failed" for f in done),
                                  sum(len(f.documents) for f in done))
    con.close()


def test_rebuild_while_a_reader_has_it_open(tmp_path):
    lake = make_lake(tmp_path / "lake", dumps={"CC-MAIN-2024-10": 2}, running=0, failed=0,
                     salvaged=0)
    path = build_catalog(lake.root)
    reader = duckdb.connect(str(path), read_only=True)
    before = count(reader, "SELECT count(*) FROM files")
    assert before == 2
    # more inputs finish, and the catalogue is rebuilt while the reader is still open
    more = make_lake(tmp_path / "lake", dumps={"CC-MAIN-2024-18": 3}, seed=11, running=0,
                     failed=0, salvaged=0)
    build_catalog(lake.root)
    build_catalog(lake.root)
    # the open reader keeps working (its views glob the lake at query time)
    assert count(reader, "SELECT count(*) FROM files") == before + len(more.files)
    reader.close()
    fresh = duckdb.connect(str(path), read_only=True)
    assert count(fresh, "SELECT count(DISTINCT dump) FROM documents") == 2
    fresh.close()
    leftovers = [p.name for p in lake.root.iterdir() if p.name.endswith((".tmp", ".wal"))]
    assert leftovers == []


def test_lake_path_with_quotes_and_spaces(tmp_path, monkeypatch):
    root = tmp_path / "it's a \"lake\"; DROP VIEW documents; --"
    lake = make_lake(root, dumps={"CC-MAIN-2024-10": 1}, running=0, failed=0, salvaged=0)
    monkeypatch.chdir(tmp_path)
    con = connect_catalog(root)
    assert count(con, "SELECT count(*) FROM documents") == len(lake.files[0].documents)
    assert count(con, "SELECT lake FROM warclake_catalog") == str(root)
    con.close()


def test_file_url_is_a_local_lake(lake):
    con = connect_catalog(f"file://{lake.root}")
    assert count(con, "SELECT count(*) FROM files") == len(lake.done_files)
    con.close()


def test_glob_characters_in_lake_path_are_refused(tmp_path):
    with pytest.raises(ValueError, match="glob"):
        build_catalog(tmp_path / "lake[1]")


def test_sql_literal_round_trips():
    con = duckdb.connect()
    for s in ["plain", "it's", "''", "back\\slash", "日本語 'x'"]:
        assert con.execute(f"SELECT {sql_literal(s)}").fetchone()[0] == s


def test_empty_lake_then_files_arrive(tmp_path):
    root = tmp_path / "lake"
    root.mkdir()
    con = connect_catalog(root)
    for view in ("documents", "ledger", "files", "clean_documents", "paragraphs", "dumps"):
        assert count(con, f"SELECT count(*) FROM {view}") == 0
    # the contract's columns are there even with no file
    cols = [r[0] for r in con.execute("DESCRIBE documents").fetchall()]
    assert cols[:6] == ["text", "docId", "url", "charset", "lang", "date"]
    con.close()
    lake = make_lake(root, dumps={"CC-MAIN-2024-10": 2}, running=0, failed=0, salvaged=0)
    con = connect_catalog(root)  # notices the sources that appeared and rebuilds
    assert count(con, "SELECT count(*) FROM documents") == sum(len(f.documents) for f in lake.files)
    con.close()


def test_text_macros_agree_with_the_paragraph_model(lake):
    con = connect_catalog(lake.root)
    docs = {d["docId"]: d for f in lake.files for d in f.documents}
    rows = con.execute("SELECT docId, c.text, plain_text(d.text) FROM clean_documents c "
                       "JOIN documents d USING (docId)").fetchall()
    assert len(rows) == len(docs)
    labelled = 0
    for doc_id, clean, plain in rows:
        d = docs[doc_id]
        paras = split_document(d["text"])
        assert plain == "\n\n".join(p.plain for p in paras)
        labels = d["paragraph_labels"]
        if labels is None:
            assert clean == plain
        else:
            labelled += 1
            assert clean == "\n\n".join(p.plain for p, label in zip(paras, labels) if label == "good")
        assert "\x1c" not in clean and "\x02" not in clean and "\x03" not in clean
    assert 0 < labelled < len(docs)  # both kinds were checked

    got = {(r[0], r[1]): r[2:] for r in con.execute(
        "SELECT docId, idx, css_path, tag, text, link_chars, label FROM paragraphs").fetchall()}
    want = {}
    for d in docs.values():
        for i, p in enumerate(split_document(d["text"]), start=1):
            label = d["paragraph_labels"][i - 1] if d["paragraph_labels"] else None
            want[(d["docId"], i)] = (p.path, p.tag, p.plain, p.link_chars(), label)
    assert got == want
    con.close()


def test_charset_label_maps_labels_as_the_extractor_does():
    """The SQL macro is written from the extractor's label table: every label maps exactly as
    normalize_label maps it, whatever its case and surrounding whitespace."""
    from warclake.tasks.extract.charset import normalize_label, report_labels

    con = duckdb.connect()  # the macro alone, no lake needed
    for stmt in charset_label_sql():
        con.execute(stmt)
    table = report_labels()
    variants = [v for label in table for v in (label, label.upper(), f" \t{label.title()}\n\x0c\r ")]
    got = dict(con.execute("SELECT l, charset_label(l) FROM unnest(?::VARCHAR[]) AS t(l)",
                           [variants]).fetchall())
    checked = 0
    for v in variants:
        theirs = normalize_label(v)
        if theirs is not None:
            assert got[v] == theirs, repr(v)
            checked += 1
        else:  # a spelling other tools write, mapped for reports only
            assert got[v] == table[v.strip("\t\n\x0c\r ").lower()], repr(v)
    assert checked > 600
    legacy = {"Shift_JIS": "windows-31j", "CP932": "windows-31j", " x-ms-cp932 ": "windows-31j",
              "ujis": "euc-jp", "GB2312": "gbk", "UTF16LE": "utf-16le", "latin2": "iso-8859-2",
              "Bogus-Charset ": "bogus-charset", "": "unknown", " \t": "unknown", None: "unknown"}
    for label, want in legacy.items():
        assert con.execute("SELECT charset_label(?::VARCHAR)", [label]).fetchone()[0] == want, label
    # one source of truth: views.sql holds no list of its own
    assert "MACRO charset_label" not in read_sql("views.sql")


def test_an_unreadable_summary_counts_as_not_done(tmp_path):
    lake = make_lake(tmp_path / "lake", dumps={"CC-MAIN-2024-10": 3}, running=0, failed=0,
                     salvaged=0)
    broken = lake.root / "files" / "dump=CC-MAIN-2024-10" / f"{lake.files[0].warc_file}.json"
    broken.write_text(broken.read_text()[:40])  # as if the disk filled up mid-write
    con = connect_catalog(lake.root)
    assert count(con, "SELECT count(*) FROM files") == 2
    assert count(con, "SELECT count(*) FROM done_documents") == sum(
        len(f.documents) for f in lake.files[1:])
    con.close()


def test_empty_sources_have_the_same_columns_as_real_ones(lake, tmp_path):
    (tmp_path / "empty").mkdir()
    empty, full = connect_catalog(tmp_path / "empty"), connect_catalog(lake.root)
    for view in ("documents", "ledger", "files"):
        describe = f"SELECT column_name, column_type FROM (DESCRIBE {view})"
        assert empty.execute(describe).fetchall() == full.execute(describe).fetchall(), view
    empty.close()
    full.close()


def test_the_catalogue_file_is_in_the_storage_format_the_oldest_allowed_duckdb_reads(tmp_path):
    """pyproject allows duckdb>=1.1, whose readers know storage number 64 only; a file in a
    newer format fails there with "can only read version 64"."""
    lake = make_lake(tmp_path / "lake")
    path = build_catalog(lake.root)
    header = path.read_bytes()[:20]
    assert header[8:12] == b"DUCK"
    assert int.from_bytes(header[12:20], "little") == 64
    con = connect_catalog(lake.root)  # and the running duckdb still reads it
    assert con.execute("SELECT count(*) FROM done_documents").fetchone()[0] == len(lake.done_documents())


@pytest.mark.parametrize("url, host, domain", [
    ("https://a.b.example.com/x", "a.b.example.com", "example.com"),
    ("http://news.bbc.co.uk:8080/path?q=1", "news.bbc.co.uk", "bbc.co.uk"),
    ("http://co.uk/", "co.uk", None),                          # a public suffix itself
    ("https://user:pw@Shop.Example.ORG./", "shop.example.org", "example.org"),
    ("http://foo.bar.ck/", "foo.bar.ck", "foo.bar.ck"),        # *.ck: bar.ck is a suffix
    ("http://www.ck/", "www.ck", "www.ck"),                    # !www.ck: the exception
    ("https://someone.github.io/blog", "someone.github.io", "someone.github.io"),  # private section
    ("http://192.168.0.1:8000/", "192.168.0.1", "192.168.0.1"),
    ("http://[2001:db8::1]/", "[2001:db8::1]", "[2001:db8::1]"),
    ("http://xn--fiqs8s.xn--fiqz9s/", "xn--fiqs8s.xn--fiqz9s", "xn--fiqs8s.xn--fiqz9s"),  # punycode 中国
    ("http://intranet/", "intranet", None),
    ("not a url", None, None),
])
def test_host_and_registered_domain(tmp_path, url, host, domain):
    con = duckdb.connect()
    install_views(con, make_lake(tmp_path / "lake").root)
    # the domain views read `documents`: point it at the URLs under test
    con.execute(f"CREATE OR REPLACE VIEW documents AS SELECT {sql_literal(url)} AS url")
    assert con.execute("SELECT url_host(?)", [url]).fetchone()[0] == host
    got = con.execute("SELECT domain FROM host_domains").fetchall()
    assert got == ([(domain,)] if host else [])


def test_document_info_counts_paragraphs_and_plain_text(tmp_path):
    lake = make_lake(tmp_path / "lake")
    con = connect_catalog(lake.root)
    rows = {r[0]: r[1:] for r in con.execute(
        "SELECT docId, n_paragraphs, text_chars, host, domain FROM document_info").fetchall()}
    done = lake.done_documents()
    assert len(rows) == len(done)
    for d in done:
        paras = split_document(d["text"])
        plain = "\n\n".join(p.plain for p in paras)
        assert rows[d["docId"]][:2] == (len(paras), len(plain))
        assert rows[d["docId"]][2] and rows[d["docId"]][3]

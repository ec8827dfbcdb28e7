"""Hostile pages: nesting, paragraphs and text past the limits are recorded as too_complex
instead of costing minutes; real pages never come near the limits."""

import pytest

from conftest import shared_data
from support.lakegen import read_lake, write_warc
from warclake.tasks.extract.archive import extract_archive
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.extract.html_limits import nesting_depth, too_complex

LIMIT, TAGS = ExtractConfig().max_depth, ExtractConfig().max_tags


@pytest.mark.parametrize("unit", ["<div>x", "<div>x</x>", "<ul><li>x", "<table><tr><td>x", "<section><p>x",
                                  "<svg><path d='M0'/>"])
def test_deep_nesting_is_too_deep(unit):
    assert too_complex("<html><body>" + unit * (LIMIT + 10) + "</body></html>", LIMIT, TAGS)


@pytest.mark.parametrize("unit", ["<p>x", "<li>x", "<br>x", "<div>x</div>", "<img src=a>", "<i>x</i>",
                                  "<option>x", "<svg><path d='M0'/></svg>", "<tr><td>x"])
def test_long_flat_pages_are_not(unit):
    assert not too_complex("<html><body><table>" + unit * (LIMIT + 10) + "</table></body></html>", LIMIT, TAGS)


def test_more_tags_than_the_limit_is_too_complex_however_flat():
    assert too_complex("<br>" * (TAGS + 1), LIMIT, TAGS)
    assert not too_complex("<br>" * 1000, LIMIT, TAGS)


def test_the_walk_stops_past_the_paragraph_limit():
    from warclake.tasks.extract.html_paragraphs import TooManyParagraphs, extract_paragraphs

    html = "<body>" + "<p>a" * 200 + "</body>"
    assert len(extract_paragraphs(html, 200)) == 200
    with pytest.raises(TooManyParagraphs):
        extract_paragraphs(html, 150)


def test_depth_estimate_follows_the_markup():
    assert nesting_depth("<div><div><span>a</span></div><div>b</div></div>", 100) == 3
    assert nesting_depth("<ul><li>a<li>b<ul><li>c</ul></ul>", 100) == 4
    assert nesting_depth("<p>a<p>b<p>c", 100) == 1
    assert nesting_depth("<div></b></i></x><div>", 100) == 2     # stray end tags close nothing


def test_hostile_records_are_too_complex_and_the_archive_goes_on(tmp_path):
    path = tmp_path / "hostile.warc.gz"
    ok = b"<html><body><p>An ordinary page with one paragraph of text.</p></body></html>"
    write_warc(path, [
        ("http://a.example/ok", 200, "text/html", ok, {}),
        ("http://a.example/deep", 200, "text/html", b"<html><body>" + b"<div>a " * 60_000 + b"</body></html>", {}),
        ("http://a.example/many", 200, "text/html", b"<html><body>" + b"<p>a" * 60_000 + b"</body></html>", {}),
        ("http://a.example/tags", 200, "text/html", b"<html><body>" + b"<br>" * 600_000 + b"</body></html>", {}),
        ("http://a.example/after", 200, "text/html", ok, {}),
    ])
    cfg = ExtractConfig.from_langs("all", boilerplate="sieve")
    summary = extract_archive(str(path), "D", str(tmp_path / "lake"), cfg)
    docs, ledger, _ = read_lake(str(tmp_path / "lake"), "D", path.name)
    assert summary["status"] == "complete"
    assert [d["url"] for d in docs] == ["http://a.example/ok", "http://a.example/after"]
    outcome = {r["url"]: r["outcome"] for r in ledger if r["record_type"] == "response"}
    assert outcome["http://a.example/deep"] == "too_complex"
    assert outcome["http://a.example/many"] == "too_complex"
    assert outcome["http://a.example/tags"] == "too_complex"
    assert summary["outcomes"]["too_complex"] == 3


@pytest.mark.shared_data("gold", "wceb_modern_1000")
def test_no_development_page_comes_near_the_limits():
    from warclake.tasks.evaluation.gold import decode_page, read_gold
    from warclake.tasks.extract.html_paragraphs import extract_paragraphs
    from warclake.tasks.extract.paragraph import join_paragraphs

    cfg = ExtractConfig()
    for spec in (f"wceb:{shared_data('gold', 'wceb_modern_1000')}",
                 f"cleaneval:{shared_data('gold', 'cleaneval', 'cleaneval-dev')}"):
        for page in read_gold(spec):
            html = decode_page(page)
            assert nesting_depth(html, cfg.max_depth) < cfg.max_depth // 20, page.id
            paragraphs = extract_paragraphs(html)
            assert len(paragraphs) < cfg.max_paragraphs // 10, page.id
            assert len(join_paragraphs(paragraphs)) < cfg.max_text_chars // 5, page.id

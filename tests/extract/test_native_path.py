"""The clean path's shortcuts give what the plain path gives: a page parsed from its exact
UTF-8 bytes has the paragraphs of its text, the decoded result keeps those bytes only when
they are exact, and the compiled path elements equal the Python builder's."""
import gzip
from pathlib import Path

import pytest

from conftest import shared_data
from support import tricky_pages
from warclake.tasks.extract import html_paragraphs as hp
from warclake.tasks.extract.charset import decode_body
from warclake.tasks.extract.html_limits import too_complex

CORNERS = [
    "\ufeff<body><p>after a BOM</p></body>",
    "\ufeff\ufeff<body><p>two BOMs</p></body>",
    "<body><p>&#1;ref &#x02; raw\x03 &#0003; &#x3a; <a href>x</a></p></body>",
    "<body><div class='a.b #c >d \x1cE\x1fF\x0bG \x01h\x7fi'>separators</div></body>",
    "<body><div class='" + "c" * 250 + " d e f'>cut after dots</div>"
    "<div id='" + "i" * 300 + "'>long id</div><div class=x id='" + "." * 300 + "'>dots</div></body>",
    "<body><div class='caf\u00e9 \u3000 x' id='\u65e5'>non-ASCII class and id</div></body>",
    "<body><span class=s><em id=' a b '>id with spaces</em></span><p class>no value</p></body>",
    "<body><p>\u65e5\u672c\u8a9e\u306e\u6587\u7ae0 \U0001f600 caf\u00e9</p><pre> a\n b</pre></body>",
]


def _both(text: str, limit=None):
    data = text.encode("utf-8")
    return (hp.extract_paragraphs(text, limit), hp.extract_paragraphs(text, limit, utf8=data),
            hp.python_paragraphs(text, limit, utf8=data))


@pytest.mark.parametrize("page", CORNERS)
def test_bytes_and_text_of_a_page_give_the_same_paragraphs(page):
    from_text, from_bytes, python = _both(page)
    assert from_text and from_text == from_bytes == python == hp.python_paragraphs(page)


def test_tricky_pages_from_their_bytes_equal_them_from_their_text():
    checked = 0
    for s in range(300):
        page = tricky_pages.page(s)
        try:
            page.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: no exact bytes exist
            continue
        a, b, c = _both(page)
        assert a == b == c, s
        checked += 1
    assert checked > 250


def test_the_paragraph_limit_stops_both_inputs_alike():
    page = "<body>" + "<p>x</p>" * 50 + "</body>"
    for args in ((page, 10), (page, 10, page.encode())):
        with pytest.raises(hp.TooManyParagraphs):
            hp.extract_paragraphs(*args[:2], utf8=args[2] if len(args) > 2 else None)


def test_too_complex_counts_bytes_as_it_counts_text():
    deep = "<body>" + "<div>" * 300 + "x" + "</div>" * 300
    wide = "<body>" + "<br>" * 400 + "\u65e5</body>"
    for page in (deep, wide, "<p>plain</p>"):
        for depth, tags in ((100, 10_000), (1000, 10_000), (100, 200)):
            assert too_complex(page, depth, tags) == too_complex(page.encode(), depth, tags)


def test_decoded_pages_keep_their_bytes_only_when_exact():
    text = "<meta charset=utf-8><p>caf\u00e9 \u65e5\u672c</p>"
    body = text.encode("utf-8")
    assert decode_body(body, None).utf8 is body
    bom = decode_body(b"\xef\xbb\xbf" + body, None)
    assert bom.source == "bom" and bom.utf8 == body and bom.text == text
    damaged = decode_body(body + b"\xff" * 3 + body, None)
    assert damaged.charset == "utf-8" and "\ufffd" in damaged.text and damaged.utf8 is None
    latin = decode_body("<p>caf\u00e9</p>".encode("cp1252"), "text/html; charset=windows-1252")
    assert latin.charset == "windows-1252" and latin.utf8 is None
    sjis = decode_body("<p>\u65e5\u672c\u8a9e\u306e\u6587\u7ae0</p>".encode("cp932"), "text/html; charset=shift_jis")
    assert sjis.utf8 is None


@pytest.mark.shared_data("gold")
def test_real_pages_from_their_bytes_equal_them_from_their_text():
    pages = sorted(Path(shared_data("gold")).rglob("*.htm*"))[::4]
    exact = 0
    for path in pages:
        body = path.read_bytes()
        if path.name.endswith(".gz"):
            body = gzip.decompress(body)
        res = decode_body(body, None)
        if res is None or res.utf8 is None:
            continue
        assert res.utf8 == res.text.encode("utf-8"), path
        exact += 1
        assert hp.extract_paragraphs(res.text) == hp.extract_paragraphs(res.text, utf8=res.utf8), path
    assert exact > 150

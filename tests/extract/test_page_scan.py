"""The page pre-scan: its compiled pass equals the Python reference, and the parse guards
read from it decide as their own scans do."""
import pytest

from warclake.tasks.extract import html_paragraphs as hp
from warclake.tasks.extract import page_scan


def test_the_compiled_scan_equals_the_reference():
    if page_scan._MODULE is None:
        pytest.skip("compiled page pre-scan not in use")
    from tools.fuzz import page_scan as fuzz

    for page in page_scan.CHECK_PAGES:
        assert page_scan.scan(page) == page_scan.reference_scan(page)
    assert fuzz.main(["--cases", "3000", "--seed", "11"]) == 0


@pytest.mark.parametrize("page", [
    b"<body><p>caf\xc3\xa9 &#2; x</p></body>",
    b"\xef\xbb\xbf<body><noscript><div>" + b"<p>post with words enough to count as a thread</p>" * 20
    + b"</div></noscript><p>shell</p></body>",
    b"<body><noscript>" + b"x" * 600 + b"</noscript><p>text \x01 raw</p></body>",
])
def test_paragraphs_with_the_scan_equal_paragraphs_without(page):
    scan = page_scan.scan(page)
    text = page.decode("utf-8-sig")
    assert (hp.extract_paragraphs(text, utf8=page, scan=scan)
            == hp.extract_paragraphs(text, utf8=page) == hp.python_paragraphs(text, utf8=page))

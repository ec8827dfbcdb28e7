"""One look at a UTF-8 page before it is parsed: what the parse's guards need of its bytes.

:func:`reference_scan` defines it in Python, as the guards read the page one by one:

* ``lt``, ``end_tags``: the ``<`` bytes and the ``</`` pairs (:func:`html_limits.too_complex`);
* ``dirty``: the page carries the walk's sentinel characters U+0001-U+0005, raw or as
  character references (``html_paragraphs.dirty_bytes``);
* ``long_noscript``: a ``<noscript>`` whose raw text may hold ``NOSCRIPT_MIN_CHARS``
  characters (``html_paragraphs._long_noscript``).

The compiled twin (``tasks/native/page_scan.pyx``) reads the bytes once for all four
(the four scans cost ~0.16 ms on a page of 130 KB, the one pass a fraction of that); it is
checked against the reference on import (:data:`CHECK_PAGES`) and fuzzed against it
(``python -m tools.fuzz.page_scan``). ``WARCLAKE_NATIVE=0`` keeps the reference.
"""
from __future__ import annotations

from typing import NamedTuple

from warclake.tasks.extract.html_paragraphs import (
    _NOSCRIPT_BYTES,
    _NOSCRIPT_END_BYTES,
    NOSCRIPT_MIN_CHARS,
    _long_noscript,
    dirty_bytes,
)


class PageScan(NamedTuple):
    lt: int
    end_tags: int
    dirty: bool
    long_noscript: bool


def reference_scan(html: bytes) -> PageScan:
    """The scan in Python: what the compiled one must equal."""
    return PageScan(html.count(b"<"), html.count(b"</"), dirty_bytes(html),
                    _long_noscript(html, _NOSCRIPT_BYTES, _NOSCRIPT_END_BYTES))


CHECK_PAGES = (
    b"",
    b"<",
    b"<html><body><p>plain</p></body></html>",
    b"a &#1; b &#x05 c &#0003x &#6; &#15 &#x1f &#X2; &#00000; &#",
    b"&#1",
    b"&#x5",
    b"&#x5g &#5a &#51 &#x5A",
    b"&#51 &#x5A &#x5f &#6 &#x15 &#0 &#00 &#x &# &#xx1 &1; #1; &amp;#1;",
    b"ctrl\x01 raw",
    b"<noscript>" + b"x" * 600 + b"</noscript>",
    b"<NoScRiPt>" + b"x" * 499 + b"</noscript>",
    b"<noscript>" + b"x" * 500 + b"</NOSCRIPT\t",
    b"<noscript>short</noscript> <noscript>" + b"y" * 700,
    b"<noscript>a</noscript><noscript>" + b"b" * 498 + b"</noscript/>",
    b"<noscript>" + b"c" * 800 + b"</noscriptx>" + b"</noscript>",
    b"</noscript><noscript" + b"</noscript " * 3,
    b"</</ </></",
)


def _compiled():
    from warclake.tasks.native import load_checked

    def check(module) -> None:
        for page in CHECK_PAGES:
            if tuple(module.scan(page, NOSCRIPT_MIN_CHARS)) != reference_scan(page):
                raise ValueError(f"scan differs from the reference on {page[:30]!r}")

    module, _, _ = load_checked("page_scan", "page pre-scan", "Python page scans", check)
    return module


_MODULE = _compiled()


def scan(html: bytes) -> PageScan:
    """:func:`reference_scan`, by the compiled pass when it is in use."""
    if _MODULE is None:
        return reference_scan(html)
    return PageScan(*_MODULE.scan(html, NOSCRIPT_MIN_CHARS))

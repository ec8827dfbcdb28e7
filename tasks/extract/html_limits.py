"""Bounds on the work one page may cost, checked before it is parsed.

The HTML parser keeps a stack of open elements and, for many start tags, looks through it;
with tens of thousands of nested blocks that is quadratic: 40,000 nested ``<div>`` cost
lexbor 2.9 s, 300,000 several minutes, and 20,000 nested lists 2.5 s. Real pages stay
shallow (the deepest of the 2,574 development pages is 56 elements, the one with most
start tags has 15,800), so a page whose elements would nest deeper than ``max_depth``
(ExtractConfig, 20,000: lexbor needs about 0.7 s at that depth) is not parsed at all, and
neither is a page with more than ``max_tags`` tags (500,000; the development pages have at
most 28,400): 2 million ``<p>`` in an 8 MB payload cost 9 s and 1.4 GB.

Ordinary pages pay one ``str.count``: a page cannot nest deeper than it has start tags.
Pages with more start tags than the limit get an estimate from a scan of their tags that
knows void and self-closed (``/>``) elements, tags that close an open element of their kind
(``<li>``, ``<p>``, ``<td>``...) unless a list, table or block lies between, and end tags,
which close the nearest open element of their name within a few levels (stray ones close
nothing, as in the parser). The estimate errs on the deep side; the limit leaves a wide
margin above real pages and stays where lexbor's time is still a fraction of a second.
"""
from __future__ import annotations

import re

from warclake.tasks.extract.html_paragraphs import VOID_TAGS

# Elements that never hold children: their start tags do not nest. The walk's void tags,
# plus <embed>, which the walk drops as a whole instead.
VOID = VOID_TAGS | {"embed"}
# A start tag of one of these closes an open element of the same kind (HTML's implied end
# tags), so sibling lists and paragraphs do not nest...
SELF_CLOSING_SIBLINGS = frozenset("p li dt dd option optgroup tr td th thead tbody tfoot "
                                  "rb rt rp".split())
# ...unless one of these lies between (a nested list, a table cell, a block).
_SCOPES = frozenset("ul ol dl menu table td th caption div section article aside nav main "
                    "header footer blockquote form fieldset button select template object "
                    "body html".split())
# How far down the stack a tag looks for its element: the estimate only has to tell
# shallow pages from deep ones.
_REACH = 16

_TAG = re.compile(r"<(/?)([A-Za-z][^\s/>]*)([^<>]*)>")


def _close(stack: list[str], name: str, scoped: bool) -> None:
    """Pop the nearest open ``name`` within reach (not across a scope, when ``scoped``)."""
    for k in range(len(stack) - 1, max(-1, len(stack) - 1 - _REACH), -1):
        if stack[k] == name:
            del stack[k:]
            return
        if scoped and stack[k] in _SCOPES:
            return


def nesting_depth(html: str, limit: int) -> int:
    """Estimated deepest nesting of the page's elements, counting stops once past ``limit``."""
    stack: list[str] = []
    deepest = 0
    for end, name, rest in _TAG.findall(html):
        name = name.lower()
        if end:
            _close(stack, name, False)
            continue
        if name in VOID or rest.endswith("/"):
            continue
        if name in SELF_CLOSING_SIBLINGS:
            _close(stack, name, True)
        stack.append(name)
        if len(stack) > deepest:
            deepest = len(stack)
            if deepest > limit:
                break
    return deepest


def _count(html: str | bytes, sub: str) -> int:
    """How often ``sub`` (ASCII) occurs in the page's text or its UTF-8 bytes."""
    return html.count(sub) if isinstance(html, str) else html.count(sub.encode())


def too_complex(html: str | bytes, max_depth: int, max_tags: int,
                counts: tuple[int, int] | None = None) -> bool:
    """True when the page has more than ``max_tags`` tags (``<`` characters: the parser's
    time and memory grow with them) or its elements would nest deeper than ``max_depth``.
    ``html`` may be the page's UTF-8 bytes (counting them is cheaper than counting text);
    ``counts``: its ``<`` and ``</`` counts when already made (tasks/extract/page_scan.py)."""
    lt = _count(html, "<") if counts is None else counts[0]
    if lt > max_tags:
        return True
    # fewer start tags than the limit (a two-character count costs 3x a one-character one,
    # so only pages with more "<" than the limit pay for it)
    if lt <= max_depth or lt - (_count(html, "</") if counts is None else counts[1]) <= max_depth:
        return False
    if not isinstance(html, str):
        html = html.decode("utf-8", "replace")
    return nesting_depth(html, max_depth) > max_depth

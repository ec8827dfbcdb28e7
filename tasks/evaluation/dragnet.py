"""Reader for the Dragnet benchmark pages (2012; ``input/<id>.html`` with
``GoldStandard/<id>.txt``) and their split by site.

The gold text of 416 pages goes on with the page's user comments after a separator line
typed by hand (nominally ``!@#$%^&*()  COMMENTS``, with about 40 variants). ``dragnet:``
scores the main content only, as main-content benchmarks do: everything from the
separator on is dropped. ``dragnet-comments:`` keeps the comments as content.

The file ids are sequence numbers that say nothing about the page, and the set holds
several pages of many sites, so the tuning / held-back split is made by site: the
registered domain of the page's own URL, read from its canonical link, ``og:url``,
``<base href>`` or feed link, else the host most of its absolute links point to. All pages
of one site fall on the same side. The split was fixed before the set was used for
anything.
"""
from __future__ import annotations

import hashlib
import re
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from warclake.tasks.evaluation.gold import HOLDOUT_MOD, SPLITS, GoldPage, normalise_gold

_SEPARATOR_CHARS = set("!@#$%^&*()")
# Tags whose URL is the page's own (first match wins, in this order).
_OWN_URL = [
    re.compile(rb'<link\b[^>]*\brel\s*=\s*["\']?canonical\b[^>]*>', re.I),
    re.compile(rb'<meta\b[^>]*\b(?:property|name)\s*=\s*["\']?og:url\b[^>]*>', re.I),
    re.compile(rb'<base\b[^>]*>', re.I),
    re.compile(rb'<link\b[^>]*\btype\s*=\s*["\']?application/(?:rss|atom)\+xml\b[^>]*>', re.I),
]
_URL_ATTR = re.compile(rb'\b(?:href|content)\s*=\s*["\']?\s*(https?://[^"\'\s>]+)', re.I)
_LINK = re.compile(rb'<a\b[^>]*?\bhref\s*=\s*["\']?\s*https?://([^/"\'\s>:?#]+)', re.I)
# Hosts that many sites link to (sharing, feeds, ads): never a page's own site.
_THIRD_PARTY = ("facebook.com", "twitter.com", "google.com", "feedburner.com", "addthis.com",
                "linkedin.com", "youtube.com", "pinterest.com", "stumbleupon.com", "digg.com",
                "reddit.com", "delicious.com", "wordpress.org", "wordpress.com", "apple.com",
                "doubleclick.net", "blogger.com", "tumblr.com", "yahoo.com", "w3.org",
                "creativecommons.org", "adobe.com", "mozilla.org", "microsoft.com", "gravatar.com")


def is_separator(line: str) -> bool:
    """The hand-typed comments separator: a run of (at least four different) characters of
    ``!@#$%^&*()`` and blanks, then ``COMMENTS``."""
    head, sep, tail = line.strip().partition("COMMENTS")
    return (bool(sep) and not tail.strip() and set(head) <= _SEPARATOR_CHARS | set(" \t")
            and len(_SEPARATOR_CHARS & set(head)) >= 4)


def main_content(gold: str) -> str:
    """The gold text before the comments separator (all of it when there is none)."""
    lines = gold.splitlines()
    for i, line in enumerate(lines):
        if is_separator(line):
            return "\n".join(lines[:i])
    return gold


def without_separator(gold: str) -> str:
    return "\n".join(line for line in gold.splitlines() if not is_separator(line))


def _registered_domain(host: str) -> str:
    host = host.lower().strip(".")
    return _psl().privatesuffix(host) or host


_PSL = None


def _psl():
    global _PSL
    if _PSL is None:
        from publicsuffixlist import PublicSuffixList
        _PSL = PublicSuffixList()
    return _PSL


def page_site(raw: bytes) -> str:
    """Registered domain of the page's own site, or "" when the page does not say."""
    head = raw[:200_000]
    for tag in _OWN_URL:
        for m in tag.finditer(head):
            url = _URL_ATTR.search(m.group(0))
            if url:
                host = urlsplit(url.group(1).decode("latin-1")).hostname
                dom = _registered_domain(host) if host else ""
                if dom and not dom.endswith(_THIRD_PARTY):
                    return dom
    hosts: Counter[str] = Counter()
    for m in _LINK.finditer(raw):
        dom = _registered_domain(m.group(1).decode("latin-1"))
        if dom and not dom.endswith(_THIRD_PARTY):
            hosts[dom] += 1
    return hosts.most_common(1)[0][0] if hosts else ""


def split_of_site(site: str, page_id: str) -> str:
    """'heldout' or 'tuning' from the site (the page id when the site is unknown)."""
    key = f"site:{site}" if site else page_id
    h = int(hashlib.sha1(key.encode("utf-8")).hexdigest(), 16)
    return "heldout" if h % HOLDOUT_MOD == 0 else "tuning"


def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:   # a few gold files are windows-1252
        return raw.decode("cp1252", "replace")


def read_dragnet(path: str | Path, split: str = "all", comments: bool = False) -> list[GoldPage]:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, not {split!r}")
    root = Path(path)
    gold_dir, html_dir = root / "GoldStandard", root / "input"
    if not gold_dir.is_dir() or not html_dir.is_dir():
        raise FileNotFoundError(f"no input/ and GoldStandard/ under {root}")
    pages = []
    for gold_file in sorted(gold_dir.glob("*.txt"), key=lambda p: (len(p.stem), p.stem)):
        html_file = html_dir / f"{gold_file.stem}.html"
        if not html_file.exists():
            continue
        page_id = f"dragnet/{gold_file.stem}"
        raw = html_file.read_bytes()
        site = page_site(raw)
        if split != "all" and split_of_site(site, page_id) != split:
            continue
        text = _read_text(gold_file)
        text = without_separator(text) if comments else main_content(text)
        pages.append(GoldPage(page_id, raw, normalise_gold(text), url=site))
    return pages


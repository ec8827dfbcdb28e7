"""Reader for WCXB (Web Content eXtraction Benchmark) pages and their split.

Layout of a split folder: ``ground-truth/<id>.json`` (``url``, ``ground_truth.main_content``,
``_internal.page_type.primary``) with ``html/<id>.html.gz``; the ids listed in
``same_html.json`` have no file of their own but are, byte for byte, the page
``../wceb_modern_1000/release/html/<that id>.html.gz``. Page ids are ``wcxb/<id>``, and
each page carries its page type (``category``, the benchmark's older name, reads as
``collection``).

The split keeps the tuning / held-back sides of the older sets: a page that is also in
``wceb_modern_1000`` falls on the side of its ``wceb/<id>`` there (a model tuned on that
set's tuning part has seen it). Every other page is split by site, the registered domain
of its URL (the page's own canonical link when the truth has no URL): it joins the side
where most of its site's ``wceb`` pages of this set fall, else the side of
``sha1("site:<domain>") % 5``, as Dragnet's pages are split. The split is a pure function of
the set's own files.
"""
from __future__ import annotations

import gzip
import json
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import urlsplit

from warclake.tasks.evaluation.dragnet import _registered_domain, page_site, split_of_site
from warclake.tasks.evaluation.gold import SPLITS, GoldPage, normalise_gold, split_of

PAGE_TYPES = ("article", "forum", "product", "collection", "listing", "documentation", "service")
_TYPE_ALIASES = {"category": "collection"}


def page_type(record: dict) -> str:
    primary = (((record.get("_internal") or {}).get("page_type") or {}).get("primary") or "")
    primary = primary.strip().lower()
    return _TYPE_ALIASES.get(primary, primary)


def _html_path(root: Path, fid: str, same: dict[str, str]) -> Path:
    if fid in same:
        return root.parent / "wceb_modern_1000" / "release" / "html" / f"{same[fid]}.html.gz"
    return root / "html" / f"{fid}.html.gz"


def _site(record: dict, html_file: Path) -> str:
    host = urlsplit(record.get("url") or "").hostname
    if host:
        return _registered_domain(host)
    return page_site(gzip.decompress(html_file.read_bytes())) if html_file.exists() else ""


def sides(root: Path, records: dict[str, dict], same: dict[str, str]) -> dict[str, str]:
    """'heldout' or 'tuning' for every file id (see the module docstring)."""
    side = {fid: split_of(f"wceb/{same[fid]}") for fid in records if fid in same}
    by_site: dict[str, list[str]] = defaultdict(list)
    for fid, rec in records.items():
        by_site[_site(rec, _html_path(root, fid, same))].append(fid)
    for site, fids in by_site.items():
        known = Counter(side[f] for f in fids if f in same)
        ranked = known.most_common()
        for fid in fids:
            if fid in same:
                continue
            if ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]):
                side[fid] = ranked[0][0]
            else:
                side[fid] = split_of_site(site, f"wcxb/{fid}")
    return side


def read_wcxb(path: str | Path, split: str = "all") -> list[GoldPage]:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, not {split!r}")
    root = Path(path)
    truth_dir = root / "ground-truth"
    if not truth_dir.is_dir():
        raise FileNotFoundError(f"no ground-truth/ under {root}")
    same_file = root / "same_html.json"
    same = json.loads(same_file.read_text("utf-8")) if same_file.exists() else {}
    records = {t.stem: json.loads(t.read_text("utf-8")) for t in sorted(truth_dir.glob("*.json"))}
    # A truth without main_content (only snippets) is no truth; an empty one is: the page
    # (a script-built one) holds no main content, and any text output scores 0 on it.
    records = {fid: r for fid, r in records.items() if "main_content" in (r.get("ground_truth") or {})}
    side = sides(root, records, same) if split != "all" else {}
    pages = []
    for fid, rec in records.items():
        html_file = _html_path(root, fid, same)
        if not html_file.exists() or (split != "all" and side[fid] != split):
            continue
        gold = (rec.get("ground_truth") or {}).get("main_content") or ""
        pages.append(GoldPage(f"wcxb/{fid}", gzip.decompress(html_file.read_bytes()),
                              normalise_gold(gold), rec.get("url", ""), page_type=page_type(rec)))
    return pages

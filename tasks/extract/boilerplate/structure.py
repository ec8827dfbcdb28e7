"""Page-structure features of the ``sieve`` model: what separates an article from the text
that follows or surrounds it (user comments, related-story lists, bylines, captions).

* class/id stems inside compound names (``commentbody``, ``postmeta``, ``relatedposts``):
  ``features.PATH_GROUPS`` matches whole sub-words split at case changes and non-letters,
  so such lower-case compounds name no group there;
* repeated records: short date-like lines (``March 3, 2012 at 4:05 pm``, ``2 hours ago``)
  and "says:" / "Reply" lines under the paragraph's parent or grandparent — a comment
  list, forum thread or teaser list repeats them once per record, an article has one;
* headings that open a comment or related section ("12 Comments", "Leave a Reply",
  "Related posts") and the paragraphs after them inside the heading's container;
* position after the end of the main container (``features`` finds it), and how much of
  the main container's text comes before the paragraph;
* position relative to the page's first ``h1`` (the title of the page's own content: what
  comes before it is chrome more often than not);
* class/id stems of product carousels and sliders (``upsell``, ``productcard``, ``swiper``):
  other products beside the one a product page is about;
* what kind of page it is, from the page's own structure (forums, listings, products and
  service pages keep their main content elsewhere than an article does): record lists —
  containers whose first path comes back once per record (a card's title, a post's author
  line) — and the paragraph's place in them, price lines, the page's headings, ``section``
  and ``article`` containers, and the shares of its text under forum-post, tab, card,
  product, section and comment class stems (``PAGE_NAMES``).

``columns(paths, plains, in_main)`` returns the (n, len(NAMES)) block that ``features.matrix``
appends to its own columns.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache

import numpy as np

# Stems matched anywhere inside a lower-cased class or id name (first letters of compounds
# included). Each is long or rare enough not to occur inside unrelated words.
STEMS: dict[str, tuple[str, ...]] = {
    "comment": ("comment", "reply", "replies", "respond", "disqus", "livefyre", "discuss",
                "avatar", "commtree", "byuser", "cbody", "citem", "cpic", "vcard", "gravatar",
                "usercontent", "talkback", "postedby"),
    "related": ("related", "recommend", "popular", "trending", "mostread", "mostviewed",
                "outbrain", "taboola", "teaser", "promo", "morestories", "readmore",
                "nextpost", "prevpost", "previouspost", "youmay", "alsolike", "headlines"),
    "meta": ("byline", "author", "postmeta", "entrymeta", "dateline", "timestamp", "pubdate",
             "posted", "published", "dateheader", "postinfo", "postdate", "entrydate"),
    "caption": ("caption", "credit", "gallery", "figure", "photo", "thumb", "slideshow"),
    "share": ("share", "social", "addthis", "sharethis", "bookmark", "tagged", "taglist",
              "subscribe", "newsletter", "follow"),
    "chrome": ("navbar", "navigation", "menu", "breadcrumb", "footer", "sidebar", "widget",
               "masthead", "header", "topbar", "skiplink"),
    "slider": ("upsell", "crosssell", "carousel", "swiper", "slick", "splide", "slider",
               "productcard", "productgrid", "productlist", "productitem"),
    # page-type signals: forum posts, tab panels, record cards, product details, sections
    "post": ("postbody", "postcontent", "posttext", "postmessage", "messagebody",
             "messagecontent", "messagetext", "cooked", "bbcode", "bbwrapper", "usertext",
             "topicpost", "forumpost", "threadpost", "discourse", "xenforo", "phpbb", "vbulletin",
             "bbpress", "answer", "question"),
    "tab": ("tabs", "tabpanel", "tabcontent", "tabpane", "tabbody", "accordion", "collaps", "expand",
            "specification", "specs", "ingredients", "overview"),
    "card": ("card", "tile", "griditem", "listitem", "listing", "result", "collection"),
    "product": ("product", "price", "sku", "addtocart", "variant", "pdp", "buybox", "shop"),
    "section": ("section", "hero", "feature", "benefit", "service", "testimonial", "pricing",
                "faq"),
}
STEM_GROUPS = tuple(STEMS)
_STEM_GROUP = {w: g for g, ws in STEMS.items() for w in ws}
# one pass over a name: stems left to right, the longest first where two start together
_STEM_RE = re.compile("|".join(sorted(_STEM_GROUP, key=lambda w: (-len(w), w))))
_TAG = re.compile(r"[^.#]*")


def _tag(el: str) -> str:
    """A path element's tag: what comes before any "." or "#"."""
    m = _TAG.match(el)
    assert m is not None   # (it matches the empty string)
    return m.group(0)


_LETTERS = re.compile(r"[a-z]+")

# Short lines that a record of a comment or listing repeats.
_MONTHS = (r"jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|"
           r"sep(t|tember)?|oct(ober)?|nov(ember)?|dec(ember)?")
_DATE_LINE = re.compile(
    rf"\b({_MONTHS})\.?\s+\d{{1,2}}\b|\b\d{{1,2}}\s+({_MONTHS})\b|\b\d{{1,2}}[:.]\d{{2}}\s*([ap]\.?m\b)"
    r"|\b\d+\s+(minutes?|hours?|days?|weeks?|months?|years?)\s+ago\b|\b\d{1,4}[/.-]\d{1,2}[/.-]\d{2,4}\b",
    re.I)
_RECORD_LINE = re.compile(r"\b(says|said|wrote)\s*:|^\s*(reply|report( abuse)?|permalink|"
                          r"quote|like|flag|recommend|link to this)\s*$|\breply\b", re.I)
_DIGIT = re.compile(r"\d")
SHORT_CHARS = 80      # a record's meta line (author, date, reply link) is short
_COMMENT_HEAD = re.compile(
    r"^\W*(\d+|no|one|two|three)\s+(comments?|responses?|replies|thoughts|reactions|"
    r"opinions)\b|^\W*(leave|post|add|write|submit)\s+(a|your|new)\s+(comment|reply|response)|"
    r"^\W*(reader|user|your)?\s*(comments?|responses|discussion|replies)\W*(\(\d+\))?\W*$|"
    r"^\W*(join|start) the (discussion|conversation)|^\W*what do you think\W*$|"
    r"^\W*(\d+\s+)?trackbacks?\b", re.I)
_RELATED_HEAD = re.compile(
    r"^\W*(related|recommended|similar|popular|trending|most (read|popular|viewed|emailed|"
    r"shared|commented))\b|^\W*(more|latest|recent|top)\b.{0,30}\b(posts|stories|articles|"
    r"news|reads|videos|links|headlines|entries)\W*$|^\W*more (from|on|in)\b|"
    r"^\W*(you (may|might) (also )?(like|enjoy|be interested))|^\W*(read|see) (more|also)\b|"
    r"^\W*(also|elsewhere) (on|in|from)\b|^\W*around the web\W*$", re.I)
HEAD_CHARS = 60       # a section heading is a short line

# Page-type columns (``_page_type``): what kind of page the paragraph sits on, and the run of
# records it belongs to. Paths carry no sibling numbers, so a record list shows as a container
# whose first path comes back once per record (a card's title, a post's author line).
PAGE_NAMES = ("rec_parent", "rec_grand", "rec_great", "rec_box_records", "rec_box_share",
              "in_top_records", "price_line", "page_records", "page_record_share",
              "page_headings", "page_prices", "page_sections", "page_articles",
              "page_comment_share", "page_post_share", "page_tab_share", "page_card_share",
              "page_product_share", "page_section_share")
MIN_RECORDS = 3       # a record list repeats its first path at least this often
PRICE_CHARS = 40      # a price line is short: "$599", "+$29", "12,99 €"
CURRENCY = "$€£¥₹"
_SHARE_GROUPS = ("comment", "post", "tab", "card", "product", "section")

NAMES = tuple([f"stem_any_{g}" for g in STEM_GROUPS] + [f"stem_near_{g}" for g in STEM_GROUPS]
              + ["date_line", "record_line", "parent_records", "grandparent_records",
                 "grandparent_record_share",
                 "after_comment_head", "under_comment_head", "under_related_head",
                 "after_main", "chars_after_main", "main_before", "after_h1", "h1_offset"]
              + list(PAGE_NAMES))
_IDX = {n: i for i, n in enumerate(NAMES)}


_STEM_COL = {g: (_IDX["stem_any_" + g], _IDX["stem_near_" + g]) for g in STEM_GROUPS}


@lru_cache(maxsize=8192)
def _element_stems(el: str) -> frozenset[str]:
    """Stem groups named inside the class/id names of one path element."""
    rest = el[len(_tag(el)):].lower()
    if not rest:
        return frozenset()
    # stems are letters only, so they are found run by run of letters; runs repeat a lot
    # across sites (content, post, wrapper), so their groups are cached
    return frozenset().union(*map(_run_stems, _LETTERS.findall(rest)))


@lru_cache(maxsize=16384)
def _run_stems(run: str) -> frozenset[str]:
    return frozenset(_STEM_GROUP[m] for m in _STEM_RE.findall(run))


@lru_cache(maxsize=8192)
def _path_stems(path: str) -> tuple[frozenset[str], frozenset[str]]:
    """(groups on any element, groups on the last two elements) of a path."""
    parent, sep, el = path.rpartition(">")
    own = _element_stems(el)
    if not sep:
        return own, own
    p_any, _ = _path_stems(parent)
    near = own | _element_stems(parent.rpartition(">")[2])
    return p_any | own, near


def _stem_cols(path: str) -> list[int]:
    any_g, near_g = _path_stems(path)
    return [_STEM_COL[g][0] for g in any_g] + [_STEM_COL[g][1] for g in near_g]


def _marks(plains: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(date line, record line) flags of the short paragraphs."""
    n = len(plains)
    date, record = np.zeros(n), np.zeros(n)
    for i, t in enumerate(plains):
        if len(t) <= SHORT_CHARS:
            if _DIGIT.search(t) and _DATE_LINE.search(t):
                date[i] = 1.0
            if _RECORD_LINE.search(t):
                record[i] = 1.0
    return date, record


def columns(paths: list[str], plains: list[str], in_main: np.ndarray) -> np.ndarray:
    """The NAMES columns of a page's paragraphs (document order)."""
    n = len(paths)
    C = np.zeros((n, len(NAMES)))
    if n == 0:
        return C
    col = _IDX
    # per distinct path, spread back to the paragraphs with ``inverse``
    distinct: dict[str, int] = {}
    inverse = np.fromiter([distinct.setdefault(q, len(distinct)) for q in paths], np.intp, n)
    uniq = list(distinct)
    on = [_stem_cols(q) for q in uniq]
    block = np.zeros((len(uniq), len(NAMES)))
    block[np.repeat(np.arange(len(uniq)), [len(c) for c in on]),
          [c for cs in on for c in cs]] = 1.0
    C[:, :2 * len(STEM_GROUPS)] = block[inverse, :2 * len(STEM_GROUPS)]
    date, record = _marks(plains)
    C[:, col["date_line"]] = date
    C[:, col["record_line"]] = record
    # record lines (dates, "says:", reply links) inside the paragraph's parent / grandparent
    # element: paths carry no sibling numbers, so the records of a list add up under one path
    _records(C, uniq, inverse, date + record)
    _after_headings(C, paths, plains, uniq, inverse)
    # after the last paragraph of the main container
    inside = np.flatnonzero(in_main > 0)
    if len(inside):
        last = inside[-1]
        C[last + 1:, col["after_main"]] = 1.0
        lens = np.array([len(t) for t in plains], dtype=np.float64)
        after = np.cumsum(lens) - np.cumsum(lens)[last]
        C[:, col["chars_after_main"]] = np.log1p(np.maximum(after - lens, 0.0))
        # share of the main container's characters before the paragraph (whole numbers:
        # exact sums in any order)
        main_lens = np.where(in_main > 0, lens, 0.0)
        main_total = main_lens.sum()
        C[:, col["main_before"]] = ((np.cumsum(main_lens) - main_lens) / main_total
                                    if main_total > 0 else 0.0)
    else:
        C[:, col["main_before"]] = -1.0
    _h1_position(C, uniq, inverse)
    _page_type(C, paths, plains, uniq, inverse, block)
    return C


def _is_h1(path: str) -> bool:
    el = path.rpartition(">")[2]
    return _tag(el).lower() == "h1"


def _h1_position(C: np.ndarray, uniq: list[str], inverse: np.ndarray) -> None:
    """1 from the first paragraph that is an ``h1`` on, 0 before it (-1 on pages without
    one), and the signed log distance to it in paragraphs."""
    col = _IDX
    h1 = [_is_h1(q) for q in uniq]
    first = next((i for i, u in enumerate(inverse.tolist()) if h1[u]), None)
    if first is None:
        C[:, col["after_h1"]] = -1.0
        return
    n = len(inverse)
    C[first:, col["after_h1"]] = 1.0
    C[:, col["h1_offset"]] = [math.copysign(math.log1p(abs(i - first)), i - first)
                              for i in range(n)]


@lru_cache(maxsize=8192)
def _ancestors(path: str) -> tuple[str, ...]:
    """The path and its ancestor paths below body, innermost first."""
    parent, sep, _ = path.rpartition(">")
    return (path,) + _ancestors(parent) if sep else ()


def _records(C: np.ndarray, uniq: list[str], inverse: np.ndarray, marks: np.ndarray) -> None:
    """Record lines and paragraphs inside each element, then the counts of a paragraph's
    parent and grandparent (sums of whole numbers: exact in any order)."""
    col = _IDX
    count = np.bincount(inverse, minlength=len(uniq)).tolist()
    marked = np.bincount(inverse, weights=marks, minlength=len(uniq)).tolist()
    paras: dict[str, int] = {}
    lines: dict[str, float] = {}
    for q, k, m in zip(uniq, count, marked):
        for a in _ancestors(q)[1:]:
            paras[a] = paras.get(a, 0) + k
            if m:
                lines[a] = lines.get(a, 0.0) + m
    rows = np.zeros((len(uniq), 3))
    for j, q in enumerate(uniq):
        up = _ancestors(q)
        if len(up) > 1:
            rows[j, 0] = math.log1p(lines.get(up[1], 0.0))
        if len(up) > 2:
            rows[j, 1] = math.log1p(lines.get(up[2], 0.0))
            rows[j, 2] = lines.get(up[2], 0.0) / paras[up[2]]
    C[:, [col["parent_records"], col["grandparent_records"], col["grandparent_record_share"]]] = \
        rows[inverse]


def _container(path: str) -> str:
    """Prefix of the paths inside a heading's grandparent element ("" below body: all)."""
    grand = path.rpartition(">")[0].rpartition(">")[0]
    return grand + ">" if grand else ""


def _after_headings(C: np.ndarray, paths: list[str], plains: list[str], uniq: list[str],
                    inverse: np.ndarray) -> None:
    """Paragraphs after the first comment-section heading (anywhere after it, and inside
    the heading's grandparent container), and after a related-section heading inside its
    grandparent container (until the next related heading)."""
    col = _IDX
    comment_at = None
    related: list[int] = []
    for i, t in enumerate(plains):
        if len(t) > HEAD_CHARS:
            continue
        if comment_at is None and _COMMENT_HEAD.search(t):
            comment_at = i
        elif _RELATED_HEAD.search(t):
            related.append(i)
    if comment_at is None and not related:
        return
    n = len(paths)

    def inside(at: int) -> np.ndarray:
        box = _container(paths[at])
        return np.array([q.startswith(box) for q in uniq])[inverse]
    if comment_at is not None:
        C[comment_at + 1:, col["after_comment_head"]] = 1.0
        C[comment_at + 1:, col["under_comment_head"]] = inside(comment_at)[comment_at + 1:]
    for k, at in enumerate(related):
        end = related[k + 1] if k + 1 < len(related) else n
        C[at + 1:end, col["under_related_head"]] = inside(at)[at + 1:end]


def _tag_is(el: str, name: str) -> bool:
    """The element's tag (before any "." or "#") is ``name``, in ASCII capitals or not."""
    tag = _tag(el)
    return tag.isascii() and tag.lower() == name


def is_price_line(t: str) -> bool:
    """A short line with a currency sign next to an ASCII digit (one space between allowed)."""
    if len(t) > PRICE_CHARS:
        return False
    n = len(t)
    for i, ch in enumerate(t):
        if ch in CURRENCY:
            for j in (i - 1, i + 1):
                if 0 <= j < n and t[j] == " ":
                    j += j - i
                if 0 <= j < n and "0" <= t[j] <= "9":
                    return True
    return False


def _page_type(C: np.ndarray, paths: list[str], plains: list[str], uniq: list[str],
               inverse: np.ndarray, block: np.ndarray) -> None:
    """The PAGE_NAMES columns. A container (any path prefix below the root element) holds
    records when its first path comes back at least MIN_RECORDS times and the last record
    (from the last return of that path on) holds at most half of the container's text: a
    menu at the top of the page does not make the whole page a record list."""
    col = _IDX
    nu = len(uniq)
    lens = [len(t) for t in plains]
    total = float(sum(lens)) or 1.0
    inv = inverse.tolist()
    count, chars, last = [0] * nu, [0.0] * nu, [0] * nu
    for i, u in enumerate(inv):
        count[u] += 1
        chars[u] += lens[i]
        last[u] = i
    # containers numbered in order of first appearance; each distinct path's prefixes as ids
    ids: dict[str, int] = {}
    first: list[int] = []
    box_chars: list[float] = []
    chain: list[list[int]] = []
    sections = articles = 0
    for u, q in enumerate(uniq):
        own = []
        for a in reversed(_ancestors(q)):       # outermost first, the path itself last
            k = ids.get(a)
            if k is None:
                k = ids[a] = len(first)
                first.append(u)
                box_chars.append(0.0)
                el = a.rpartition(">")[2]
                sections += _tag_is(el, "section")
                articles += _tag_is(el, "article")
            box_chars[k] += chars[u]
            own.append(k)
        chain.append(own)
    tail = [0.0] * len(first)
    for i, u in enumerate(inv):
        for k in chain[u]:
            if i >= last[first[k]]:
                tail[k] += lens[i]
    records = [count[f] for f in first]
    valid = [r >= MIN_RECORDS and b > 0 and 2 * t <= b
             for r, b, t in zip(records, box_chars, tail)]
    top, top_share = -1, 0.0
    for k, ok in enumerate(valid):
        if ok and box_chars[k] / total > top_share:
            top, top_share = k, box_chars[k] / total
    rows = np.zeros((nu, 6))
    for u, own in enumerate(chain):
        for j, c in ((2, 0), (3, 1), (4, 2)):          # parent, grandparent, great-grandparent
            if len(own) >= j:
                rows[u, c] = math.log(records[own[-j]])
        for k in reversed(own[:-1]):                    # the nearest record list around it
            if valid[k]:
                rows[u, 3] = math.log(records[k])
                rows[u, 4] = box_chars[k] / total
                break
        rows[u, 5] = 1.0 if top >= 0 and top in own else 0.0
    names = ("rec_parent", "rec_grand", "rec_great", "rec_box_records", "rec_box_share",
             "in_top_records")
    C[:, [col[c] for c in names]] = rows[inverse]
    prices = [is_price_line(t) for t in plains]
    C[:, col["price_line"]] = prices
    C[:, col["page_records"]] = math.log(records[top]) if top >= 0 else 0.0
    C[:, col["page_record_share"]] = top_share
    C[:, col["page_headings"]] = math.log1p(sum(count[u] for u, q in enumerate(uniq)
                                                if _is_heading(q)))
    C[:, col["page_prices"]] = math.log1p(sum(prices))
    C[:, col["page_sections"]] = math.log1p(sections)
    C[:, col["page_articles"]] = math.log1p(articles)
    for g in _SHARE_GROUPS:
        on = block[:, col["stem_any_" + g]] > 0
        C[:, col[f"page_{g}_share"]] = sum(c for c, o in zip(chars, on.tolist()) if o) / total


def _is_heading(path: str) -> bool:
    tag = _tag(path.rpartition(">")[2])
    return len(tag) == 2 and tag[0] in "hH" and tag[1] in "123456"

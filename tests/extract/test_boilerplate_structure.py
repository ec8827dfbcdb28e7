"""Page-structure features of sieve: comment sections, related lists, compound class stems."""
import random
import re

import numpy as np
import pytest

from warclake.tasks.extract.boilerplate import classify, features, structure
from warclake.tasks.extract.html_paragraphs import extract_paragraphs

ARTICLE = ("The council met on Tuesday to decide the future of the old river bridge, which has "
           "carried the town's traffic for more than a century and now needs repair.")
BODY = " ".join([ARTICLE] * 3)
COMMENTS = [("Jane", "I cross that bridge every day and the potholes are a disgrace, fix it."),
            ("Bob", "Tear it down and build a tunnel; it would last another hundred years."),
            ("Ann", "My grandfather helped build it, please keep the old stone arches.")]


def blog_page() -> str:
    comments = "".join(
        f"<li class='comment depth-1'><div class='commentmeta'><span>{who} says:</span>"
        f"<span>March {k + 3}, 2012 at 4:0{k} pm</span></div>"
        f"<div class='commentbody'><p>{text}</p></div></li>"
        for k, (who, text) in enumerate(COMMENTS))
    return ("<html><body><div class='post'><h1>Bridge to be repaired</h1>"
            "<div class='postmeta'><p>By John Smith, March 2, 2012</p></div>"
            + f"<p>{BODY}</p>" * 3 + "</div>"
            "<div class='relatedposts'><h3>Related posts</h3><ul>"
            "<li><a href='/a'>Bridge closed for a week</a></li>"
            "<li><a href='/b'>Council budget approved</a></li></ul></div>"
            f"<div id='comments'><h3>3 Comments</h3><ol class='commentlist'>{comments}</ol>"
            "<h3>Leave a Reply</h3></div></body></html>")


def _columns(paras):
    X = features.matrix(paras, "en")
    col = {n: i for i, n in enumerate(features.NAMES)}
    return X, col


def test_comment_section_paragraphs_are_marked_by_stems_records_and_heading():
    paras = extract_paragraphs(blog_page())
    X, col = _columns(paras)
    by_text = {p.plain: i for i, p in enumerate(paras)}
    comment = by_text[COMMENTS[0][1]]
    article = by_text[BODY]
    # "commentbody" and "commentmeta" are compounds: no whole-word group, but a stem
    assert X[comment, col["stem_any_comment"]] == 1 and X[article, col["stem_any_comment"]] == 0
    assert X[comment, col["after_comment_head"]] == 1 and X[article, col["after_comment_head"]] == 0
    assert X[comment, col["under_comment_head"]] == 1
    # three records with a date line and a "says:" line each, under one list
    assert X[comment, col["grandparent_record_share"]] > 2 * X[article, col["grandparent_record_share"]]
    assert X[comment, col["grandparent_records"]] > 0
    assert X[comment, col["after_main"]] == 1 and X[article, col["after_main"]] == 0
    meta = by_text["By John Smith, March 2, 2012"]
    assert X[meta, col["stem_any_meta"]] == 1 and X[meta, col["date_line"]] == 1
    related = by_text["Bridge closed for a week"]
    assert X[related, col["stem_any_related"]] == 1 and X[related, col["under_related_head"]] == 1


def test_sieve_keeps_the_article_and_drops_comments_and_related_links():
    paras = extract_paragraphs(blog_page())
    kept = {p.plain for p, lab in zip(paras, classify("sieve", paras, "en")) if lab == "good"}
    assert BODY in kept
    assert not kept & {text for _, text in COMMENTS}
    assert "Bridge closed for a week" not in kept


def test_stems_are_found_inside_compound_names_only_of_class_and_id():
    assert structure._element_stems("div.relatedposts") == {"related"}
    assert structure._element_stems("ol#commtree") == {"comment"}
    assert structure._element_stems("comment") == frozenset()    # a tag name, not a class
    any_g, near_g = structure._path_stems("body>div#sidebarwrap>div>div>p")
    assert "chrome" in any_g and "chrome" not in near_g


def test_headings_open_sections_only_inside_their_container():
    paths = ["body>div.a>p", "body>div.b>div>h3", "body>div.b>div>ul>li", "body>div.c>p"]
    plains = ["Story text " * 10, "You may also like", "Another story", "Footer text"]
    C = structure.columns(paths, plains, np.array([1.0, 0, 0, 0]))
    under = C[:, structure.NAMES.index("under_related_head")]
    assert under.tolist() == [0, 0, 1, 0]
    assert structure.columns([], [], np.zeros(0)).shape == (0, len(structure.NAMES))


# The compiled structure columns (warclake.tasks.native.sieve_structure) against the reference.
_LINES = ["March 3, 2012", "at 4:05 pm", "2 hours ago", "12/03/2011", "says:", "Reply", "REPLY",
          "Report abuse", "12 Comments", "Leave a Reply", "Related posts", "More from",
          "You may also like", "Read more", "around the web", "\u017fays:", "\u212aeep", "\u0130",
          "\u0131", "Mar", "MAY 5", "\u0661\u0662/\u0663/\u0662\u0660\u0661\u0661",
          "3\u00a0hours ago", "Link to this", "What do you think?", "Trackbacks", "Most Popular",
          "latest news", "x", "9.30 a.m.", "\u2019", "\u65e5\u672c", "\n", "-", "1",
          "reader comments (3)", "Join the conversation", "also on", "See also",
          "top 10 stories", "Wrote :", "like", "flag", "quote", "$599", "+$ 29", "12,99 €",
          "¥", "1 ₹", "$$", "US$"]
_NAMES = ["comment", "Comment", "COMMENTbody", "postmeta", "relatedPosts", "x-share", "nav",
          "\u017fhare", "\u212aey", "navbar", "readmore", "caption", "widgetfooter", "replies",
          "Breadcrumb", "moreStoriesList", "\u65e5\u672c", "a-b_c", "posted-by", "upsellProduct",
          "swiper-slide", "postBody", "cooked", "tabPanel", "product-card", "heroSection",
          "listingItem", "PRICE", ""]


def test_position_after_the_first_h1_and_in_the_main_container():
    paras = extract_paragraphs(blog_page())
    X, col = _columns(paras)
    by_text = {p.plain: i for i, p in enumerate(paras)}
    title = by_text["Bridge to be repaired"]
    assert X[title, col["after_h1"]] == 1 and X[title, col["h1_offset"]] == 0
    later = by_text[COMMENTS[0][1]]
    assert X[later, col["h1_offset"]] > X[by_text[BODY], col["h1_offset"]] > 0
    # the three article paragraphs share one path: the main container's text, in thirds
    body_rows = [i for i, p in enumerate(paras) if p.plain == BODY]
    assert [X[i, col["main_before"]] for i in body_rows] == sorted(X[i, col["main_before"]]
                                                                    for i in body_rows)
    no_h1 = extract_paragraphs("<html><body><div><p>" + BODY + "</p></div></body></html>")
    assert (features.matrix(no_h1, "en")[:, col["after_h1"]] == -1).all()


def test_product_carousel_stems():
    page = ("<html><body><h1>Ridge wallet</h1><p>" + BODY + "</p>"
            "<div class='upsell-product'><div class='productCard'><h3>Passport wallet</h3></div>"
            "</div></body></html>")
    paras = extract_paragraphs(page)
    X, col = _columns(paras)
    other = [i for i, p in enumerate(paras) if p.plain == "Passport wallet"][0]
    assert X[other, col["stem_any_slider"]] == 1 and X[other, col["stem_near_slider"]] == 1
    assert X[1, col["stem_any_slider"]] == 0


def listing_page(menu: int = 5, cards: int = 6) -> str:
    nav = "".join(f"<li><a href='/{k}'>Section {k}</a></li>" for k in range(menu))
    grid = "".join(f"<div class='card'><h3>Walking boot model {k}</h3><p>{ARTICLE}</p>"
                   f"<p>$1{k}9</p></div>" for k in range(cards))
    return (f"<html><body><nav><ul>{nav}</ul></nav><main><h1>Walking boots</h1>"
            f"<section class='grid'>{grid}</section></main>"
            "<footer><p>Shipping and returns</p></footer></body></html>")


def test_a_listings_cards_are_one_record_list_and_a_menu_at_the_top_is_not_the_page():
    paras = extract_paragraphs(listing_page())
    X, col = _columns(paras)
    cards = [i for i, p in enumerate(paras) if p.plain == ARTICLE]
    menu = [i for i, p in enumerate(paras) if p.plain.startswith("Section")]
    assert len(cards) == 6 and len(menu) == 5
    # the grid: its first path (a card's title) comes back six times and holds most text
    assert np.allclose(X[cards, col["rec_box_records"]], np.log(6))
    assert (X[cards, col["in_top_records"]] == 1).all() and (X[menu, col["in_top_records"]] == 0).all()
    assert X[0, col["page_record_share"]] > 0.8 and X[0, col["page_records"]] == np.log(6)
    # the menu is a record list of its own (five items), but the body is none: its first
    # path (a menu item) comes back five times, and the last "record" holds the whole grid
    assert np.allclose(X[menu, col["rec_box_records"]], np.log(5))
    assert X[menu[0], col["rec_box_share"]] < 0.1
    assert X[0, col["page_sections"]] == np.log1p(1) and X[0, col["page_headings"]] == np.log1p(7)
    prices = [i for i, p in enumerate(paras) if p.plain.startswith("$")]
    assert len(prices) == 6 and (X[prices, col["price_line"]] == 1).all()
    assert X[0, col["page_prices"]] == np.log1p(6) and X[cards[0], col["price_line"]] == 0
    assert X[0, col["page_card_share"]] > 0.8 and X[0, col["page_section_share"]] == 0


@pytest.mark.parametrize("line, price", [("$599", True), ("+$29", True), ("12,99 €", True),
                                         ("Price: ¥ 1200", True), ("US$ 5", True),
                                         ("$ x5", False), ("In 2012 we sold 3 boots", False),
                                         ("€" + "9" * 40, False), ("₹", False)])
def test_price_lines(line, price):
    assert structure.is_price_line(line) is price


def test_forum_posts_and_tabs_show_in_the_page_shares():
    posts = "".join(f"<div class='topic-post'><div class='cooked'><p>{text}</p></div></div>"
                    for _, text in COMMENTS)
    page = ("<html><body><h1>Bridge thread</h1>" + posts + "<div class='product-tabs'><p>"
            + ARTICLE + "</p></div></body></html>")
    X, col = _columns(extract_paragraphs(page))
    assert 0.4 < X[0, col["page_post_share"]] < 0.7 and 0.2 < X[0, col["page_tab_share"]] < 0.5
    assert X[0, col["page_comment_share"]] == 0 and X[0, col["page_articles"]] == 0


def _random_path(rng) -> str:
    parts = []
    for _ in range(rng.choice((0, 1, 2, 3, 5, 8, 12))):
        el = rng.choice(["div", "p", "li", "ul", "section", "h2", "body", "h1", "H1", "h12",
                         "article", "SECTION", "Article", "\u212aarticle"])
        for _ in range(rng.choice((0, 0, 1, 2))):
            el += rng.choice((".", "#")) + rng.choice(_NAMES)
        parts.append(el)
    return ">".join(parts)


def test_compiled_structure_columns_equal_the_reference_on_generated_pages():
    fill = pytest.importorskip("warclake.tasks.native.sieve_structure").fill
    if features._COMPILED is None:
        pytest.skip("the compiled features are off")
    rng = random.Random(5)
    at_main = features._IDX["in_main"]
    seen = np.zeros(len(structure.NAMES))
    for _ in range(600):
        base = [_random_path(rng) for _ in range(rng.randint(1, 8))]
        nested = base + [b + ">" + _random_path(rng) for b in base if rng.random() < 0.5]
        n = rng.choice((0, 1, 2, 5, 20, 60))
        paths = [rng.choice(nested) for _ in range(n)]
        plains = ["".join(rng.choice(_LINES) + rng.choice(("", " "))
                          for _ in range(rng.choice((1, 1, 2, 3, 6, 20)))) for _ in range(n)]
        in_main = np.array([float(rng.random() < 0.3) for _ in range(n)])
        want = structure.columns(paths, plains, in_main)
        X = np.full((n, len(features.NAMES)), 7.0)
        X[:, at_main] = in_main
        fill(X, paths, plains, at_main)
        got = X[:, features._STRUCTURE]
        assert got.tobytes() == want.tobytes(), [structure.NAMES[c] for c in
                                                 np.flatnonzero((got != want).any(axis=0))]
        seen += (want != 0).sum(axis=0)
    assert (seen > 0).all(), [n for n, k in zip(structure.NAMES, seen) if not k]


def test_the_characters_folding_to_ascii_letters_are_those_the_compiled_module_knows():
    ss = pytest.importorskip("warclake.tasks.native.sieve_structure")
    text = "".join(chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c < 0xE000)
    assert sorted({ord(c) for c in re.findall("[a-z]", text, re.I)}) == list(ss.FOLDS_TO_ASCII)


def test_fuzz_sieve_runs_the_structure_columns_from_a_given_module_file(tmp_path):
    """``--structure-module`` (how an AddressSanitizer build is run) loads that file, and the
    fuzz compares its columns with the reference."""
    import shutil
    import subprocess
    import sys

    built = pytest.importorskip("warclake.tasks.native.sieve_structure")
    copy = tmp_path / "sieve_structure.so"
    shutil.copy(built.__file__, copy)
    run = subprocess.run([sys.executable, "-m", "tools.fuzz.sieve",
                          "--structure-module", str(copy), "--cases", "40", "--seed", "5"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"structure columns: compiled {copy}" in run.stdout
    assert "0 differences" in run.stdout


_EDGE_LINES = [
    "March 3, 2012 at 4:05 pm", "mar. 3", "Mar.3", "3 Sept", "3 Septembers", "12 dec", "123 dec",
    "4:05pm", "4.05 P.M.", "4:05 p.mx", "_4:05 pm", "x4:05 pm", "2 hours ago", "2 hoursago",
    "2\u00a0days\u3000ago", "\u0663 days ago", "\uff11\uff12/03/2019", "1/2/34", "12345/1/12",
    "04/11/2019x", "04-11.19", "Jane says:", "Jane says :", "Jane_says:", "  Reply  \n", "Reply\n\n",
    "report abuse", "replying", "link to this", "12 Comments", "No responses yet", "12comments",
    "Leave a Reply", "leave  your   comment", "Comments (12)", "Comments (12) x", "Comments ()",
    "comments (\u0661\u0662)", "User comments:", "yourcomments", "Join the discussion",
    "What do you think?", "3 trackbacks", "trackbacksx", "Related posts", "relatedness",
    "Most popular", "More from the web", "Latest news", "Top stories of the week from all of our reporters",
    "More\nnews", "You may also like", "you might enjoy", "Read more", "See also:", "Also on CNN",
    "Around the web", "\u0130 reply", "reply \u212a", "", " ", "!!!", "_related", "\u00e9related",
]


def test_short_line_matchers_in_c_find_what_the_patterns_find():
    """The compiled structure columns match dates, record lines and section headings in C:
    each line gets the same answer as the Python patterns (None: the line has a letter that
    folds to ASCII, and the patterns decide)."""
    ss = pytest.importorskip("warclake.tasks.native.sieve_structure")
    from tools.fuzz.sieve import _line

    rng = random.Random(3)
    patterns = (structure._DATE_LINE, structure._RECORD_LINE, structure._COMMENT_HEAD,
                structure._RELATED_HEAD)
    found = [0, 0, 0, 0]
    for line in _EDGE_LINES + [_line(rng) for _ in range(20000)]:
        got = ss.line_marks(line)
        want = tuple(p.search(line) is not None for p in patterns)
        if got is None:
            assert any(c in line for c in "\u0130\u0131\u017f\u212a"), line
            continue
        assert tuple(map(bool, got)) == want, line
        found = [f + w for f, w in zip(found, want)]
    assert all(f > 50 for f in found), found

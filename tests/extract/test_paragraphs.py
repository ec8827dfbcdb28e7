"""extract_paragraphs: the exact Uzushio ``text`` a user would read back from the lake."""
import random
import re
import time
from pathlib import Path

import pytest

from conftest import shared_data
from warclake.tasks.extract.html_paragraphs import MAX_PATH_ELEMENTS, extract_paragraphs
from warclake.tasks.extract.paragraph import LINK_END, LINK_START, PATH_SEP, join_paragraphs, split_document

S, A, Z = PATH_SEP, LINK_START, LINK_END


def text_of(html) -> str:
    return join_paragraphs(extract_paragraphs(html))


def test_css_path_has_every_ancestor_with_classes_then_id():
    html = (
        "<html><head><title>Blog</title></head><body>"
        '<div class="content" id="main"><div class="something left">'
        '<div id="blog">Post text</div></div></div></body></html>'
    )
    assert text_of(html) == f"body>div.content#main>div.something.left>div#blog{S}Post text"


def test_nested_block_splits_outer_text_into_runs():
    html = '<body><div class="c">Before <p>inside</p> after</div></body>'
    assert text_of(html) == f"body>div.c{S}Before\n\nbody>div.c>p{S}inside\n\nbody>div.c{S}after"


def test_inline_ancestors_are_part_of_the_path():
    html = '<span class="wrap"><em><div>block in inline</div></em></span>'
    assert text_of(html) == f"body>span.wrap>em>div{S}block in inline"


def test_text_directly_in_body():
    html = "loose text <b>bold</b><p>para</p>tail"
    assert text_of(html) == f"body{S}loose text bold\n\nbody>p{S}para\n\nbody{S}tail"


def test_links_are_wrapped_and_whitespace_moves_outside_markers():
    html = (
        '<p>Read <a href="/a">the docs</a>, or <a href="/b"> ask </a>us.'
        '<a name="top">Top</a> <a href="">empty href</a></p>'
    )
    assert text_of(html) == (
        f"body>p{S}Read {A}the docs{Z}, or {A}ask{Z} us.Top {A}empty href{Z}"
    )


def test_nested_links_give_one_pair_of_markers():
    # the parser closes an open <a> when another starts; inline wrappers keep both inside
    html = '<p><a href="/x">out <span><a href="/y">in</a></span> more</a></p>'
    paragraphs = extract_paragraphs(html)
    assert len(paragraphs) == 1
    text = paragraphs[0].text
    assert text.count(A) == text.count(Z) >= 1
    assert A + A not in text and Z + Z not in text
    assert paragraphs[0].plain == "out in more"


def test_link_wrapping_blocks_is_balanced_in_every_paragraph():
    html = '<div><a href="/card">Card: <div class="t">title</div><p>body</p> more</a></div>'
    assert text_of(html) == (
        f"body>div{S}{A}Card:{Z}\n\n"
        f"body>div>a>div.t{S}{A}title{Z}\n\n"
        f"body>div>a>p{S}{A}body{Z}\n\n"
        f"body>div{S}{A}more{Z}"
    )


def test_links_without_text_vanish():
    html = '<p>a <a href="/x"> </a> b <a href="/y"><img src="i.png"></a></p>'
    assert text_of(html) == f"body>p{S}a b"


def test_br_is_a_single_newline():
    html = "<p>one<br>two <br> <br>three<br></p><p><br>  <a href=x>\n<br>link</a></p>"
    assert text_of(html) == f"body>p{S}one\ntwo\nthree\n\nbody>p{S}{A}link{Z}"


def test_pre_keeps_line_breaks_and_the_spacing_of_each_line():
    html = "<pre>def f():\n    return 1\n\n\nend</pre>"
    assert text_of(html) == f"body>pre{S}def f():\n    return 1\nend"


def test_code_stays_code_and_only_inside_pre():
    html = ("<div>  outside   runs  \n collapse </div>"
            "<pre><code>    <span class=k>if</span> x:\n\t\ty  =  [1,   2]   \n  \t \n"
            "        <a href=/doc>call</a>(x)  </code></pre>"
            "<p>after <b> the </b>  pre</p>")
    assert text_of(html).split("\n\n") == [
        f"body>div{S}outside runs collapse",
        # indentation of the first line too; trailing spacing and blank lines go
        f"body>pre{S}    if x:\n\t\ty  =  [1,   2]\n        {A}call{Z}(x)",
        f"body>p{S}after the pre",
    ]
    # the other pre-like blocks; a block inside pre is still pre; a pre of spaces is empty
    assert text_of("<xmp>a  <b>  b</xmp><pre>   \n  </pre>") == f"body>xmp{S}a  <b>  b"
    assert text_of("<pre><div>  x  y</div>  z</pre>") == f"body>pre>div{S}  x  y\n\nbody>pre{S}  z"
    # spaces and tabs only: any run of other whitespace becomes one space, as everywhere
    assert text_of("<pre>a\u00a0\u00a0b\u3000 c</pre>") == f"body>pre{S}a b  c"


def test_scripts_styles_and_other_non_text_are_dropped():
    html = (
        "<head><style>p{}</style><script>h()</script></head><body>"
        '<script>var a = "<p>x</p>";</script><p>kept<style>.x{}</style> text</p>'
        "<noscript>enable js</noscript><!-- a comment --><svg><text>svg text</text></svg>"
        "<template><p>tpl</p></template><iframe>frame</iframe>"
        "<select><option>choice</option></select><title>late title</title></body>"
    )
    assert text_of(html) == f"body>p{S}kept text"


def test_whitespace_runs_collapse_including_unicode_spaces():
    html = "<p>  lots \n\t of   \u00a0 space\u3000here\u2003 </p>"
    assert text_of(html) == f"body>p{S}lots of space here"


def test_zero_width_only_paragraphs_and_a_leading_bom_are_dropped():
    html = "\ufeff<p>\u200b</p><p><a href=x>\u200b</a> </p><p>a\u200bb</p>"
    assert text_of(html) == f"body>p{S}a\u200bb"


def test_entities_are_decoded():
    html = "<p>Fish &amp; chips&nbsp;&nbsp;for&nbsp;two &lt;3 &copy; &#x41;</p>"
    assert text_of(html) == f"body>p{S}Fish & chips for two <3 \u00a9 A"


def test_empty_blocks_are_dropped_and_their_tags_counted_forward():
    html = '<div><div> </div><p>\n</p><span></span><a href="x"> </a></div><p>last</p>'
    paragraphs = extract_paragraphs(html)
    assert join_paragraphs(paragraphs) == f"body>p{S}last"
    # body, div, div, p, span, a, p
    assert paragraphs[0].n_tags == 7


def test_n_tags_counts_start_tags_since_the_previous_paragraph():
    html = "<div>Before <b>x</b><p>inside <i>y</i><br></p> after<img src=a></div>"
    paragraphs = extract_paragraphs(html)
    assert [p.text for p in paragraphs] == ["Before x", "inside y", "after"]
    # body+div+b | p+i+br | img
    assert [p.n_tags for p in paragraphs] == [3, 3, 1]


def test_tables():
    html = (
        "<table><caption>Prices</caption><tr><th>Item</th><th>Cost</th></tr>"
        "<tr><td>Tea</td><td>3 <em>EUR</em></td></tr></table>"
    )
    row = "body>table>tbody>tr"   # a row of data cells is one paragraph (test_table_rows.py)
    assert text_of(html) == f"body>table>caption{S}Prices\n\n{row}{S}Item | Cost\n\n{row}{S}Tea | 3 EUR"


def test_lists():
    html = (
        '<ul class="nav"><li>Home<li><a href="/x">About</a></ul>'
        "<ol><li>one</li></ol><dl><dt>term</dt><dd>definition</dd></dl>"
    )
    assert text_of(html) == (
        f"body>ul.nav>li{S}Home\n\nbody>ul.nav>li{S}{A}About{Z}\n\n"
        f"body>ol>li{S}one\n\nbody>dl>dt{S}term\n\nbody>dl>dd{S}definition"
    )


def test_hr_splits_text():
    # the parser closes <p> at <hr>, so "b" is text directly in body
    assert text_of("<p>a<hr>b</p>") == f"body>p{S}a\n\nbody{S}b"
    paragraphs = extract_paragraphs("<div>a <b>x</b><hr>b<hr/>c</div>")
    assert [p.text for p in paragraphs] == ["a x", "b", "c"]
    assert [p.n_tags for p in paragraphs] == [3, 1, 1]  # each <hr> opens the next


def test_broken_markup():
    html = "<div><p>unclosed <b>bold <i>both</div></b> stray</i></p></div></span><p>end"
    assert text_of(html) == f"body>div>p{S}unclosed bold both\n\nbody{S}stray\n\nbody>p{S}end"


def test_path_parts_are_sanitised():
    html = (
        '<div class="a>b  c.d\tq\x1cr #z" id=" x\ty ">'
        "<x-card.v2 class=k><p>t</p></x-card.v2></div>"
    )
    assert text_of(html) == f"body>div.ab.cd.q.r.z#xy>x-cardv2.k>p{S}t"


def test_marker_characters_in_the_page_are_removed():
    html = "<p>a\x02b &#2;c &#x03;d\x01e\x04f&#5;g</p><pre> x\x04 &#4;y</pre>"
    assert text_of(html) == f"body>p{S}ab c defg\n\nbody>pre{S} x y"


def test_bytes_input_is_utf8_with_replacement():
    html = "<p>caf\u00e9 ok</p>".encode() + b"<p>bad \xff\xfe byte</p>"
    assert text_of(html) == f"body>p{S}caf\u00e9 ok\n\nbody>p{S}bad \ufffd\ufffd byte"


def test_empty_and_garbage_input():
    assert extract_paragraphs("") == []
    assert extract_paragraphs(b"") == []
    assert extract_paragraphs("<html><head><title>only</title></head></html>") == []
    assert extract_paragraphs("<frameset><frame src=a></frameset>") == []
    paragraphs = extract_paragraphs(bytes(range(256)) * 50)
    assert all(PATH_SEP not in p.text and "\n\n" not in p.text for p in paragraphs)


def test_round_trip_through_the_text_column():
    html = '<div id="m"><p>one <a href="/">two</a></p><p>three<br>four</p></div>'
    paragraphs = extract_paragraphs(html)
    back = split_document(join_paragraphs(paragraphs))
    assert [(p.path, p.text) for p in back] == [(p.path, p.text) for p in paragraphs]


@pytest.mark.parametrize(
    "html",
    [
        "<div>" * 10_000 + "deep" + "</div>" * 10_000,
        "<div>x" * 5_000,
        "<span>" * 10_000 + "deep",
        '<a href="x">' * 10_000 + "deep",
        "<table><tr><td>" * 10_000 + "deep",
        "</div></p></span>" * 10_000 + "tail",
    ],
    ids=["div", "div-text", "span", "a", "table", "stray-end-tags"],
)
def test_deep_nesting_does_not_raise_and_paths_stay_bounded(html):
    start = time.perf_counter()
    paragraphs = extract_paragraphs(html)
    assert time.perf_counter() - start < 30
    assert paragraphs
    for p in paragraphs:
        assert p.path.startswith("body")
        assert p.path.count(">") <= MAX_PATH_ELEMENTS
        assert p.text.count(LINK_START) == p.text.count(LINK_END)


def test_deep_path_keeps_both_ends():
    html = '<div class="outer">' + "<div>" * 300 + "<p>deep</p>"
    (p,) = extract_paragraphs(html)
    parts = p.path.split(">")
    assert parts[:2] == ["body", "div.outer"] and parts[-1] == "p" and "..." in parts


def test_huge_document():
    html = "<p>x <a href=y>z</a></p>" * 50_000 + "<div>" + "word " * 500_000 + "</div>"
    paragraphs = extract_paragraphs(html)
    assert len(paragraphs) == 50_001
    assert paragraphs[-1].text == " ".join(["word"] * 500_000)


_PIECES = [
    "<p>", "</p>", '<div class="a b">', "</div>", '<a href="x">', "</a>", "<a>", "<br>", " ",
    "\n", "\u00a0", "\u3000", "word", "w\u00f6rd", "<span>", "</span>", "<pre>", "</pre>",
    "<table><tr><td>", "</td>", "<li>", "<script>x</script>", "<!-- c -->", "&nbsp;", "&amp;",
    "<hr>", "&#2;", "\x03", "\t", "  ", "\x04", "<ul>", "</ul>", "<svg><text>t</text></svg>", "<h1>", "</h1>",
]
_WELL_FORMED = re.compile("[^\x02\x03]*(?:\x02[^\x02\x03]+\x03[^\x02\x03]*)*")
_BAD_SPACING = re.compile("[ \n]{2}|\x02[ \n]|[ \n]\x03|\x01")


_PRE_PATH = re.compile(r"(?:^|>)(?:pre|xmp|listing|plaintext)(?=[.#>]|$)")
# in a pre-like block: lines keep their spacing, but no blank line, no spacing at a line's
# end, none just inside a link
_BAD_PRE_SPACING = re.compile("\n\n|[ \t]\n|[ \t]$|^\n|\x02[ \t\n]|[ \t\n]\x03|[\x01\x04\x05]")


def test_random_markup_keeps_the_text_invariants():
    rnd = random.Random(7)
    pre = 0
    for _ in range(3000):
        html = "".join(rnd.choice(_PIECES) for _ in range(rnd.randint(1, 40)))
        for p in extract_paragraphs(html):
            assert p.path == "body" or p.path.startswith("body>"), html
            assert PATH_SEP not in p.text and _WELL_FORMED.fullmatch(p.text), (html, p.text)
            if _PRE_PATH.search(p.path):
                pre += 1
                assert p.text and p.text == p.text.rstrip(), html
                assert not _BAD_PRE_SPACING.search(p.text), (html, p.text)
            else:
                assert p.text and p.text == p.text.strip(), html
                assert not _BAD_SPACING.search(p.text), (html, p.text)
    assert pre > 100


READABILITY = Path(shared_data("gold", "mozilla_readability_testpages"))


def _balanced(text: str) -> bool:
    inside = False
    for ch in text:
        if ch == LINK_START:
            if inside:
                return False
            inside = True
        elif ch == LINK_END:
            if not inside:
                return False
            inside = False
    return not inside


@pytest.mark.shared_data("gold", "mozilla_readability_testpages")
def test_real_pages_smoke():
    pages = sorted(READABILITY.rglob("source.html"))
    assert pages
    total = 0
    for page in pages:
        paragraphs = extract_paragraphs(page.read_bytes())
        total += len(paragraphs)
        for p in paragraphs:
            assert p.path == "body" or p.path.startswith("body>"), (page, p.path)
            assert p.text and p.text == p.text.strip(), (page, p.text[:80])
            assert "\n\n" not in p.text and PATH_SEP not in p.text, page
            assert PATH_SEP not in p.path and LINK_START not in p.path, page
            assert _balanced(p.text), (page, p.text[:200])
            assert p.n_tags >= 0
    assert total > len(pages) * 10


# ------------------------------------------------------------------ <noscript>
def _thread(posts: int, words: int = 30) -> str:
    return "".join(f"<div class=post><p>{'reply text ' * words}{k}</p></div>" for k in range(posts))


def test_a_noscript_holding_the_page_text_is_read_as_an_element():
    # a script shell with a header line, the whole thread in <noscript> (as Discourse serves it)
    html = ("<body><header>Site name</header><div id=app></div><noscript>enable js</noscript>"
            f"<noscript data-path=/t/x/1><div id=main-outlet><h1>Topic</h1>{_thread(4)}</div>"
            "</noscript><noscript><img src=/pixel.gif></noscript></body>")
    paras = extract_paragraphs(html)
    assert [p.path for p in paras] == (["body>header", "body>noscript>div#main-outlet>h1"]
                                       + ["body>noscript>div#main-outlet>div.post>p"] * 4)
    assert paras[2].plain.startswith("reply text reply") and paras[-1].plain.endswith("text 3")
    assert not any("enable js" in p.text for p in paras)
    # n_tags: the noscript start tag and its parsed elements count as any others
    assert paras[1].n_tags == 5   # noscript (fallback), noscript, div, h1 ... + none more
    assert sum(p.n_tags for p in paras) == 1 + 1 + 1 + 1 + 1 + 1 + 1 + 4 * 2


def test_a_noscript_is_left_out_when_it_is_a_fallback_or_a_copy():
    pages = [
        # a fallback line on an empty script shell: no document
        "<body><div id=root></div><noscript>You need to enable JavaScript to run this app."
        "</noscript></body>",
        # the same text the body shows (a copy for readers without scripts)
        f"<body><article>{_thread(4)}</article><noscript>{_thread(4)}</noscript></body>",
        # long, but one paragraph
        f"<body><noscript><p>{'word ' * 400}</p></noscript></body>",
        # several paragraphs, but not three times the rest of the body
        f"<body><main>{_thread(3)}</main><noscript>{_thread(6)}</noscript></body>",
    ]
    for html in pages:
        assert not any("noscript" in p.path for p in extract_paragraphs(html)), html[:60]
    assert extract_paragraphs(pages[0]) == []


def test_noscript_text_stays_raw_text_in_head_and_in_noscript():
    # only body noscripts are read; a noscript in the noscript's own markup stays raw text
    inner = f"<noscript>{_thread(5)}</noscript>"
    html = (f"<html><head><noscript>{_thread(5)}</noscript></head>"
            f"<body><p>x</p><noscript>{_thread(4)}{inner}</noscript></body>")
    paths = [p.path for p in extract_paragraphs(html)]
    assert paths == ["body>p"] + ["body>noscript>div.post>p"] * 4


WCXB = Path(shared_data("gold", "wcxb_dev"))


@pytest.mark.shared_data("gold", "wcxb_dev")
def test_discourse_threads_of_the_wcxb_tuning_part_give_their_posts():
    from warclake.tasks.evaluation.gold import decode_page, read_gold

    threads = [p for p in read_gold(f"wcxb:{WCXB}", "tuning")
               if "/t/" in p.url and b"<noscript data-path" in p.html]
    assert len(threads) >= 10
    for page in threads:
        paras = extract_paragraphs(decode_page(page))
        inside = [p for p in paras if p.path.startswith("body>noscript>")]
        assert len(inside) >= 10, page.id
        # the posts are the text of the page: most of the gold's words are in them
        words = set(re.findall(r"\w+", page.gold.lower()))
        found = set(re.findall(r"\w+", " ".join(p.plain for p in inside).lower()))
        assert len(words & found) >= 0.8 * len(words), page.id

"""Tables as rows (the data contract's `text` section, sql/README.md): a row of two or more
simple cells is one paragraph, its cells' texts joined by " | ", its path the row's; a row
whose cells hold blocks of their own (a page laid out in a table) keeps one paragraph per
block. Both walks, compiled and Python, give the same paragraphs."""
from __future__ import annotations

import pytest

from warclake.tasks.extract import html_paragraphs as hp
from warclake.tasks.extract.paragraph import LINK_END, LINK_START

A, Z = LINK_START, LINK_END
TR = "body>table>tbody>tr"


def paras(html) -> list[tuple[str, str]]:
    out = hp.python_paragraphs(html)
    assert hp.extract_paragraphs(html) == out   # the compiled walk, when built, equals it
    return [(p.path, p.text) for p in out]


def test_a_data_table_gives_one_paragraph_per_row_header_row_included():
    html = ("<table class=prices><caption>Prices</caption><thead><tr><th>Item<th>Size<th>Cost</thead>"
            "<tbody><tr class=odd><td>Tea</td><td>0.3 l</td><td>3 <em>EUR</em></td></tr>"
            "<tr><td>Coffee<td>0.2 l<td>4 EUR</tbody></table>")
    assert paras(html) == [
        ("body>table.prices>caption", "Prices"),
        ("body>table.prices>thead>tr", "Item | Size | Cost"),
        ("body>table.prices>tbody>tr.odd", "Tea | 0.3 l | 3 EUR"),
        ("body>table.prices>tbody>tr", "Coffee | 0.2 l | 4 EUR"),
    ]


def test_empty_cells_are_left_out_and_a_row_of_them_gives_nothing():
    html = "<table><tr><td>a</td><td> </td><td></td><td>b</td></tr><tr><td></td><td><img src=x></td></tr></table>"
    assert paras(html) == [(TR, "a | b")]


def test_one_cell_rows_and_spanning_cells():
    # a row of one cell is not a data row: the cell is a block as any other
    html = "<table><tr><td colspan=2>Total</td></tr><tr><td colspan=2>12</td><td rowspan=3>x</td></tr></table>"
    assert paras(html) == [(f"{TR}>td", "Total"), (TR, "12 | x")]


def test_links_and_line_breaks_inside_cells():
    html = ("<table><tr><td><a href=/a> Alice </a><br>Smith</td><td>a<br>b<br>c</td>"
            "<td><a>anchor</a> <a href>x</a><a href=/e></a></td></tr></table>")
    # <br> in a row is a space: a row is one line; link markers stay balanced per cell
    assert paras(html) == [(TR, f"{A}Alice{Z} Smith | a b c | anchor {A}x{Z}")]


def test_a_link_around_the_table_is_closed_and_reopened_in_each_cell():
    html = "<a href=/t><table><tr><td>1</td><td>2 <b>b</b></td></tr></table></a>"
    assert paras(html) == [("body>a>table>tbody>tr", f"{A}1{Z} | {A}2 b{Z}")]


def test_a_layout_row_keeps_one_paragraph_per_block():
    html = ("<table><tr><td><ul><li>Home<li>About</ul></td>"
            "<td><h1>Title</h1><p>First paragraph.</p><p>Second.</p></td></tr></table>")
    assert paras(html) == [
        (f"{TR}>td>ul>li", "Home"), (f"{TR}>td>ul>li", "About"), (f"{TR}>td>h1", "Title"),
        (f"{TR}>td>p", "First paragraph."), (f"{TR}>td>p", "Second."),
    ]


@pytest.mark.parametrize("cell", [
    "<p>one</p><p>two</p>",          # two runs of text
    "x<div>y</div>",                 # text before a block is a run of its own
    "x<hr>y",
    "a<br> <br>b",                   # a blank line: paragraphs written with <br>
    "<pre>code</pre>",               # code keeps its lines
    "<table><tr><td>i</td><td>j</td></tr></table>",   # a nested table
    "w" * (hp.MAX_CELL_CHARS + 1),   # very long text
    "日" * (hp.MAX_CELL_CHARS // 2) + " \n " + "本" * (hp.MAX_CELL_CHARS // 2 + 1),
])
def test_a_cell_with_block_content_makes_its_row_a_layout_row(cell):
    out = paras(f"<table><tr><td>left</td><td>{cell}</td></tr></table>")
    assert (TR, f"left | {cell}") not in out
    assert out[0] == (f"{TR}>td", "left")


@pytest.mark.parametrize("cell, text", [
    ("<p>one</p>", "one"),                               # one block (Word's tables)
    ("<div><div><span>nested</span></div></div>", "nested"),   # wrappers around one run
    ("<div></div>x", "x"),
    ("x<hr>", "x"),
    ("<ul><li>one item</ul>", "one item"),
    ("a<br>b", "a b"),
    ("w" * hp.MAX_CELL_CHARS, "w" * hp.MAX_CELL_CHARS),
    ("<script>no</script>ok<noscript>no</noscript>", "ok"),
])
def test_a_simple_cell_keeps_its_row_a_data_row(cell, text):
    assert paras(f"<table><tr><td>left</td><td>{cell}</td></tr></table>") == [(TR, f"left | {text}")]


def test_nested_tables_the_inner_rows_are_rows_the_outer_a_layout_row():
    html = ("<table id=page><tr><td>menu</td><td><table class=spec><tr><th>CPU</th><td>4 cores</td></tr>"
            "<tr><th>RAM</th><td>8 GB</td></tr></table></td></tr></table>")
    inner = "body>table#page>tbody>tr>td>table.spec>tbody>tr"
    assert paras(html) == [("body>table#page>tbody>tr>td", "menu"), (inner, "CPU | 4 cores"), (inner, "RAM | 8 GB")]


def test_a_table_inside_a_list_item_and_text_around_it():
    html = "<ul><li>before<table><tr><td>1</td><td>2</td></tr></table>after</li></ul>"
    assert paras(html) == [("body>ul>li", "before"), ("body>ul>li>table>tbody>tr", "1 | 2"), ("body>ul>li", "after")]


def test_a_very_wide_row_is_one_paragraph():
    html = "<table><tr>" + "".join(f"<td>c{i}</td>" for i in range(500)) + "</tr></table>"
    ((path, text),) = paras(html)
    assert path == TR and text.split(" | ") == [f"c{i}" for i in range(500)]


def test_malformed_rows_as_the_parser_repairs_them():
    # unclosed cells and rows, stray text inside the table (moved before it by the parser)
    html = "<table>stray<tr><td>a<td>b<tr><td>c<td>d</table><p>after"
    assert paras(html) == [("body", "stray"), (TR, "a | b"), (TR, "c | d"), ("body>p", "after")]


def test_n_tags_of_a_row_counts_its_start_tags():
    # body+table+tbody+tr+td+td+b, then tr+td+td
    out = hp.python_paragraphs("<table><tr><td>a</td><td><b>b</b></td></tr><tr><td>c</td><td>d</td></tr></table>")
    assert [p.n_tags for p in out] == [7, 3]
    assert hp.extract_paragraphs("<table><tr><td>a</td><td><b>b</b></td></tr><tr><td>c</td><td>d</td></tr></table>") == out

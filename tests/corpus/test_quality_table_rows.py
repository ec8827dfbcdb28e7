"""The corpus rules on a page with a data table, as extraction writes it: a row is one
paragraph of one line (cells joined by " | "), judged as the line it is; a spec table beside
an article does not make the page a list, where a line per cell did."""
from warclake.tasks.corpus.signals.quality import document_metrics, document_metrics_reference, evaluate_rules
from warclake.tasks.extract import html_paragraphs as hp
from warclake.tasks.extract.paragraph import join_paragraphs
from warclake.tasks.sample_dump import SENTENCES

SPECS = [("Weight", "1.2 kg"), ("Battery", "10 hours"), ("Screen", "13 inch"), ("Ports", "3 USB-C"),
         ("Colour", "silver"), ("Warranty", "2 years"), ("Price", "999 EUR"), ("Memory", "16 GB"),
         ("Storage", "512 GB"), ("Keyboard", "backlit"), ("Camera", "1080p"), ("Weight (box)", "2 kg")]


def page() -> str:
    prose = "".join(f"<p>{s}</p>" for s in SENTENCES["en"])
    rows = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in SPECS)
    return f"<body><article><h1>A laptop reviewed</h1>{prose}<table>{rows}</table></article>"


def test_each_row_is_one_line_that_ends_no_sentence():
    paras = hp.extract_paragraphs(page())
    rows = [p for p in paras if p.tag == "tr"]
    assert [p.text for p in rows] == [f"{k} | {v}" for k, v in SPECS]
    m = document_metrics(join_paragraphs(paras), None, "en")
    assert m == document_metrics_reference(join_paragraphs(paras), None, "en")
    n_lines = len(paras)          # every paragraph here is one line
    ending = sum(p.text.endswith(".") for p in paras)
    assert m["terminal_punct_line_share"] == ending / n_lines
    assert m["short_line_share"] == sum(len(p.text) <= 30 for p in paras) / n_lines


def test_a_spec_table_beside_an_article_keeps_the_page():
    paras = hp.extract_paragraphs(page())
    assert evaluate_rules(document_metrics(join_paragraphs(paras), None, "en"), "en") == []
    # the same page with a line per cell: two short lines per row, and FineWeb's short-line
    # rule takes the article for a list
    cells = hp.python_paragraphs(page().replace("<tr>", "<tr><td><p>a</p><p>b</p></td>"))
    cells = [p for p in cells if p.text not in ("a", "b")]
    fired = [r.name for r, _, _ in evaluate_rules(document_metrics(join_paragraphs(cells), None, "en"), "en")]
    assert "fineweb_short_lines" in fired

from warclake.tasks.extract.paragraph import Paragraph, join_paragraphs, split_document


def test_join_and_split_round_trip():
    paras = [Paragraph("body>p", "Hello \x02world\x03"), Paragraph("body>div#x>h1", "Title")]
    text = join_paragraphs(paras)
    assert text == "body>p\x1cHello \x02world\x03\n\nbody>div#x>h1\x1cTitle"
    back = split_document(text)
    assert [(p.path, p.text) for p in back] == [(p.path, p.text) for p in paras]
    assert back[1].tag == "h1"
    assert paras[0].link_chars() == 5
    assert paras[0].plain == "Hello world"

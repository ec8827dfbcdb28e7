"""Gold readers, the split, the metrics (hand-computed values) and the eval command."""
import hashlib
from pathlib import Path

import pytest

from conftest import shared_data
from warclake.tasks.evaluation import gold as goldmod
from warclake.tasks.evaluation.gold import (
    parse_cleaneval_gold,
    read_cleaneval,
    read_folder,
    read_gold,
    split_of,
    unwrap_cleaneval_input,
)
from warclake.tasks.evaluation.metrics import edit_similarity, levenshtein, prf, token_counts

DATA = Path(shared_data("gold", "cleaneval"))


# ------------------------------------------------------------------ metrics
def test_levenshtein_hand_values():
    assert levenshtein(list("kitten"), list("sitting")) == 3
    assert levenshtein([], ["a", "b"]) == 2
    assert levenshtein(["a", "b", "c"], ["a", "b", "c"]) == 0
    assert levenshtein("the cat sat".split(), "the dog sat down".split()) == 2


def test_edit_similarity_is_one_minus_distance_over_longer_length():
    # gold 4 words, prediction 5 words, distance 2 (one substitution, one insertion)
    assert edit_similarity("a b c d", "a x c d e") == pytest.approx(1 - 2 / 5)
    assert edit_similarity("", "") == 1.0
    assert edit_similarity("a b", "") == 0.0


def test_token_counts_are_multiset_overlap_normalised_per_page():
    # gold tokens: a a b c ; predicted: a b b d -> tp = a + b = 2, fp = b + d = 2, fn = a + c = 2
    tp, fp, fn = token_counts("a a b c", "a b b d")
    assert (tp, fp, fn) == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    # punctuation is not a token; case matters as in the benchmark
    assert token_counts("Hello, world!", "Hello world") == (1.0, 0.0, 0.0)
    assert token_counts("Hello", "hello") == (0.0, 0.5, 0.5)


def test_shingles_of_four_tokens():
    # gold: 1 2 3 4 5 -> shingles (1234), (2345); pred: 1 2 3 4 -> (1234)
    tp, fp, fn = token_counts("1 2 3 4 5", "1 2 3 4", n=4)
    assert (tp, fp, fn) == pytest.approx((0.5, 0.0, 0.5))


def test_prf_macro_averages_pages_and_skips_empty_predictions_for_precision():
    pages = [
        (0.5, 0.25, 0.25),   # P = 2/3, R = 2/3
        (0.0, 0.0, 1.0),     # nothing predicted: no precision, recall 0
    ]
    m = prf(pages)
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["recall"] == pytest.approx((2 / 3 + 0) / 2)
    p, r = 2 / 3, 1 / 3
    assert m["f1"] == pytest.approx(2 * p * r / (p + r))


# ------------------------------------------------------------------ readers and split
def test_split_is_sha1_of_the_id_modulo_five():
    ids = [f"set/{i}" for i in range(1000)]
    held = [i for i in ids if split_of(i) == "heldout"]
    assert held == [i for i in ids if int(hashlib.sha1(i.encode()).hexdigest(), 16) % 5 == 0]
    assert 150 < len(held) < 250


def test_cleaneval_gold_markers_and_entities():
    url, text = parse_cleaneval_gold(
        "URL: http://x.org/a\n<h>A  title\n<p>First line\n wrapped &#8217;here&#8217;.\n"
        "<l>* item one\n<l>item two\n")
    assert url == "http://x.org/a"
    assert text.split("\n") == ["A title", "First line wrapped \u2019here\u2019.",
                                "* item one", "item two"]


def test_cleaneval_input_wrapper_is_removed():
    raw = b'<text id="http://x.org/" title="T > t" encoding="iso-8859-1">\n<html>x</html>\n</text>\n'
    body, attrs = unwrap_cleaneval_input(raw)
    assert body.strip() == b"<html>x</html>"
    assert attrs["id"] == "http://x.org/" and attrs["encoding"] == "iso-8859-1"


def _make_cleaneval(root: Path, name: str, pages: dict[str, tuple[bytes, str]]):
    (root / name / "input").mkdir(parents=True)
    (root / name / "GoldStandard").mkdir()
    for pid, (html, gold) in pages.items():
        (root / name / "input" / f"{pid}.html").write_bytes(html)
        if gold is not None:
            (root / name / "GoldStandard" / f"{pid}.txt").write_text(gold, "utf-8")


def test_read_cleaneval_pairs_files_prefixes_set_names_and_splits(tmp_path):
    page = b'<text id="http://a/" encoding="windows-1252"><p>Caf\xe9</p></text>'
    _make_cleaneval(tmp_path, "dev", {"1": (page, "URL: http://a/\n<p>Caf\u00e9\n"),
                                      "2": (b"<p>x</p>", None)})      # no gold: skipped
    _make_cleaneval(tmp_path, "final", {"1": (b"<p>y</p>", "<p>y\n")})
    pages = read_cleaneval(tmp_path)
    assert [p.id for p in pages] == ["dev/1", "final/1"]
    assert pages[0].url == "http://a/" and pages[0].gold == "Caf\u00e9"
    assert pages[0].content_type == "text/html; charset=windows-1252"
    assert "Caf\u00e9" in goldmod.decode_page(pages[0])      # decoded with the hint
    both = read_gold(f"cleaneval:{tmp_path / 'dev'},{tmp_path / 'final'}")
    assert [p.id for p in both] == ["dev/1", "final/1"]
    held = [p.id for p in pages if split_of(p.id) == "heldout"]
    assert [p.id for p in read_cleaneval(tmp_path, "heldout")] == held
    assert len(read_cleaneval(tmp_path, "tuning")) == 2 - len(held)


def test_read_folder_format(tmp_path):
    (tmp_path / "a.html").write_bytes("<p>Grüße</p>".encode())
    (tmp_path / "a.txt").write_text("Grüße\n\n  aus   Wien ", "utf-8")
    (tmp_path / "b.html").write_bytes(b"<p>no gold</p>")
    pages = read_folder(tmp_path)
    assert [p.id for p in pages] == ["a"]
    assert pages[0].gold == "Grüße\naus Wien"
    with pytest.raises(ValueError):
        read_gold(f"nope:{tmp_path}")


# ------------------------------------------------------------------ end to end
@pytest.mark.shared_data("gold", "cleaneval", "cleaneval-dev")
def test_eval_command_on_real_cleaneval_pages(tmp_path, capsys):
    from warclake.cli.main import main

    out = tmp_path / "r.md"
    rc = main(["eval", "--gold", f"cleaneval:{DATA / 'cleaneval-dev'}@all", "--limit", "6", "--quiet",
               "--extractor", "none", "--extractor", "justext", "--extractor", "bte",
               "--extractor", "density", "--extractor", "sieve", "--markdown", str(out)])
    assert rc == 0
    table = out.read_text()
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in table.splitlines() if line.startswith("| ") and "---" not in line}
    assert set(rows) >= {"none", "justext", "bte", "density", "sieve"}
    f1 = {k: float(v[0]) for k, v in rows.items() if k != "extractor"}
    prec = {k: float(v[1]) for k, v in rows.items() if k != "extractor"}
    rec = {k: float(v[2]) for k, v in rows.items() if k != "extractor"}
    # keeping everything finds (nearly) all gold tokens but is the least precise
    assert rec["none"] >= max(rec.values()) - 1e-9
    assert prec["none"] <= min(prec.values()) + 1e-9
    # the learned model removes boilerplate without losing most of the text
    assert prec["sieve"] > prec["none"] and f1["sieve"] > 0.8
    assert "6 pages" in table


@pytest.mark.shared_data("gold", "cleaneval", "cleaneval-dev")
def test_cleaneval_split_of_the_real_data_is_about_one_in_five():
    pages = read_gold(f"cleaneval:{DATA / 'cleaneval-dev'},{DATA / 'cleaneval-final'}")
    held = [p for p in pages if split_of(p.id) == "heldout"]
    assert len(pages) == 739
    assert 0.15 < len(held) / len(pages) < 0.25


def test_cjk_characters_are_tokens_of_their_own():
    # "日本語" is three tokens; a Latin word stays one
    assert token_counts("日本語 text", "日本 text") == pytest.approx((3 / 4, 0.0, 1 / 4))
    assert edit_similarity("今日は晴れ", "今日は雨") == pytest.approx(1 - 2 / 5)


def test_read_readability_format(tmp_path):
    case = tmp_path / "test" / "test-pages" / "case-1"
    case.mkdir(parents=True)
    (case / "source.html").write_text("<html><body><p>One</p><p>Two</p><nav>x</nav></body></html>")
    (case / "expected.html").write_text("<div><p>One</p><p>Two <b>bold</b></p></div>")
    pages = read_gold(f"readability:{tmp_path}")
    assert [p.id for p in pages] == ["case-1"]
    assert pages[0].gold == "One\nTwo bold"


def test_eval_command_rejects_unknown_extractor_and_bad_gold(tmp_path, capsys):
    from warclake.cli.evaluate import main

    (tmp_path / "a.html").write_bytes(b"<p>x</p>")
    (tmp_path / "a.txt").write_text("x")
    assert main(["--gold", f"folder:{tmp_path}", "--extractor", "nope"]) == 2
    assert "nope" in capsys.readouterr().err
    assert main(["--gold", f"cleaneval:{tmp_path / 'missing'}"]) == 2
    assert main(["--gold", "nonsense"]) == 2


def test_read_wceb_format(tmp_path):
    import gzip
    import json

    truth, html = tmp_path / "benchmark" / "ground-truth", tmp_path / "release" / "html"
    truth.mkdir(parents=True)
    html.mkdir(parents=True)
    for fid in ("0001", "0002", "0003"):
        (truth / f"{fid}.json").write_text(json.dumps({
            "url": f"https://x.example/{fid}", "file_id": fid,
            "ground_truth": {"title": "T", "main_content": "First  paragraph &amp; more.\n\nSecond one."}}))
    for fid in ("0001", "0002"):  # 0003 has no page: skipped
        (html / f"{fid}.html.gz").write_bytes(gzip.compress(f"<p>page {fid}</p>".encode()))
    pages = read_gold(f"wceb:{tmp_path}")
    assert [p.id for p in pages] == ["wceb/0001", "wceb/0002"]
    assert pages[0].html == b"<p>page 0001</p>" and pages[0].url == "https://x.example/0001"
    assert pages[0].gold == "First paragraph & more.\nSecond one."
    split = {p.id: split_of(p.id) for p in pages}
    assert [p.id for p in read_gold(f"wceb:{tmp_path}", "heldout")] == [i for i, s in split.items() if s == "heldout"]
    with pytest.raises(FileNotFoundError):
        read_gold(f"wceb:{tmp_path / 'nope'}")


@pytest.mark.shared_data("gold", "wceb_modern_1000")
def test_wceb_split_of_the_real_data_is_about_one_in_five():
    pages = read_gold(f"wceb:{DATA.parent / 'wceb_modern_1000'}")
    held = [p for p in pages if split_of(p.id) == "heldout"]
    assert len(pages) >= 999 and all(p.gold for p in pages)
    assert 0.15 < len(held) / len(pages) < 0.25


def test_eval_table_always_has_the_none_baseline_and_precision_recall_beside_each_f1(tmp_path):
    from warclake.cli.evaluate import main

    (tmp_path / "a.html").write_bytes(
        b"<html><body><ul><li><a href='/'>Home</a></li><li><a href='/n'>News</a></li></ul>"
        b"<p>The article says many things about the river and the town in the valley.</p>"
        b"</body></html>")
    (tmp_path / "a.txt").write_text("The article says many things about the river and the town in the valley.")
    out = tmp_path / "r.md"
    assert main(["--gold", f"folder:{tmp_path}@all", "--extractor", "justext", "--quiet",
                 "--markdown", str(out)]) == 0
    lines = [ln for ln in out.read_text().splitlines() if ln.startswith("| ")]
    head = [c.strip() for c in lines[0].split("|")[1:-1]]
    assert head[1:7] == ["F1", "precision", "recall", "F1 shingle-4", "precision shingle-4",
                         "recall shingle-4"]
    rows = {ln.split("|")[1].strip(): [float(c) for c in ln.split("|")[2:8]] for ln in lines[1:]}
    assert list(rows) == ["none", "justext"]
    # keeping everything: every gold token found, the navigation words are false positives
    assert rows["none"][2] == 1.0 and rows["none"][1] < 1.0
    for f1, p, r in (rows["none"][0:3], rows["none"][3:6]):
        assert f1 == pytest.approx(2 * p * r / (p + r), abs=2e-3)


# ------------------------------------------------------------------ Dragnet
def test_dragnet_comments_separator_and_its_hand_typed_variants():
    from warclake.tasks.evaluation.dragnet import is_separator, main_content

    for line in ("!@#$%^&*()  COMMENTS", "!@ $%^&*()  COMMENTS", "  #$%^&*()  COMMENTS",
                 "!@#$%^&*   COMMENTS", "!@#$%^&*()  \tCOMMENTS"):
        assert is_separator(line), line
    assert not is_separator("COMMENTS are closed")
    assert not is_separator("Reader COMMENTS (3) & more!")
    assert main_content("Body one\nBody two\n!@#$%^&*() COMMENTS\nnice post") == "Body one\nBody two"
    assert main_content("no comments here") == "no comments here"


def test_read_dragnet_format_drops_comments_and_splits_by_site(tmp_path):
    from warclake.tasks.evaluation.dragnet import split_of_site

    (tmp_path / "input").mkdir()
    (tmp_path / "GoldStandard").mkdir()
    sites = {}
    for i in range(1, 41):   # 40 pages on 8 sites, the site named in different places
        site = f"site{i % 8}.co.uk"
        head = (f'<link rel="canonical" href="http://www.{site}/a/{i}">' if i % 3 == 0 else
                f'<meta property="og:url" content="https://blog.{site}/{i}"/>' if i % 3 == 1 else
                "")
        links = "".join(f'<a href="http://{site}/p{k}">p</a>' for k in range(3))
        links += '<a href="http://www.facebook.com/share">f</a>' * 5
        (tmp_path / "input" / f"{i}.html").write_bytes(
            f"<html><head>{head}</head><body>{links}<p>Text {i}</p></body></html>".encode())
        (tmp_path / "GoldStandard" / f"{i}.txt").write_bytes(
            f"Text {i} caf\xe9\n!@#$%^&*()  COMMENTS\nfirst!".encode("cp1252"))
        sites[f"dragnet/{i}"] = site
    pages = read_gold(f"dragnet:{tmp_path}")
    assert [p.id for p in pages][:3] == ["dragnet/1", "dragnet/2", "dragnet/3"]
    assert {p.id: p.url for p in pages} == sites     # the site comes from the page itself
    assert pages[0].gold == "Text 1 café"
    assert read_gold(f"dragnet-comments:{tmp_path}")[0].gold == "Text 1 café\nfirst!"
    held = {p.id for p in read_gold(f"dragnet:{tmp_path}", "heldout")}
    tuning = {p.id for p in read_gold(f"dragnet:{tmp_path}", "tuning")}
    assert held | tuning == set(sites) and not held & tuning
    for pid, site in sites.items():   # one site, one side
        assert (pid in held) == (split_of_site(site, pid) == "heldout")


@pytest.mark.shared_data("gold", "dragnet")
def test_dragnet_split_of_the_real_data_keeps_each_site_on_one_side():
    pages = read_gold(f"dragnet:{DATA.parent / 'dragnet'}")
    held = {p.id for p in read_gold(f"dragnet:{DATA.parent / 'dragnet'}", "heldout")}
    assert len(pages) == 1381
    assert sum(1 for p in pages if p.url) / len(pages) > 0.98   # a site for nearly every page
    side = {}
    for p in pages:
        if p.url:
            assert side.setdefault(p.url, p.id in held) == (p.id in held), p.url
    assert 0.15 < len(held) / len(pages) < 0.25
    assert len({p.url for p in pages if p.id in held}) > 60    # many sites, not a few big ones
    # the comments are left out of the main content
    assert not any("COMMENTS" in p.gold and "^&*" in p.gold for p in pages)


# ------------------------------------------------------------------ WCXB
def test_word_prf_is_wcxb_lowercased_word_bag_per_page():
    from warclake.tasks.evaluation.metrics import word_prf

    # gold words: the cat sat on the mat (6); predicted: The cat, the dog! (4)
    # overlap as multisets: the x2, cat -> 3; P = 3/4, R = 3/6, F1 = 2PR/(P+R) = 0.6
    p, r, f = word_prf("The cat sat on the mat.", "The cat, the dog!")
    assert (p, r, f) == pytest.approx((0.75, 0.5, 0.6))
    assert word_prf("Hello", "hello") == (1.0, 1.0, 1.0)       # case does not matter
    assert word_prf("a b", "") == (0.0, 0.0, 0.0)              # nothing predicted
    assert word_prf("", "") == (1.0, 1.0, 1.0)


def _make_wcxb(root: Path, pages: dict, same: dict):
    import gzip
    import json

    dev, wceb = root / "wcxb_dev", root / "wceb_modern_1000" / "release" / "html"
    (dev / "ground-truth").mkdir(parents=True)
    (dev / "html").mkdir()
    wceb.mkdir(parents=True)
    for fid, (url, kind, text) in pages.items():
        (dev / "ground-truth" / f"{fid}.json").write_text(json.dumps({
            "url": url, "_internal": {"page_type": {"primary": kind}},
            "ground_truth": {"main_content": text}}))
        target = wceb / f"{same[fid]}.html.gz" if fid in same else dev / "html" / f"{fid}.html.gz"
        target.write_bytes(gzip.compress(f"<p>{text}</p>".encode()))
    (dev / "same_html.json").write_text(json.dumps(same))
    return dev


def test_read_wcxb_keeps_the_wceb_side_and_splits_new_pages_by_site(tmp_path):
    # wceb ids on each side of the wceb split
    held_w = [i for i in (f"{n:04d}" for n in range(1, 200)) if split_of(f"wceb/{i}") == "heldout"]
    tune_w = [i for i in (f"{n:04d}" for n in range(1, 200)) if split_of(f"wceb/{i}") == "tuning"]
    pages, same = {}, {}
    for k in range(60):   # 60 new pages on 20 sites
        pages[f"n{k:03d}"] = (f"https://www{k % 2}.site{k % 20}.co.uk/p/{k}", "forum", f"text {k}")
    pages["w1"], same["w1"] = ("https://a-example.org/1", "category", "one"), held_w[0]
    pages["w2"], same["w2"] = ("https://b-example.org/2", "article", "two"), tune_w[0]
    pages["na"] = ("https://shop.a-example.org/x", "product", "new on a")   # site a: held back
    pages["nb"] = ("https://b-example.org/y", "product", "new on b")        # site b: tuning
    dev = _make_wcxb(tmp_path, pages, same)
    every = {p.id: p for p in read_gold(f"wcxb:{dev}")}
    assert len(every) == len(pages)
    assert every["wcxb/w1"].page_type == "collection" and every["wcxb/n000"].page_type == "forum"
    assert every["wcxb/w1"].html == b"<p>one</p>"        # read from the wceb set's file
    held = {p.id for p in read_gold(f"wcxb:{dev}", "heldout")}
    tuning = {p.id for p in read_gold(f"wcxb:{dev}", "tuning")}
    assert held | tuning == set(every) and not held & tuning
    assert {"wcxb/w1", "wcxb/na"} <= held and {"wcxb/w2", "wcxb/nb"} <= tuning
    side = {}
    for k in range(60):   # one site, one side, and both sides used
        side.setdefault(k % 20, set()).add(f"wcxb/n{k:03d}" in held)
    assert all(len(s) == 1 for s in side.values()) and {True, False} == set().union(*side.values())


WCXB = Path(shared_data("gold", "wcxb_dev"))


@pytest.mark.shared_data("gold", "wcxb_dev")
def test_wcxb_split_of_the_real_data_follows_wceb_and_sites():
    pages = read_gold(f"wcxb:{WCXB}")
    held = {p.id for p in read_gold(f"wcxb:{WCXB}", "heldout")}
    # two truths are snippets only (no main text): left out; 19 script-built pages have an
    # empty main text (the right output is none)
    assert len(pages) == 1495 and all(p.page_type for p in pages)
    assert sum(1 for p in pages if not p.gold) == 19
    assert 0.15 < len(held) / len(pages) < 0.25
    import json
    same = json.loads((WCXB / "same_html.json").read_text())
    for fid, wid in same.items():
        assert (f"wcxb/{fid}" in held) == (split_of(f"wceb/{wid}") == "heldout")
    types = {p.page_type for p in pages if p.id in held}
    assert types == {"article", "forum", "product", "collection", "listing", "documentation",
                     "service"}


@pytest.mark.shared_data("gold", "wcxb_dev")
def test_eval_command_on_real_wcxb_pages_gives_the_per_type_table(tmp_path):
    from warclake.cli.main import main
    from warclake.tasks.evaluation.metrics import word_prf
    from warclake.tasks.evaluation.runner import evaluate

    # two pages of each of three types from the held-back part
    chosen = {}
    for p in read_gold(f"wcxb:{WCXB}", "heldout"):
        if p.page_type in ("article", "forum", "documentation"):
            chosen.setdefault(p.page_type, []).append(p.id.split("/")[1])
    only = [i for ids in chosen.values() for i in ids[:2]]
    out = tmp_path / "r.md"
    assert main(["eval", "--gold", f"wcxb:{WCXB}", "--only", ",".join(only), "--quiet",
                 "--extractor", "sieve", "--markdown", str(out)]) == 0
    text = out.read_text()
    assert "6 pages" in text and "Page F1 by page type" in text
    lines = [ln for ln in text.split("Page F1 by page type")[1].splitlines() if ln.startswith("| ")]
    head = [c.strip() for c in lines[0].split("|")[1:-1]]
    assert head[:3] == ["extractor", "page F1", "F1 shingle-4"]
    assert head[3:6] == ["article (2)", "forum (2)", "documentation (2)"]
    rows = {ln.split("|")[1].strip(): [c.strip() for c in ln.split("|")[2:-1]] for ln in lines[1:]}
    assert set(rows) == {"none", "sieve"}
    # the table's numbers are the per-page metric averaged within each type
    pages = [p for p in read_gold(f"wcxb:{WCXB}") if p.id.split("/")[1] in only]
    outputs = {}
    (none, sieve) = evaluate(pages, ["none", "sieve"], outputs=outputs)
    for name, res in (("none", none), ("sieve", sieve)):
        per_type = {}
        for p in pages:
            per_type.setdefault(p.page_type, []).append(word_prf(p.gold, outputs[(name, p.id)])[2])
        expect = [sum(v) / len(v) for v in (per_type["article"], per_type["forum"],
                                              per_type["documentation"])]
        assert [float(c) for c in rows[name][2:5]] == pytest.approx(expect, abs=6e-4)
        assert float(rows[name][0]) == pytest.approx(sum(sum(per_type.values(), [])) / 6, abs=6e-4)
    assert float(rows["sieve"][0]) > float(rows["none"][0])      # boilerplate removal helps

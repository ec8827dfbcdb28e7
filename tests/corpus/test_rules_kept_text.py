"""The quality rules judge the text the corpus emits: good paragraphs (all without labels),
less those repeated-text removal drops; ``judge_whole_pages`` judges whole pages."""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import duckdb

from support.corpus_lake import doc_id, page, sentence, write_archive
from support.corpus_runs import DUMP, decisions
from warclake.tasks.corpus.checks import check_inputs, dumps_to_process
from warclake.tasks.corpus.settings import SignatureConfig
from warclake.tasks.corpus.signals.quality import document_metrics, evaluate_rules, kept_metrics, kept_text
from warclake.tasks.corpus.stage import StageOptions, finish

NAV = "body>header>div.site-nav>ul>li"


def fired(metrics, lang="en"):
    return {r.name for r, _, _ in evaluate_rules(metrics, lang)}


def news_page(rng):
    """An article (good) inside a template whose navigation holds placeholders in braces
    and repeats itself (bad), as the issue's clean news pages do."""
    paras = [(NAV, "Share this story on {{::display_hashtag}} with the whole world now.", "bad"),
             (NAV, "Sign in to your account {* loginWidget *} to read the rest.", "bad"),
             *[(NAV, "Home", "bad"), (NAV, "News", "bad")] * 3]
    paras += [("body>main>article>p", sentence(rng), "good") for _ in range(4)]
    return page(paras)


def test_boilerplate_costs_a_page_nothing_when_the_kept_text_is_judged():
    text, labels = news_page(random.Random(1))
    whole = fired(document_metrics(text, labels, "en"))
    assert {"c4_curly_bracket", "gopher_dup_lines", "gopher_dup_paragraphs"} <= whole
    assert fired(kept_metrics(text, labels, "en")) == set()
    # without labels every paragraph is kept: the page is judged whole
    assert kept_metrics(text, None, "en") == document_metrics(text, None, "en")
    # the kept text is what the corpus view emits: good paragraphs less the dropped ones
    assert kept_text(text, labels, {9}).count("\n\n") == 2    # paragraph 9, the first of the article


def run(lake):
    dumps = dumps_to_process(lake, None)
    return finish(lake, dumps, check_inputs(lake, dumps), StageOptions(sig=SignatureConfig()), report=False)


def test_a_document_cut_by_repeated_text_removal_is_judged_on_what_is_left(tmp_path):
    """A good paragraph on 12 pages of a site is its template and goes; the page whose own
    text is short without it then fails the minimum words, measured again in the decision
    step for exactly the pages that lost a kept paragraph."""
    rng = random.Random(3)
    promo = ("Our newsletter brings the best stories of the week to your inbox every Friday morning. "
             "It is free and it always will be for our readers. You can leave it whenever you like "
             "with one click at the end of any letter. We never share your address with anyone, "
             "and we send nothing else to it.")
    docs = []
    for i in range(12):
        own = [("body>main>article>p", sentence(rng), "good") for _ in range(3 if i else 1)]
        if i == 0:
            own = [("body>main>article>p", "The council met on Monday and the meeting was short.", "good")]
        text, labels = page([(NAV, "Home About Contact", "bad")] + own
                            + [("body>main>article>aside.promo", promo, "good")])
        docs.append({"docId": doc_id(DUMP, f"p{i}"), "url": f"https://news.example.com/{i}", "text": text,
                     "labels": labels})
    short = docs[0]["docId"]
    lake = str(tmp_path / "lake")
    write_archive(lake, DUMP, "arch-00000.warc.gz", docs)
    whole = str(tmp_path / "whole")
    write_archive(whole, DUMP, "arch-00000.warc.gz", docs)

    run(lake)
    dec = decisions(lake)
    assert dec[short]["rule"] == "gopher_min_words" and not dec[short]["kept"]
    assert dec[short]["value"] == len(kept_text(docs[0]["text"], docs[0]["labels"], {3}).split("\x1c")[-1].split())
    assert all(dec[d["docId"]]["kept"] for d in docs[1:])
    state = json.load(open(f"{lake}/corpus/state/doc_decisions/dump={DUMP}/decisions.json"))
    assert state["remeasured"] == 12    # every page lost the promotion, and no other page was read
    # the corpus view emits none of it: the same words the rule counted
    con = duckdb.connect()
    con.execute(f"""CREATE TABLE d AS SELECT * FROM read_parquet('{lake}/corpus/decisions/paragraphs/*/*.parquet')""")
    assert con.execute("SELECT count(DISTINCT docId), min(rule) FROM d").fetchone() == (12, "site_template")

    # judged as whole pages (the command line's option), the short page keeps its
    # promotion's words and stays
    done = subprocess.run([sys.executable, "-m", "warclake", "corpus", "--lake", whole, "--judge-whole-pages",
                           "--no-report", "-q"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    dec_whole = decisions(whole)
    assert dec_whole[short]["kept"]
    assert json.load(open(f"{whole}/corpus/state/doc_decisions/dump={DUMP}/decisions.json"))["remeasured"] == 0


def test_a_paragraph_repeated_in_its_own_document_is_emitted_once_and_judged_so(tmp_path):
    """A page that holds its article twice (a mobile and a desktop copy), each copy labelled
    good, fails Gopher's repeated n-grams as it is; the corpus drops the
    second copy (``repeated_in_document``), so the page is judged, and emitted, with each
    text once. A paragraph labelled bad, or one whose copies differ, is left alone."""
    rng = random.Random(5)
    article = [sentence(rng) for _ in range(5)]
    paras = ([("body>div.mobile>p", s, "good") for s in article] + [(NAV, "Home", "bad"), (NAV, "Home", "bad")]
             + [("body>div.desktop>p", s.upper(), "good") for s in article]       # equal once normalised
             + [("body>div.desktop>p", article[0].split(".")[0] + ", again.", "good")])
    text, labels = page(paras)
    docs = [{"docId": doc_id(DUMP, "twice"), "url": "https://news.example.com/twice", "text": text, "labels": labels}]
    assert {"gopher_dup_5gram", "gopher_dup_10gram"} <= fired(kept_metrics(text, labels, "en"))
    lake = str(tmp_path / "lake")
    write_archive(lake, DUMP, "arch-00000.warc.gz", docs)
    run(lake)
    con = duckdb.connect()
    rows = con.execute(f"""SELECT idx, rule, value, threshold FROM
        read_parquet('{lake}/corpus/decisions/paragraphs/*/*.parquet') ORDER BY idx""").fetchall()
    assert rows == [(i, "repeated_in_document", 2.0, 2.0) for i in range(8, 13)]
    from warclake.tasks.corpus.steps.decide import repeated_in_document
    assert repeated_in_document(text, labels) == {8, 9, 10, 11, 12}
    dec = decisions(lake)[docs[0]["docId"]]
    assert dec["kept"], dec["rules"]
    state = json.load(open(f"{lake}/corpus/state/doc_decisions/dump={DUMP}/decisions.json"))
    assert state["remeasured"] == 1


def test_keep_repeats_in_document_keeps_a_pages_copies_and_judges_them(tmp_path):
    """``--keep-repeats-in-document`` switches the rule off: the page that holds its article
    twice keeps both copies, so nothing of it is dropped as repeated and Gopher's repeated
    n-grams judge it with them; only the decisions are redone, the signatures stay."""
    rng = random.Random(5)
    article = [sentence(rng) for _ in range(5)]
    text, labels = page([("body>div.mobile>p", s, "good") for s in article]
                        + [("body>div.desktop>p", s, "good") for s in article])
    doc = doc_id(DUMP, "twice")
    lake = str(tmp_path / "lake")
    write_archive(lake, DUMP, "arch-00000.warc.gz", [{"docId": doc, "url": "https://news.example.com/twice",
                                                      "text": text, "labels": labels}])
    run(lake)
    assert decisions(lake)[doc]["kept"]
    signed = f"{lake}/corpus/state/signatures/dump={DUMP}"
    before = {p.name: p.stat().st_mtime_ns for p in Path(signed).iterdir()}
    assert before
    done = subprocess.run([sys.executable, "-m", "warclake", "corpus", "--lake", lake, "--keep-repeats-in-document",
                           "--no-report", "-q"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    dec = decisions(lake)[doc]
    assert not dec["kept"] and dec["rule"].startswith("gopher_dup_"), dec
    con = duckdb.connect()
    assert con.execute(f"""SELECT count(*) FROM
        read_parquet('{lake}/corpus/decisions/paragraphs/*/*.parquet')""").fetchone() == (0,)
    assert {p.name: p.stat().st_mtime_ns for p in Path(signed).iterdir()} == before


def test_keep_repeats_in_document_reaches_the_corpus_stage_after_a_run():
    """``warclake run --corpus --keep-repeats-in-document`` hands the setting to the corpus
    flow's parameters (what a deployment stores) and back."""
    from warclake.cli.corpus import stage_options
    from warclake.cli.main import build_parser
    from warclake.flows.corpus_flow import flow_parameters, options_of

    def decide(*extra):
        args = build_parser().parse_args(["run", "--corpus", *extra, "--dump", DUMP, "--lake", "L", "x.warc.gz"])
        return options_of(**flow_parameters(stage_options(args))).decide

    assert decide("--keep-repeats-in-document").keep_repeats_in_document is True
    assert decide().keep_repeats_in_document is False

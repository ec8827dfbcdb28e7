"""Pairs confirmed on distinctive paragraphs: an article under another site's template,
whose template the boilerplate labels took for content, is found; pages of one site sharing
only their template are not; within a dump and against an earlier one."""
from __future__ import annotations

import glob
import os
import random
from datetime import timedelta

import pyarrow.parquet as pq

from support.corpus_lake import T0, doc_id, page, write_archive
from warclake.tasks.corpus.checks import check_inputs, dumps_to_process
from warclake.tasks.corpus.settings import DecisionConfig
from warclake.tasks.corpus.stage import StageOptions, finish
from warclake.tasks.lake.catalog import connect_catalog

D1, D2 = "CC-MAIN-2024-18", "CC-MAIN-2024-22"


def prose(rng, words: int = 40) -> str:
    """Words of random letters among common stop words (as quality rules expect): unrelated
    paragraphs share few character 5-grams."""
    out = []
    for i in range(words):
        out.append(rng.choice(("the", "and", "of", "to", "with", "that")) if i % 3 == 1 else
                   "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))))
        if i % 10 == 9:
            out[-1] += "."
    return " ".join(out).capitalize()


def site_pages(rng, host: str, n: int, dump: str) -> tuple[list, list[dict]]:
    """A site's template (five long paragraphs, all labelled good: teasers and calls to
    action the model cannot tell from content) and ``n`` pages of it, each with its own
    three-paragraph article."""
    header = [("body>div.teaser>p", prose(rng), "good") for _ in range(3)]
    footer = [("body>div.more>p", prose(rng), "good") for _ in range(2)]
    pages = []
    for i in range(n):
        body = [("body>article>p", prose(rng), "good") for _ in range(3)]
        text, labels = page(header + body + footer)
        pages.append({"docId": doc_id(dump, f"{host}-{i}"), "url": f"https://{host}/post/{i}", "text": text,
                      "labels": labels, "date": T0 + timedelta(days=i), "body": body})
    return (header, footer), pages


def syndicated(dump: str, original: dict, template) -> dict:
    """The original's article under another site's template, on a third site."""
    header, footer = template
    text, labels = page(header + original["body"] + footer)
    return {"docId": doc_id(dump, "syndicated"), "url": "https://news.example.net/story", "text": text,
            "labels": labels, "date": T0 + timedelta(days=40)}


def run(lake: str, **decide) -> None:
    dumps = dumps_to_process(lake, None)
    finish(lake, dumps, check_inputs(lake, dumps), StageOptions(decide=DecisionConfig(**decide)), report=False)


def decisions(lake: str, dump: str) -> dict[str, dict]:
    t = pq.read_table(os.path.join(lake, "corpus", "decisions", "documents", f"dump={dump}", "decisions.parquet"))
    return {r["docId"]: r for r in t.to_pylist()}


def minhash_estimate(lake: str, dump: str, a: str, b: str) -> float:
    """The MinHash pair's estimated Jaccard (0 when LSH did not make them candidates)."""
    for f in glob.glob(os.path.join(lake, "corpus", "pairs", f"dump={dump}", "*.parquet")):
        for r in pq.read_table(f).to_pylist():
            if {r["a"], r["b"]} == {a, b}:
                return r["jaccard"]
    return 0.0


def two_sites(dump: str):
    rng = random.Random(11)
    _, a_pages = site_pages(rng, "a.example.com", 4, dump)
    b_template, b_pages = site_pages(rng, "b.example.org", 4, dump)
    return a_pages, b_template, b_pages


def test_article_under_another_template_is_a_duplicate_and_same_site_pages_are_not(tmp_path):
    lake = str(tmp_path / "lake")
    a_pages, b_template, b_pages = two_sites(D1)
    copy = syndicated(D1, a_pages[0], b_template)
    write_archive(lake, D1, "arch-0.warc.gz", a_pages + b_pages + [copy])
    run(lake)
    dec = decisions(lake, D1)
    sim = DecisionConfig().similarity
    orig = a_pages[0]["docId"]
    # the page alone cannot tell: the MinHash of the compared text is far under the threshold
    assert minhash_estimate(lake, D1, orig, copy["docId"]) < sim - 0.2
    assert dec[orig]["cluster_id"] == dec[copy["docId"]]["cluster_id"] == min(orig, copy["docId"])
    assert dec[orig]["cluster_size"] == 2
    lost = dec[copy["docId"]] if dec[orig]["survivor"] else dec[orig]
    assert not lost["kept"], lost["rules"]
    assert {"rule": "near_duplicate", "value": 1.0, "threshold": sim} in lost["rules"]
    # pages of one site share five paragraphs of template and nothing else: all kept, alone
    for p in a_pages[1:] + b_pages:
        assert dec[p["docId"]]["kept"] and dec[p["docId"]]["cluster_size"] == 1, p["url"]
    # the pair's measure is stored: a threshold of 1.0 still joins them (identical article),
    # and the step reads nothing but the stored pairs
    pp = pq.read_table(os.path.join(lake, "corpus", "para_pairs", f"dump={D1}", "para_pairs.parquet")).to_pylist()
    assert {(r["a"], r["b"]): r["para_jaccard"] for r in pp}[tuple(sorted((orig, copy["docId"])))] == 1.0
    assert all(r["para_jaccard"] < 0.3 for r in pp if {r["a"], r["b"]} != {orig, copy["docId"]})
    # an analyst sees the same pair and its measure through the catalogue
    con = connect_catalog(lake)
    assert con.execute("SELECT para_jaccard FROM distinctive_paragraph_pairs WHERE a = ? AND b = ?",
                       sorted((orig, copy["docId"]))).fetchall() == [(1.0,)]


def test_article_under_another_template_in_a_later_dump_keeps_the_earlier_id(tmp_path):
    lake = str(tmp_path / "lake")
    a_pages, b_template, b_pages = two_sites(D1)
    write_archive(lake, D1, "arch-0.warc.gz", a_pages + b_pages)
    copy = syndicated(D2, a_pages[0], b_template)
    # the later dump: the copy and two more pages of site B (its template again)
    rng = random.Random(5)
    more = []
    for i in range(2):
        header, footer = b_template
        body = [("body>article>p", prose(rng), "good") for _ in range(3)]
        text, labels = page(list(header) + body + list(footer))
        more.append({"docId": doc_id(D2, f"b-more-{i}"), "url": f"https://b.example.org/new/{i}", "text": text,
                     "labels": labels})
    write_archive(lake, D2, "arch-0.warc.gz", [copy] + more)
    run(lake)
    first, later = decisions(lake, D1), decisions(lake, D2)
    assert all(r["kept"] for r in first.values())
    c = later[copy["docId"]]
    assert not c["kept"] and c["rule"] == "near_duplicate_earlier_dump", c["rules"]
    assert c["duplicate_of"] == a_pages[0]["docId"]
    assert all(later[m["docId"]]["kept"] and later[m["docId"]]["cluster_size"] == 1 for m in more)


def test_pairs_and_decisions_do_not_depend_on_the_order_of_documents(tmp_path):
    a_pages, b_template, b_pages = two_sites(D1)
    docs = a_pages + b_pages + [syndicated(D1, a_pages[0], b_template)]
    out = []
    for name, order in (("x", docs), ("y", docs[::-1])):
        lake = str(tmp_path / name)
        write_archive(lake, D1, "arch-0.warc.gz", order[:5])
        write_archive(lake, D1, "arch-1.warc.gz", order[5:])
        run(lake)
        pairs = open(os.path.join(lake, "corpus", "para_pairs", f"dump={D1}", "para_pairs.parquet"), "rb").read()
        # the run id names the input files (other archives here), the rest must agree
        dec = sorted((r["docId"], r["kept"], r["rule"], r["value"], r["cluster_id"], r["survivor"])
                     for r in decisions(lake, D1).values())
        out.append((pairs, dec))
    assert out[0] == out[1]

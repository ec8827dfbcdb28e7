"""Near-duplicate paragraph groups: a template line that changes with the page's date and
a licence line whose version differs from site to site are one text each to the
repeated-text rules, across dumps too; the bounded SimHash search finds every pair
within 3 bits and none further."""
from __future__ import annotations

import glob
import os
import random

import numpy as np
import pyarrow.parquet as pq
import pytest

from support.corpus_lake import T0, doc_id, page, sentence, write_archive
from warclake.tasks.corpus.checks import check_inputs, dumps_to_process
from warclake.tasks.corpus.settings import DecisionConfig
from warclake.tasks.corpus.signals.normalise import normalise
from warclake.tasks.corpus.signals.signatures import text_hashes
from warclake.tasks.corpus.stage import StageOptions, finish
from warclake.tasks.corpus.steps.para_groups import KEY_BLOCKS, MAX_BITS, near_pairs
from warclake.tasks.lake.catalog import connect_catalog

D1, D2 = "CC-MAIN-2024-18", "CC-MAIN-2024-22"
REVIEWED = ("This page was last reviewed on {} by the editorial team of the Northfield Gazette, who check "
            "every article for accuracy, balance and clarity before it is published on the website.")
LICENCE = ("Text is available under the Creative Commons Attribution-ShareAlike License {}; additional "
           "terms may apply to the pages of this site and of its partners.")
# SimHashes of these lines are 0-5 bits apart; each line is within 3 bits of another one
DATES = ["3 March 2024", "12 March 2024", "21 April 2024", "9 May 2024", "30 June 2024"]
VERSIONS = ["3.0", "4.0", "2.5", "2.0", "1.0"]


def text_hash(line: str) -> int:
    return int(text_hashes([normalise(line)])[0])


def run(lake, dump=None):
    dumps = dumps_to_process(lake, dump)
    return finish(lake, dumps, check_inputs(lake, dumps), StageOptions(decide=DecisionConfig()), report=False)


def dropped(lake, dump):
    files = glob.glob(os.path.join(lake, "corpus", "decisions", "paragraphs", f"dump={dump}", "*.parquet"))
    return {(r["docId"], r["idx"]): r for f in files for r in pq.read_table(f).to_pylist()}


def group_lake(lake: str) -> dict:
    """Site g.example.com: five pages, each with its own date in the review line (no line
    twice); five sites, each with its own licence version."""
    rng = random.Random(3)
    docs, expect = [], {}
    for i, d in enumerate(DATES):
        did = doc_id(D1, f"g{i}")
        text, labels = page([("body>article>p", sentence(rng), "good"), ("body>article>p", sentence(rng), "good"),
                             ("body>div.meta>p", REVIEWED.format(d), "bad")])
        docs.append({"docId": did, "url": f"https://g.example.com/a/{i}", "text": text, "labels": labels,
                     "date": T0})
        expect[(did, 3)] = ("site_template", REVIEWED)
    for i, v in enumerate(VERSIONS):
        did = doc_id(D1, f"l{i}")
        text, labels = page([("body>main>p", sentence(rng), "good"), ("body>footer>p", LICENCE.format(v), "bad")])
        docs.append({"docId": did, "url": f"https://licence{i}.org/", "text": text, "labels": labels})
        expect[(did, 2)] = ("repeated_across_sites", LICENCE)
    write_archive(lake, D1, "arch-00000.warc.gz", docs)
    return expect


def test_near_duplicate_lines_count_as_one_text(tmp_path):
    lake = str(tmp_path / "lake")
    expect = group_lake(lake)
    run(lake)
    got = dropped(lake, D1)
    assert set(got) == set(expect)
    review_group = min(text_hash(REVIEWED.format(d)) for d in DATES)
    licence_group = min(text_hash(LICENCE.format(v)) for v in VERSIONS)
    for k, (rule, line) in expect.items():
        r = got[k]
        assert r["rule"] == rule and r["value"] == 5
        assert r["group_hash"] == (review_group if line is REVIEWED else licence_group)
    # the statistics per group: occurrences, hosts, domains, dumps, dates, common path
    con = connect_catalog(lake)
    rows = {g: (texts, occ, hosts, doms, dumps, paths) for g, texts, occ, hosts, doms, dumps, paths in con.execute(
        "SELECT group_hash, texts, occurrences, hosts, domains, dumps, top_paths FROM paragraph_group_stats").fetchall()}
    con.close()
    assert rows[review_group] == (5, 5, 1, 1, 1, ["body>div.meta>p"])
    assert rows[licence_group] == (5, 5, 5, 5, 1, ["body>footer>p"])


def test_a_later_variant_joins_the_earlier_group(tmp_path):
    lake = str(tmp_path / "lake")
    group_lake(lake)
    run(lake)
    first = {os.path.basename(p): open(p, "rb").read()
             for p in glob.glob(os.path.join(lake, "corpus", "decisions", "*", f"dump={D1}", "*.parquet"))}
    rng = random.Random(4)
    did = doc_id(D2, "g-new")
    text, labels = page([("body>article>p", sentence(rng), "good"),
                         ("body>div.meta>p", REVIEWED.format("1 August 2024"), "bad")])
    write_archive(lake, D2, "arch-10000.warc.gz", [{"docId": did, "url": "https://g.example.com/a/new",
                                                   "text": text, "labels": labels}])
    run(lake)
    got = dropped(lake, D2)
    # one page of this dump, five of the earlier one: the group's pages per host, per dump
    assert list(got) == [(did, 2)] and got[(did, 2)]["rule"] == "site_template" and got[(did, 2)]["value"] == 5
    members = pq.read_table(os.path.join(lake, "corpus", "para_groups", f"dump={D2}", "groups.parquet")).to_pylist()
    expected_members = {text_hash(REVIEWED.format(d)) for d in DATES + ["1 August 2024"]}
    assert {r["text_hash"] for r in members} == expected_members
    assert {r["group_hash"] for r in members} == {min(expected_members)}
    assert first == {os.path.basename(p): open(p, "rb").read()
                     for p in glob.glob(os.path.join(lake, "corpus", "decisions", "*", f"dump={D1}", "*.parquet"))}


@pytest.mark.parametrize("max_bits,key_blocks", [(MAX_BITS, KEY_BLOCKS), (8, 3)])
def test_search_finds_every_pair_within_its_bits_and_none_beyond(max_bits, key_blocks):
    """The step's search, and a wider one of the measurements (8 bits, 165 tables)."""
    rng = np.random.default_rng(5)
    n = 20_000
    base = rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64)
    flips = {}
    for bits in range(1, max_bits + 3):
        x = base[:200].view(np.uint64).copy()
        for row in range(200):
            for b in rng.choice(64, bits, replace=False):
                x[row] ^= np.uint64(1) << np.uint64(b)
        flips[bits] = x.view(np.int64)
    sims = np.concatenate([base] + [flips[b] for b in sorted(flips)])
    n_chars = np.full(len(sims), 100)
    is_cur = np.ones(len(sims), bool)
    i, j = near_pairs(sims, n_chars, is_cur, max_bits=max_bits, key_blocks=key_blocks)
    found = set(zip(i.tolist(), j.tolist()))
    for k, bits in enumerate(sorted(flips)):
        hits = sum((r, n + 200 * k + r) in found for r in range(200))
        assert hits == (200 if bits <= max_bits else 0), bits
    # every pair found is within the bits; a length far apart, or two earlier texts, is no pair
    d = np.bitwise_count(sims.view(np.uint64)[i] ^ sims.view(np.uint64)[j])
    assert len(i) and d.max() <= max_bits
    n_chars[n:] = 300
    i, j = near_pairs(sims, n_chars, is_cur, max_bits=max_bits, key_blocks=key_blocks)
    assert not any(a < n <= b for a, b in zip(i.tolist(), j.tolist()))
    is_cur[:] = False
    assert len(near_pairs(sims, np.full(len(sims), 100), is_cur, max_bits=max_bits, key_blocks=key_blocks)[0]) == 0


def test_a_good_paragraph_is_judged_by_its_own_text_not_by_its_group(tmp_path):
    """A group is a chain of near pairs and may join unrelated texts: a paragraph labelled
    good keeps to its own counts, even where its group's reach every threshold."""
    lake = str(tmp_path / "lake")
    rng = random.Random(6)
    docs = []
    for i, v in enumerate(VERSIONS):
        label = "good" if i == 0 else "bad"
        text, labels = page([("body>main>p", sentence(rng), "good"), ("body>footer>p", LICENCE.format(v), label)])
        docs.append({"docId": doc_id(D1, f"l{i}"), "url": f"https://licence{i}.org/", "text": text, "labels": labels})
    write_archive(lake, D1, "arch-00000.warc.gz", docs)
    dumps = dumps_to_process(lake, None)
    finish(lake, dumps, check_inputs(lake, dumps),
           StageOptions(decide=DecisionConfig(notice_min_domains_good=2)), report=False)
    got = dropped(lake, D1)
    assert set(got) == {(doc_id(D1, f"l{i}"), 2) for i in range(1, len(VERSIONS))}
    assert {r["group_hash"] for r in got.values()} == {min(text_hash(LICENCE.format(v)) for v in VERSIONS)}

"""The Japanese gold (tools/gold/ja_dev.jsonl): its reader, its split, and the sieve's score."""
import hashlib
import json
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import shared_data
from warclake.tasks.evaluation.gold import read_gold
from warclake.tasks.evaluation.ja_gold import read_entries, read_ja
from warclake.tasks.evaluation.metrics import token_page_prf

GOLD = Path(__file__).resolve().parents[2] / "tools" / "gold" / "ja_dev.jsonl"
SOURCES = [("encodings", "chardet", "tests"), ("warc", "resiliparse", "tests", "data"),
           ("gold", "mozilla_readability_testpages")]


def _needs_sources(fn):
    for parts in SOURCES:
        fn = pytest.mark.shared_data(*parts)(fn)
    return fn


def test_token_page_prf_counts_each_cjk_character_and_averages_nothing():
    # gold 4 tokens (日 本 語 ok), prediction 3 (日 本 x): 2 shared
    p, r, f = token_page_prf("日本語 ok", "日本 x")
    assert (p, r) == (2 / 3, 2 / 4) and f == pytest.approx(2 * p * r / (p + r))
    assert token_page_prf("", "") == (1.0, 1.0, 1.0)
    assert token_page_prf("日本", "") == (0.0, 0.0, 0.0)


def _page_set(tmp_path, body: bytes, sha: str) -> Path:
    root = tmp_path / "data"
    (root / "pages").mkdir(parents=True)
    (root / "pages" / "a.html").write_bytes(body)
    gold = tmp_path / "g.jsonl"
    rows = [{"id": "ja/a", "path": "pages/a.html", "record_id": None, "sha256": sha, "charset": "euc-jp",
             "url": "", "kind": "blog", "group": "a", "split": "heldout", "text": "題名\n本文 です。"},
            {"id": "ja/b", "path": "pages/a.html", "record_id": None, "sha256": sha, "charset": "euc-jp",
             "url": "", "kind": "blog", "group": "b", "split": "tuning", "text": "別"}]
    gold.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return gold


def test_ja_reader_resolves_paths_under_the_data_root_and_keeps_the_recorded_split(tmp_path):
    body = "<html><body><h1>題名</h1><p>本文です。</p></body></html>".encode("euc-jp")
    gold = _page_set(tmp_path, body, hashlib.sha256(body).hexdigest())
    pages = read_gold(f"ja:{gold},{tmp_path / 'data'}", "heldout")
    assert [p.id for p in pages] == ["ja/a"]
    assert pages[0].html == body and pages[0].gold == "題名\n本文 です。"
    assert pages[0].content_type == ""   # a plain file: no header, the cascade sniffs
    assert [p.id for p in read_ja(f"{gold},{tmp_path / 'data'}", "all")] == ["ja/a", "ja/b"]


def test_ja_reader_refuses_pages_whose_bytes_changed(tmp_path):
    gold = _page_set(tmp_path, b"<p>changed</p>", "0" * 64)
    with pytest.raises(ValueError, match="sha256"):
        read_ja(f"{gold},{tmp_path / 'data'}")


def test_ja_split_is_recorded_and_keeps_each_group_on_one_side():
    entries = read_entries(GOLD)
    sides = defaultdict(set)
    for e in entries:
        sides[e["group"]].add(e["split"])
        assert e["text"].strip() and len(e["sha256"]) == 64
    assert all(len(s) == 1 for s in sides.values())
    n_held = sum(e["split"] == "heldout" for e in entries)
    assert {e["split"] for e in entries} == {"heldout", "tuning"}
    assert abs(n_held - (len(entries) - n_held)) <= 2     # about half and half
    assert len({e["id"] for e in entries}) == len(entries)


@_needs_sources
def test_ja_gold_loads_every_page_with_its_verified_bytes():
    pages = read_ja(f"{GOLD},{shared_data()}")
    entries = read_entries(GOLD)
    assert len(pages) == len(entries) >= 35
    warc_pages = [p for p, e in zip(pages, entries) if e["record_id"]]
    # the archive's records carry their HTTP Content-Type as the charset hint
    assert warc_pages and all("euc-jp" in p.content_type.lower() for p in warc_pages)


@_needs_sources
def test_eval_on_the_held_back_japanese_pages_scores_the_sieve_above_its_floor(tmp_path):
    from warclake.cli.main import main

    out = tmp_path / "r.md"
    rc = main(["eval", "--gold", f"ja:{GOLD},{shared_data()}", "--split", "heldout", "--quiet",
               "--extractor", "sieve", "--markdown", str(out)])
    assert rc == 0
    table = out.read_text()
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in table.splitlines() if line.startswith("| ") and "---" not in line}
    f1 = {k: float(v[0]) for k, v in rows.items() if k in ("none", "sieve")}
    # measured 0.911 (keep-everything 0.519) on the 18 held-back pages
    assert f1["sieve"] >= 0.90 and f1["none"] < 0.6
    assert "18 pages" in table

"""The corpus stage over small generated lakes with known answers: exact decisions,
paragraph rules, cross-dump deduplication, determinism, threshold changes, export, SQL."""
from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from support.corpus_lake import doc_id, known_lake, page, sentence, write_archive
from support.corpus_runs import DUMP, decision_bytes, decisions, run, second_dump
from warclake.tasks.corpus.settings import DecisionConfig
from warclake.tasks.corpus.signals.quality import QUALITY_RULES, evaluate_rules
from warclake.tasks.lake.catalog import connect_catalog

QUALITY_NAMES = {r.name for r in QUALITY_RULES}


def dropped_paragraphs(lake, dump=DUMP) -> dict[tuple[str, int], str]:
    files = glob.glob(os.path.join(lake, "corpus", "decisions", "paragraphs", f"dump={dump}", "*.parquet"))
    return {(r["docId"], r["idx"]): r["rule"] for f in files for r in pq.read_table(f).to_pylist()}


@pytest.fixture
def lake(tmp_path):
    d = str(tmp_path / "lake")
    return d, known_lake(d, DUMP)


def test_known_lake_gives_exactly_the_expected_decisions(lake):
    path, exp = lake
    res = run(path)
    dec = decisions(path)
    assert len(dec) == len(exp["docs"]) == 14
    # the copy and the edited copy are dropped; the original (longest, earliest) survives
    assert dec[exp["orig"]]["kept"] and dec[exp["orig"]]["survivor"]
    assert dec[exp["copy"]]["rule"] == "exact_duplicate" and dec[exp["copy"]]["duplicate_of"] == exp["orig"]
    assert dec[exp["edited"]]["rule"] == "near_duplicate" and dec[exp["edited"]]["duplicate_of"] == exp["orig"]
    sim = DecisionConfig().similarity
    assert dec[exp["edited"]]["value"] >= sim and dec[exp["edited"]]["threshold"] == sim
    assert {dec[x]["cluster_id"] for x in (exp["orig"], exp["copy"], exp["edited"])} == {min(exp["orig"], exp["copy"], exp["edited"])}
    assert all(dec[x]["cluster_size"] == 3 for x in (exp["orig"], exp["copy"], exp["edited"]))
    # the near-empty page goes by a quality rule, with its measured value
    short = dec[exp["short"]]
    assert not short["kept"] and short["rule"] in QUALITY_NAMES and short["value"] is not None
    # nothing else is dropped
    dropped = {d for d, r in dec.items() if not r["kept"]}
    assert dropped == {exp["copy"], exp["edited"], exp["short"]}
    # paragraphs: the navigation bar of site A (its template) and the licence on five sites
    para = dropped_paragraphs(path)
    assert {k for k, r in para.items() if r == "site_template"} == exp["site_template"]
    assert {k for k, r in para.items() if r == "repeated_across_sites"} == exp["repeated_across_sites"]
    assert not set(para) & exp["kept_quote"]   # a quotation on two sites stays
    assert res["dumps"][DUMP]["kept"] == 11 and res["dumps"][DUMP]["paragraphs_dropped"] == 10


def test_quality_decisions_agree_with_the_rules_library(lake):
    path, exp = lake
    run(path)
    sigs = {}
    for f in glob.glob(os.path.join(path, "corpus", "docsigs", f"dump={DUMP}", "*.parquet")):
        for r in pq.read_table(f, columns=["docId", "lang", "metrics"]).to_pylist():
            sigs[r["docId"]] = (dict(r["metrics"]), r["lang"])
    for did, row in decisions(path).items():
        sql_rules = [r["rule"] for r in row["rules"] if r["rule"] in QUALITY_NAMES]
        metrics, lang = sigs[did]
        assert sql_rules == [r.name for r, _, _ in evaluate_rules(metrics, lang)]


def test_corpus_view_and_sql_answer_why_a_document_is_missing(lake):
    path, exp = lake
    run(path)
    con = connect_catalog(path)
    texts = dict(con.sql("SELECT docId, text FROM corpus_documents").fetchall())
    assert exp["copy"] not in texts and exp["short"] not in texts and exp["orig"] in texts
    assert all("Home About Contact" not in t and "Creative Commons" not in t for t in texts.values())
    assert all("\x1c" not in t and "\x02" not in t for t in texts.values())
    quote_doc = next(iter(exp["kept_quote"]))[0]
    assert exp["docs"][[d["docId"] for d in exp["docs"]].index(quote_doc)]["text"].split("\x1c")[-1][:40] in texts[quote_doc]
    why = con.sql("SELECT rule, value, threshold, duplicate_of FROM document_rule_hits WHERE docId = ?",
                  params=[exp["copy"]]).fetchall()
    assert why == [("exact_duplicate", 1.0, 1.0, exp["orig"])]
    by = dict(((r, u), n) for u, r, _, _, n in con.sql("SELECT * FROM corpus_removals").fetchall())
    assert by[("site_template", "paragraph")] == 5 and by[("repeated_across_sites", "paragraph")] == 5
    stats = con.execute("SELECT occurrences, hosts, domains, dumps, top_paths FROM paragraph_stats "
                    "ORDER BY occurrences DESC, domains DESC LIMIT 1").fetchone()
    assert stats == (5, 5, 5, 1, ["body>footer>p.licence"])
    con.close()


def test_same_input_gives_byte_identical_decisions_and_a_rerun_does_nothing(tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    known_lake(a, DUMP)
    known_lake(b, DUMP)
    run(a)
    run(b)
    assert decision_bytes(a) == decision_bytes(b) and decision_bytes(a)
    before = {p: os.stat(p).st_mtime_ns for p in glob.glob(os.path.join(a, "corpus", "**", "*.parquet"), recursive=True)}
    res = run(a)
    assert res["signed"] == 0 and res["partitions"] == 0
    assert before == {p: os.stat(p).st_mtime_ns for p in before}


def test_a_threshold_change_redoes_only_the_decisions(lake):
    path, exp = lake
    run(path)
    files = glob.glob(os.path.join(path, "corpus", "**", "*.parquet"), recursive=True)
    before = {p: os.stat(p).st_mtime_ns for p in files}
    res = run(path, notice_min_domains=6, similarity=0.99)   # the edited copy: Jaccard 0.976
    assert res["signed"] == 0
    for p, t in before.items():
        changed = os.stat(p).st_mtime_ns != t
        decided = os.sep + "decisions" + os.sep in p or os.sep + "work" + os.sep + "doc_decisions" + os.sep in p
        assert changed == decided, p
    para = dropped_paragraphs(path)
    assert not any(r == "repeated_across_sites" for r in para.values())   # 5 domains < 6
    dec = decisions(path)
    assert dec[exp["edited"]]["kept"] and dec[exp["copy"]]["rule"] == "exact_duplicate"
    assert all(r["config_fingerprint"] == DecisionConfig(notice_min_domains=6, similarity=0.99).fingerprint()
               for r in dec.values())


def test_drop_all_copies_keeps_none_of_a_cluster(lake):
    path, exp = lake
    run(path, drop_all_copies=True)
    dec = decisions(path)
    for x in (exp["orig"], exp["copy"], exp["edited"]):
        assert not dec[x]["kept"] and dec[x]["rule"] == "duplicate_all_copies" and not dec[x]["survivor"]


def test_a_later_dump_is_deduplicated_against_earlier_ones_keeping_real_ids(lake):
    path, exp = lake
    run(path)
    first = decision_bytes(path)
    docs = second_dump(path, exp)
    res = run(path)
    assert res["signed"] == 1   # only the new archive is signed again
    later = decisions(path, "CC-MAIN-2024-22")
    again, near = later[docs[0]["docId"]], later[docs[1]["docId"]]
    assert again["rule"] == "exact_duplicate_earlier_dump" and not again["kept"]
    assert near["rule"] == "near_duplicate_earlier_dump" and not near["kept"]
    # the earlier side is a real document id of the first dump (the smallest of its cluster)
    assert again["duplicate_of"] in {exp["orig"], exp["copy"], exp["edited"]}
    assert later[docs[2]["docId"]]["kept"] and later[docs[3]["docId"]]["kept"]
    # site A's navigation bar is its template in the new dump too (counted over both dumps)
    para = dropped_paragraphs(path, "CC-MAIN-2024-22")
    assert para[(docs[2]["docId"], 1)] == "site_template"
    # the first dump's decisions do not change when a later dump arrives
    assert {k: v for k, v in decision_bytes(path).items() if "CC-MAIN-2024-18" in k} == first


def test_export_writes_sharded_parquet_and_jsonl(lake, tmp_path):
    from warclake.tasks.corpus.steps.export import export_corpus

    path, exp = lake
    run(path)
    info = export_corpus(path, str(tmp_path / "pq"), "parquet", shard_docs=4)
    assert info["documents"] == 11 and [s["documents"] for s in info["shards"]] == [4, 4, 3]
    t = pq.read_table(str(tmp_path / "pq"))
    assert t.column_names == ["docId", "url", "lang", "dump", "date", "text"] and t.num_rows == 11
    info = export_corpus(path, str(tmp_path / "js"), "jsonl", shard_docs=100)
    rows = [json.loads(x) for x in open(tmp_path / "js" / "corpus-00000.jsonl", encoding="utf-8")]
    assert len(rows) == 11 and {r["docId"] for r in rows} == set(t.column("docId").to_pylist())
    assert json.load(open(tmp_path / "js" / "_manifest.json"))["documents"] == 11


def test_near_duplicate_clusters_entry_point(lake):
    from tools.measure.corpus_dedup import near_duplicate_clusters

    path, exp = lake
    t = pa.concat_tables([pq.read_table(f) for f in sorted(glob.glob(os.path.join(path, "documents", "*", "*.parquet")))])
    res = {r["docId"]: r for r in near_duplicate_clusters(t).to_pylist()}
    assert len(res) == 14
    trio = (exp["orig"], exp["copy"], exp["edited"])
    assert len({res[x]["cluster_id"] for x in trio}) == 1
    assert [x for x in trio if res[x]["survivor"]] == [exp["orig"]]
    assert sum(r["survivor"] for r in res.values()) == 12


def test_report_page_shows_removals_and_samples(lake):
    from warclake.tasks.corpus.steps.report import write_corpus_report

    path, _ = lake
    run(path)
    md, html = write_corpus_report(path)
    text = open(md, encoding="utf-8").read()
    assert "site_template" in text and "Home About Contact Archive" in text and "exact_duplicate" in text
    assert "<table>" in open(html, encoding="utf-8").read()


def cli(*args, check=False):
    return subprocess.run([sys.executable, "-m", "warclake", *args], capture_output=True, text=True)


def test_bad_input_gets_one_line_and_a_non_zero_exit(tmp_path):
    from warclake.tasks.lake.dump_lock import DumpLock

    empty = tmp_path / "empty"
    os.makedirs(empty / "files")
    old = str(tmp_path / "old")
    write_archive(old, DUMP, "a.warc.gz", [{"docId": "x", "url": "https://x.org/", "text": "p\x1chello"}],
                  schema_version="2")
    good = str(tmp_path / "good")
    known_lake(good, DUMP)
    cases = [
        (["corpus", "--lake", str(empty)], "no finished documents"),
        (["corpus", "--lake", str(tmp_path / "none")], "no lake"),
        (["corpus", "--lake", old], "schema version 2"),
        (["corpus", "--lake", good, "--similarity", "1.5"], "similarity=1.5 out of range"),
        (["corpus", "--lake", good, "--template-min-pages", "1"], "template_min_pages=1 out of range"),
        (["corpus", "--lake", good, "--quality", "gopher_min_words=-3"], "gopher_min_words"),
        (["corpus", "--lake", good, "--dump", "CC-MAIN-1999-01"], "no dump"),
        (["export", "--lake", good, "--out", str(tmp_path / "out")], "run `warclake corpus"),
    ]
    for args, words in cases:
        p = cli(*args)
        lines = p.stderr.strip().splitlines()
        assert p.returncode != 0 and len(lines) == 1 and words in lines[0], (args, p.stderr)
    with DumpLock(good, DUMP):   # an extraction of the dump still running
        p = cli("corpus", "--lake", good)
    assert p.returncode != 0 and "being written" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert not os.path.exists(os.path.join(good, "corpus", "decisions"))


def big_lake(path: str, archives: int = 12, per_archive: int = 150) -> None:
    import random

    rng = random.Random(5)
    for a in range(archives):
        docs = []
        for i in range(per_archive):
            paras = [("body>nav", "Home News Sport Weather", "bad")] + \
                    [("body>article>p", sentence(rng, 5), "good") for _ in range(4)]
            t, lab = page(paras)
            docs.append({"docId": doc_id(DUMP, f"{a}-{i}"), "url": f"https://s{i % 7}.example.com/{a}/{i}",
                         "text": t, "labels": lab})
        docs += [dict(docs[j], docId=doc_id(DUMP, f"{a}-copy{j}"), url=f"https://copy.example.org/{a}/{j}")
                 for j in range(0, per_archive, 10)]
        write_archive(path, DUMP, f"arch-{a:05d}.warc.gz", docs)


@pytest.mark.parametrize("step,after", [("signatures", 3), ("pairs", 2)])
def test_killed_run_then_rerun_gives_the_same_result(tmp_path, step, after):
    """kill -9 while archives are signed, and while the global steps run."""
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    big_lake(a)
    shutil.copytree(a, b)
    assert cli("corpus", "--lake", b, "--no-report").returncode == 0
    state = os.path.join(a, "corpus", "state", step, f"dump={DUMP}")
    proc = subprocess.Popen([sys.executable, "-m", "warclake", "corpus", "--lake", a, "--no-report", "-q"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import time

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.isdir(state) and len([f for f in os.listdir(state) if f.endswith(".json")]) >= after:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be killed: make the lake bigger"
    proc.kill()   # SIGKILL: no cleanup of any kind
    proc.wait()
    assert not os.path.exists(os.path.join(a, "corpus", "decisions", "documents"))   # killed before the end
    assert cli("corpus", "--lake", a, "--no-report").returncode == 0
    assert decision_bytes(a) == decision_bytes(b) and decision_bytes(a)
    leftovers = [p for p in glob.glob(os.path.join(a, "corpus", "**", ".*"), recursive=True) if p.endswith(".tmp")]
    assert leftovers == []

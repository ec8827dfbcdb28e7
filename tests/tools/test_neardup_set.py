"""The near-duplicate evaluation set (built from real gold pages) and its pairwise scorer."""
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import shared_data
from tools.measure import dedup as eval_dedup
from tools.measure import neardup_set
from tools.measure.dedup import pairwise_scores
from warclake.tasks.evaluation.gold import read_cleaneval
from warclake.tasks.extract.paragraph import split_document

DEV = Path(shared_data("gold", "cleaneval", "cleaneval-dev"))


@pytest.fixture(scope="module")
def pages():
    """Usable source pages of the CLEANEVAL dev set, through warclake's extraction."""
    found = [sp for sp in map(neardup_set.source_page, read_cleaneval(DEV)) if sp is not None]
    return neardup_set.distinct_main_texts(found)


def test_pairwise_arithmetic_on_a_hand_made_clustering():
    truth = {"o1": "A", "t1": "A", "r1": "A", "o2": "B", "e2": "B", "s1": "S1", "u1": "U1"}
    kinds = {"o1": "original", "t1": "template", "r1": "reordered", "o2": "original",
             "e2": "small_edits", "s1": "same_site", "u1": "unrelated"}
    # predicted: t1 missed, s1 wrongly joined to cluster A, e2 absent from the prediction
    predicted = {"o1": "x", "r1": "x", "s1": "x", "t1": "y", "o2": "z", "u1": "w"}
    s = pairwise_scores(truth, kinds, predicted)
    # true pairs: (o1,t1) (o1,r1) (t1,r1) (o2,e2) -> 4; predicted: (o1,r1) (o1,s1) (r1,s1) -> 3
    assert (s["all"].true_pairs, s["all"].predicted_pairs, s["all"].tp) == (4, 3, 1)
    assert s["all"].precision == pytest.approx(1 / 3) and s["all"].recall == pytest.approx(1 / 4)
    assert (s["reordered"].true_pairs, s["reordered"].tp, s["reordered"].recall) == (1, 1, 1.0)
    assert (s["template"].true_pairs, s["template"].tp, s["template"].recall) == (1, 0, 0.0)
    assert s["between_copies"].true_pairs == 1 and s["between_copies"].tp == 0   # (t1, r1)
    assert s["small_edits"].recall == 0.0
    assert (s["same_site"].predicted_pairs, s["same_site"].false_pairs, s["same_site"].precision) == (2, 2, 0.0)
    assert s["same_site"].recall is None and s["unrelated"].precision is None
    # the rows split the pairs
    rows = [v for k, v in s.items() if k != "all"]
    assert sum(r.true_pairs for r in rows) == 4 and sum(r.predicted_pairs for r in rows) == 3


@pytest.mark.shared_data("gold", "cleaneval", "cleaneval-dev")
def test_set_is_deterministic_for_a_seed(pages):
    a = neardup_set.build_split(pages, "tuning", seed=7, clusters=3)
    b = neardup_set.build_split(list(reversed(pages)), "tuning", seed=7, clusters=3)
    assert a.docs == b.docs and a.truth == b.truth
    c = neardup_set.build_split(pages, "tuning", seed=8, clusters=3)
    assert [d["text"] for d in c.docs] != [d["text"] for d in a.docs]


@pytest.mark.shared_data("gold", "cleaneval", "cleaneval-dev")
def test_every_kind_is_present_and_changes_what_it_says(pages):
    b = neardup_set.build_split(pages, "tuning", seed=1, clusters=3)
    kinds = Counter(t["kind"] for t in b.truth)
    assert kinds == {"original": 3, **{k: 3 for k in neardup_set.KINDS}, "same_site": 6, "unrelated": 3}
    docs = {t["docId"]: (d, t) for d, t in zip(b.docs, b.truth)}
    assert len(docs) == len(b.docs)                            # ids are unique
    originals = {t["cluster"]: d for d, t in docs.values() if t["kind"] == "original"}

    def main_text(doc, truth):
        paras = split_document(doc["text"])
        assert len(paras) == len(truth["roles"]) == len(doc["paragraph_labels"])
        return [p.text for p, r in zip(paras, truth["roles"]) if r == "main"]

    for doc, t in docs.values():
        if t["kind"] not in neardup_set.KINDS:
            continue
        orig = originals[t["cluster"]]
        orig_main = main_text(orig, next(x for x in b.truth if x["docId"] == orig["docId"]))
        main = main_text(doc, t)
        assert doc["text"] != orig["text"], t["kind"]
        if t["kind"] in ("template", "ads_dates"):
            assert main == orig_main
        if t["kind"] == "ads_dates":
            assert "inserted" in t["roles"]
        if t["kind"] == "reordered":
            assert sorted(main) == sorted(orig_main) and main != orig_main
        if t["kind"] == "truncation":
            kept = sum(map(len, main)) / sum(map(len, orig_main))
            assert 0.75 < kept < 0.92
        if t["kind"] == "small_edits":
            changed = sum(x != y for x, y in zip(main, orig_main))
            assert len(main) == len(orig_main) and 1 <= changed <= 5


@pytest.mark.shared_data("gold", "cleaneval", "cleaneval-dev")
def test_hard_negatives_share_the_template_but_not_the_main_text(pages):
    b = neardup_set.build_split(pages, "tuning", seed=3, clusters=3)
    by_cluster = {t["cluster"]: (d, t) for d, t in zip(b.docs, b.truth) if t["kind"] == "original"}

    def parts(doc, truth):
        paras = [p.text for p in split_document(doc["text"])]
        return ({p for p, r in zip(paras, truth["roles"]) if r == "template"},
                {p for p, r in zip(paras, truth["roles"]) if r == "main"})

    negatives = [(d, t) for d, t in zip(b.docs, b.truth) if t["kind"] == "same_site"]
    assert len(negatives) == 6
    for doc, t in negatives:
        base_doc, base_truth = by_cluster[t["cluster"].rsplit("-site", 1)[0]]
        tmpl, main = parts(doc, t)
        base_tmpl, base_main = parts(base_doc, base_truth)
        assert t["main_source"] != t["source"] and t["cluster"] != base_truth["cluster"]
        assert tmpl & base_tmpl                          # the site's template ...
        assert not main & base_main                      # ... around other main text
        assert doc["url"].split("/")[2] == base_doc["url"].split("/")[2]     # same host


def _exact_text_clusters(docs: pa.Table) -> pa.Table:
    """Reference for the scorer's test: documents of identical text form a cluster."""
    first: dict[str, str] = {}
    ids, clusters = [], []
    for d, text in zip(docs.column("docId").to_pylist(), docs.column("text").to_pylist()):
        ids.append(d)
        clusters.append(first.setdefault(text, d))
    return pa.table({"docId": ids, "cluster_id": clusters, "survivor": [c == d for c, d in zip(clusters, ids)]})


@pytest.mark.shared_data("gold", "cleaneval", "cleaneval-dev")
def test_scorer_runs_over_a_written_set(pages, tmp_path, capsys):
    half = len(pages) // 2
    counts = neardup_set.write_set(str(tmp_path), 5, {"tuning": pages[:half], "heldout": pages[half:]}, clusters=2)
    assert neardup_set.set_exists(str(tmp_path), 5) and not neardup_set.set_exists(str(tmp_path), 6)
    docs = pq.read_table(tmp_path / "documents" / "dump=neardup-heldout" / "neardup.parquet")
    assert docs.num_rows == counts["heldout"] == 2 * 6 + 2 * 2 + 2
    assert (tmp_path / "files" / "dump=neardup-heldout" / "neardup.json").exists()
    # a copy of one original makes one exact pair the reference finds
    extra = docs.slice(0, 1).to_pylist()[0]
    extra["docId"], extra["url"] = "copy-of-first", extra["url"] + "#copy"
    truth = pq.read_table(tmp_path / "truth" / "heldout.parquet").to_pylist()
    truth.append({**truth[0], "docId": "copy-of-first", "kind": "ads_dates"})
    pq.write_table(pa.concat_tables([docs, pa.Table.from_pylist([extra], schema=docs.schema)]),
                   tmp_path / "documents" / "dump=neardup-heldout" / "neardup.parquet")
    pq.write_table(pa.Table.from_pylist(truth, schema=neardup_set.TRUTH), tmp_path / "truth" / "heldout.parquet")

    docs, truth = eval_dedup.load_split(str(tmp_path), "heldout")
    out = eval_dedup.report(docs, truth, _exact_text_clusters, None, "heldout")
    # 2 clusters of 6 documents (15 pairs each) plus the copy joined to one: 30 + 6 true pairs;
    # the reference finds only the exact copy
    assert "| all | 36 | 1 | 1 | 0 | 1.000 | 0.028 |" in out
    assert "| ads_dates | 3 | 1 | 1 | 0 | 1.000 | 0.333 |" in out
    assert "Repeated-text removal" not in out

    # the command scores the corpus stage itself: it finds the exact copy and more, and
    # keeps one survivor per cluster
    assert eval_dedup.main(["--out", str(tmp_path), "--seed", "5"]) == 0
    out = capsys.readouterr().out
    all_row = next(ln for ln in out.splitlines() if ln.startswith("| all |")).split("|")
    true_pairs, predicted, correct = (int(all_row[i]) for i in (2, 3, 4))
    assert true_pairs == 36 and correct > 1 and correct / predicted >= 0.9
    assert "with other than one survivor: 0" in out and "## Repeated-text removal" in out
    assert eval_dedup.main(["--out", str(tmp_path), "--threshold", "1.5"]) == 2

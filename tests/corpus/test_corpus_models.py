"""Model scores as data: a fastText classifier, a KenLM bigram model and a word list, made in
the test from generated text, scored by real corpus runs over a generated lake; thresholds
applied by the decision step alone."""
from __future__ import annotations

import glob
import hashlib
import math
import os
import random

import duckdb
import pyarrow.parquet as pq
import pytest

pytest.importorskip("fasttext")
pytest.importorskip("kenlm")

from support.corpus_lake import doc_id, page, write_archive  # noqa: E402
from support.tiny_models import good_text, junk_text, train_bigram, train_fasttext  # noqa: E402
from warclake.tasks.corpus.checks import check_inputs, dumps_to_process  # noqa: E402
from warclake.tasks.corpus.settings import DecisionConfig  # noqa: E402
from warclake.tasks.corpus.signals.models import ScoreModels  # noqa: E402
from warclake.tasks.corpus.signals.normalise import normalise  # noqa: E402
from warclake.tasks.corpus.stage import StageOptions, finish  # noqa: E402

DUMP = "CC-MAIN-2024-18"
# a good paragraph on 10 sites: repeated_across_sites drops it (the good paragraphs' count)
SHARED = "Buy cheap pills now click here free casino bonus win money fast best price"
NAV = "Home About Contact Archive"


def make_lake(lake: str, seed: int = 3) -> dict:
    """Prose documents (12; 10 carry SHARED, kept apart from their text by the repeated-text
    rule), spam documents (8, their spam labelled good as an extractor might), one French
    prose document (no word list of its language)."""
    rng = random.Random(seed)
    docs, kinds = [], {}
    for i in range(12):
        paras = [("body>nav", NAV, "bad"), ("body>article>p", good_text(rng, 3), "good"),
                 ("body>article>p", good_text(rng, 2), "good")]
        if i < 10:
            paras.append(("body>article>aside", SHARED, "good"))
        text, labels = page(paras)
        did = doc_id(DUMP, f"good{i}")
        docs.append({"docId": did, "url": f"https://www.site{i}.org/story", "text": text, "labels": labels})
        kinds[did] = "good"
    for i in range(8):
        text, labels = page([("body>div", junk_text(rng, 30 + i), "good"), ("body>div", junk_text(rng, 20), "good")])
        did = doc_id(DUMP, f"junk{i}")
        docs.append({"docId": did, "url": f"https://spam{i}.example.net/offer", "text": text, "labels": labels})
        kinds[did] = "junk"
    text, labels = page([("body>p", good_text(rng, 3), "good")])
    did = doc_id(DUMP, "fr")
    docs.append({"docId": did, "url": "https://site.example.fr/", "text": text, "labels": labels, "lang": "fr"})
    kinds[did] = "fr"
    write_archive(lake, DUMP, "arch-00000.warc.gz", docs[::2])
    write_archive(lake, DUMP, "arch-00001.warc.gz", docs[1::2])
    return {"kinds": kinds, "docs": {d["docId"]: d for d in docs}}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("models"))
    ft = train_fasttext(folder)
    arpa, lm = train_bigram(folder)
    words = os.path.join(folder, "en.txt")
    with open(words, "w") as fh:
        fh.write("casino\nviagra\ncheap pills\n\nCRYPTO\nbonus\nloan\n")
    return {"folder": folder, "fasttext": ft, "arpa": arpa, "lm": lm, "words": words}


def score_models(m, **kw) -> ScoreModels:
    return ScoreModels(fasttext=m["fasttext"], lm={"*": m["arpa"]}, word_lists={"en": m["words"]}, **kw)


def run(lake, models, report=False, **scores):
    dumps = dumps_to_process(lake, None)
    opts = StageOptions(decide=DecisionConfig(scores=scores), models=models)
    return finish(lake, dumps, check_inputs(lake, dumps), opts, report=report)


def decisions(lake) -> dict[str, dict]:
    t = pq.read_table(os.path.join(lake, "corpus", "decisions", "documents", f"dump={DUMP}", "decisions.parquet"))
    return {r["docId"]: r for r in t.to_pylist()}


def rows(lake, table) -> list[dict]:
    """Every row of a corpus table (all its dumps' files)."""
    return duckdb.sql(f"SELECT * FROM read_parquet('{lake}/corpus/{table}/*/*.parquet', hive_partitioning = false)"
                      ).to_arrow_table().to_pylist()


def score_files(lake) -> dict[str, tuple[int, bytes]]:
    """Each model-score output and state file: (modification time, bytes)."""
    out = {}
    for sub in ("model_scores", "para_model_scores", "state/model_scores"):
        for p in glob.glob(os.path.join(lake, "corpus", sub, "*", "*")):
            out[p] = (os.stat(p).st_mtime_ns, open(p, "rb").read())
    return out


def sha256(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.fixture(scope="module")
def scored(tmp_path_factory, models):
    lake = str(tmp_path_factory.mktemp("lake"))
    exp = make_lake(lake)
    run(lake, score_models(models))
    return lake, exp


def test_scores_are_columns_of_the_decisions_in_range_and_rank_prose_above_spam(scored, models):
    lake, exp = scored
    res = decisions(lake)
    kinds = exp["kinds"]
    assert set(res) == set(kinds)
    ft = {d: r["fasttext_score"] for d, r in res.items()}
    assert all(0.0 <= v <= 1.0 for v in ft.values())
    good = [ft[d] for d, k in kinds.items() if k == "good"]
    junk = [ft[d] for d, k in kinds.items() if k == "junk"]
    assert min(good) > 0.9 and max(junk) < 0.1
    ppl = {d: r["perplexity"] for d, r in res.items()}
    assert max(ppl[d] for d, k in kinds.items() if k == "good") * 100 < min(ppl[d] for d, k in kinds.items()
                                                                               if k == "junk")
    # the word list is English only: counts for English documents, none for the French one
    assert all(res[d]["word_list_matches"] == 0 for d, k in kinds.items() if k == "good")
    assert all(res[d]["word_list_matches"] >= 3 and 0 < res[d]["word_list_ratio"] < 1
               for d, k in kinds.items() if k == "junk")
    fr = next(d for d, k in kinds.items() if k == "fr")
    assert res[fr]["word_list_matches"] is None and res[fr]["word_list"] is None
    assert res[fr]["perplexity"] is not None   # the language model is for every language ('*')
    # each score with its model's fingerprint (the file's SHA-256)
    assert {r["fasttext_model"] for r in res.values()} == {sha256(models["fasttext"])}
    assert {r["lm_model"] for r in res.values()} == {sha256(models["arpa"])}
    assert {r["word_list"] for d, r in res.items() if d != fr} == {sha256(models["words"])}
    # no threshold given: scores are data, no rule fired
    assert not any(x["rule"].startswith(("model_", "word_list")) for r in res.values() for x in r["rules"])


def test_perplexity_is_the_kept_paragraphs_length_weighted_as_computed_in_python(scored, models):
    """A document's perplexity is over the paragraphs the corpus keeps: labelled good, less
    the one the repeated-text rule dropped (SHARED, on 10 sites); each paragraph's equals the
    ARPA model's, computed here from its counts."""
    lake, exp = scored
    lm = models["lm"]
    res = decisions(lake)
    paras = rows(lake, "para_model_scores")
    dropped = {(r["docId"], r["idx"]) for r in rows(lake, "decisions/paragraphs")}
    checked = 0
    for did, doc in exp["docs"].items():
        bodies = [p.split("\x1c", 1)[1] for p in doc["text"].split("\n\n")]
        log10 = tokens = 0.0
        for i, (body, label) in enumerate(zip(bodies, doc["labels"]), 1):
            toks = normalise(body).split()
            row = next(r for r in paras if r["docId"] == did and r["idx"] == i)
            assert row["lm_log10"] == pytest.approx(lm.log10_sentence(toks), abs=1e-3)
            assert row["perplexity"] == pytest.approx(10 ** (-lm.log10_sentence(toks) / (len(toks) + 1)), rel=1e-3)
            if label == "good" and (did, i) not in dropped:
                log10 += lm.log10_sentence(toks)
                tokens += len(toks) + 1
        assert res[did]["perplexity"] == pytest.approx(10 ** (-log10 / tokens), rel=1e-3)
        checked += 1
    shared_dropped = {d for d, i in dropped if exp["docs"][d]["text"].split("\n\n")[i - 1].endswith(SHARED)}
    assert len(shared_dropped) == 10 and checked == len(exp["docs"])


def test_a_threshold_change_reruns_only_the_decisions(tmp_path, models):
    lake = str(tmp_path / "lake")
    exp = make_lake(lake)
    m = score_models(models)
    run(lake, m)
    before, first = score_files(lake), decisions(lake)
    assert len([p for p in before if "/state/" in p]) == 2
    counts = run(lake, m, model_fasttext=0.5, model_perplexity=1000.0, word_list_matches=2)
    assert score_files(lake) == before          # no score recomputed (nor rewritten)
    assert counts["signed"] == 0
    res, kinds = decisions(lake), exp["kinds"]
    for d, k in kinds.items():
        fired = {x["rule"]: x for x in res[d]["rules"]}
        assert res[d]["fasttext_score"] == first[d]["fasttext_score"]
        if k == "junk":
            assert not res[d]["kept"]
            assert {"model_fasttext", "model_perplexity", "word_list_matches"} <= set(fired)
            assert fired["model_fasttext"]["threshold"] == 0.5
            assert fired["model_fasttext"]["value"] == pytest.approx(res[d]["fasttext_score"])
        else:
            assert not {"model_fasttext", "model_perplexity", "word_list_matches"} & set(fired)
    assert sum(r["kept"] for r in res.values()) < sum(r["kept"] for r in first.values())
    # a stricter fastText threshold drops what scores below it, and only that
    run(lake, m, model_fasttext=0.999999)
    res = decisions(lake)
    for d, r in res.items():
        assert ("model_fasttext" in {x["rule"] for x in r["rules"]}) == (r["fasttext_score"] < 0.999999)
    assert score_files(lake) == before


def test_a_changed_model_recomputes_its_scores(tmp_path, models):
    lake = str(tmp_path / "lake")
    make_lake(lake)
    run(lake, score_models(models))
    before = score_files(lake)
    other = train_fasttext(str(tmp_path), seed=8, n=200)
    run(lake, ScoreModels(fasttext=other, lm={"*": models["arpa"]}, word_lists={"en": models["words"]}))
    after = score_files(lake)
    assert set(after) == set(before) and all(after[p] != before[p] for p in before)
    assert {r["fasttext_model"] for r in decisions(lake).values()} == {sha256(other)}


def test_a_threshold_needs_its_model_and_a_range():
    with pytest.raises(ValueError, match="--min-fasttext-score needs --fasttext-model"):
        StageOptions(decide=DecisionConfig(scores={"model_fasttext": 0.5}))
    with pytest.raises(ValueError, match="unknown model-score rule"):
        StageOptions(decide=DecisionConfig(scores={"model_nonsense": 0.5}))


def test_threshold_out_of_range_is_refused(models):
    with pytest.raises(ValueError, match="out of range"):
        StageOptions(decide=DecisionConfig(scores={"model_fasttext": 1.5}), models=score_models(models))


def test_the_command_line_scores_and_thresholds(tmp_path, models, capsys):
    from warclake.cli.main import main

    lake = str(tmp_path / "lake")
    exp = make_lake(lake)
    args = ["corpus", "--lake", lake, "-q", "--no-report", "--fasttext-model", models["fasttext"],
            "--lm-model", models["arpa"], "--word-list", f"en={models['words']}"]
    assert main(args + ["--min-fasttext-score", "0.5", "--max-word-list-ratio", "0.02"]) == 0
    res = decisions(lake)
    for d, k in exp["kinds"].items():
        rules = {x["rule"] for x in res[d]["rules"]}
        assert ("model_fasttext" in rules) == (k == "junk")
        assert ("word_list_ratio" in rules) == (k == "junk")
    capsys.readouterr()
    assert main(["corpus", "--lake", lake, "--word-list", models["words"]]) == 2
    assert "expected LANG=PATH" in capsys.readouterr().err
    assert main(["corpus", "--lake", lake, "--max-perplexity", "100"]) == 2
    assert "needs --lm-model" in capsys.readouterr().err
    assert main(["corpus", "--lake", lake, "--fasttext-model", str(tmp_path / "missing.bin")]) == 2


def test_fasttext_score_is_the_label_probability(models):
    """The stored score is fastText's own probability of the label, for the text the corpus
    keeps before repeated-text removal (good paragraphs joined by a space)."""
    import fasttext
    import pyarrow as pa

    from warclake.tasks.corpus.signals.models import score_documents

    rng = random.Random(1)
    text, labels = page([("nav", NAV, "bad"), ("p", good_text(rng), "good"), ("p", junk_text(rng), "good")])
    docs = pa.table({"docId": ["a", "b"], "text": [text, "nav\x1cunknownword"], "lang": ["en", "en"],
                     "paragraph_labels": pa.array([labels, None], pa.list_(pa.string()))})
    doc_rows, para_rows = score_documents(docs, ScoreModels(fasttext=models["fasttext"]))
    model = fasttext.load_model(models["fasttext"])
    line = " ".join(p.split("\x1c", 1)[1] for p, lab in zip(text.split("\n\n"), labels) if lab == "good")
    labs, probs = model.predict(line, k=-1)
    want = dict(zip(labs, probs))["__label__hq"]
    assert doc_rows.column("fasttext_score").to_pylist()[0] == pytest.approx(float(want))
    assert doc_rows.column("fasttext_score").to_pylist()[1] is None   # no word the model knows
    assert para_rows.num_rows == 0 and math.isfinite(want)


def test_report_shows_removals_per_rule_samples_and_charts(tmp_path, models):
    from warclake.tasks.corpus.steps.export import corpus_connection
    from warclake.tasks.corpus.steps.report_charts import chart_queries

    lake = str(tmp_path / "lake")
    exp = make_lake(lake)
    counts = run(lake, score_models(models), report=True, model_fasttext=0.5)
    page = counts["report"]
    folder = os.path.dirname(page)
    md = open(os.path.join(folder, "corpus.md"), encoding="utf-8").read()
    html = open(page, encoding="utf-8").read()
    # per rule: fired on, removed, removed by it alone -- the 8 spam documents by the classifier
    row = next(line for line in md.splitlines() if line.startswith("| model_fasttext "))
    assert [c.strip() for c in row.strip("|").split("|")][1:] == ["8", "8", "8"]
    # samples of what it removed: the spam's own text
    samples = [line for line in md.splitlines() if line.startswith("| model_fasttext ") and "http" in line]
    junk_urls = {d["url"] for i, d in exp["docs"].items() if exp["kinds"][i] == "junk"}
    assert len(samples) == 3 and all(any(u in s for u in junk_urls) for s in samples)
    for name in ("removals_by_rule_lang", "cluster_sizes", "score_fasttext_score", "score_perplexity",
                 "score_word_list_ratio"):
        data = open(os.path.join(folder, name + ".png"), "rb").read()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
        assert f"<img src='{name}.png'" in html and f"({name}.png)" in md
    con = corpus_connection(lake)
    charts = chart_queries(con)
    con.close()
    assert charts["score_fasttext_score"]["threshold"][0] == 0.5
    assert charts["score_perplexity"]["threshold"][0] is None   # no threshold set: none marked
    assert dict(charts["removals_by_rule_lang"].select("rule", "removed").iter_rows())["model_fasttext"] == 8


def test_sql_views_of_the_scores(scored):
    """The catalogue's views: document_scores (CCNet's perplexity thirds per language),
    paragraph_model_scores and document_model_scores."""
    from warclake.tasks.corpus.steps.export import corpus_connection

    lake, exp = scored
    con = corpus_connection(lake)
    try:
        rows = con.sql("SELECT docId, lang, perplexity_bucket, perplexity_rank, fasttext_score "
                       "FROM document_scores").pl().to_dicts()
        paras = con.sql("SELECT count(*) AS n, count(perplexity) AS p FROM paragraph_model_scores").pl().to_dicts()[0]
        labels = con.sql("SELECT DISTINCT fasttext_label FROM document_model_scores").pl()["fasttext_label"].to_list()
    finally:
        con.close()
    kinds = exp["kinds"]
    assert len(rows) == len(kinds)
    en = [r for r in rows if r["lang"] == "en"]
    # the 8 spam documents rank highest of the 20 English ones; the tail third is spam only
    ranked = [kinds[r["docId"]] for r in sorted(en, key=lambda r: r["perplexity_rank"])]
    assert ranked == ["good"] * 12 + ["junk"] * 8
    assert {kinds[r["docId"]] for r in en if r["perplexity_bucket"] == "tail"} == {"junk"}
    assert {r["perplexity_bucket"] for r in en if kinds[r["docId"]] == "good"} == {"head", "middle"}
    assert paras["n"] == sum(len(d["labels"]) for d in exp["docs"].values()) == paras["p"]
    assert labels == ["__label__hq"]


def test_fasttext_lines_equal_the_paragraph_definition():
    """The table-wide line builder gives the per-paragraph definition's lines on awkward
    documents: fewer labels than paragraphs, no labels, no path, links, line feeds inside
    a paragraph, empty and null texts, and generated pages."""
    import pyarrow as pa

    from warclake.tasks.corpus.signals.models import fasttext_line, fasttext_lines, kept_before_repeats
    from warclake.tasks.corpus.signals.normalise import split_paragraphs

    rng = random.Random(4)
    docs = [("p\x1cone\n\nq\x1ctwo\n\nr\x1cthree", ["good", "bad"]),
            ("no path at all\n\nx\x1ca \x02link\x03 here", None),
            ("a\x1cline\nfeed\r\n\nb\x1c", ["good", "good"]),
            ("", ["good"]), (None, None), ("a\x1cx\x1cy\n\n\n\nb\x1cz", ["good", "good", "good"]),
            ("a\x1conly", [])]
    for i in range(30):
        paras = [(f"body>div:nth-of-type({j})", rng.choice([good_text(rng, 1), junk_text(rng, 8), ""]),
                  rng.choice(["good", "bad"])) for j in range(rng.randint(1, 6))]
        text, labels = page(paras)
        docs.append((text, labels[: rng.randint(0, len(labels))] if i % 3 == 0 else labels))
    table = pa.table({"text": pa.array([d[0] for d in docs], pa.string()),
                      "paragraph_labels": pa.array([d[1] for d in docs], pa.list_(pa.string()))})
    want = []
    for text, labels in docs:
        paras = split_paragraphs(text)
        want.append(fasttext_line(paras, kept_before_repeats(labels, len(paras))))
    assert fasttext_lines(table) == want
    assert want[0] == "one" and want[1] == "no path at all a link here" and "\n" not in want[2]


@pytest.mark.usefixtures("prefect_harness")
def test_the_flow_scores_as_the_library_does(tmp_path, models):
    """The corpus-dump flow (its model-score tasks, one per partition of the archives)
    gives the library's decisions, scores and thresholds included."""
    from warclake.flows.corpus_flow import corpus_dump

    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    make_lake(a)
    make_lake(b)
    m = score_models(models)
    opts = StageOptions(decide=DecisionConfig(scores={"model_fasttext": 0.5, "word_list_ratio": 0.02}), models=m)
    state = corpus_dump(a, options=opts, report=False)
    assert state.is_completed(), state.message
    run(b, m, model_fasttext=0.5, word_list_ratio=0.02)
    strip = lambda rows: {d: {k: v for k, v in r.items() if k != "run_id"} for d, r in rows.items()}  # noqa: E731
    assert strip(decisions(a)) == strip(decisions(b))
    assert sum(not r["kept"] and r["rule"] == "model_fasttext" for r in decisions(a).values()) == 8


def test_word_lists_match_whole_words_or_characters_by_language(tmp_path):
    from warclake.tasks.corpus.signals.models import WordList, lm_tokens

    path = tmp_path / "list.txt"
    path.write_text("ass\nCheap  Pills\n死ね\n\n", encoding="utf-8")
    en, ja = WordList(str(path), "en"), WordList(str(path), "ja")
    assert en.matches(normalise("A class of cheap pills, CHEAP PILLS! ass.")) == (3, 3 + 11 + 11)
    assert en.matches(normalise("お前は死ねと言った")) == (0, 0)    # no word boundary in Japanese text
    assert ja.matches(normalise("お前は死ねと言った")) == (1, 2)
    assert ja.matches(normalise("a class")) == (1, 3)               # anywhere, as Japanese has no spaces
    assert lm_tokens("日本 語", "chars") == ["日", "本", "語"] and lm_tokens("a  b", "words") == ["a", "b"]


# -- the compiled fastText scorer ----------------------------------------------------------

compiled_only = pytest.mark.skipif(os.environ.get("WARCLAKE_NATIVE") == "0",
                                   reason="WARCLAKE_NATIVE=0: the compiled scorer is off")


def awkward_table(seed: int = 11, n: int = 60):
    """Generated pages (prose, spam, navigation) and awkward documents: no labels, fewer
    labels than paragraphs, no path, link markers inside words, every separator fastText
    splits on, Unicode spaces it does not split on, ``</s>`` and label-like tokens inside the
    text, empty and null texts, and a long document."""
    import pyarrow as pa

    rng = random.Random(seed)
    docs = [("p\x1cthe fox\x0bjumps\x0cover\x00the\tdog\r\nagain", None),
            ("p\x1cCaf\u00e9 na\u00efve \u65e5\u672c\u8a9e\u3000\U0001F600\u00a0word", ["good"]),
            ("p\x1cprose before </s> never read", None), ("p\x1cends here </s>\n\nq\x1cnever read", None),
            ("p\x1c__label__hq __label__junk casino", None), ("p\x1c\x02\x03", None), ("", None), (None, None),
            ("no path at all\n\n\n\nx\x1cbuy che\x02ap\x03 pills", ["good", "bad", "good"]),
            ("nav\x1c" + " ".join(good_text(rng, 40) for _ in range(8)), None)]
    for i in range(n):
        paras = [("body>nav", NAV, "bad")] + [
            ("body>p", rng.choice([good_text(rng, 2), junk_text(rng, 20), ""]), rng.choice(["good", "good", "bad"]))
            for _ in range(rng.randint(1, 5))]
        text, labels = page(paras)
        docs.append((text, labels[: rng.randint(0, len(labels))] if i % 5 == 0 else labels))
    return pa.table({"text": pa.array([d[0] for d in docs], pa.string()),
                     "paragraph_labels": pa.array([d[1] for d in docs], pa.list_(pa.string()))})


def model_variants(folder: str, base: str) -> list[tuple[str, str]]:
    """(path, what) of models over the tiny classifier's vocabulary: each loss fastText's
    classifiers use, with word n-grams and character n-grams, random weights."""
    import numpy as np

    from warclake.tasks.corpus.signals.fasttext_format import (
        LOSS_HS,
        LOSS_OVA,
        LOSS_SOFTMAX,
        read_model,
        write_model,
    )

    m = read_model(base)
    words = [(w.decode(), int(c)) for w, c in zip(m.entries[:m.nwords], m.counts[:m.nwords])] + [("</s>", 1)]
    out = [(base, "naive Bayes, softmax")]
    rng = np.random.default_rng(3)
    for loss, labels, ngrams, bucket, minn, maxn, dim in (
            (LOSS_SOFTMAX, 2, 2, 1000, 0, 0, 16), (LOSS_SOFTMAX, 3, 1, 500, 3, 6, 8), (LOSS_HS, 5, 2, 300, 0, 0, 10),
            (LOSS_OVA, 3, 3, 200, 2, 4, 4)):
        path = os.path.join(folder, f"variant-{loss}-{ngrams}-{maxn}.bin")
        labs = [("__label__hq", 50), ("__label__junk", 30)] + [(f"__label__x{k}", 9 - k) for k in range(labels - 2)]
        write_model(path, words, labs, rng.normal(0, 1, (len(words) + bucket, dim)).astype(np.float32),
                    rng.normal(0, 1, (labels, dim)).astype(np.float32), ngrams, bucket, loss, minn, maxn)
        out.append((path, f"loss {loss}, word {ngrams}-grams, char {minn}-{maxn}-grams"))
    return out


@compiled_only
def test_the_compiled_scorer_gives_the_package_s_probabilities(models, tmp_path):
    """Every document of awkward and generated tables, with models of each loss and n-gram
    setting: the compiled scorer's probability (from the table's buffers) is the fasttext
    package's predict for the document's line within 1e-5 (float32), null for the same
    documents; so is the Python definition's."""
    import fasttext
    import pyarrow as pa

    from warclake.tasks.corpus.signals import fasttext_native as fn
    from warclake.tasks.corpus.signals.fasttext_format import read_model
    from warclake.tasks.corpus.signals.models import fasttext_lines, package_scores

    assert fn.compiled_module() is not None and fn.STATUS == "compiled", fn.REASON
    table = awkward_table()
    lines = fasttext_lines(table)
    scored = 0
    for path, what in model_variants(str(tmp_path), models["fasttext"]):
        m = read_model(path)
        for label in ("__label__hq", "__label__junk", "__label__absent"):
            got = fn.score_table(fn.compiled_model(fn.compiled_module(), m), table, label).to_pylist()
            want = package_scores(fasttext.load_model(path), lines, label)
            assert fn.scores_equal(got, want), (what, label, got, want)
            if label == "__label__hq":   # the Python definition is slow: one label is enough
                assert fn.scores_equal(fn.reference_scores(m, lines, label), want), (what, label)
            scored += sum(v is not None for v in got)
            assert got[6] is None and got[7] is None     # the empty and the null text
            # a table in chunks (as several row groups read together) scores each the same
            two = pa.concat_tables([table.slice(0, 25), table.slice(25)])
            assert fn.score_table(fn.compiled_model(fn.compiled_module(), m), two, label).to_pylist() == got
            if label == "__label__absent":
                assert {v for v in got if v is not None} == {0.0}
    assert scored > 500


def test_the_stage_s_scores_are_the_package_s_of_the_text_the_corpus_keeps(scored, models):
    """The decisions' fastText scores (by the compiled scorer, or the package) are the
    package's for the text the corpus emits: the good paragraphs less those a repeated-text
    rule dropped (SHARED, on 10 sites), so those 10 documents are scored again at decision
    time; the per-archive score (model_scores) keeps SHARED."""
    import fasttext

    from warclake.tasks.corpus.signals.models import package_scores

    lake, exp = scored
    res = decisions(lake)
    dropped = {(r["docId"], r["idx"]) for r in rows(lake, "decisions/paragraphs")}
    per_archive = {r["docId"]: r["fasttext_score"] for r in rows(lake, "model_scores")}
    model = fasttext.load_model(models["fasttext"])
    cut = 0
    for d in exp["docs"].values():
        bodies = [p.split("\x1c", 1)[1] for p in d["text"].split("\n\n")]
        good = [(i, b) for i, (b, lab) in enumerate(zip(bodies, d["labels"]), 1) if lab == "good"]
        kept = " ".join(b for i, b in good if (d["docId"], i) not in dropped)
        want = package_scores(model, [kept], "__label__hq")[0]
        assert res[d["docId"]]["fasttext_score"] == pytest.approx(want, abs=1e-5)
        whole = package_scores(model, [" ".join(b for _, b in good)], "__label__hq")[0]
        assert per_archive[d["docId"]] == pytest.approx(whole, abs=1e-5)
        cut += SHARED in " ".join(b for _, b in good) and want != whole
    assert cut == 10


def test_the_signing_pass_scores_as_the_model_score_step(tmp_path, models):
    """Signing an archive with the models writes the model-score step's rows and state, as
    the step makes them on its own (after a new model); the step then has nothing to do."""
    from warclake.tasks.corpus.signals.archive_step import sign_archive
    from warclake.tasks.corpus.signals.score_step import STEP, score_archive
    from warclake.tasks.corpus.signals.summaries import finished_archives
    from warclake.tasks.corpus.storage.layout import CorpusLayout

    lake = str(tmp_path / "lake")
    make_lake(lake)
    m = score_models(models)
    layout = CorpusLayout(lake)
    for warc, summary in finished_archives(lake, DUMP):
        res = sign_archive(lake, DUMP, warc, summary, None, m)
        key = res["key"]
        assert res["scored"] > 0
        fused = [pq.read_table(layout.file(t, DUMP, warc)) for t in ("model_scores", "para_model_scores")]
        assert score_archive(layout, DUMP, warc, key, m)["done"] == "skipped"
        layout.clear_state(STEP, DUMP, warc)
        assert score_archive(layout, DUMP, warc, key, m)["done"] == "scored"
        alone = [pq.read_table(layout.file(t, DUMP, warc)) for t in ("model_scores", "para_model_scores")]
        assert [t.to_pylist() for t in fused] == [t.to_pylist() for t in alone]
        assert fused[0].column("fasttext_score").null_count == 0


def test_a_quantised_model_is_scored_by_the_package_or_refused_in_one_line(tmp_path, models, monkeypatch):
    """A quantised model (.ftz) is not read by the compiled scorer: the package scores it
    when installed; without the package the error is one line naming the model."""
    import builtins

    import fasttext

    from warclake.tasks.corpus.signals import models as models_mod
    from warclake.tasks.corpus.signals.fasttext_format import UnsupportedModel, read_model

    # fastText quantises a matrix of 256 rows or more: the vocabulary with word bigrams
    path = next(p for p, what in model_variants(str(tmp_path), models["fasttext"]) if "word 2-grams" in what)
    q = fasttext.load_model(path)
    q.quantize(qnorm=True, cutoff=0, retrain=False)
    ftz = str(tmp_path / "quality.ftz")
    q.save_model(ftz)
    with pytest.raises(UnsupportedModel, match="quantised"):
        read_model(ftz)
    table = awkward_table(n=10)
    got = models_mod.document_fasttext_scores(table, ScoreModels(fasttext=ftz)).to_pylist()
    want = models_mod.package_scores(fasttext.load_model(ftz), models_mod.fasttext_lines(table), "__label__hq")
    assert got == want and sum(v is not None for v in got) > 5
    if os.environ.get("WARCLAKE_NATIVE") != "0":
        real_import = builtins.__import__

        def no_fasttext(name, *a, **kw):
            if name == "fasttext":
                raise ImportError("No module named 'fasttext'")
            return real_import(name, *a, **kw)
        monkeypatch.setattr(builtins, "__import__", no_fasttext)
        with pytest.raises(ValueError, match=r"quality\.ftz: a quantised input matrix") as err:
            models_mod.compiled_fasttext(ftz)
        assert "\n" not in str(err.value)


@compiled_only
def test_without_the_scorer_or_when_it_disagrees_the_package_scores_with_one_warning(models):
    """The scorer not built, or giving other values than the definition on the check
    documents: the package scores (the same values), with one warning line naming why."""
    from support.native_fallback import hiding, run_python, warclake_lines

    score = ("import pyarrow as pa\n"
             "from warclake.tasks.corpus.signals.models import ScoreModels, document_fasttext_scores\n"
             "from warclake.tasks.corpus.signals import fasttext_native as fn\n"
             "t = pa.table({'text': ['p\\x1cthe quick brown fox jumps over the lazy dog', None],"
             " 'paragraph_labels': pa.array([None, None], pa.list_(pa.string()))})\n"
             f"s = document_fasttext_scores(t, ScoreModels(fasttext={models['fasttext']!r})).to_pylist()\n"
             "print(fn.STATUS, repr(s[0]), s[1])\n")
    runs = {"compiled": run_python(score),
            "hidden": run_python(hiding("corpus_fasttext") + score),
            "disagrees": run_python("from warclake.tasks.corpus.signals import fasttext_native as fn\n"
                                    "fn.reference_scores = lambda m, lines, label: [0.5 for _ in lines]\n" + score)}
    out = {k: p.stdout.split() for k, p in runs.items()}
    assert all(p.returncode == 0 for p in runs.values()), {k: p.stderr for k, p in runs.items()}
    assert out["compiled"][0] == "compiled" and warclake_lines(runs["compiled"].stderr) == []
    for k in ("hidden", "disagrees"):
        assert out[k][0] == "python" and out[k][2] == "None"
        assert float(out[k][1]) == pytest.approx(float(out["compiled"][1]), abs=1e-5)
        lines = warclake_lines(runs[k].stderr)
        assert len(lines) == 1 and "using the fasttext package" in lines[0]
    assert "not built" in warclake_lines(runs["hidden"].stderr)[0]
    assert "failed its check" in warclake_lines(runs["disagrees"].stderr)[0]

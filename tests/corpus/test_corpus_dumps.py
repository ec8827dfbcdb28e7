"""Which dumps a corpus run judges, and what ``--drop-all-copies`` does across dumps.

- ``warclake corpus --dump D`` judges D and every earlier dump not judged yet, in order:
  D is compared against the earlier dumps, so their signatures and statistics must exist,
  and their decisions come out the same as if each had been judged on its own.
- A dump's decisions are final once made. ``--drop-all-copies`` drops every copy within a
  dump, and a later copy of an earlier document; the earlier document, judged before the
  copy existed, stays in the corpus.
"""
from __future__ import annotations

import glob
import os
import random
import shutil
import subprocess
import sys

import pyarrow.parquet as pq

from support.corpus_lake import T0, doc_id, known_lake, page, sentence, write_archive
from warclake.tasks.corpus.checks import check_inputs, dumps_to_process
from warclake.tasks.corpus.settings import DecisionConfig
from warclake.tasks.corpus.stage import StageOptions, finish

D1, D2 = "CC-MAIN-2024-18", "CC-MAIN-2024-22"


def run(lake, dump=None, **decide):
    dumps = dumps_to_process(lake, dump)
    return finish(lake, dumps, check_inputs(lake, dumps), StageOptions(decide=DecisionConfig(**decide)),
                  report=False)


def decision_files(lake, dump):
    root = os.path.join(lake, "corpus", "decisions")
    return {os.path.relpath(p, root): open(p, "rb").read()
            for p in sorted(glob.glob(os.path.join(root, "*", f"dump={dump}", "*.parquet")))}


def decisions(lake, dump):
    t = pq.read_table(os.path.join(lake, "corpus", "decisions", "documents", f"dump={dump}", "decisions.parquet"))
    return {r["docId"]: r for r in t.to_pylist()}


def two_dumps(lake: str) -> dict:
    """The known dump, then a later one: a copy of a page that is unique in the first dump,
    a recrawl of the first dump's copied article, and a page of its own."""
    exp = known_lake(lake, D1)
    rng = random.Random(12)
    a0 = next(d for d in exp["docs"] if d["docId"] == doc_id(D1, "a0"))
    orig = next(d for d in exp["docs"] if d["docId"] == exp["orig"])
    own, labels = page([("body>article>p", sentence(rng), "good") for _ in range(3)])
    later = [dict(a0, docId=doc_id(D2, "a0-copy"), url="https://copies.example.org/a0", date=T0.replace(month=6)),
             dict(orig, docId=doc_id(D2, "orig-again"), date=T0.replace(month=6)),
             {"docId": doc_id(D2, "own"), "url": "https://own.example.com/", "text": own, "labels": labels}]
    write_archive(lake, D2, "arch-10000.warc.gz", later)
    return {**exp, "a0": a0["docId"], "later": [d["docId"] for d in later]}


def test_dump_option_judges_the_earlier_undone_dumps_first(tmp_path):
    together, apart = str(tmp_path / "together"), str(tmp_path / "apart")
    two_dumps(together)
    shutil.copytree(together, apart)
    p = subprocess.run([sys.executable, "-m", "warclake", "corpus", "--lake", together, "--dump", D2,
                        "--no-report", "-q"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # one line per dump judged, the earlier first
    assert [ln.split(":")[0] for ln in p.stdout.splitlines()] == [D1, D2]
    run(apart, D1)
    assert os.path.isdir(os.path.join(apart, "corpus", "decisions")) and not decision_files(apart, D2)
    run(apart, D2)
    for d in (D1, D2):
        assert decision_files(together, d) == decision_files(apart, d) and decision_files(together, d)


def test_drop_all_copies_across_dumps_keeps_the_earlier_decision(tmp_path):
    lake = str(tmp_path / "lake")
    exp = two_dumps(lake)
    run(lake, D1, drop_all_copies=True)
    first = decision_files(lake, D1)
    run(lake, drop_all_copies=True)
    assert decision_files(lake, D1) == first          # final once made
    early, later = decisions(lake, D1), decisions(lake, D2)
    # within the first dump, every copy of the article goes
    assert all(not early[x]["kept"] and early[x]["rule"] == "duplicate_all_copies"
               for x in (exp["orig"], exp["copy"], exp["edited"]))
    # the page unique in the first dump stays; its later copy goes, naming it
    copy, again, own = exp["later"]
    assert early[exp["a0"]]["kept"]
    assert not later[copy]["kept"] and later[copy]["rule"] == "exact_duplicate_earlier_dump"
    assert later[copy]["duplicate_of"] == exp["a0"]
    # the recrawled article goes too (its earlier copies were dropped already), the new page stays
    assert not later[again]["kept"] and later[again]["rule"] == "exact_duplicate_earlier_dump"
    assert later[own]["kept"]

"""The corpus stage run over the known lake of ``corpus_lake``, and what it decided."""
from __future__ import annotations

import glob
import os
import shutil

import pyarrow.parquet as pq

from support.corpus_lake import T0, doc_id, known_lake, page, sentence, write_archive
from warclake.tasks.corpus.checks import check_inputs, dumps_to_process
from warclake.tasks.corpus.settings import DecisionConfig
from warclake.tasks.corpus.stage import StageOptions, finish

DUMP = "CC-MAIN-2024-18"


def run(lake, dump=None, report=False, **decide):
    dumps = dumps_to_process(str(lake), dump)
    opts = StageOptions(decide=DecisionConfig(**decide))
    return finish(str(lake), dumps, check_inputs(str(lake), dumps), opts, report=report)


def decisions(lake, dump=DUMP) -> dict[str, dict]:
    t = pq.read_table(os.path.join(lake, "corpus", "decisions", "documents", f"dump={dump}", "decisions.parquet"))
    return {r["docId"]: r for r in t.to_pylist()}


def decision_bytes(lake) -> dict[str, bytes]:
    root = os.path.join(lake, "corpus", "decisions")
    return {os.path.relpath(p, root): open(p, "rb").read()
            for p in sorted(glob.glob(os.path.join(root, "**", "*.parquet"), recursive=True))}


def second_dump(lake, exp, dump="CC-MAIN-2024-22"):
    """A later dump: the original article again (recrawled under a new record id), a
    near copy of it, and new pages of site A with its navigation bar."""
    import random

    rng = random.Random(11)
    orig = next(d for d in exp["docs"] if d["docId"] == exp["orig"])
    docs = [dict(orig, docId=doc_id(dump, "again"), date=T0.replace(month=6))]
    paras = orig["text"].split("\n\n")
    near = "\n\n".join(paras[:-1] + [paras[-1] + " Edited."])
    docs.append({"docId": doc_id(dump, "near"), "url": "https://other.example.com/x", "text": near,
                 "labels": orig["labels"]})
    for i in range(2):
        t, lab = page([("body>nav>ul", "Home About Contact Archive", "bad"),
                       ("body>article>p", sentence(rng), "good"), ("body>article>p", sentence(rng), "good")])
        docs.append({"docId": doc_id(dump, f"a-new{i}"), "url": f"https://a.example.com/new/{i}", "text": t,
                     "labels": lab})
    write_archive(lake, dump, "arch-10000.warc.gz", docs)
    return docs


def split_lake(src: str, dst: str, n: int) -> None:
    """The known lake's documents spread over ``n`` archives."""
    rows = []
    for name in sorted(os.listdir(os.path.join(src, "documents", f"dump={DUMP}"))):
        rows += pq.read_table(os.path.join(src, "documents", f"dump={DUMP}", name)).to_pylist()
    for i in range(n):
        docs = [{**r, "labels": r["paragraph_labels"]} for r in rows[i::n]]
        write_archive(dst, DUMP, f"arch-{i:05d}.warc.gz", docs)


def judged_known_lake(root) -> dict:
    """The known lake at ``root/pristine``, a copy judged by the library run without Prefect
    at ``root/judged``: {"pristine", "decisions" (their bytes), "exp" (what the lake holds)}."""
    pristine, judged = os.path.join(root, "pristine"), os.path.join(root, "judged")
    exp = known_lake(pristine, DUMP)
    shutil.copytree(pristine, judged)
    run(judged)
    return {"pristine": pristine, "decisions": decision_bytes(judged), "exp": exp}

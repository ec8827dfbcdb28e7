"""One definition of page chrome: the paragraph decisions on a lake without labels take
a paragraph under a chrome path as not main content by ``quality.is_chrome_path``, the
whole-word definition the README gives (``.footnote`` and ``.shareholder`` are not
chrome; ``footer`` and ``.site-footer`` are)."""
from __future__ import annotations

import glob
import os
import random

import pyarrow as pa
import pyarrow.parquet as pq

from support.corpus_lake import doc_id, sentence, write_archive
from warclake.tasks.corpus.checks import check_inputs, dumps_to_process
from warclake.tasks.corpus.signals.quality import is_chrome_path
from warclake.tasks.corpus.stage import StageOptions, finish
from warclake.tasks.corpus.steps.decide import chrome_paths

DUMP = "CC-MAIN-2024-22"
PATHS = ["body>div.footnote>p", "body>div#shareholder-letter>p", "body>div.social-links>p", "body>div.banner>p",
         "body>footer>p", "body>div.site-footer>p", "body>nav#menu>ul", "body>div.sidebar-right>p",
         "body>div.left-sidebar>p", "body>div#comments>p", "body>div.commented>p", "body>header>h1"]


def test_the_decisions_ask_the_quality_rules_definition():
    assert chrome_paths(pa.array(PATHS * 2)).to_pylist() == [is_chrome_path(p) for p in PATHS] * 2
    assert not is_chrome_path("body>div.footnote>p") and not is_chrome_path("body>div#shareholder-letter>p")
    assert is_chrome_path("body>footer>p") and is_chrome_path("body>div.site-footer>p")


def test_a_repeated_footnote_without_labels_is_main_content_and_a_repeated_footer_is_not(tmp_path):
    lake = str(tmp_path / "lake")
    rng = random.Random(5)
    footnote, footer = sentence(rng, 2), sentence(rng, 1)
    docs = []
    for i in range(4):   # 4 pages of one host: at the site-template threshold (3), under the good one (10)
        text = "\n\n".join([f"body>article>p\x1c{sentence(rng)}", f"body>div.footnote>p\x1c{footnote}",
                            f"body>footer>p\x1c{footer}"])
        docs.append({"docId": doc_id(DUMP, f"p{i}"), "url": f"https://news.example.com/{i}", "text": text,
                     "labels": None})
    write_archive(lake, DUMP, "arch-00000.warc.gz", docs)
    dumps = dumps_to_process(lake, DUMP)
    finish(lake, dumps, check_inputs(lake, dumps), StageOptions(), report=False)
    files = glob.glob(os.path.join(lake, "corpus", "decisions", "paragraphs", f"dump={DUMP}", "*.parquet"))
    dropped = {(r["idx"], r["rule"]) for f in files for r in pq.read_table(f).to_pylist()}
    assert dropped == {(3, "site_template")}    # the footer, on every page; the footnote stays

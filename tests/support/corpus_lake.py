"""Small lakes for the corpus stage's tests: documents written by the data contract, one
summary per archive, with known duplicates, templates, notices and quotations."""
from __future__ import annotations

import json
import os
import random
import uuid
from datetime import datetime, timedelta, timezone

import pyarrow as pa
import pyarrow.parquet as pq

from warclake.tasks.extract.config import SCHEMA_VERSION
from warclake.tasks.lake.schema import DOCUMENTS

T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)
_NOUNS = ("river mountain lantern harbour meadow orchard garden market bridge candle forest island "
          "village teacher library museum station kitchen window letter journey morning evening "
          "winter summer festival painter doctor farmer engine harvest council bakery ferry").split()
_ADJS = "quiet copper violet silver marble old busy narrow bright distant gentle crowded".split()
_VERBS = "visited painted repaired described opened crossed followed remembered built carried".split()


def sentence(rng: random.Random, n: int = 4) -> str:
    """A few clauses of ordinary English (stop words included, as quality rules expect)."""
    clauses = []
    for _ in range(n):
        clauses.append(f"the {rng.choice(_ADJS)} {rng.choice(_NOUNS)} of the {rng.choice(_NOUNS)} "
                       f"was {rng.choice(_VERBS)} with the {rng.choice(_NOUNS)} and that "
                       f"{rng.choice(_NOUNS)} {rng.choice(_VERBS)} a {rng.choice(_ADJS)} {rng.choice(_NOUNS)}")
    return " ".join(c.capitalize() + "." for c in clauses)


def doc_id(dump: str, key: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{dump}/{key}"))


def page(paras: list[tuple[str, str, str]]) -> tuple[str, list[str]]:
    """(text, labels) from (path, text, label) triples."""
    return "\n\n".join(f"{p}\x1c{t}" for p, t, _ in paras), [lab for _, _, lab in paras]


def write_archive(lake: str, dump: str, warc: str, docs: list[dict], schema_version: str = SCHEMA_VERSION,
                  summary: bool = True) -> None:
    rows = []
    for i, d in enumerate(docs):
        rows.append({"text": d["text"], "docId": d["docId"], "url": d["url"], "charset": "utf-8",
                     "lang": d.get("lang", "en"), "date": d.get("date", T0), "dump": dump,
                     "warc_file": warc, "warc_offset": i * 1000, "charset_source": "meta",
                     "lang_score": 0.99, "boilerplate": "sieve", "paragraph_labels": d.get("labels")})
    path = os.path.join(lake, "documents", f"dump={dump}", warc + ".parquet")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=DOCUMENTS), path)
    if summary:
        s = {"dump": dump, "warc_file": warc, "status": "complete", "schema_version": schema_version,
             "config_fingerprint": "test", "extractor_version": "test", "documents": len(rows),
             "finished": "2024-05-01T00:00:00+00:00"}
        spath = os.path.join(lake, "files", f"dump={dump}", warc + ".json")
        os.makedirs(os.path.dirname(spath), exist_ok=True)
        with open(spath, "w") as fh:
            json.dump(s, fh)


def known_lake(lake: str, dump: str = "CC-MAIN-2024-18", seed: int = 7) -> dict:
    """A dump of two archives with known answers; returns what each rule must find."""
    rng = random.Random(seed)
    nav = "Home About Contact Archive"
    notice = "Text is available under the Creative Commons Attribution-ShareAlike License 4.0."
    quote = sentence(rng, 2)
    docs, expect = [], {"site_template": set(), "repeated_across_sites": set(), "kept_quote": set()}
    # site A: five pages sharing a navigation bar (its template), each with its own article
    for i in range(5):
        did = doc_id(dump, f"a{i}")
        paras = [("body>nav>ul", nav, "bad"), ("body>article>p", sentence(rng), "good"),
                 ("body>article>p", sentence(rng), "good")]
        if i < 2:   # the quotation on two sites: kept
            paras.append(("body>article>blockquote", quote, "good"))
            expect["kept_quote"].add((did, 4))
        text, labels = page(paras)
        docs.append({"docId": did, "url": f"https://a.example.com/post/{i}", "text": text, "labels": labels,
                     "date": T0 + timedelta(days=i)})
        expect["site_template"].add((did, 1))
    # five sites carrying the same licence notice in their footer
    for i in range(5):
        did = doc_id(dump, f"n{i}")
        paras = [("body>main>p", sentence(rng), "good"), ("body>main>p", sentence(rng), "good"),
                 ("body>footer>p.licence", notice, "bad")]
        if i == 0:
            paras.append(("body>main>blockquote", quote, "good"))
            expect["kept_quote"].add((did, 4))
        text, labels = page(paras)
        docs.append({"docId": did, "url": f"https://site{i}.org/page", "text": text, "labels": labels})
        expect["repeated_across_sites"].add((did, 3))
    # an article copied to another site word for word, and a third copy with a small edit
    body = [sentence(rng) for _ in range(6)]
    orig, copy, edited = doc_id(dump, "orig"), doc_id(dump, "copy"), doc_id(dump, "edited")
    t, lab = page([("body>div#post>p", s, "good") for s in body])
    docs.append({"docId": orig, "url": "https://blog.example.net/story", "text": t, "labels": lab,
                 "date": T0 - timedelta(days=30)})
    docs.append({"docId": copy, "url": "https://mirror.example.org/story", "text": t, "labels": lab,
                 "date": T0})
    body2 = list(body)
    body2[3] = body2[3][:-30] + " (updated)."   # a small edit that leaves it shorter
    t2, lab2 = page([("body>div.entry>p", s, "good") for s in body2])
    docs.append({"docId": edited, "url": "https://scraper.example.info/story", "text": t2, "labels": lab2})
    # a page with almost no text (a quality rule drops it)
    short = doc_id(dump, "short")
    t3, lab3 = page([("body>p", "Loading", "good")])
    docs.append({"docId": short, "url": "https://tiny.example.com/", "text": t3, "labels": lab3})
    write_archive(lake, dump, "arch-00000.warc.gz", docs[:9])
    write_archive(lake, dump, "arch-00001.warc.gz", docs[9:])
    expect.update(orig=orig, copy=copy, edited=edited, short=short, docs=docs)
    return expect

"""A near-duplicate evaluation set made from real development pages, with known clusters.

Source pages are the gold pages of ``../shared/data/gold`` (CLEANEVAL, Dragnet, the Modern
Content Extractor Benchmark), each decoded and cut into paragraphs by warclake's own
extraction, so texts are in the lake format. A paragraph is *main* when most of its word
3-grams are in the page's gold text, *template* otherwise; the template before the first
main paragraph is the page's header, after the last its footer.

From a seed, per split, deterministically:

* a **cluster** per base page: the page as extracted plus one copy per kind of change —
  ``template`` (header and footer of another base page around the same main text),
  ``ads_dates`` (advertisement and date lines inserted among the main paragraphs),
  ``small_edits`` (a few words of the main text replaced, dropped or swapped),
  ``truncation`` (the last 10-20 % of the main text cut), ``reordered`` (the main text's
  blocks in another order);
* **hard negatives**: two ``same_site`` pages per base page, its header and footer around the
  main text of a page used nowhere else (different pages of one site sharing its template);
* ``unrelated`` pages, as extracted.

The split is the gold readers' fixed one (:func:`warclake.tasks.evaluation.gold.split_of`
on the page id, about one page in five held back): only the ``tuning`` part may be used to
choose anything; scores are reported on ``heldout``.

Written as a small lake, ``<out>/documents/dump=neardup-<split>/neardup.parquet`` (the
documents schema, boilerplate labels by the ``sieve`` model) with its ``files/`` summary, so
the corpus stage runs over it, and ``<out>/truth/<split>.parquet``: docId, cluster, kind,
source page, and the role of each paragraph: ``template`` (the header and footer of the
page whose URL it has), ``main``, ``interior`` (other paragraphs among the main ones:
captions, share buttons, related links), ``inserted`` (by the ads_dates change).

    python -m tools.measure.neardup_set --out DIR [--seed S] [--gold DIR]
"""
from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import sys
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tools import SHARED_DATA
from warclake.tasks.extract.paragraph import LINK_END, LINK_START, Paragraph, join_paragraphs

KINDS = ("template", "ads_dates", "small_edits", "truncation", "reordered")
NEGATIVE_KINDS = ("same_site", "unrelated")
SPLITS = ("tuning", "heldout")
# $WARCLAKE_DATA/gold, or ../shared/data/gold beside a checkout
DEFAULT_GOLD = str(Path(os.environ.get("WARCLAKE_DATA") or SHARED_DATA) / "gold")

TRUTH = pa.schema([("docId", pa.string()), ("cluster", pa.string()), ("kind", pa.string()),
                   ("source", pa.string()),        # the page whose template (and URL) it has
                   ("main_source", pa.string()),   # the page whose main text it has
                   ("roles", pa.list_(pa.string()))])

# Lines inserted by the ads_dates change, written for this set.
AD_LINES = ("Advertisement", "Sponsored content", "Continue reading below",
            "Subscribe to our newsletter for the latest stories",
            "Recommended for you: more stories from around the web",
            "Shop the best deals of the week on our partner sites")
AD_PATH = "body>div.ad-slot>div"
DATE_PATH = "body>div>p.dateline"

_WORD = re.compile(r"\w+")


def _norm_words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _shingles(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + 3]) for i in range(len(words) - 2)}


@dataclass
class SourcePage:
    id: str
    url: str
    paragraphs: list[Paragraph]
    main: list[bool]
    lang: str

    @property
    def first_main(self) -> int:
        return self.main.index(True)

    @property
    def last_main(self) -> int:
        return len(self.main) - 1 - self.main[::-1].index(True)

    def header(self) -> list[Paragraph]:
        return self.paragraphs[:self.first_main]

    def footer(self) -> list[Paragraph]:
        return self.paragraphs[self.last_main + 1:]

    def body(self) -> list[tuple[Paragraph, str]]:
        """The paragraphs from the first to the last main one, with their roles (``main``
        or ``interior``)."""
        sl = slice(self.first_main, self.last_main + 1)
        return [(p, "main" if m else "interior") for p, m in zip(self.paragraphs[sl], self.main[sl])]

    def main_chars(self) -> int:
        return sum(len(p.text) for p, m in zip(self.paragraphs, self.main) if m)


def mark_main(paragraphs: list[Paragraph], gold: str) -> list[bool]:
    """A paragraph is main content when at least 80 % of its word 3-grams (it needs three)
    are in the gold text."""
    gold_sh = _shingles(_norm_words(gold))
    out = []
    for p in paragraphs:
        sh = _shingles(_norm_words(p.plain))
        out.append(len(sh) >= 3 and sum(s in gold_sh for s in sh) >= 0.8 * len(sh))
    return out


def _read_dragnet(root: Path) -> list:
    from warclake.tasks.evaluation.gold import GoldPage, normalise_gold

    pages = []
    for gold_file in sorted((root / "GoldStandard").glob("*.txt")):
        html = root / "input" / f"{gold_file.stem}.html"
        if html.exists():
            text = gold_file.read_text("utf-8", "replace").split("!@#$%^&*()  COMMENTS")[0]
            pages.append(GoldPage(f"dragnet/{gold_file.stem}", html.read_bytes(), normalise_gold(text)))
    return pages


def gold_pages(gold_root: str) -> list:
    """Every gold page of the three sets with independent main-content truth."""
    from warclake.tasks.evaluation.gold import read_cleaneval, read_wceb

    root = Path(gold_root)
    pages = []
    if (root / "cleaneval").is_dir():
        pages += read_cleaneval(root / "cleaneval")
    if (root / "dragnet" / "GoldStandard").is_dir():
        pages += _read_dragnet(root / "dragnet")
    if (root / "wceb_modern_1000").is_dir():
        pages += read_wceb(root / "wceb_modern_1000")
    if not pages:
        raise FileNotFoundError(f"no gold pages under {gold_root} (cleaneval/, dragnet/, wceb_modern_1000/)")
    return pages


def source_page(page) -> SourcePage | None:
    """The page through warclake's extraction; None when it has too little main text or
    template to make changes of (3 main paragraphs, 400 main characters, 2 template
    paragraphs around them)."""
    from warclake.tasks.evaluation.gold import decode_page
    from warclake.tasks.extract.boilerplate.text import guess_language
    from warclake.tasks.extract.html_paragraphs import extract_paragraphs

    try:
        paragraphs = extract_paragraphs(decode_page(page))
    except Exception:   # a page the parser refuses is simply not used
        return None
    main = mark_main(paragraphs, page.gold)
    if sum(main) < 3:
        return None
    sp = SourcePage(page.id, page.url or "", paragraphs, main,
                    guess_language([p.plain for p in paragraphs]) or "en")
    if sp.main_chars() < 400 or len(sp.header()) + len(sp.footer()) < 2:
        return None
    return sp


def distinct_main_texts(pages: list[SourcePage], overlap: float = 0.5) -> list[SourcePage]:
    """The pages, in id order, without those whose main text shares at least ``overlap`` of
    the smaller shingle set with an earlier page's: the gold sets hold a few copies of
    one article (a page in two sets, a story on two sites), which would otherwise be
    'unrelated' pages that are really duplicates."""
    kept, owners = [], {}
    for sp in sorted(pages, key=lambda p: p.id):
        sh = _shingles(_norm_words(" ".join(p.plain for p, m in zip(sp.paragraphs, sp.main) if m)))
        hits: dict[int, int] = {}
        for s in sh:
            o = owners.get(s)
            if o is not None:
                hits[o] = hits.get(o, 0) + 1
        if any(n >= overlap * min(len(sh), kept[o][1]) for o, n in hits.items()):
            continue
        idx = len(kept)
        kept.append((sp, len(sh)))
        for s in sh:
            owners.setdefault(s, idx)
    return [sp for sp, _ in kept]


# ---- the changes ---------------------------------------------------------------------

Doc = list[tuple[Paragraph, str]]   # paragraphs with their roles


def _frame(page: SourcePage, body: Doc) -> Doc:
    return [(p, "template") for p in page.header()] + body + [(p, "template") for p in page.footer()]


def change_template(page: SourcePage, other: SourcePage, rng: random.Random) -> Doc:
    return _frame(other, page.body())


def change_ads_dates(page: SourcePage, rng: random.Random) -> Doc:
    body = list(page.body())
    day = datetime(2015, 1, 1) + timedelta(days=rng.randrange(3650), minutes=rng.randrange(1440))
    inserts = [(Paragraph(DATE_PATH, f"Updated {day:%d %B %Y, %H:%M}"), "inserted")]
    inserts += [(Paragraph(AD_PATH, rng.choice(AD_LINES)), "inserted") for _ in range(rng.randint(1, 2))]
    for ins in inserts:
        body.insert(rng.randint(0, len(body)), ins)
    return _frame(page, body)


def change_small_edits(page: SourcePage, rng: random.Random) -> Doc:
    """3 to 5 words of the main text replaced by another word of the page, dropped, or
    swapped with the next."""
    body = [(Paragraph(p.path, p.text), r) for p, r in page.body()]
    mains = [i for i, (p, r) in enumerate(body) if r == "main"]
    vocab = sorted({w for p, r in body if r == "main" for w in p.plain.split() if len(w) > 3})
    for _ in range(rng.randint(3, 5)):
        p = body[rng.choice(mains)][0]
        words = p.text.split(" ")
        cand = [i for i, w in enumerate(words) if len(w) > 3 and LINK_START not in w and LINK_END not in w]
        if not cand:
            continue
        i = rng.choice(cand)
        op = rng.randrange(3)
        if op == 0 and vocab:
            words[i] = rng.choice(vocab)
        elif op == 1 and len(words) > 1:
            del words[i]
        elif i + 1 < len(words):
            words[i], words[i + 1] = words[i + 1], words[i]
        p.text = " ".join(words)
    return _frame(page, body)


def change_truncation(page: SourcePage, rng: random.Random) -> Doc:
    """The main text cut after 80-90 % of its characters (at a word), the rest of the body
    dropped; header and footer kept."""
    body = page.body()
    total = sum(len(p.text) for p, r in body if r == "main")
    keep = int(total * rng.uniform(0.80, 0.90))
    out, seen = [], 0
    for p, r in body:
        if r != "main":
            out.append((p, r))
            continue
        if seen + len(p.text) <= keep:
            out.append((p, r))
            seen += len(p.text)
            continue
        cut = p.text[:keep - seen].rsplit(" ", 1)[0]
        if cut.count(LINK_START) > cut.count(LINK_END):
            cut += LINK_END
        if cut:
            out.append((Paragraph(p.path, cut), r))
        break
    return _frame(page, out)


def change_reordered(page: SourcePage, rng: random.Random) -> Doc:
    """The body split into 2-4 blocks of consecutive paragraphs, in another order."""
    body = page.body()
    n = min(len(body), rng.randint(2, 4))
    cuts = sorted(rng.sample(range(1, len(body)), n - 1))
    blocks = [body[a:b] for a, b in zip([0] + cuts, cuts + [len(body)])]
    order = list(range(len(blocks)))
    while order == sorted(order):
        rng.shuffle(order)
    return _frame(page, [x for i in order for x in blocks[i]])


CHANGES = {"ads_dates": change_ads_dates, "small_edits": change_small_edits,
           "truncation": change_truncation, "reordered": change_reordered}


def same_site(page: SourcePage, donor: SourcePage) -> Doc:
    """Another page of the page's site: its header and footer, the donor's main text."""
    return _frame(page, donor.body())


# ---- the set -------------------------------------------------------------------------

@dataclass
class Built:
    docs: list[dict] = field(default_factory=list)
    truth: list[dict] = field(default_factory=list)


def _doc_id(seed: int, split: str, name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"warclake-neardup:{seed}:{split}:{name}"))


def _host(page: SourcePage) -> str:
    m = re.match(r"^[a-z]+://([^/]+)", page.url or "")
    return m.group(1) if m else f"site-{hashlib.sha1(page.id.encode()).hexdigest()[:10]}.example"


def _add(b: Built, seed: int, split: str, name: str, doc: Doc, cluster: str, kind: str,
         page: SourcePage, url: str, date: datetime, main_source: SourcePage | None = None) -> None:
    from warclake.tasks.extract.boilerplate import classify

    paragraphs = [p for p, _ in doc]
    doc_id = _doc_id(seed, split, name)
    b.docs.append({
        "text": join_paragraphs(paragraphs), "docId": doc_id, "url": url, "charset": "utf-8",
        "lang": page.lang, "date": date, "dump": f"neardup-{split}", "warc_file": "neardup",
        "warc_offset": len(b.docs), "charset_source": "meta", "lang_score": 1.0,
        "boilerplate": "sieve", "paragraph_labels": classify("sieve", paragraphs, page.lang),
    })
    b.truth.append({"docId": doc_id, "cluster": cluster, "kind": kind, "source": page.id,
                    "main_source": (main_source or page).id, "roles": [r for _, r in doc]})


def build_split(pages: list[SourcePage], split: str, seed: int, clusters: int | None = None) -> Built:
    """The documents and truth of one split, from its usable source pages."""
    rng = random.Random(f"{seed}:{split}")
    pages = sorted(pages, key=lambda p: p.id)
    rng.shuffle(pages)
    n = clusters if clusters is not None else len(pages) // 4
    n = min(n, len(pages) // 4)
    if n < 2:
        raise ValueError(f"split {split}: {len(pages)} usable pages, too few for a set")
    bases, donors, unrelated = pages[:n], pages[n:3 * n], pages[3 * n:4 * n]
    b = Built()
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    for i, page in enumerate(bases):
        cluster = f"{split}-c{i:04d}"
        host = _host(page)
        when = start + timedelta(days=rng.randrange(365))
        url = page.url or f"http://{host}/{hashlib.sha1(page.id.encode()).hexdigest()[:12]}.html"
        _add(b, seed, split, f"{cluster}-original", _frame(page, page.body()), cluster, "original",
             page, url, when)
        other = bases[(i + 1) % n]
        for kind in KINDS:
            r = random.Random(f"{seed}:{split}:{i}:{kind}")
            doc = change_template(page, other, r) if kind == "template" else CHANGES[kind](page, r)
            _add(b, seed, split, f"{cluster}-{kind}", doc, cluster, kind, page,
                 f"{url}{'&' if '?' in url else '?'}copy={kind}", when + timedelta(days=r.randint(1, 90)))
        for j, donor in enumerate(donors[2 * i:2 * i + 2]):
            name = f"{cluster}-site{j}"
            _add(b, seed, split, name, same_site(page, donor), name, "same_site", page,
                 f"http://{host}/other-page-{j}.html", when + timedelta(days=j + 1), donor)
    for k, page in enumerate(unrelated):
        name = f"{split}-u{k:04d}"
        _add(b, seed, split, name, _frame(page, page.body()), name, "unrelated", page,
             page.url or f"http://{_host(page)}/", start + timedelta(days=rng.randrange(365)))
    return b


def build_set(out: str, seed: int = 1, gold_root: str = DEFAULT_GOLD, clusters: int | None = None,
              quiet: bool = False) -> dict[str, int]:
    """Write the set made from the gold pages under ``out``; returns documents per split."""
    from warclake.tasks.evaluation.gold import split_of

    by_split: dict[str, list[SourcePage]] = {s: [] for s in SPLITS}
    usable = [sp for sp in map(source_page, gold_pages(gold_root)) if sp is not None]
    for sp in distinct_main_texts(usable):
        by_split[split_of(sp.id)].append(sp)
    if not quiet:
        print(" ".join(f"{s}: {len(p)} usable pages" for s, p in by_split.items()), file=sys.stderr)
    return write_set(out, seed, by_split, clusters)


def write_set(out: str, seed: int, by_split: dict[str, list[SourcePage]],
              clusters: int | None = None) -> dict[str, int]:
    """Build each split from its pages and write the lake and truth files; the ``SEED``
    stamp last, so a set cut short is built again."""
    from warclake.tasks.extract.config import SCHEMA_VERSION
    from warclake.tasks.lake.layout import Lake
    from warclake.tasks.lake.schema import DOCUMENTS

    lake = Lake(out)
    os.makedirs(os.path.join(out, "truth"), exist_ok=True)
    stamp = os.path.join(out, "truth", "SEED")
    if os.path.exists(stamp):
        os.remove(stamp)
    counts = {}
    for split, pages in by_split.items():
        b = build_split(pages, split, seed, clusters)
        dump = f"neardup-{split}"
        for kind in ("documents", "files"):
            os.makedirs(lake.dir(kind, dump), exist_ok=True)
        pq.write_table(pa.Table.from_pylist(b.docs, schema=DOCUMENTS), lake.path("documents", dump, "neardup"),
                       compression="zstd")
        pq.write_table(pa.Table.from_pylist(b.truth, schema=TRUTH), os.path.join(out, "truth", f"{split}.parquet"))
        finished = "2024-01-01T00:00:00+00:00"   # fixed: the set is a function of its seed
        lake.write_summary(dump, "neardup", {
            "dump": dump, "warc_file": "neardup", "input": f"neardup-set seed={seed}",
            "records": len(b.docs), "documents": len(b.docs), "status": "complete", "error": None,
            "skipped": [], "schema_version": SCHEMA_VERSION,
            "config_fingerprint": f"neardup-set-{seed}", "started": finished, "finished": finished})
        counts[split] = len(b.docs)
    with open(stamp, "w") as fh:
        fh.write(f"{seed}\n")
    return counts


def set_exists(out: str, seed: int) -> bool:
    """Whether ``out`` holds a whole set built from this seed."""
    stamp = os.path.join(out, "truth", "SEED")
    if not os.path.exists(stamp) or \
            not all(os.path.exists(os.path.join(out, "truth", f"{s}.parquet")) for s in SPLITS):
        return False
    with open(stamp) as fh:
        return fh.read().strip() == str(seed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.measure.neardup_set",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for the set (a small lake plus truth/)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gold", default=DEFAULT_GOLD, help="the gold folder (default: ../shared/data/gold)")
    ap.add_argument("--clusters", type=int, default=None, help="clusters per split (default: a quarter of the usable pages)")
    a = ap.parse_args(argv)
    try:
        counts = build_set(a.out, a.seed, a.gold, a.clusters)
    except (FileNotFoundError, ValueError) as e:
        print(f"neardup_set: {e}", file=sys.stderr)
        return 2
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

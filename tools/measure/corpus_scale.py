"""Scale benchmark of the corpus stage's global steps: a lake of N documents made from real
page texts, then the global steps timed step by step (wall and CPU seconds), with the peak
RSS of the process that runs them.

    python -m tools.measure.corpus_scale --docs 1000000 [--dumps 2] [--dir DIR]

The per-archive step costs milliseconds per document, so running it over a million
generated documents would take hours here; the lake's per-archive outputs (``paragraphs``
and ``docsigs``, by their data contract) are generated directly instead, from the same
real texts, with known mutations:

- the text pool is the sentences of the Dragnet and CLEANEVAL gold texts
  (``../shared/data/gold``), normalised as the stage normalises; a fifth of them also has
  an edited form (one word replaced), for near-duplicate paragraphs;
- a page is its site's navigation bar, 3-14 body paragraphs of 1-4 sentences, on 40 % of
  sites a byline that changes with the page's date, a cookie notice on 1 % of pages, and
  its site's footer (about 10 paragraphs per document); sites' sizes follow a Pareto law;
- 4 % of pages are word-for-word copies of a recent page on another site, 4 % copies with
  one paragraph replaced and one sentence edited, and 2 % of pages quote a paragraph of a
  recent page (a third of them with an edited sentence);
- every hash is the per-archive step's own, over the real normalised text (``text_hash`` of
  the paragraph, ``clean_hash`` of the compared text, both ``signatures.text_hashes``, and
  ``url_hash``), so the generated tables join with those the step writes;
- a paragraph's SimHash is the bitwise majority of its sentences' 3-gram hash bits and a
  document's MinHash the element-wise minimum of its sentences' MinHashes: near the step's,
  not equal (n-grams that span two sentences are left out, and a bin a short sentence
  leaves empty is filled from another bin before the minimum is taken). On the pages of
  ``tests/corpus/test_corpus_scale.py`` the SimHashes are a median 0 bits from the step's and a
  median 0.63 of the MinHash values are equal. ``--exact-signatures`` computes both from
  the whole texts instead, as the step does (about 2.5 times the generation time);
- the quality metrics are those of 500 real generated pages, assigned at random.

``--group-check N`` measures the paragraph group search alone: N distinct paragraphs of
pool sentences and copies of some with one word replaced; ``--para-ngram``, ``--group-bits``
and ``--key-blocks`` measure another SimHash n-gram or search width than the step's.

``--from-documents`` writes lake documents instead and runs the real per-archive step on
them (hours at a million documents; a check of the generator at small sizes).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import random
import resource
import subprocess
import sys
import time
import uuid
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timedelta, timezone

import numpy as np

from tools import SHARED_DATA

SHARED = os.path.join(SHARED_DATA, "gold")
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
NAV, BODY, BYLINE, NOTICE, FOOTER = ("body>nav#menu>ul", "body>div#content>p", "body>div.meta>p.byline",
                                     "body>div.cookie>p", "body>footer>p.copyright")
NOTICE_TEXT = ("This site uses cookies to improve your experience. By continuing to browse you agree "
               "to our use of cookies.")
MONTHS = "January February March April May June July August September October November December".split()


def dump_name(i: int) -> str:
    return f"CC-MAIN-2099-{i + 1:02d}"


def sentence_pool(gold: str, limit: int = 400_000) -> list[str]:
    files = sorted(glob.glob(os.path.join(gold, "dragnet", "GoldStandard", "*.txt")))
    files += sorted(glob.glob(os.path.join(gold, "cleaneval", "*", "GoldStandard", "*.txt")))
    if not files:
        raise FileNotFoundError(f"no gold texts under {gold} (the shared development data)")
    out, seen = [], set()
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for line in text.splitlines():
            line = " ".join(line.replace("<p>", " ").replace("<h>", " ").replace("<l>", " ").split())
            if line.startswith("URL:"):
                continue
            for s in line.split(". "):
                if 30 <= len(s) <= 400 and s not in seen:
                    seen.add(s)
                    out.append(s.rstrip(".") + ".")
    random.Random(1).shuffle(out)
    return out[:limit]


# -- the pool of sentences and their signatures ----------------------------------------

class Pool:
    """Sentences (raw and normalised), per sentence its 3-gram count and, per SimHash bit,
    how many of its 3-gram hashes have that bit set, and its MinHash over 5-grams.
    ``variant[i]`` is the index of sentence i's edited form, or -1."""

    def __init__(self, raw, norm, glen, bits, mh, variant):
        self.raw, self.norm, self.glen, self.bits, self.mh, self.variant = raw, norm, glen, bits, mh, variant
        self.base = int((variant >= 0).sum() and variant[variant >= 0].min())   # sentences before the variants

    @classmethod
    def load_or_build(cls, cache: str, sig) -> "Pool":
        if os.path.exists(cache + ".npz"):
            z = np.load(cache + ".npz")
            with open(cache + ".json", encoding="utf-8") as fh:
                raw = json.load(fh)
            from warclake.tasks.corpus.signals.normalise import normalise

            return cls(raw, [normalise(s) for s in raw], z["glen"], z["bits"], z["mh"], z["variant"])
        return cls._build(cache, sig)

    @classmethod
    def _build(cls, cache: str, sig) -> "Pool":
        pool = cls.from_sentences(sentence_pool(SHARED), sig)
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        np.savez(cache + ".npz", glen=pool.glen, bits=pool.bits, mh=pool.mh, variant=pool.variant)
        with open(cache + ".json", "w", encoding="utf-8") as fh:
            json.dump(pool.raw, fh)
        return pool

    @classmethod
    def from_sentences(cls, raw: list[str], sig) -> "Pool":
        from warclake.tasks.corpus.signals.normalise import normalise
        from warclake.tasks.corpus.signals.signatures import minhash

        rng = random.Random(7)
        n = len(raw)
        words = [w for s in raw[:20000] for w in s.split() if w.isalpha() and len(w) > 3]
        variant = np.full(n, -1, np.int32)
        edited = []
        for i in range(0, n, 5):           # a fifth get an edited form: one word replaced
            ws = raw[i].split()
            j = rng.randrange(len(ws))
            ws[j] = rng.choice(words)
            variant[i] = n + len(edited)
            edited.append(" ".join(ws))
        raw = raw + edited
        variant = np.concatenate([variant, np.full(len(edited), -1, np.int32)])
        norm = [normalise(s) for s in raw]
        glen, bits = bit_counts(norm, sig.para_ngram)
        mh = minhash(norm, sig.doc_ngram, sig.num_perm)
        return cls(raw, norm, glen, bits, mh, variant)


def bit_counts(texts: list[str], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per text: its n-gram count, and per bit of the 64-bit n-gram hash how many are set
    (the SimHash of a union of texts is then the majority of the summed counts)."""
    from warclake.tasks.corpus.signals.signatures import _batches, ngram_hashes

    glen = np.zeros(len(texts), np.int32)
    bits = np.zeros((len(texts), 64), np.uint16)
    for lo, hi in _batches(texts, 1 << 21):
        h, starts = ngram_hashes(texts[lo:hi], n)
        glen[lo:hi] = starts[1:] - starts[:-1]
        nonempty = np.nonzero(starts[1:] > starts[:-1])[0]
        seg = starts[:-1][nonempty]
        for b in range(64):
            bits[lo + nonempty, b] = np.add.reduceat(((h >> np.uint64(b)) & np.uint64(1)).astype(np.uint16),
                                                    seg, dtype=np.uint32)
    return glen, bits


def simhash_of_sums(cnt: np.ndarray, tot: np.ndarray) -> np.ndarray:
    """int64 SimHash from summed bit counts (rows) and n-gram totals, the bit order of
    ``signatures.simhash64``."""
    on = (2 * cnt.astype(np.int64)) > tot[:, None]
    return np.packbits(on, axis=1, bitorder="little").view("<u8").ravel().view(np.int64)


# -- generating a dump's per-archive outputs ------------------------------------------

class Generator:
    def __init__(self, pool: Pool, docs: int, sig, seed: int = 2026, exact: bool = False):
        from warclake.tasks.corpus.signals.hosts import registered_domain

        self.pool, self.sig, self.exact = pool, sig, exact
        self.rng = random.Random(seed)
        rng = self.rng
        self.n_sites = max(20, docs // 50)
        tlds = ["com", "org", "net", "co.uk", "jp", "de"]
        self.sites = [f"www.site{i}.{rng.choice(tlds)}" for i in range(self.n_sites)]
        self.domains = [registered_domain(s) for s in self.sites]
        words = [w for s in pool.raw[:5000] for w in s.split() if w.isalpha()]
        self.navs = [" | ".join(rng.choice(words).capitalize() for _ in range(rng.randint(4, 7)))
                     for _ in self.sites]
        self.bylines = [rng.random() < 0.4 for _ in self.sites]
        self.authors = [rng.choice(words).capitalize() for _ in self.sites]
        self.recent: list[tuple[list[tuple[int, ...]], int]] = []
        self.metrics_pool: list[list] = []
        self._sim_cache: dict[str, int] = {}
        self.keep_pages, self.pages = False, []   # the pages' texts, for a check of the generator

    def site(self) -> int:
        rng = self.rng
        if rng.random() < 0.5:
            return min(int(rng.paretovariate(1.2)) - 1, self.n_sites - 1)
        return rng.randrange(self.n_sites)

    def body_para(self) -> tuple[int, ...]:
        return tuple(self.rng.randrange(self.pool.base) for _ in range(self.rng.randint(2, 4)))

    def edit(self, para: tuple[int, ...]) -> tuple[int, ...]:
        """The paragraph with one of its sentences in its edited form, where it has one."""
        v = [j for j, s in enumerate(para) if self.pool.variant[s] >= 0]
        if not v:
            return para
        j = self.rng.choice(v)
        return para[:j] + (int(self.pool.variant[para[j]]),) + para[j + 1:]

    def body(self) -> list[tuple[int, ...]]:
        rng = self.rng
        r = rng.random()
        if r < 0.08 and self.recent:       # a copy of a recent page, exact or edited
            body = list(rng.choice(self.recent)[0])
            if r < 0.04 and len(body) > 1:
                body[rng.randrange(len(body))] = self.body_para()
                k = rng.randrange(len(body))
                body[k] = self.edit(body[k])
            return body
        body = [self.body_para() for _ in range(rng.randint(3, 14))]
        if rng.random() < 0.02 and self.recent:   # a quotation of a paragraph of a recent page
            quote = rng.choice(rng.choice(self.recent)[0])
            body.insert(rng.randrange(len(body) + 1), self.edit(quote) if rng.random() < 1 / 3 else quote)
        self.recent.append((body, 0))
        if len(self.recent) > 2000:
            self.recent = self.recent[-1000:]
        return body

    def archive(self, dump: str, name: str, n: int, t0: datetime) -> tuple:
        """(paragraph table, docsigs table) of one archive of ``n`` documents."""
        import pyarrow as pa

        from warclake.tasks.corpus.signals.archive_step import DOCSIGS, PARAGRAPHS
        from warclake.tasks.corpus.signals.normalise import hash64, normalise
        from warclake.tasks.corpus.signals.quality import is_chrome_path
        from warclake.tasks.corpus.signals.signatures import (
            band_keys,
            compared_paragraphs,
            minhash,
            simhash64,
            text_hashes,
        )

        pool, rng, sig = self.pool, self.rng, self.sig
        P = {k: [] for k in ("docId", "idx", "n_chars", "path", "label", "host", "domain",
                             "url_hash", "date")}
        p_sent: list[tuple[int, ...]] = []      # body paragraphs' sentences ((): not a body paragraph)
        p_text: list[str] = []                  # other paragraphs' normalised text
        D = {k: [] for k in ("docId", "url", "url_hash", "host", "domain", "date", "n_paragraphs", "n_chars",
                             "metrics")}
        norms: list[str] = []                   # every paragraph's normalised text
        cleans: list[str] = []                  # every document's compared text
        doc_sents: list[list[int]] = []
        for i in range(n):
            s = self.site()
            host, dom = self.sites[s], self.domains[s]
            date = t0 + timedelta(seconds=rng.randrange(86400 * 60))
            did = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            url = f"https://{host}/{dump[-7:]}/{name[-13:-8]}/{i}"
            uh = hash64(url)
            body = self.body()
            paras = [(NAV, self.navs[s], "bad")] + [(BODY, b, "good") for b in body]
            if self.bylines[s]:
                paras.append((BYLINE, f"Posted by {self.authors[s]} on {date.day} {MONTHS[date.month - 1]} "
                                      f"{date.year}", "bad"))
            if rng.random() < 0.01:
                paras.append((NOTICE, NOTICE_TEXT, "bad"))
            paras.append((FOOTER, f"Copyright {host}. All rights reserved.", "bad"))
            first = len(norms)
            for j, (path, what, label) in enumerate(paras, 1):
                if isinstance(what, tuple):
                    norm = " ".join(pool.norm[k] for k in what)
                    p_sent.append(what)
                    p_text.append("")
                else:
                    norm = normalise(what)
                    p_sent.append(())
                    p_text.append(norm)
                norms.append(norm)
                P["docId"].append(did)
                P["idx"].append(j)
                P["n_chars"].append(len(norm))
                P["path"].append(path)
                P["label"].append(label)
                P["host"].append(host)
                P["domain"].append(dom)
                P["url_hash"].append(uh)
                P["date"].append(date)
            # the compared text as the per-archive step chooses it (the body paragraphs here)
            keep = compared_paragraphs([p for p, _, _ in paras], [lab for _, _, lab in paras], is_chrome_path,
                                       [len(x) for x in norms[first:]])
            clean_text = "\n".join(norms[first + k] for k in keep)
            cleans.append(clean_text)
            if self.keep_pages:
                self.pages.append({"docId": did, "url": url, "date": date, "paras": [
                    (p, " ".join(pool.raw[k] for k in w) if isinstance(w, tuple) else w, lab) for p, w, lab in paras]})
            doc_sents.append([k for b in body for k in b])
            if len(self.metrics_pool) < 500:
                self.metrics_pool.append(self._metrics(paras))
            D["docId"].append(did)
            D["url"].append(url)
            D["url_hash"].append(uh)
            D["host"].append(host)
            D["domain"].append(dom)
            D["date"].append(date)
            D["n_paragraphs"].append(len(paras))
            D["n_chars"].append(len(clean_text))
            D["metrics"].append(rng.choice(self.metrics_pool))
        # SimHash: body paragraphs from their sentences' bit counts, the others computed
        m = len(p_sent)
        ids = np.full((m, 4), len(pool.glen), np.int64)     # the last row: zeros (padding)
        for r, t in enumerate(p_sent):
            ids[r, :len(t)] = t
        glen = np.append(pool.glen, 0)
        bits = np.vstack([pool.bits, np.zeros((1, 64), np.uint16)])
        sim = simhash_of_sums(bits[ids].sum(axis=1, dtype=np.int64), glen[ids].sum(axis=1))
        other = [r for r in range(m) if not p_sent[r]]
        sim[other] = self._simhash([p_text[r] for r in other])
        if self.exact:
            sim = simhash64(norms, sig.para_ngram).view(np.int64)
        # MinHash: element-wise minimum over the document's sentences
        flat = np.fromiter((k for ks in doc_sents for k in ks), np.int64)
        lens = np.fromiter((len(ks) for ks in doc_sents), np.int64, count=n)
        mh = np.full((n, sig.num_perm), np.uint32(0xFFFFFFFF), np.uint32)
        has = np.nonzero(lens)[0]
        if has.size:
            starts = np.concatenate([[0], np.cumsum(lens)[:-1]])[has]
            mh[has] = np.minimum.reduceat(pool.mh[flat], starts, axis=0)
        if self.exact:
            mh = minhash(cleans, sig.doc_ngram, sig.num_perm)
        bk = band_keys(mh, sig.bands, sig.rows)
        ts = pa.timestamp("us", tz="UTC")
        para = pa.table({
            "docId": P["docId"], "idx": pa.array(P["idx"], pa.int32()),
            "text_hash": pa.array(text_hashes(norms), pa.int64()), "simhash": pa.array(sim),
            "n_chars": pa.array(P["n_chars"], pa.int32()), "path": P["path"], "label": P["label"],
            "host": P["host"], "domain": P["domain"], "url_hash": pa.array(P["url_hash"], pa.int64()),
            "lang": pa.array(["en"] * m), "dump": pa.array([dump] * m), "date": pa.array(P["date"], ts),
        }, schema=PARAGRAPHS)
        docsig = pa.table({
            "docId": D["docId"], "url": D["url"], "url_hash": pa.array(D["url_hash"], pa.int64()),
            "host": D["host"], "domain": D["domain"], "lang": ["en"] * n, "date": pa.array(D["date"], ts),
            "dump": [dump] * n, "warc_file": [name] * n, "n_paragraphs": pa.array(D["n_paragraphs"], pa.int32()),
            "n_chars": pa.array(D["n_chars"], pa.int32()), "clean_hash": pa.array(text_hashes(cleans), pa.int64()),
            "minhash": pa.FixedSizeListArray.from_arrays(pa.array(mh.ravel()), sig.num_perm).cast(pa.list_(pa.uint32())),
            "bands": pa.FixedSizeListArray.from_arrays(pa.array(bk.ravel()), sig.bands).cast(pa.list_(pa.int64())),
            "metrics": pa.array(D["metrics"], pa.map_(pa.string(), pa.float64())),
        }, schema=DOCSIGS)
        return para, docsig

    def _simhash(self, texts: list[str]) -> np.ndarray:
        from warclake.tasks.corpus.signals.signatures import simhash64

        todo = sorted({t for t in texts if t not in self._sim_cache})
        if todo:
            self._sim_cache.update(zip(todo, simhash64(todo, self.sig.para_ngram).tolist()))
        if len(self._sim_cache) > 500_000:
            self._sim_cache = {}
            return self._simhash(texts)
        return np.array([self._sim_cache[t] for t in texts], np.int64)

    def _metrics(self, paras) -> list:
        from warclake.tasks.corpus.signals.quality import document_metrics

        text = "\n\n".join(f"{p}\x1c{' '.join(self.pool.raw[k] for k in w) if isinstance(w, tuple) else w}"
                           for p, w, _ in paras)
        return sorted(document_metrics(text, [lab for _, _, lab in paras], "en").items())


def generate(lake: str, work: str, docs: int, dumps: int, per_archive: int, seed: int = 2026,
             exact: bool = False) -> dict:
    """The per-archive outputs of ``docs`` documents in ``dumps`` dumps, done as the
    per-archive step marks them (state files, then each dump's manifest)."""
    from warclake.tasks.corpus.settings import SignatureConfig
    from warclake.tasks.corpus.signals.archive_step import STEP
    from warclake.tasks.corpus.storage.layout import CorpusLayout, write_table
    from warclake.tasks.corpus.storage.manifest import write_manifest

    sig = SignatureConfig()
    t = time.monotonic()
    pool = Pool.load_or_build(os.path.join(work, "pool"), sig)
    out = {"pool_sentences": len(pool.raw), "pool_s": round(time.monotonic() - t, 1)}
    gen = Generator(pool, docs, sig, seed, exact)
    layout = CorpusLayout(lake)
    made, paragraphs = 0, 0
    for d in range(dumps):
        dump = dump_name(d)
        want = docs * (d + 1) // dumps - docs * d // dumps
        a, done = 0, {}
        while want > 0:
            n = min(per_archive, want)
            name = f"{dump}-{a:05d}.warc.gz"
            para, docsig = gen.archive(dump, name, n, T0 + timedelta(days=91 * d))
            size = write_table(layout.file("paragraphs", dump, name), para)
            size += write_table(layout.file("docsigs", dump, name), docsig)
            done[name] = {"generated": "corpus_scale", "seed": seed, "docs": docs, "exact": exact,
                          "bytes": size, "signatures": sig.fingerprint()}
            layout.mark_done(STEP, dump, name, done[name], documents=n, paragraphs=para.num_rows)
            made, paragraphs, want, a = made + n, paragraphs + para.num_rows, want - n, a + 1
        write_manifest(layout, dump, done)
    out.update(documents=made, paragraphs=paragraphs, generate_s=round(time.monotonic() - t, 1))
    return out


# -- how well the paragraph groups find one-word edits ----------------------------------

def group_search_check(work: str, texts: int, edited: int = 20_000, seed: int = 1, para_ngram: int = 0,
                       max_bits: int = 0, key_blocks: int = 0) -> dict:
    """``texts`` distinct paragraphs of 2-4 pool sentences, and copies of the first
    ``edited`` with one sentence in its edited form (one word replaced): the share of those
    copies the group search pairs with their original, by sentences per paragraph, how
    many pairs it makes between unrelated paragraphs (a shared sentence or not), and the
    largest group those pairs join. ``para_ngram``, ``max_bits`` and ``key_blocks`` other
    than 0 replace the step's SimHash n-gram and search (pool cached per n-gram)."""
    from warclake.tasks.corpus.settings import SignatureConfig
    from warclake.tasks.corpus.steps import para_groups
    from warclake.tasks.corpus.steps.components import component_labels

    sig = SignatureConfig(para_ngram=para_ngram) if para_ngram else SignatureConfig()
    max_bits, key_blocks = max_bits or para_groups.MAX_BITS, key_blocks or para_groups.KEY_BLOCKS
    name = "pool" if sig.para_ngram == SignatureConfig().para_ngram else f"pool-{sig.para_ngram}gram"
    pool = Pool.load_or_build(os.path.join(work, name), sig)
    rng = np.random.default_rng(seed)
    pad = len(pool.glen)
    k = rng.integers(2, 5, texts)
    ids = rng.integers(0, pool.base, (texts, 4))
    ids[np.arange(4)[None, :] >= k[:, None]] = pad
    ids = np.unique(np.sort(ids, axis=1), axis=0)          # distinct paragraphs
    ids = ids[rng.permutation(len(ids))]
    k = (ids < pad).sum(axis=1)
    glen = np.append(pool.glen, 0)
    bits = np.vstack([pool.bits, np.zeros((1, 64), np.uint16)])

    def sims(rows):
        return np.concatenate([simhash_of_sums(bits[rows[i:i + 200_000]].sum(axis=1, dtype=np.int64),
                                               glen[rows[i:i + 200_000]].sum(axis=1))
                               for i in range(0, len(rows), 200_000)])

    ed = ids[:edited].copy()
    for r in range(edited):
        for c in range(k[r]):
            if pool.variant[ed[r, c]] >= 0:
                ed[r, c] = pool.variant[ed[r, c]]
                break
    changed = np.nonzero((ed != ids[:edited]).any(axis=1))[0]
    ed = ed[changed]
    sim = np.concatenate([sims(ids), sims(ed)])
    lens = np.append(np.fromiter(map(len, pool.norm), np.int64, count=pad), 0)
    n_chars = np.concatenate([lens[ids].sum(axis=1) + k - 1, lens[ed].sum(axis=1) + k[changed] - 1])
    t = time.process_time()
    i, j = para_groups.near_pairs(sim, n_chars, np.ones(len(sim), bool), max_bits=max_bits, key_blocks=key_blocks)
    cpu = time.process_time() - t
    sizes = np.bincount(component_labels(len(sim), i, j))
    n = len(ids)
    true = (j >= n) & (i == changed[np.clip(j - n, 0, len(changed) - 1)])
    found = np.zeros(len(changed), bool)
    found[j[true] - n] = True
    return {"paragraphs": n, "edited_copies": len(changed), "found": int(found.sum()),
            "recall": round(float(found.mean()), 3),
            "recall_by_sentences": {int(s): round(float(found[k[changed] == s].mean()), 3) for s in (2, 3, 4)},
            "unrelated_pairs": int((~true).sum()), "largest_group": int(sizes.max()),
            "texts_in_groups_over_10": int(sizes[sizes > 10].sum()), "search_cpu_s": round(cpu, 1),
            "para_ngram": sig.para_ngram, "max_bits": max_bits, "key_blocks": key_blocks,
            "tables": len(para_groups._tables(max_bits, key_blocks))}


# -- the real per-archive step over generated documents (small sizes) -----------------

def write_documents(lake: str, work: str, docs: int, per_archive: int, seed: int = 2026) -> None:
    """Lake documents of the same generator (texts rebuilt from the pool's raw sentences)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from warclake.tasks.corpus.settings import SignatureConfig
    from warclake.tasks.extract.config import SCHEMA_VERSION
    from warclake.tasks.lake.schema import DOCUMENTS

    sig = SignatureConfig()
    pool = Pool.load_or_build(os.path.join(work, "pool"), sig)
    gen = Generator(pool, docs, sig, seed)
    dump, rng = dump_name(0), gen.rng
    for a in range((docs + per_archive - 1) // per_archive):
        name = f"{dump}-{a:05d}.warc.gz"
        rows = []
        for i in range(min(per_archive, docs - a * per_archive)):
            s = gen.site()
            date = T0 + timedelta(seconds=rng.randrange(86400 * 60))
            paras = [(NAV, gen.navs[s], "bad")] + [(BODY, " ".join(pool.raw[k] for k in b), "good")
                                                   for b in gen.body()]
            paras.append((FOOTER, f"Copyright {gen.sites[s]}. All rights reserved.", "bad"))
            rows.append({"text": "\n\n".join(f"{p}\x1c{t}" for p, t, _ in paras),
                         "docId": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                         "url": f"https://{gen.sites[s]}/{a}/{i}", "charset": "utf-8", "lang": "en", "date": date,
                         "dump": dump, "warc_file": name, "warc_offset": i * 4096, "charset_source": "meta",
                         "lang_score": 0.99, "boilerplate": "sieve", "paragraph_labels": [x for _, _, x in paras]})
        path = os.path.join(lake, "documents", f"dump={dump}", name + ".parquet")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=DOCUMENTS), path, compression="zstd")
        spath = os.path.join(lake, "files", f"dump={dump}", name + ".json")
        os.makedirs(os.path.dirname(spath), exist_ok=True)
        with open(spath, "w") as fh:
            json.dump({"dump": dump, "warc_file": name, "status": "complete", "schema_version": SCHEMA_VERSION,
                       "config_fingerprint": "corpus-scale", "documents": len(rows),
                       "finished": "2099-01-01T00:00:00+00:00"}, fh)


def _sign(args):
    from warclake.tasks.corpus.signals.archive_step import sign_archive

    lake, dump, warc, summary = args
    return sign_archive(lake, dump, warc, summary)


def sign_all(lake: str, workers: int) -> dict:
    from warclake.tasks.corpus.signals.summaries import finished_archives

    items = [(lake, dump_name(0), w, s) for w, s in finished_archives(lake, dump_name(0))]
    t0 = time.monotonic()
    with ProcessPoolExecutor(workers) as pool:
        res = list(pool.map(_sign, items))
    return {"seconds": round(time.monotonic() - t0, 1), "archives": len(res)}


# -- the global steps, measured -------------------------------------------------------

def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def global_steps(lake: str, memory_limit: str, threads: int, partitions: int = 8, processes: int = 0) -> dict:
    """The global steps of every dump in order (the per-archive step must be done), timed
    step by step: wall and CPU seconds. ``processes`` > 0: every task in a process of its
    own (forked from this one, at most ``processes`` at once, as a cluster's workers run
    them), and per step the peak RSS of its largest task."""
    from warclake.tasks.corpus import stage

    opts = stage.StageOptions(sig=stage.SignatureConfig(partitions=partitions), memory_limit=memory_limit,
                              threads=threads)
    layout = stage.CorpusLayout(lake)
    dumps = sorted(d[len("dump="):] for d in os.listdir(layout.dir("docsigs")) if d.startswith("dump="))
    out: dict = {"base_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}
    known: dict = {}
    for dump in dumps:
        times = {}
        ctx = stage.DumpContext.build(layout, dumps, dump, opts, known)
        for name in stage.STEPS:
            w, c = time.monotonic(), _cpu()
            if processes:
                times[name] = _forked_step(lake, dumps, dump, opts, known, name, processes)
            else:
                stage.whole_step(name, ctx)
            times.setdefault(name, {}).update(wall_s=round(time.monotonic() - w, 1),
                                              cpu_s=round(_cpu() - c + times[name].get("tasks_cpu_s", 0), 1))
        summary = stage.dump_summary(lake, dump, opts.sig.partitions)
        out[dump] = {**times, "work_parts": ctx.work_parts,
                     "total_wall_s": round(sum(t["wall_s"] for t in times.values()), 1),
                     "total_cpu_s": round(sum(t["cpu_s"] for t in times.values()), 1), **summary}
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


def _forked_step(lake, dumps, dump, opts, known, name, processes: int) -> dict:
    """Each phase of step ``name`` in order, each task of it in a child process forked from
    this one (a fresh context of the dump, as a task on a cluster's worker starts); the
    tasks' CPU seconds, and the peak RSS of the largest task."""
    from warclake.tasks.corpus import stage

    tasks_cpu, peak, count = 0.0, 0, 0
    ctx = stage.DumpContext.build(stage.CorpusLayout(lake), dumps, dump, opts, dict(known))
    for phase in stage.STEPS[name]:
        todo, running = list(phase.tasks(ctx)), set()
        while todo or running:
            while todo and len(running) < processes:
                t = todo.pop(0)
                pid = os.fork()
                if pid == 0:   # the task, in a fresh context
                    code = 0
                    try:
                        child = stage.DumpContext.build(stage.CorpusLayout(lake), dumps, dump, opts, dict(known))
                        phase.run(child, t)
                    except BaseException:
                        import traceback

                        traceback.print_exc()
                        code = 1
                    os._exit(code)
                running.add(pid)
            pid, status, usage = os.wait4(-1, 0)
            running.discard(pid)
            if status:
                raise RuntimeError(f"{name} {phase.name}: a task failed")
            tasks_cpu += usage.ru_utime + usage.ru_stime
            peak = max(peak, usage.ru_maxrss)
            count += 1
    return {"tasks": count, "tasks_cpu_s": tasks_cpu, "largest_task_rss_mb": round(peak / 1024)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--dumps", type=int, default=1, help="split the documents over this many dumps, in order")
    ap.add_argument("--dir", default=None, help="work folder (default: /tmp/warclake-corpus-scale-<docs>)")
    ap.add_argument("--docs-per-archive", type=int, default=10_000)
    ap.add_argument("--from-documents", action="store_true",
                    help="write lake documents and run the real per-archive step (one dump)")
    ap.add_argument("--exact-signatures", action="store_true",
                    help="compute each paragraph's SimHash and each document's MinHash from its whole text, "
                         "as the per-archive step does (about 2.5x the generation time)")
    ap.add_argument("--workers", type=int, default=2, help="processes of the per-archive step")
    ap.add_argument("--memory-limit", default="2GB")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--group-check", type=int, default=0, metavar="N",
                    help="only measure the paragraph group search on N recombined paragraphs")
    ap.add_argument("--para-ngram", type=int, default=0, help="--group-check: SimHash n-gram (default: the step's)")
    ap.add_argument("--group-bits", type=int, default=0, help="--group-check: bits apart (default: the step's)")
    ap.add_argument("--key-blocks", type=int, default=0,
                    help="--group-check: blocks a pair must share (default: the step's)")
    ap.add_argument("--partitions", type=int, default=8, help="the lake's partitions (--partitions of the stage)")
    ap.add_argument("--processes", type=int, default=0,
                    help="run every task of the global steps in a process of its own, at most this many at once "
                         "(peak RSS per task); 0: every step in one process")
    ap.add_argument("--global-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    work = args.dir or os.path.join("/tmp", f"warclake-corpus-scale-{args.docs}")
    lake = os.path.join(work, "lake")
    if args.global_only:
        print(json.dumps(global_steps(lake, args.memory_limit, args.threads, args.partitions, args.processes)))
        return 0
    if args.group_check:
        print(json.dumps(group_search_check(work, args.group_check, para_ngram=args.para_ngram,
                                            max_bits=args.group_bits, key_blocks=args.key_blocks), indent=1))
        return 0
    out = {"docs": args.docs, "dumps": args.dumps}
    if not os.path.isdir(os.path.join(lake, "corpus", "docsigs")) or args.from_documents:
        if args.from_documents:
            if not os.path.isdir(os.path.join(lake, "files")):
                write_documents(lake, work, args.docs, args.docs_per_archive)
            out["per_archive"] = sign_all(lake, args.workers)
        else:
            out["generated"] = generate(lake, work, args.docs, args.dumps, args.docs_per_archive,
                                        exact=args.exact_signatures)
    # the global steps from scratch, in a child process: its peak RSS is theirs
    from warclake.tasks.corpus.stage import GLOBAL_STATE_STEPS

    for step in GLOBAL_STATE_STEPS:
        subprocess.run(["rm", "-rf", os.path.join(lake, "corpus", "state", step)], check=True)
    subprocess.run(["rm", "-rf", os.path.join(lake, "corpus", "work")], check=True)
    out["load_before"] = os.getloadavg()
    w, c = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    child = subprocess.run([sys.executable, "-m", "tools.measure.corpus_scale", "--global-only",
                            "--docs", str(args.docs), "--dir", work, "--memory-limit", args.memory_limit,
                            "--threads", str(args.threads), "--partitions", str(args.partitions),
                            "--processes", str(args.processes)], capture_output=True, text=True)
    if child.returncode:
        sys.stderr.write(child.stderr)
        return child.returncode
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    out["global"] = json.loads(child.stdout.strip().splitlines()[-1])
    out["global"]["wall_s"] = round(time.monotonic() - w, 1)
    out["global"]["cpu_s"] = round(r.ru_utime + r.ru_stime - c.ru_utime - c.ru_stime, 1)
    out["load_after"] = os.getloadavg()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

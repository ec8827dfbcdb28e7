"""Near-duplicate paragraph groups: texts whose 64-bit SimHashes differ in at most
``MAX_BITS`` bits, joined into groups by connected components.

Bounded work: the 64 bits are cut into 6 blocks (11, 11, 11, 11, 10, 10 bits); two
SimHashes at most 3 bits apart agree on at least 3 of the 6 blocks, so each of the 20
choices of 3 blocks is a table whose key is those blocks' bits. Within a table the texts
are sorted by key and SimHash and each is paired with the next ``WINDOW`` texts of its key
(linear in the texts, however large a bucket of near-identical lines is; texts with the
same SimHash are searched once, as one value); a pair is kept
when its SimHashes are at most ``MAX_BITS`` apart and its lengths differ by at most
``MAX_LENGTH_DIFF`` characters or ``MAX_LENGTH_SHARE`` of the longer (the cheap
confirmation: the SimHash of 3-grams leans on the language's common 3-grams, so unrelated
texts of one language are closer than 32 bits apart, and a small edit barely changes the
length; on 2 M paragraphs recombined from real sentences the length test removed five
sixths of the unrelated pairs and none of the edited ones). Texts shorter than
``MIN_CHARS`` are left out: their SimHash moves too much with one character.

Incremental and final per dump: a dump pairs its own texts with each other and with those
of earlier dumps, and its group file lists every text (of any dump) of each group holding
one of its texts, with the group's id: the smallest text hash of the group, over the pairs
found by this dump and every earlier one. Groups only merge as dumps arrive, so the lake's
current group of a text is the smallest id any dump's file gives it. ``group_hosts`` holds
the per-host counts of those groups over this and every earlier dump, which the paragraph
decisions read in place of a single text's counts.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from warclake.tasks.corpus.steps.components import component_labels
from warclake.tasks.corpus.storage.engine import parquet_list, query_table
from warclake.tasks.corpus.storage.layout import CorpusLayout, read_table, write_table
from warclake.tasks.lake.catalog import sql_literal

STEP = "para_groups"
MAX_BITS = 3
KEY_BLOCKS = 3      # blocks a pair must agree on: MAX_BITS + KEY_BLOCKS blocks in all
MIN_CHARS = 20
MAX_LENGTH_DIFF = 12
MAX_LENGTH_SHARE = 0.05
WINDOW = 4


def block_bounds(max_bits: int, key_blocks: int) -> tuple[int, ...]:
    """Bit bounds of ``max_bits + key_blocks`` blocks of near-equal width (wider first):
    two SimHashes at most ``max_bits`` apart agree on at least ``key_blocks`` of them."""
    n = max_bits + key_blocks
    widths = [64 // n + (k < 64 % n) for k in range(n)]
    return tuple(sum(widths[:k]) for k in range(n + 1))


_BOUNDS = block_bounds(MAX_BITS, KEY_BLOCKS)
SETTINGS = {"max_bits": MAX_BITS, "min_chars": MIN_CHARS, "max_length_diff": MAX_LENGTH_DIFF,
            "max_length_share": MAX_LENGTH_SHARE,
            "window": WINDOW, "blocks": _BOUNDS, "version": 3}

GROUPS = pa.schema([("text_hash", pa.int64()), ("group_hash", pa.int64())])


def _tables(max_bits: int = MAX_BITS, key_blocks: int = KEY_BLOCKS) -> list[tuple[tuple[int, int], ...]]:
    """Per table, its blocks as (low bit, width): the key blocks first, then the others."""
    bounds = block_bounds(max_bits, key_blocks)
    blocks = [(lo, hi - lo) for lo, hi in zip(bounds, bounds[1:])]
    return [tuple(blocks[i] for i in c) + tuple(b for k, b in enumerate(blocks) if k not in c)
            for c in combinations(range(len(blocks)), key_blocks)]


def _permuted(u: np.ndarray, blocks, key_blocks: int = KEY_BLOCKS) -> tuple[np.ndarray, int]:
    """The SimHashes with their bits moved block by block, the table's key blocks on top;
    and how many low bits are not key."""
    v = np.zeros(len(u), np.uint64)
    for lo, width in blocks:
        v = (v << np.uint64(width)) | ((u >> np.uint64(lo)) & np.uint64((1 << width) - 1))
    return v, sum(w for _, w in blocks[key_blocks:])


def _table_pairs(vals: np.ndarray, cur: np.ndarray, workers: int = 2, max_bits: int = MAX_BITS,
                 key_blocks: int = KEY_BLOCKS, tables: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs of distinct SimHash values (``vals``, uint64, no two equal) within
    ``max_bits``, at least one flagged in ``cur``. The values are unique, so every sort
    order is unique too: the pairs do not depend on the sorting algorithm. The tables run
    on ``workers`` threads (numpy's sorts and element-wise steps release the GIL); their
    pairs are joined in table order. ``tables``: the indexes of the tables to search (all)."""
    def one(blocks):
        v, rest = _permuted(vals, blocks, key_blocks)
        order = np.argsort(v)                      # by key, then the other bits
        k = v[order] >> np.uint64(rest)
        del v
        found_i, found_j = [], []
        for w in range(1, WINDOW + 1):
            if w >= len(order):
                break
            same = np.nonzero(k[w:] == k[:-w])[0]
            i, j = order[same], order[same + w]
            keep = (cur[i] | cur[j]) & (np.bitwise_count(vals[i] ^ vals[j]) <= max_bits)
            found_i.append(i[keep])
            found_j.append(j[keep])
        return found_i, found_j

    with ThreadPoolExecutor(max(1, workers)) as pool:
        all_tables = _tables(max_bits, key_blocks)
        results = list(pool.map(one, [all_tables[t] for t in (range(len(all_tables)) if tables is None else tables)]))
    found_i = [x for fi, _ in results for x in fi]
    found_j = [x for _, fj in results for x in fj]
    if not found_i:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(found_i), np.concatenate(found_j)


def near_pairs(sim: np.ndarray, n_chars: np.ndarray, is_cur: np.ndarray, workers: int = 2,
               max_bits: int = MAX_BITS, key_blocks: int = KEY_BLOCKS, tables: list[int] | None = None,
               chain: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i < j) of texts whose SimHashes are within ``max_bits`` and lengths
    close (see the module's text), each touching a text of the current dump. Texts with
    the same SimHash are chained in their given order; between SimHash values, the first
    text of each value stands for it. ``max_bits`` and ``key_blocks`` other than the
    step's are for measurements (``corpus_scale --group-check``). ``tables``: search only
    these tables (all); ``chain``: pair the texts of one SimHash (the step's search task of
    the first table does, the others not)."""
    u = sim.view(np.uint64)
    vals, first, inverse = np.unique(u, return_index=True, return_inverse=True)
    by_val = np.argsort(inverse, kind="stable")
    iv = inverse[by_val]
    same = np.nonzero(iv[1:] == iv[:-1])[0]
    ci, cj = by_val[same], by_val[same + 1]
    keep = (is_cur[ci] | is_cur[cj]) & chain
    cur_val = np.zeros(len(vals), bool)
    cur_val[inverse[is_cur]] = True
    vi, vj = _table_pairs(vals, cur_val, workers, max_bits, key_blocks, tables)
    i = np.concatenate([ci[keep], first[vi]]).astype(np.int64)
    j = np.concatenate([cj[keep], first[vj]]).astype(np.int64)
    longer = np.maximum(n_chars[i], n_chars[j])
    ok = np.abs(n_chars[i] - n_chars[j]) <= np.maximum(MAX_LENGTH_DIFF, MAX_LENGTH_SHARE * longer)
    i, j = np.minimum(i[ok], j[ok]), np.maximum(i[ok], j[ok])
    if not len(i):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    pairs = np.unique(np.stack([i, j], axis=1), axis=0)
    return pairs[:, 0], pairs[:, 1]


def group_hosts_of(con, groups_file: str, host_files: list[str]) -> pa.Table:
    """Per group, host and dump: documents and URLs carrying one of its texts (summed over
    its texts: a page holding two texts of one group counts twice), first and last date."""
    return query_table(con, f"""
        SELECT g.group_hash, h.host, min(h.domain) AS domain, h.dump,
               sum(h.n_docs)::BIGINT AS n_docs, sum(h.n_urls)::BIGINT AS n_urls,
               min(h.first_date) AS first_date, max(h.last_date) AS last_date
        FROM {parquet_list(host_files)} h JOIN read_parquet({sql_literal(groups_file)}) g USING (text_hash)
        GROUP BY g.group_hash, h.host, h.dump ORDER BY g.group_hash, h.host NULLS LAST, h.dump""")


def _families(max_bits: int = MAX_BITS, key_blocks: int = KEY_BLOCKS) -> list[list[int]]:
    """The search tables by their first key block: a family's tables all key on that block,
    so two SimHashes a table of the family can pair agree on it."""
    fams: dict[int, list[int]] = {}
    for t, c in enumerate(combinations(range(max_bits + key_blocks), key_blocks)):
        fams.setdefault(c[0], []).append(t)
    return [fams[b] for b in sorted(fams)]


FAMILIES = _families()


def search_bucket(sim: np.ndarray, family: int, buckets: int) -> np.ndarray:
    """Per SimHash, its bucket of ``family``'s search: a mix of the bits of the family's
    block, so every SimHash sharing a key of one of the family's tables (every pair those
    tables can find) is in one bucket."""
    lo, hi = _BOUNDS[family], _BOUNDS[family + 1]
    key = (sim.view(np.uint64) >> np.uint64(lo)) & np.uint64((1 << (hi - lo)) - 1)
    return ((key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(33)) % np.uint64(buckets)


@dataclass
class ParaGroups:
    """The step of one dump, as phases (``PHASES``):

    - ``texts``: one task per group of text-hash partitions of the paragraph statistics
      writes each text of 20 characters or more to its bucket of each family of search
      tables (``FAMILIES``: the tables by their first key block; 4 copies of a text, not one
      per table);
    - ``search``: one task per set of (family, bucket) units searches each unit's texts
      with the family's tables (every text sharing a key of those tables is in the
      bucket, so its pairs are those the search over every text finds there);
    - ``groups``: one task over pairs only joins them with the earlier dumps' groups by
      connected components and writes the groups and their counts.

    ``run`` does one task of a phase unless done."""
    layout: CorpusLayout
    dump: str
    cur_hosts: list[list[str]]      # per partition of the statistics, this dump's para_hosts file
    prev_hosts: list[list[str]]     # per partition, the earlier dumps'
    prev_groups: list[str]          # the earlier dumps' group files
    key: dict
    work_parts: int                 # partitions of the dump's work (steps/README: its size)

    @property
    def buckets(self) -> int:
        """Buckets per family of search tables: a unit holds about a work partition's texts."""
        return min(MAX_BUCKETS, -(-self.work_parts // WORK_PARTS_PER_BUCKET))

    @property
    def units(self) -> int:
        return len(FAMILIES) * self.buckets

    @property
    def searches(self) -> int:
        return min(self.units, SEARCHES_PER_WORK_PART * self.work_parts)

    @property
    def readers(self) -> int:
        return min(len(self.cur_hosts), self.work_parts)

    def tasks(self, phase: str) -> range | None:
        """The tasks of a phase (None: one task)."""
        return {"texts": range(self.readers), "search": range(self.searches), "groups": None}[phase]

    def work(self, what: str) -> str:
        return self.layout.file(f"work/{STEP}", self.dump, what)

    def _texts_file(self, reader: int, search: int) -> str:
        return self.work(f"texts-{reader:04d}-{search:04d}")

    def run(self, con, phase: str, task: int | None = None) -> bool:
        key = {**self.key, "phase": phase, "work_parts": self.work_parts, "task": task}
        name = "groups" if phase == "groups" else f"{phase}-{task:04d}"
        return self.layout.once(STEP, self.dump, name, key, getattr(self, "_" + phase), con, task)

    def run_all(self, con) -> int:
        return sum(self.run(con, phase, t) for phase in PHASES for t in (self.tasks(phase) or [None]))

    def _texts(self, con, reader: int) -> dict:
        parts = range(reader, len(self.cur_hosts), self.readers)
        cur = [f for p in parts for f in self.cur_hosts[p]]
        prev = [f for p in parts for f in self.prev_hosts[p]]
        src = f"SELECT text_hash, simhash, n_chars, true AS is_cur FROM {parquet_list(cur)}"
        if prev:
            src += f" UNION ALL SELECT text_hash, simhash, n_chars, false FROM {parquet_list(prev)}"
        texts = con.sql(f"""
            SELECT text_hash, min(simhash) AS simhash, min(n_chars)::INTEGER AS n_chars, bool_or(is_cur) AS is_cur
            FROM ({src}) WHERE n_chars >= {MIN_CHARS} GROUP BY text_hash ORDER BY text_hash""").fetchnumpy()
        cols = {c: np.asarray(texts[c]) for c in TEXTS.names if c != "unit"}
        del texts
        if self.buckets == 1:   # every search task reads every text once
            write_table(self._texts_file(reader, 0), pa.table({"unit": np.zeros(len(cols["text_hash"]), np.int32),
                                                               **cols}, schema=TEXTS), work=True)
            return {"texts": len(cols["text_hash"])}
        # each search task's file: its units in order, each unit's texts in text-hash order
        chosen: list[list[tuple[int, np.ndarray]]] = [[] for _ in range(self.searches)]
        for f in range(len(FAMILIES)):
            bucket = search_bucket(cols["simhash"], f, self.buckets)
            for b in range(self.buckets):
                u = f * self.buckets + b
                chosen[u % self.searches].append((u, np.nonzero(bucket == b)[0]))
        for s, units in enumerate(chosen):
            idx = np.concatenate([i for _, i in units])
            table = pa.table({"unit": np.repeat(np.array([u for u, _ in units], np.int32), [len(i) for _, i in units]),
                              **{c: v[idx] for c, v in cols.items()}}, schema=TEXTS)
            write_table(self._texts_file(reader, s), table, work=True)
        return {"texts": len(cols["text_hash"])}

    def _search(self, con, search: int) -> dict:
        files = [read_table(self._texts_file(r, search if self.buckets > 1 else 0)) for r in range(self.readers)]
        cols = [{c: f.column(c).to_numpy() for c in TEXTS.names} for f in files]
        del files
        if self.buckets == 1:   # one text set for all of this task's tables: the search over every text
            unit = {k: np.concatenate([c[k] for c in cols]) for k in ("text_hash", "simhash", "n_chars", "is_cur")}
            order = np.argsort(unit["text_hash"], kind="stable")
            th = unit["text_hash"][order]
            tables = list(range(search, len(_tables()), self.searches))
            i, j = near_pairs(unit["simhash"][order], unit["n_chars"][order].astype(np.int64), unit["is_cur"][order],
                              workers=1, tables=tables, chain=0 in tables)
            write_table(self.work(f"pairs-{search:04d}"), pa.table({"a": th[i], "b": th[j]}, schema=NEAR))
            return {"texts": len(th), "pairs": len(i)}
        found_a, found_b, n = [], [], 0
        for u in range(search, self.units, self.searches):
            spans = [(c, np.searchsorted(c["unit"], [u, u + 1])) for c in cols]
            unit = {k: np.concatenate([c[k][lo:hi] for c, (lo, hi) in spans]) for k in ("text_hash", "simhash",
                                                                                       "n_chars", "is_cur")}
            order = np.argsort(unit["text_hash"], kind="stable")     # the readers' runs merged
            th = unit["text_hash"][order]
            tables = FAMILIES[u // self.buckets]
            i, j = near_pairs(unit["simhash"][order], unit["n_chars"][order].astype(np.int64),
                              unit["is_cur"][order], workers=1, tables=tables, chain=0 in tables)
            found_a.append(th[i])
            found_b.append(th[j])
            n += len(th)
        a = np.concatenate(found_a) if found_a else np.zeros(0, np.int64)
        b = np.concatenate(found_b) if found_b else np.zeros(0, np.int64)
        write_table(self.work(f"pairs-{search:04d}"), pa.table({"a": a, "b": b}, schema=NEAR))
        return {"texts": n, "pairs": len(a)}

    def _groups(self, con, task=None) -> dict:
        pairs = con.sql(f"SELECT a, b FROM {parquet_list([self.work(f'pairs-{t:04d}') for t in range(self.searches)])}"
                        ).fetchnumpy()
        a, b = np.asarray(pairs["a"], np.int64), np.asarray(pairs["b"], np.int64)
        del pairs
        if self.prev_groups:   # earlier groups, as edges member -> group id
            g = con.sql(f"""SELECT text_hash, min(group_hash) AS g FROM {parquet_list(self.prev_groups)}
                            GROUP BY text_hash""").fetchnumpy()
            a = np.concatenate([a, np.asarray(g["text_hash"], np.int64)])
            b = np.concatenate([b, np.asarray(g["g"], np.int64)])
            del g
        groups = GROUPS.empty_table()
        if len(a):
            nodes = np.unique(np.concatenate([a, b]))    # sorted: the smallest node is the smallest hash
            labels = component_labels(len(nodes), np.searchsorted(nodes, a), np.searchsorted(nodes, b))
            del a, b
            con.register("pg_nodes", pa.table({"text_hash": nodes}))
            cur = con.sql(f"""SELECT DISTINCT text_hash FROM {parquet_list([f for fs in self.cur_hosts for f in fs])}
                              WHERE n_chars >= {MIN_CHARS} AND text_hash IN (SELECT text_hash FROM pg_nodes)
                              """).fetchnumpy()["text_hash"]
            con.unregister("pg_nodes")
            has_cur = np.zeros(len(nodes), bool)
            has_cur[labels[np.searchsorted(nodes, np.asarray(cur, np.int64))]] = True
            keep = has_cur[labels]
            groups = pa.table({"text_hash": nodes[keep], "group_hash": nodes[labels[keep]]}, schema=GROUPS)
        path = self.layout.file("para_groups", self.dump, "groups")
        write_table(path, groups)
        hosts = group_hosts_of(con, path, [f for fs in self.cur_hosts + self.prev_hosts for f in fs])
        write_table(self.layout.file("group_hosts", self.dump, "group_hosts"), hosts)
        return {"texts": groups.num_rows, "groups": pa.compute.count_distinct(groups.column("group_hash")).as_py()}


PHASES = ("texts", "search", "groups")
WORK_PARTS_PER_BUCKET = 1     # a family's buckets: one per this many work partitions
MAX_BUCKETS = 1 << 11         # a family's block has 11 bits (10 for the last ones, never a family's first)
SEARCHES_PER_WORK_PART = 3    # search tasks: at most this many per work partition
NEAR = pa.schema([("a", pa.int64()), ("b", pa.int64())])
TEXTS = pa.schema([("unit", pa.int32()), ("text_hash", pa.int64()), ("simhash", pa.int64()), ("n_chars", pa.int32()),
                   ("is_cur", pa.bool_())])

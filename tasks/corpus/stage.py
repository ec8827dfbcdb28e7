"""The corpus stage of one lake, step by step, without Prefect. The flow
(flows/corpus_flow.py) maps the same functions as tasks.

Order per dump: per-archive signatures -> paragraph statistics (per partition) ->
near-duplicate paragraph groups -> candidate pairs (per partition) -> pairs confirmed on
distinctive paragraphs -> paragraph decisions (per partition) -> document decisions. A dump is judged against itself and every earlier
dump; its decisions never change when a later dump arrives. Its statistics and decisions
cost in proportion to its own size; its pairs and paragraph groups also read the earlier
dumps' band keys and SimHashes. Dumps are done in name order, each completely before the next.
"""
from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field

import pyarrow as pa

from warclake.tasks.runtime.retries import STEP as STEP_RETRY

from warclake.tasks.corpus.signals.archive_step import sign_archive
from warclake.tasks.corpus.steps.decide import (DOC_STEP, PARA_STEP, check_quality_overrides,
                                         document_decisions, paragraph_decisions, run_id_of)
from warclake.tasks.corpus.storage.dump_inputs import DumpInputs, dump_inputs, inputs_of
from warclake.tasks.corpus.storage.engine import (DEFAULT_MEMORY_LIMIT, check_engine_options, connect,
                                           parquet_list)
from warclake.tasks.corpus.storage.layout import CorpusLayout, write_table
from warclake.tasks.corpus.storage.manifest import ManifestWriter
from warclake.tasks.corpus.steps.pairs import STEP as PAIRS_STEP, pairs_partition
from warclake.tasks.corpus.steps.para_groups import SETTINGS as GROUP_SETTINGS, STEP as GROUPS_STEP, groups_step
from warclake.tasks.corpus.steps.doc_pairs import (SETTINGS as PARA_PAIRS_SETTINGS, STEP as PARA_PAIRS_STEP,
                                            para_pairs_step)
from warclake.tasks.corpus.steps.para_stats import STEP as STATS_STEP, stats_partition
from warclake.tasks.corpus.storage.run_lock import CorpusLock
from warclake.tasks.corpus.settings import DecisionConfig, SignatureConfig

log = logging.getLogger(__name__)


@dataclass
class StageOptions:
    sig: SignatureConfig = field(default_factory=SignatureConfig)
    decide: DecisionConfig = field(default_factory=DecisionConfig)
    memory_limit: str = DEFAULT_MEMORY_LIMIT
    threads: int | None = None    # DuckDB's threads per step (None: all cores)

    def __post_init__(self):
        """The engine's settings checked before any work (ValueError, one line), as DuckDB
        would otherwise refuse them only in the first global step."""
        check_engine_options(self.memory_limit, self.threads)


def retrying(what: str, fn, progress=None):
    """``fn()``, run again as ``retries.STEP`` says while it fails with a network or storage
    error (every step is idempotent); the flow's tasks retry as the same policy says."""
    return STEP_RETRY.run(fn, what, progress)


def earlier(dumps: list[str], dump: str) -> list[str]:
    return [d for d in dumps if d < dump]


@dataclass
class DumpContext:
    """What the global steps of one dump read: its per-archive outputs and those of every
    earlier dump, found once (one manifest read per dump) and passed on. Its layout keeps
    the global steps' state files once read or written (``CorpusLayout.cache_states``), so
    the keys that name a step's inputs never read a state file twice; a run passes one
    layout and one ``known`` to the contexts of all its dumps, so an earlier dump's state
    and inputs are read once per run, not once per later dump."""
    layout: CorpusLayout
    dump: str
    opts: StageOptions
    cur: DumpInputs
    prev: list[DumpInputs]

    @classmethod
    def build(cls, lake: str | CorpusLayout, dumps: list[str], dump: str, opts: StageOptions,
              known: dict[str, DumpInputs] | None = None) -> "DumpContext":
        """``known``: the inputs of dumps this run has found (a dump's manifest is final once
        its per-archive step ran), filled with those read here."""
        layout = (lake if isinstance(lake, CorpusLayout) else CorpusLayout(lake)).cache_states(GLOBAL_STATE_STEPS)
        known = {} if known is None else known
        for d in earlier(dumps, dump) + [dump]:
            if d not in known:
                known[d] = dump_inputs(layout, d)
        return cls(layout, dump, opts, known[dump], [known[d] for d in earlier(dumps, dump)])

    @property
    def dumps(self) -> list[str]:
        """The earlier dumps and this one, in order."""
        return [p.dump for p in self.prev] + [self.dump]

    @property
    def parts(self) -> range:
        return range(self.opts.sig.partitions)

    def connect(self):
        return connect(self.layout, self.opts.memory_limit, self.opts.threads)

    def part_files(self, table: str, part: int, dumps: list[str]) -> list[str]:
        return [self.layout.file(table, d, self.layout.part_name(part)) for d in dumps]

    def state_key(self, step: str, dump: str, name: str):
        return (self.layout.read_state(step, dump, name) or {}).get("key")


def _ctx(lake, dumps, dump, opts, ctx):
    return ctx if ctx is not None else DumpContext.build(lake, dumps, dump, opts)


def stats_task(lake: str, dump: str, part: int, opts: StageOptions, ctx: DumpContext | None = None) -> bool:
    ctx = _ctx(lake, [dump], dump, opts, ctx)
    with ctx.connect() as con:
        return stats_partition(con, ctx.layout, ctx.cur, part, opts.sig.partitions, opts.sig.fingerprint())


def groups_key(ctx: DumpContext) -> dict:
    """The groups of a dump depend on the statistics of this and every earlier dump and on
    the earlier dumps' groups (through their keys)."""
    return {"stats": {d: [ctx.state_key(STATS_STEP, d, ctx.layout.part_name(p)) for p in ctx.parts]
                      for d in ctx.dumps},
            "earlier_groups": {p.dump: ctx.state_key(GROUPS_STEP, p.dump, "groups") for p in ctx.prev},
            "settings": GROUP_SETTINGS}


def groups_task(lake: str, dumps: list[str], dump: str, opts: StageOptions, ctx: DumpContext | None = None) -> bool:
    ctx = _ctx(lake, dumps, dump, opts, ctx)
    host_files = lambda ds: [f for p in ctx.parts for f in ctx.part_files("para_hosts", p, ds)]  # noqa: E731
    prev = [p.dump for p in ctx.prev]
    with ctx.connect() as con:
        return groups_step(con, ctx.layout, dump, host_files([dump]), host_files(prev),
                           [ctx.layout.file("para_groups", d, "groups") for d in prev], groups_key(ctx),
                           workers=opts.threads or os.cpu_count() or 1)


def pairs_key(ctx: DumpContext) -> dict:
    return {"cur": ctx.cur.identity, "earlier": {p.dump: p.identity for p in ctx.prev},
            "signatures": ctx.opts.sig.fingerprint(), "parts": ctx.opts.sig.partitions}


def pairs_task(lake: str, dumps: list[str], dump: str, part: int, opts: StageOptions,
               ctx: DumpContext | None = None) -> bool:
    ctx = _ctx(lake, dumps, dump, opts, ctx)
    prev = [f for p in ctx.prev for f in p.files(ctx.layout, "docsigs")]
    with ctx.connect() as con:
        return pairs_partition(con, ctx.layout, ctx.cur.files(ctx.layout, "docsigs"), prev, dump, part,
                               opts.sig.partitions, opts.sig.num_perm, {**pairs_key(ctx), "part": part})


def para_pairs_key(ctx: DumpContext) -> dict:
    """Distinctive-paragraph pairs depend on the pairs and paragraphs of this and every
    earlier dump."""
    return {"pairs": {d: [ctx.state_key(PAIRS_STEP, d, ctx.layout.part_name(p)) for p in ctx.parts]
                      for d in ctx.dumps},
            "cur": ctx.cur.identity, "earlier": {p.dump: p.identity for p in ctx.prev},
            "settings": PARA_PAIRS_SETTINGS}


def para_pairs_task(lake: str, dumps: list[str], dump: str, opts: StageOptions, ctx: DumpContext | None = None) -> bool:
    ctx = _ctx(lake, dumps, dump, opts, ctx)
    layout = ctx.layout
    prev_paras = [f for p in ctx.prev for f in p.files(layout, "paragraphs")]
    prev_pairs = [f for p in ctx.parts for f in ctx.part_files("pairs", p, [e.dump for e in ctx.prev])]
    pair_files = [f for p in ctx.parts for f in ctx.part_files("pairs", p, [dump])]
    with ctx.connect() as con:
        return para_pairs_step(con, layout, dump, ctx.cur.files(layout, "paragraphs"), prev_paras, pair_files,
                               prev_pairs, para_pairs_key(ctx))


def para_decisions_key(ctx: DumpContext, part: int) -> dict:
    name = ctx.layout.part_name(part)
    return {"inputs": ctx.cur.identity,
            "stats": {d: ctx.state_key(STATS_STEP, d, name) for d in ctx.dumps},
            "groups": ctx.state_key(GROUPS_STEP, ctx.dump, "groups"),
            "decisions": ctx.opts.decide.fingerprint(), "part": part}


def para_decisions_task(lake: str, dumps: list[str], dump: str, part: int, opts: StageOptions,
                        ctx: DumpContext | None = None) -> bool:
    ctx = _ctx(lake, dumps, dump, opts, ctx)
    groups_task(lake, dumps, dump, opts, ctx)     # done already when the steps run in order
    layout, name = ctx.layout, ctx.layout.part_name(part)
    key = para_decisions_key(ctx, part)
    if layout.is_done(PARA_STEP, dump, name, key):
        return False
    layout.clear_state(PARA_STEP, dump, name)
    run_id = run_id_of(key)
    with ctx.connect() as con:
        table = paragraph_decisions(con, ctx.cur.files(layout, "paragraphs"),
                                    ctx.part_files("para_hosts", part, ctx.dumps), part, opts.sig.partitions,
                                    opts.decide, run_id, opts.decide.fingerprint(),
                                    groups_file=layout.file("para_groups", dump, "groups"),
                                    group_hosts_file=layout.file("group_hosts", dump, "group_hosts"))
    write_table(layout.file("decisions/paragraphs", dump, name), table)
    layout.mark_done(PARA_STEP, dump, name, key, dropped=table.num_rows, run_id=run_id)
    return True


def doc_decisions_key(ctx: DumpContext) -> dict:
    from warclake.tasks.corpus.signals.quality import QUALITY_RULES

    return {"pairs": {p: ctx.state_key(PAIRS_STEP, ctx.dump, ctx.layout.part_name(p)) for p in ctx.parts},
            "para_pairs": ctx.state_key(PARA_PAIRS_STEP, ctx.dump, "para_pairs"),
            "inputs": ctx.cur.identity, "decisions": ctx.opts.decide.fingerprint(),
            "quality_rules": [(r.name, r.metric, r.op, r.threshold, sorted(r.langs) if r.langs else None)
                              for r in QUALITY_RULES]}


def doc_decisions_task(lake: str, dumps: list[str], dump: str, opts: StageOptions,
                       ctx: DumpContext | None = None) -> bool:
    ctx = _ctx(lake, dumps, dump, opts, ctx)
    para_pairs_task(lake, dumps, dump, opts, ctx)     # done already when the steps run in order
    layout = ctx.layout
    key = doc_decisions_key(ctx)
    if layout.is_done(DOC_STEP, dump, "decisions", key):
        return False
    layout.clear_state(DOC_STEP, dump, "decisions")
    run_id = run_id_of(key)
    pair_files = [f for p in ctx.parts for f in ctx.part_files("pairs", p, [dump])]
    with ctx.connect() as con:
        docs = f"""SELECT docId, dump, lang, date, url_hash, n_chars, clean_hash, metrics
                   FROM {parquet_list(ctx.cur.files(layout, 'docsigs'))}"""
        pairs = f"SELECT a, b, jaccard, exact FROM {parquet_list(pair_files)}"
        para = f"SELECT a, b, para_jaccard FROM {parquet_list([layout.file('para_pairs', dump, 'para_pairs')])}"
        table = document_decisions(con, docs, pairs, opts.decide, run_id, opts.decide.fingerprint(), para)
    write_table(layout.file("decisions/documents", dump, "decisions"), table)
    kept = pa.compute.sum(table.column("kept").cast(pa.int64())).as_py() or 0
    layout.mark_done(DOC_STEP, dump, "decisions", key, documents=table.num_rows, kept=kept, run_id=run_id)
    return True


def _each_part(task):
    return lambda ctx: sum(task(ctx, p) for p in ctx.parts)


# The global steps of one dump, in order (the per-archive step done): (name, fn(ctx)).
GLOBAL_STEPS = [
    ("paragraph_stats", _each_part(lambda c, p: stats_task(None, c.dump, p, c.opts, c))),
    ("paragraph_groups", lambda c: int(groups_task(None, c.dumps, c.dump, c.opts, c))),
    ("pairs", _each_part(lambda c, p: pairs_task(None, c.dumps, c.dump, p, c.opts, c))),
    ("paragraph_pairs", lambda c: int(para_pairs_task(None, c.dumps, c.dump, c.opts, c))),
    ("paragraph_decisions", _each_part(lambda c, p: para_decisions_task(None, c.dumps, c.dump, p, c.opts, c))),
    ("document_decisions", lambda c: int(doc_decisions_task(None, c.dumps, c.dump, c.opts, c))),
]
# their state folders (corpus/state/<step>)
GLOBAL_STATE_STEPS = (STATS_STEP, GROUPS_STEP, PAIRS_STEP, PARA_PAIRS_STEP, PARA_STEP, DOC_STEP)


def run_stage(lake: str, dumps: list[str], archives: dict[str, list[tuple[str, dict]]],
              opts: StageOptions | None = None, progress=None, layout: CorpusLayout | None = None) -> dict:
    """Every step of every dump in ``dumps`` (in order), skipping what is done. The
    per-archive step runs only for archives the dump's manifest does not hold as current.
    ``layout``: the lake's, to share the state files it holds with the caller (``finish``)."""
    opts = opts or StageOptions()
    check_quality_overrides(opts.decide)
    with CorpusLock(lake) as lock:
        return _run_stage(lake, dumps, archives, opts, progress, lock, layout or CorpusLayout(lake))


def _run_stage(lake, dumps, archives, opts, progress, lock, layout) -> dict:
    layout.clean_stale_tmp()
    known: dict[str, DumpInputs] = {}   # each dump's inputs, found once per run
    counts = {"signed": 0, "partitions": 0}
    t0 = time.monotonic()
    for dump in dumps:
        writer = retrying(f"{dump}: manifest", lambda: ManifestWriter(layout, dump), progress)
        try:
            todo = retrying(f"{dump}: manifest", lambda: writer.reconcile(archives.get(dump, []), opts.sig), progress)
            for warc, summary in todo:
                lock.check()
                res = retrying(f"{dump} {warc}", lambda: sign_archive(lake, dump, warc, summary, opts.sig), progress)
                retrying(f"{dump}: manifest", lambda: writer.add(warc, res["key"]), progress)
                counts["signed"] += res["done"] == "signed"
                if progress:
                    progress(f"{dump} {warc}: {res['done']}")
        finally:
            retrying(f"{dump}: manifest", writer.close, progress)
        known[dump] = inputs_of(dump, writer.entries)   # what its manifest now holds
        ctx = DumpContext.build(layout, dumps, dump, opts, known)
        for name, step in GLOBAL_STEPS:
            lock.check()
            counts["partitions"] += retrying(f"{dump}: {name.replace('_', ' ')}", lambda: step(ctx), progress)
            if progress:
                progress(f"{dump}: {name.replace('_', ' ')} done")
    counts["seconds"] = round(time.monotonic() - t0, 2)
    return counts


def dump_summary(lake: str | CorpusLayout, dump: str, parts: int) -> dict:
    """What the decisions of a dump say: documents, kept, paragraphs dropped, run id."""
    layout = lake if isinstance(lake, CorpusLayout) else CorpusLayout(lake)
    doc = layout.read_state(DOC_STEP, dump, "decisions") or {}
    dropped = sum((layout.read_state(PARA_STEP, dump, layout.part_name(p)) or {}).get("dropped", 0)
                  for p in range(parts))
    return {"documents": doc.get("documents", 0), "kept": doc.get("kept", 0),
            "paragraphs_dropped": dropped, "run_id": doc.get("run_id")}


def dump_summaries(layout: CorpusLayout, dumps: list[str], parts: int, progress=None) -> dict[str, dict]:
    """``dump_summary`` of each dump, its reads retried as a step's."""
    return {d: retrying(f"{d}: decisions", lambda: dump_summary(layout, d, parts), progress) for d in dumps}


def finish(lake: str, dumps: list[str], archives: dict, opts: StageOptions, report: bool = True,
           progress=None, report_dir: str | None = None) -> dict:
    """``run_stage``, then the catalogue (so ``warclake sql`` sees the corpus views) and the
    report page."""
    from warclake.tasks.lake.catalog import build_catalog, is_remote

    with CorpusLock(lake) as lock:   # one run per lake, through the catalogue and the report
        layout = CorpusLayout(lake)   # the run's: its state files, read once, summarised below
        counts = run_stage(lake, dumps, archives, opts, progress, layout)
        counts["dumps"] = dump_summaries(layout, dumps, opts.sig.partitions, progress)
        lock.check()
        if not is_remote(lake):   # a remote lake has no catalogue file: its readers build the views in memory
            build_catalog(lake)
        if report:
            from warclake.tasks.corpus.steps.report import write_corpus_report

            counts["report"] = write_corpus_report(lake, report_dir)[1]
    return counts

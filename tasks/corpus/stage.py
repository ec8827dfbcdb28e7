"""The corpus stage of one lake, written once: its steps, and the run of them (lock,
clean-up, manifests, the steps in order, summaries, catalogue and report). Where the steps
run is the caller's: one after another in this process (``InProcess``: ``warclake corpus``),
or as the ``corpus-dump`` flow's tasks (flows/corpus_flow.py).

Order per dump: per-archive signatures -> paragraph statistics (per partition) ->
near-duplicate paragraph groups -> candidate pairs (per partition) -> pairs confirmed on
distinctive paragraphs -> paragraph decisions (per partition) -> document decisions. A dump is judged against itself and every earlier
dump; its decisions never change when a later dump arrives. Its statistics and decisions
cost in proportion to its own size; its pairs and paragraph groups also read the earlier
dumps' band keys and SimHashes. Dumps are done in name order, each completely before the next.
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property


from warclake.tasks.corpus.settings import DEFAULT_MEMORY_LIMIT, DecisionConfig, SignatureConfig
from warclake.tasks.corpus.signals.archive_step import sign_archive
from warclake.tasks.corpus.signals.models import ScoreModels
from warclake.tasks.corpus.signals.score_step import STEP as SCORES_STEP
from warclake.tasks.corpus.signals.score_step import score_archives
from warclake.tasks.corpus.steps.decide import (
    PARA_STEP,
    check_quality_overrides,
    paragraph_decisions,
    run_id_of,
)
from warclake.tasks.corpus.steps import doc_decisions
from warclake.tasks.corpus.steps.doc_decisions import PHASES as DOC_PHASES
from warclake.tasks.corpus.steps.doc_decisions import STATE as DOC_STATE
from warclake.tasks.corpus.steps.doc_decisions import STEP as DOC_STEP
from warclake.tasks.corpus.steps.doc_decisions import DocDecisions
from warclake.tasks.corpus.steps.pairs import STEP as PAIRS_STEP
from warclake.tasks.corpus.steps.pairs import pairs_partition
from warclake.tasks.corpus.steps.para_groups import PHASES as GROUPS_PHASES
from warclake.tasks.corpus.steps.para_groups import SETTINGS as GROUP_SETTINGS
from warclake.tasks.corpus.steps.para_groups import STEP as GROUPS_STEP
from warclake.tasks.corpus.steps.para_groups import ParaGroups
from warclake.tasks.corpus.steps.para_pairs import PHASES as PARA_PAIRS_PHASES
from warclake.tasks.corpus.steps.para_pairs import SETTINGS as PARA_PAIRS_SETTINGS
from warclake.tasks.corpus.steps.para_pairs import STEP as PARA_PAIRS_STEP
from warclake.tasks.corpus.steps.para_pairs import ParaPairs
from warclake.tasks.corpus.steps.para_stats import STEP as STATS_STEP
from warclake.tasks.corpus.steps.para_stats import stats_partition
from warclake.tasks.corpus.steps.score_rules import check_score_thresholds, document_scores_sql
from warclake.tasks.corpus.storage.dump_inputs import DumpInputs, dump_inputs, inputs_of
from warclake.tasks.corpus.storage.engine import check_engine_options, connect
from warclake.tasks.corpus.storage.layout import CorpusLayout, write_table
from warclake.tasks.corpus.storage.manifest import ManifestWriter, load_entries
from warclake.tasks.corpus.storage.run_lock import CorpusLock
from warclake.tasks.runtime.retries import STEP as STEP_RETRY

log = logging.getLogger(__name__)


@dataclass
class StageOptions:
    sig: SignatureConfig = field(default_factory=SignatureConfig)
    decide: DecisionConfig = field(default_factory=DecisionConfig)
    memory_limit: str = DEFAULT_MEMORY_LIMIT
    threads: int | None = None    # DuckDB's threads per step (None: all cores)
    models: ScoreModels | None = None   # the user's models and word lists (signals/models.py)

    def __post_init__(self):
        """The engine's settings checked before any work (ValueError, one line), as DuckDB
        would otherwise refuse them only in the first global step."""
        check_engine_options(self.memory_limit, self.threads)
        check_score_thresholds(self.decide.scores, self.models)


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

    @cached_property
    def work_parts(self) -> int:
        """Partitions of the work of the steps whose tasks are per dump (the
        distinctive-paragraph pairs, the paragraph groups): one per ``BYTES_PER_WORK_PART``
        of the dump's paragraph files, so a task's rows do not grow with the dump."""
        sizes = self.layout.listing(self.layout.dir("paragraphs", self.dump), ".parquet")
        size = sum(int(sizes[a].get("size", 0)) for a in self.cur.archives if a in sizes)
        return max(1, min(MAX_WORK_PARTS, math.ceil(size / BYTES_PER_WORK_PART)))

    def connect(self):
        return connect(self.layout, self.opts.memory_limit, self.opts.threads)

    def part_files(self, table: str, part: int, dumps: list[str]) -> list[str]:
        return [self.layout.file(table, d, self.layout.part_name(part)) for d in dumps]

    def state_key(self, step: str, dump: str, name: str):
        return (self.layout.read_state(step, dump, name) or {}).get("key")


# Each global step does one dump's work (one partition of it, for some) in the dump's
# context and says whether it did any (False: done already).

def model_scores_step(ctx: DumpContext, part: int) -> bool:
    """The user's models' scores of the dump's archives of this partition (none without a
    model); an archive is scored again only for a new documents file or a changed model."""
    models = ctx.opts.models
    if models is None or not models.any:
        return False
    entries = load_entries(ctx.layout, ctx.dump)
    entries = {w: entries[w] for w in ctx.cur.archives if w in entries}
    return score_archives(ctx.layout, ctx.dump, entries, models, part, ctx.opts.sig.partitions) > 0


def scores_key(ctx: DumpContext) -> dict | None:
    """What the decisions' scores depend on: each archive's scores, and the paragraph
    decisions (the scores are over the kept paragraphs); None without a model."""
    models = ctx.opts.models
    if models is None or not models.any:
        return None
    return {"archives": {w: ctx.state_key(SCORES_STEP, ctx.dump, w) for w in ctx.cur.archives},
            "paragraphs": [ctx.state_key(PARA_STEP, ctx.dump, ctx.layout.part_name(p)) for p in ctx.parts]}


def scores_query(ctx: DumpContext) -> str | None:
    if ctx.opts.models is None or not ctx.opts.models.any:
        return None
    layout = ctx.layout
    return document_scores_sql(ctx.cur.files(layout, "model_scores"), ctx.cur.files(layout, "para_model_scores"),
                               [f for p in ctx.parts for f in ctx.part_files("decisions/paragraphs", p, [ctx.dump])])


def paragraph_stats_step(ctx: DumpContext, part: int) -> bool:
    sig = ctx.opts.sig
    with ctx.connect() as con:
        return stats_partition(con, ctx.layout, ctx.cur, part, sig.partitions, sig.fingerprint())


def groups_key(ctx: DumpContext) -> dict:
    """The groups of a dump depend on the statistics of this and every earlier dump and on
    the earlier dumps' groups (through their keys)."""
    return {"stats": {d: [ctx.state_key(STATS_STEP, d, ctx.layout.part_name(p)) for p in ctx.parts]
                      for d in ctx.dumps},
            "earlier_groups": {p.dump: ctx.state_key(GROUPS_STEP, p.dump, "groups") for p in ctx.prev},
            "settings": GROUP_SETTINGS}


def groups_job(ctx: DumpContext) -> ParaGroups:
    prev = [p.dump for p in ctx.prev]
    return ParaGroups(ctx.layout, ctx.dump, [ctx.part_files("para_hosts", p, [ctx.dump]) for p in ctx.parts],
                      [ctx.part_files("para_hosts", p, prev) for p in ctx.parts],
                      [ctx.layout.file("para_groups", d, "groups") for d in prev], groups_key(ctx), ctx.work_parts)


def para_groups_phase(ctx: DumpContext, phase: str, task: int | None) -> bool:
    with ctx.connect() as con:
        return groups_job(ctx).run(con, phase, task)


def pairs_key(ctx: DumpContext) -> dict:
    return {"cur": ctx.cur.identity, "earlier": {p.dump: p.identity for p in ctx.prev},
            "signatures": ctx.opts.sig.fingerprint(), "parts": ctx.opts.sig.partitions}


def pairs_step(ctx: DumpContext, part: int) -> bool:
    dump, opts = ctx.dump, ctx.opts
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


def para_pairs_job(ctx: DumpContext) -> ParaPairs:
    dump, layout = ctx.dump, ctx.layout
    prev_paras = [f for p in ctx.prev for f in p.files(layout, "paragraphs")]
    prev_pairs = [f for p in ctx.parts for f in ctx.part_files("pairs", p, [e.dump for e in ctx.prev])]
    pair_files = [f for p in ctx.parts for f in ctx.part_files("pairs", p, [dump])]
    return ParaPairs(layout, dump, ctx.cur.files(layout, "paragraphs"), prev_paras, pair_files, prev_pairs,
                     para_pairs_key(ctx), ctx.work_parts)


def para_pairs_phase(ctx: DumpContext, phase: str, task: int | None) -> bool:
    with ctx.connect() as con:
        return para_pairs_job(ctx).run(con, phase, task)


def para_pairs_tasks(ctx: DumpContext, phase: str) -> Sequence[int | None]:
    job = para_pairs_job(ctx)
    per_part = dict(job.phases()).get(phase)
    return [] if per_part is None else range(job.parts) if per_part else [None]


def para_decisions_key(ctx: DumpContext, part: int) -> dict:
    name = ctx.layout.part_name(part)
    return {"inputs": ctx.cur.identity,
            "stats": {d: ctx.state_key(STATS_STEP, d, name) for d in ctx.dumps},
            "groups": ctx.state_key(GROUPS_STEP, ctx.dump, "groups"),
            "decisions": ctx.opts.decide.fingerprint(), "part": part}


def paragraph_decisions_step(ctx: DumpContext, part: int) -> bool:
    dump, opts = ctx.dump, ctx.opts
    whole_step(GROUPS_STEP, ctx)     # done already when the steps run in order
    layout, name = ctx.layout, ctx.layout.part_name(part)
    key = para_decisions_key(ctx, part)
    run_id = run_id_of(key)

    def work() -> dict:
        with ctx.connect() as con:
            table = paragraph_decisions(con, ctx.cur.files(layout, "paragraphs"),
                                        ctx.part_files("para_hosts", part, ctx.dumps), part, opts.sig.partitions,
                                        opts.decide, run_id, opts.decide.fingerprint(),
                                        groups_file=layout.file("para_groups", dump, "groups"),
                                        group_hosts_file=layout.file("group_hosts", dump, "group_hosts"))
        write_table(layout.file("decisions/paragraphs", dump, name), table)
        return {"dropped": table.num_rows, "run_id": run_id}

    return layout.once(PARA_STEP, dump, name, key, work)


def doc_decisions_key(ctx: DumpContext) -> dict:
    from warclake.tasks.corpus.signals.quality import QUALITY_RULES

    return {"pairs": {p: ctx.state_key(PAIRS_STEP, ctx.dump, ctx.layout.part_name(p)) for p in ctx.parts},
            "para_pairs": ctx.state_key(PARA_PAIRS_STEP, ctx.dump, "para_pairs"),
            "inputs": ctx.cur.identity, "decisions": ctx.opts.decide.fingerprint(),
            # the kept text's metrics depend on the paragraphs dropped
            "para_decisions": {p: ctx.state_key(PARA_STEP, ctx.dump, ctx.layout.part_name(p)) for p in ctx.parts},
            "quality_rules": [(r.name, r.metric, r.op, r.threshold, sorted(r.langs) if r.langs else None)
                              for r in QUALITY_RULES],
            **({"scores": scores_key(ctx)} if scores_key(ctx) else {})}


def doc_decisions_job(ctx: DumpContext) -> DocDecisions:
    dump, layout, opts = ctx.dump, ctx.layout, ctx.opts
    key = doc_decisions_key(ctx)
    return DocDecisions(layout, dump, list(ctx.cur.archives), ctx.cur.files(layout, "docsigs"),
                        ctx.cur.files(layout, "paragraphs"),
                        [f for p in ctx.parts for f in ctx.part_files("pairs", p, [dump])],
                        layout.file("para_pairs", dump, "para_pairs"),
                        [layout.file("decisions/paragraphs", dump, layout.part_name(p)) for p in ctx.parts],
                        opts.decide, run_id_of(key), key, doc_decisions.parts_for(ctx.work_parts),
                        opts.sig.judge_whole_pages,
                        scores_query(ctx), opts.models)


def doc_decisions_phase(ctx: DumpContext, phase: str, task: int | None) -> bool:
    whole_step(PARA_PAIRS_STEP, ctx)     # done already when the steps run in order
    whole_step(PARA_STEP, ctx)           # the kept text's metrics read the paragraph decisions
    with ctx.connect() as con:
        return doc_decisions_job(ctx).run(con, phase, task)


@dataclass(frozen=True)
class Phase:
    """One phase of a global step: ``run(ctx, task)`` does one task of it (``task`` None:
    the phase is one task) and says whether it did work; ``tasks(ctx)`` lists its tasks
    for the dump (none: nothing to do there). The tasks of a phase may run at once; a
    phase starts when the one before it has ended."""
    name: str
    run: Callable[..., bool]
    tasks: Callable[[DumpContext], Sequence[int | None]]


def _per_part(ctx: DumpContext) -> Sequence[int | None]:
    return ctx.parts


def _one(ctx: DumpContext) -> Sequence[int | None]:
    return [None]


def _groups_phase(phase: str) -> Phase:
    return Phase(phase, lambda ctx, t: para_groups_phase(ctx, phase, t),
                 lambda ctx: groups_job(ctx).tasks(phase) or [None])


def _doc_decisions_phase(phase: str) -> Phase:
    return Phase(phase, lambda ctx, t: doc_decisions_phase(ctx, phase, t),
                 lambda ctx: doc_decisions_job(ctx).tasks(phase))


def _para_pairs_phase(phase: str) -> Phase:
    return Phase(phase, lambda ctx, t: para_pairs_phase(ctx, phase, t), lambda ctx: para_pairs_tasks(ctx, phase))


# The global steps of one dump, in order (its per-archive steps done), each named as its
# module's STEP and its state folder (corpus/state/<step>): its phases.
STEPS: dict[str, tuple[Phase, ...]] = {
    SCORES_STEP: (Phase(SCORES_STEP, model_scores_step, _per_part),),
    STATS_STEP: (Phase(STATS_STEP, paragraph_stats_step, _per_part),),
    GROUPS_STEP: tuple(_groups_phase(p) for p in GROUPS_PHASES),
    PAIRS_STEP: (Phase(PAIRS_STEP, pairs_step, _per_part),),
    PARA_PAIRS_STEP: tuple(_para_pairs_phase(p) for p, _ in PARA_PAIRS_PHASES),
    PARA_STEP: (Phase(PARA_STEP, paragraph_decisions_step, _per_part),),
    DOC_STEP: tuple(_doc_decisions_phase(p) for p, _ in DOC_PHASES),
}
GLOBAL_STATE_STEPS = tuple(STEPS)
# Partitions of the per-dump steps' tasks (``DumpContext.work_parts``)
BYTES_PER_WORK_PART = 24 << 20
MAX_WORK_PARTS = 4096


def whole_step(name: str, ctx: DumpContext) -> int:
    """Step ``name`` of the dump, every task of every phase, in order: how many did work."""
    return sum(phase.run(ctx, t) for phase in STEPS[name] for t in phase.tasks(ctx))


# (name, fn(ctx)) of each global step, in order
GLOBAL_STEPS = [(name, lambda ctx, name=name: whole_step(name, ctx)) for name in STEPS]


class InProcess:
    """The stage's steps one after another in this process, each retried as ``retries.STEP``
    says (a global step with all its partitions); ``again`` is told of each new attempt."""

    def __init__(self, again=None):
        self.again = again

    @contextmanager
    def started(self, layout: CorpusLayout, known: dict[str, DumpInputs]):
        """The run's global steps are made inside (their contexts share ``layout`` and ``known``)."""
        yield self

    def sign(self, lake: str, archives, sig: SignatureConfig, models: ScoreModels | None = None):
        """Each (dump, archive, summary) with what its per-archive step did (scoring with
        ``models`` the documents it reads)."""
        for dump, warc, summary in archives:
            yield (dump, warc, summary), retrying(
                f"{dump} {warc}", lambda: sign_archive(lake, dump, warc, summary, sig, models), self.again)

    def step(self, name: str, ctx: DumpContext) -> int:
        return retrying(f"{ctx.dump}: {name}", lambda: whole_step(name, ctx), self.again)

    def report(self, lake: str, report_dir: str | None) -> str:
        return report_step(lake, report_dir)


def report_step(lake: str, report_dir: str | None) -> str:
    """The corpus report page; its path."""
    from warclake.tasks.corpus.steps.report import write_corpus_report

    return write_corpus_report(lake, report_dir)[1]


def run_stage(lake: str, dumps: list[str], archives: dict[str, list[tuple[str, dict]]],
              opts: StageOptions | None = None, progress=None, layout: CorpusLayout | None = None,
              runner=None, again=None) -> dict:
    """Every step of every dump in ``dumps`` (in order), skipping what is done. The
    per-archive step runs only for archives the dump's manifest does not hold as current.
    ``layout``: the lake's, to share the state files it holds with the caller (``finish``);
    ``runner``: where the steps run (default: ``InProcess``); ``progress`` is told what is
    done, ``again`` (default: ``progress``) of each new attempt of a read or write of the lake."""
    opts = opts or StageOptions()
    again = progress if again is None else again
    check_quality_overrides(opts.decide)
    with CorpusLock(lake) as lock:
        return _run_stage(lake, dumps, archives, opts, progress, again, lock, layout or CorpusLayout(lake),
                          runner or InProcess(again))


def _run_stage(lake, dumps, archives, opts, progress, again, lock, layout, runner) -> dict:
    layout.clean_stale_tmp()
    known: dict[str, DumpInputs] = {}   # each dump's inputs, found once per run
    counts: dict = {"signed": 0, "partitions": 0}
    t0 = time.monotonic()
    with runner.started(layout, known):
        for dump in dumps:
            known[dump] = _sign(lake, dump, archives.get(dump, []), opts, progress, again, lock, layout, runner,
                                counts)
            ctx = DumpContext.build(layout, dumps, dump, opts, known)
            for name in STEPS:
                lock.check()
                counts["partitions"] += runner.step(name, ctx)
                if progress:
                    progress(f"{dump}: {name} done")
    counts["seconds"] = round(time.monotonic() - t0, 2)
    return counts


def _sign(lake, dump, archives, opts, progress, again, lock, layout, runner, counts) -> DumpInputs:
    """The per-archive steps of a dump's archives its manifest does not hold as current, its
    manifest updated here (its one writer) as they end; the dump's inputs, as it now holds them."""
    writer = retrying(f"{dump}: manifest", lambda: ManifestWriter(layout, dump), again)
    try:
        todo = retrying(f"{dump}: manifest", lambda: writer.reconcile(archives, opts.sig), again)
        # the models go to the pass only when given (a runner's sign may take no models)
        scoring = {"models": opts.models} if opts.models is not None and opts.models.any else {}
        for (_, warc, _), res in runner.sign(lake, _until_lost(lock, dump, todo), opts.sig, **scoring):
            retrying(f"{dump}: manifest", lambda: writer.add(warc, res["key"]), again)
            counts["signed"] += res["done"] == "signed"
            if progress:
                progress(f"{dump} {warc}: {res['done']}")
    finally:
        retrying(f"{dump}: manifest", writer.close, again)
    return inputs_of(dump, writer.entries)


def _until_lost(lock: CorpusLock, dump: str, todo):
    """(dump, archive, summary) of each archive to sign; CorpusLockLost once another run took the lake."""
    for warc, summary in todo:
        lock.check()
        yield dump, warc, summary


def dump_summary(lake: str | CorpusLayout, dump: str, parts: int) -> dict:
    """What the decisions of a dump say: documents, kept, paragraphs dropped, run id."""
    layout = lake if isinstance(lake, CorpusLayout) else CorpusLayout(lake)
    doc = layout.read_state(DOC_STEP, dump, DOC_STATE) or {}
    dropped = sum((layout.read_state(PARA_STEP, dump, layout.part_name(p)) or {}).get("dropped", 0)
                  for p in range(parts))
    return {"documents": doc.get("documents", 0), "kept": doc.get("kept", 0),
            "paragraphs_dropped": dropped, "run_id": doc.get("run_id")}


def dump_summaries(layout: CorpusLayout, dumps: list[str], parts: int, progress=None) -> dict[str, dict]:
    """``dump_summary`` of each dump, its reads retried as a step's."""
    return {d: retrying(f"{d}: decisions", lambda: dump_summary(layout, d, parts), progress) for d in dumps}


def finish(lake: str, dumps: list[str], archives: dict, opts: StageOptions, report: bool = True,
           progress=None, report_dir: str | None = None, runner=None, again=None) -> dict:
    """``run_stage``, then the catalogue (so ``warclake sql`` sees the corpus views) and the
    report page."""
    from warclake.tasks.lake.catalog import build_catalog, is_remote

    again = progress if again is None else again
    runner = runner or InProcess(again)
    with CorpusLock(lake) as lock:   # one run per lake, through the catalogue and the report
        layout = CorpusLayout(lake)   # the run's: its state files, read once, summarised below
        counts = run_stage(lake, dumps, archives, opts, progress, layout, runner, again)
        counts["dumps"] = dump_summaries(layout, dumps, opts.sig.partitions, again)
        lock.check()
        if not is_remote(lake):   # a remote lake has no catalogue file: its readers build the views in memory
            build_catalog(lake)
        if report:
            counts["report"] = runner.report(lake, report_dir)
    return counts

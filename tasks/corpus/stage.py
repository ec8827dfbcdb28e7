"""The corpus stage of one lake, step by step, without Prefect. The flow
(flows/corpus_flow.py) maps the same functions as tasks.

Order per dump: per-archive signatures -> paragraph statistics (per partition) ->
candidate pairs (per partition) -> paragraph decisions (per partition) -> document
decisions. A dump is judged against itself and every earlier dump; its decisions never
change when a later dump arrives, so a new dump costs in proportion to its own size.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import pyarrow as pa

from .archive_step import sign_archive
from .decide import (DOC_STEP, PARA_STEP, check_quality_overrides, document_decisions,
                     paragraph_decisions, run_id_of)
from .dump_inputs import dump_inputs
from .engine import DEFAULT_MEMORY_LIMIT, connect, parquet_list, query_table
from .layout import CorpusLayout, write_table
from .pairs import STEP as PAIRS_STEP, pairs_partition
from .para_stats import STEP as STATS_STEP, _table, stats_partition
from .settings import DecisionConfig, SignatureConfig

log = logging.getLogger(__name__)


@dataclass
class StageOptions:
    sig: SignatureConfig = field(default_factory=SignatureConfig)
    decide: DecisionConfig = field(default_factory=DecisionConfig)
    memory_limit: str = DEFAULT_MEMORY_LIMIT
    threads: int | None = None


def earlier(dumps: list[str], dump: str) -> list[str]:
    return [d for d in dumps if d < dump]


def stats_task(lake: str, dump: str, part: int, opts: StageOptions) -> bool:
    layout = CorpusLayout(lake)
    with connect(layout, opts.memory_limit, opts.threads) as con:
        return stats_partition(con, layout, dump_inputs(layout, dump), part, opts.sig.partitions,
                               opts.sig.fingerprint())


def pairs_key(layout: CorpusLayout, dumps: list[str], dump: str, opts: StageOptions) -> dict:
    return {"cur": dump_inputs(layout, dump).identity,
            "earlier": {d: dump_inputs(layout, d).identity for d in earlier(dumps, dump)},
            "signatures": opts.sig.fingerprint(), "parts": opts.sig.partitions}


def pairs_task(lake: str, dumps: list[str], dump: str, part: int, opts: StageOptions) -> bool:
    layout = CorpusLayout(lake)
    cur = dump_inputs(layout, dump)
    prev = [f for d in earlier(dumps, dump) for f in dump_inputs(layout, d).files(layout, "docsigs")]
    key = pairs_key(layout, dumps, dump, opts)
    with connect(layout, opts.memory_limit, opts.threads) as con:
        return pairs_partition(con, layout, cur.files(layout, "docsigs"), prev, dump, part,
                               opts.sig.partitions, opts.sig.num_perm, {**key, "part": part})


def para_decisions_key(layout: CorpusLayout, dumps: list[str], dump: str, part: int, opts: StageOptions) -> dict:
    name = layout.part_name(part)
    return {"inputs": dump_inputs(layout, dump).identity,
            "stats": {d: (layout.read_state(STATS_STEP, d, name) or {}).get("key")
                      for d in earlier(dumps, dump) + [dump]},
            "decisions": opts.decide.fingerprint(), "part": part}


def para_decisions_task(lake: str, dumps: list[str], dump: str, part: int, opts: StageOptions) -> bool:
    layout = CorpusLayout(lake)
    name = layout.part_name(part)
    key = para_decisions_key(layout, dumps, dump, part, opts)
    if layout.is_done(PARA_STEP, dump, name, key):
        return False
    layout.clear_state(PARA_STEP, dump, name)
    run_id = run_id_of(key)
    host_files = [layout.file("para_hosts", d, name) for d in earlier(dumps, dump) + [dump]]
    with connect(layout, opts.memory_limit, opts.threads) as con:
        table = paragraph_decisions(con, dump_inputs(layout, dump).files(layout, "paragraphs"), host_files,
                                    part, opts.sig.partitions, opts.decide, run_id, opts.decide.fingerprint())
    write_table(layout.file("decisions/paragraphs", dump, name), table)
    layout.mark_done(PARA_STEP, dump, name, key, dropped=table.num_rows, run_id=run_id)
    return True


def doc_decisions_key(layout: CorpusLayout, dumps: list[str], dump: str, opts: StageOptions) -> dict:
    from .quality import QUALITY_RULES

    return {"pairs": {p: (layout.read_state(PAIRS_STEP, dump, layout.part_name(p)) or {}).get("key")
                      for p in range(opts.sig.partitions)},
            "inputs": dump_inputs(layout, dump).identity, "decisions": opts.decide.fingerprint(),
            "quality_rules": [(r.name, r.metric, r.op, r.threshold, sorted(r.langs) if r.langs else None)
                              for r in QUALITY_RULES]}


def doc_decisions_task(lake: str, dumps: list[str], dump: str, opts: StageOptions) -> bool:
    layout = CorpusLayout(lake)
    key = doc_decisions_key(layout, dumps, dump, opts)
    if layout.is_done(DOC_STEP, dump, "decisions", key):
        return False
    layout.clear_state(DOC_STEP, dump, "decisions")
    run_id = run_id_of(key)
    cur = dump_inputs(layout, dump)
    pair_files = [layout.file("pairs", dump, layout.part_name(p)) for p in range(opts.sig.partitions)]
    with connect(layout, opts.memory_limit, opts.threads) as con:
        docs = _table(query_table(con, f"""SELECT docId, dump, lang, date, url_hash, n_chars, clean_hash, metrics
                                  FROM {parquet_list(cur.files(layout, 'docsigs'))}"""))
        pairs = _table(query_table(con, f"SELECT a, b, jaccard, exact FROM {parquet_list(pair_files)}"))
        table = document_decisions(con, docs, pairs, opts.decide, run_id, opts.decide.fingerprint())
    write_table(layout.file("decisions/documents", dump, "decisions"), table)
    kept = pa.compute.sum(table.column("kept").cast(pa.int64())).as_py() or 0
    layout.mark_done(DOC_STEP, dump, "decisions", key, documents=table.num_rows, kept=kept, run_id=run_id)
    return True


def run_stage(lake: str, dumps: list[str], archives: dict[str, list[tuple[str, dict]]],
              opts: StageOptions | None = None, progress=None) -> dict:
    """Every step of every dump in ``dumps`` (in order), skipping what is done."""
    opts = opts or StageOptions()
    check_quality_overrides(opts.decide)
    layout = CorpusLayout(lake)
    layout.clean_stale_tmp()
    counts = {"signed": 0, "partitions": 0}
    t0 = time.monotonic()
    for dump in dumps:
        for warc, summary in archives.get(dump, []):
            res = sign_archive(lake, dump, warc, summary, opts.sig)
            counts["signed"] += res["done"] == "signed"
            if progress:
                progress(f"{dump} {warc}: {res['done']}")
        for part in range(opts.sig.partitions):
            counts["partitions"] += stats_task(lake, dump, part, opts)
    for dump in dumps:
        for part in range(opts.sig.partitions):
            counts["partitions"] += pairs_task(lake, dumps, dump, part, opts)
            counts["partitions"] += para_decisions_task(lake, dumps, dump, part, opts)
        doc_decisions_task(lake, dumps, dump, opts)
    counts["seconds"] = round(time.monotonic() - t0, 2)
    return counts


def dump_summary(lake: str, dump: str, parts: int) -> dict:
    """What the decisions of a dump say: documents, kept, paragraphs dropped, run id."""
    layout = CorpusLayout(lake)
    doc = layout.read_state(DOC_STEP, dump, "decisions") or {}
    dropped = sum((layout.read_state(PARA_STEP, dump, layout.part_name(p)) or {}).get("dropped", 0)
                  for p in range(parts))
    return {"documents": doc.get("documents", 0), "kept": doc.get("kept", 0),
            "paragraphs_dropped": dropped, "run_id": doc.get("run_id")}


def finish(lake: str, dumps: list[str], archives: dict, opts: StageOptions, report: bool = True,
           progress=None, report_dir: str | None = None) -> dict:
    """``run_stage``, then the catalogue (so ``warclake sql`` sees the corpus views) and the
    report page."""
    from warclake.tasks.catalog import build_catalog, is_remote

    counts = run_stage(lake, dumps, archives, opts, progress)
    counts["dumps"] = {d: dump_summary(lake, d, opts.sig.partitions) for d in dumps}
    if not is_remote(lake):   # a remote lake has no catalogue file: its readers build the views in memory
        build_catalog(lake)
    if report:
        from .report import write_corpus_report

        counts["report"] = write_corpus_report(lake, report_dir)[1]
    return counts

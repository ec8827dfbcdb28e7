"""The global steps run as tasks over partitions give the decisions of the same steps run
whole, one task per dump (``whole_dump_reference.py``): on a generated lake of three
dumps (copies within and across dumps, near-duplicate paragraphs, site templates), with
more partitions and search buckets than the lake's, the distinctive-paragraph pairs, the
paragraph groups and both decision tables are equal (the document decisions against
``decide.document_decisions`` over the whole dump), row for row."""
from __future__ import annotations

import glob
import random

import pyarrow.parquet as pq
import pytest

from support.corpus_lake import sentence
import whole_dump_reference as ref
from warclake.tasks.corpus import stage
from warclake.tasks.corpus.steps import doc_decisions, para_groups
from warclake.tasks.corpus.steps.para_groups import STEP as GROUPS_STEP
from warclake.tasks.corpus.steps.para_groups import group_hosts_of
from warclake.tasks.corpus.steps.doc_decisions import STATE as DOC_STATE
from warclake.tasks.corpus.steps.doc_decisions import STEP as DOC_STEP
from warclake.tasks.corpus.steps.para_pairs import STEP as PARA_PAIRS_STEP
from warclake.tasks.corpus.storage.layout import CorpusLayout, write_table

DUMPS = ["CC-MAIN-2099-01", "CC-MAIN-2099-02", "CC-MAIN-2099-03"]
NOT_COMPARED = ("run_id", "config_fingerprint")   # digests of the steps' keys, which name their phases


def generated_lake(lake: str, docs_per_dump: int = 500, seed: int = 11) -> None:
    """Three dumps of generated per-archive outputs (tools/measure/corpus_scale.py's
    generator over a pool of made-up sentences), done as the per-archive step marks them."""
    from tools.measure.corpus_scale import T0, Generator, Pool
    from warclake.tasks.corpus.settings import SignatureConfig
    from warclake.tasks.corpus.signals.archive_step import STEP
    from warclake.tasks.corpus.storage.manifest import write_manifest

    sig = SignatureConfig()
    rng = random.Random(seed)
    pool = Pool.from_sentences([f"{sentence(rng, 1)} {sentence(rng, 1)}" for _ in range(300)], sig)
    gen = Generator(pool, docs_per_dump * len(DUMPS), sig, seed=seed)
    layout = CorpusLayout(lake)
    from datetime import timedelta

    for d, dump in enumerate(DUMPS):
        done = {}
        for a in range(2):
            name = f"{dump}-{a:05d}.warc.gz"
            para, docsig = gen.archive(dump, name, docs_per_dump // 2, T0 + timedelta(days=91 * d))
            write_table(layout.file("paragraphs", dump, name), para)
            write_table(layout.file("docsigs", dump, name), docsig)
            done[name] = {"generated": "test", "seed": seed, "archive": a}
            layout.mark_done(STEP, dump, name, done[name])
        write_manifest(layout, dump, done)


def judge(lake: str, opts: stage.StageOptions) -> None:
    layout = CorpusLayout(lake)
    known: dict = {}
    for dump in DUMPS:
        ctx = stage.DumpContext.build(layout, DUMPS, dump, opts, known)
        for _, fn in stage.GLOBAL_STEPS:
            fn(ctx)


def whole_groups(ctx: stage.DumpContext, task=None) -> bool:
    job = stage.groups_job(ctx)
    flat = lambda parts: [f for fs in parts for f in fs]  # noqa: E731
    with ctx.connect() as con:
        groups = ref.groups_of(con, flat(job.cur_hosts), flat(job.prev_hosts), job.prev_groups)
        path = ctx.layout.file("para_groups", ctx.dump, "groups")
        write_table(path, groups)
        write_table(ctx.layout.file("group_hosts", ctx.dump, "group_hosts"),
                    group_hosts_of(con, path, flat(job.cur_hosts) + flat(job.prev_hosts)))
    ctx.layout.mark_done(GROUPS_STEP, ctx.dump, "groups", job.key)
    return True


def whole_para_pairs(ctx: stage.DumpContext, task=None) -> bool:
    job = stage.para_pairs_job(ctx)
    with ctx.connect() as con:
        table = ref.distinctive_pairs(con, job.para_files, job.prev_para_files, job.pair_files, job.prev_pair_files)
    write_table(ctx.layout.file(PARA_PAIRS_STEP, ctx.dump, PARA_PAIRS_STEP), table)
    ctx.layout.mark_done(PARA_PAIRS_STEP, ctx.dump, PARA_PAIRS_STEP, job.key)
    return True


def whole_doc_decisions(ctx: stage.DumpContext, task=None) -> bool:
    write_table(ctx.layout.file("decisions/documents", ctx.dump, "decisions"), ref.document_decisions_whole(ctx))
    ctx.layout.mark_done(DOC_STEP, ctx.dump, DOC_STATE, stage.doc_decisions_key(ctx))
    return True


def table(lake: str, folder: str, dump: str, name: str):
    t = pq.read_table(f"{lake}/corpus/{folder}/dump={dump}/{name}.parquet")
    return t.drop_columns([c for c in NOT_COMPARED if c in t.column_names])


@pytest.fixture(scope="module")
def judged_lakes(tmp_path_factory):
    """The same generated lake judged by the partitioned steps (more partitions than the
    lake's 3; one search bucket per family of tables, and one per work partition) and by the whole-dump steps."""
    base = tmp_path_factory.mktemp("partitioned")
    parts, bucketed, whole = str(base / "parts"), str(base / "bucketed"), str(base / "whole")
    for lake in (parts, bucketed, whole):
        generated_lake(lake)
    opts = stage.StageOptions(sig=stage.SignatureConfig(partitions=3), threads=1)
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(stage, "BYTES_PER_WORK_PART", 30_000)
        mp.setattr(para_groups, "WORK_PARTS_PER_BUCKET", 1000)
        mp.setattr(doc_decisions, "WORK_PARTS_PER_RANGE", 1)
        judge(parts, opts)
        mp.setattr(para_groups, "WORK_PARTS_PER_BUCKET", 1)
        judge(bucketed, opts)
        work_parts = stage.DumpContext.build(CorpusLayout(parts), DUMPS, DUMPS[-1], opts).work_parts
        mp.setitem(stage.STEPS, GROUPS_STEP, (stage.Phase("groups", whole_groups, stage._one),))
        mp.setitem(stage.STEPS, PARA_PAIRS_STEP, (stage.Phase("merge", whole_para_pairs, stage._one),))
        mp.setitem(stage.STEPS, DOC_STEP, (stage.Phase("write", whole_doc_decisions, stage._one),))
        judge(whole, opts)
    finally:
        mp.undo()
    return {"one bucket": parts, "buckets": bucketed}, whole, work_parts


@pytest.mark.parametrize("search", ["one bucket", "buckets"])
@pytest.mark.parametrize("dump", DUMPS)
def test_partitioned_steps_give_the_whole_dump_steps_decisions(judged_lakes, dump, search):
    lakes, whole, work_parts = judged_lakes
    parts = lakes[search]
    assert work_parts > 3    # the per-dump steps ran on more partitions than the lake's
    ranges = glob.glob(f"{parts}/corpus/work/doc_decisions/dump={dump}/decisions-part=*.parquet")
    assert len(ranges) == work_parts    # the document decisions, one task per range of docIds
    pairs = table(parts, "para_pairs", dump, "para_pairs")
    assert pairs.num_rows > 20
    assert pairs.equals(table(whole, "para_pairs", dump, "para_pairs"))
    groups = table(parts, "para_groups", dump, "groups")
    assert groups.num_rows > 20
    assert groups.equals(table(whole, "para_groups", dump, "groups"))
    assert table(parts, "group_hosts", dump, "group_hosts").equals(table(whole, "group_hosts", dump, "group_hosts"))
    docs = table(parts, "decisions/documents", dump, "decisions")
    assert docs.equals(table(whole, "decisions/documents", dump, "decisions"))
    assert sum(docs.column("cluster_size").to_pylist()[i] > 1 for i in range(docs.num_rows)) > 10
    for p in range(3):
        name = f"part={p:03d}"
        assert table(parts, "decisions/paragraphs", dump, name).equals(
            table(whole, "decisions/paragraphs", dump, name))

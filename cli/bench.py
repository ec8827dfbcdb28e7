"""``warclake bench``: extraction speed and memory on one core, and where the time goes.

Runs the per-archive extraction in this process (no Prefect) into a throw-away lake and
reports docs/s, MB/s of compressed input, peak RSS and, with --profile, the share of
time per stage (grouped by module).
"""
from __future__ import annotations

import cProfile
import os
import pstats
import resource
import tempfile
import time
from collections import defaultdict

from warclake.tasks.config import ExtractConfig
from warclake.tasks.extract_archive import extract_archive
from warclake.tasks.inputs import resolve_inputs
from warclake.tasks.language import LanguageDetector

# module path fragment -> stage name, first match wins
STAGES = [
    ("warcio", "warc read + inflate"), ("isal", "warc read + inflate"), ("zlib", "warc read + inflate"),
    ("'read' of '_io", "warc read + inflate"),
    ("warc_reader", "warc read + inflate"),
    ("charset_normalizer", "charset (detector)"), ("tasks/charset", "charset (sniff + decode)"),
    ("lingua", "language (lingua)"), ("tasks/language", "language (buffer + routing)"),
    ("selectolax", "html parse"), ("lexbor", "html parse"), ("re.Pattern", "regular expressions"), ("tasks/paragraph", "paragraph walk"),
    ("tasks/boilerplate", "boilerplate"), ("pyarrow", "parquet write"), ("extract_archive", "parquet write"),
]


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="measure extraction speed (docs/s, MB/s per core) and peak memory")
    p.add_argument("--langs", default="ja")
    p.add_argument("--boilerplate", default="none")
    p.add_argument("--profile", action="store_true", help="show where the time goes, per stage")
    p.add_argument("--flow-workers", default=None, metavar="N,M",
                   help="also time the Prefect flow with these worker counts (e.g. 0,1,2): speed-up of "
                        "N worker processes over 1, and (0) Prefect's overhead per archive over the plain loop")
    p.add_argument("inputs", nargs="+", metavar="INPUT")
    p.set_defaults(handler=run)


def stage_of(filename: str, function: str = "") -> str:
    """Stage of a profiled function; built-ins (filename "~") are told by their owner's name."""
    where = f"{filename} {function}" if filename == "~" else filename
    for frag, stage in STAGES:
        if frag in where:
            return stage
    return "other"


def run(args) -> int:
    config = ExtractConfig.from_langs(args.langs, boilerplate=args.boilerplate)
    inputs = resolve_inputs(args.inputs)
    t_load = time.perf_counter()
    LanguageDetector.from_config(config).preload()  # model loading is a one-off per worker: report it apart
    load_s = time.perf_counter() - t_load
    prof = cProfile.Profile() if args.profile else None
    in_bytes = records = docs = 0
    cpu0, t0 = time.process_time(), time.perf_counter()
    with tempfile.TemporaryDirectory() as lake:
        for path in inputs:
            if prof:
                prof.enable()
            s = extract_archive(path, "BENCH", lake, config)
            if prof:
                prof.disable()
            in_bytes += s["input_bytes"]
            records += s["records"]
            docs += s["documents"]
        out_bytes = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(os.path.join(lake, "documents"))
                        for f in fs)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"inputs: {len(inputs)} archives, {in_bytes / 1e6:.1f} MB compressed, {records} records, {docs} documents")
    print(f"langs={','.join(config.langs)} boilerplate={config.boilerplate}")
    print(f"wall {wall:.2f}s  cpu {cpu:.2f}s  (detector load {load_s:.2f}s, not included)")
    print(f"speed: {in_bytes / 1e6 / cpu:.1f} MB/s of input per core, {records / cpu:.0f} records/s, "
          f"{docs / cpu:.1f} docs/s per core")
    print(f"output: {out_bytes / 1e6:.2f} MB documents parquet ({out_bytes / max(in_bytes, 1):.4f} of input)")
    print(f"peak RSS: {rss_mb:.0f} MB")
    if args.flow_workers:
        bench_flow(inputs, config, [int(w) for w in args.flow_workers.split(",")], wall)
    if prof:
        stats = pstats.Stats(prof)
        per_stage: dict[str, float] = defaultdict(float)
        total = 0.0
        for (filename, _, function), (_, _, tottime, _, _) in stats.stats.items():
            per_stage[stage_of(filename, function)] += tottime
            total += tottime
        print("time by stage (profiled, own time):")
        for stage, t in sorted(per_stage.items(), key=lambda kv: -kv[1]):
            print(f"  {stage:28s} {t:7.2f}s  {100 * t / total:5.1f}%")
    return 0


def bench_flow(inputs: list[str], config: ExtractConfig, worker_counts: list[int], loop_wall: float) -> None:
    """Time the flow on the same inputs, after a warm-up run that pays the API server start."""
    from warclake.flows.dump_flow import extract_dump

    langs = ",".join(config.langs)
    with tempfile.TemporaryDirectory() as warm:
        extract_dump(dump="WARMUP", inputs=inputs[:1], lake=warm, langs=langs, workers=1, report=False,
                     return_state=True)
    walls = {}
    for w in worker_counts:
        with tempfile.TemporaryDirectory() as lake:
            t0 = time.perf_counter()
            # workers=0 extracts inside the task thread; one archive at a time, so the
            # difference to the plain loop is Prefect's own cost per archive
            state = extract_dump(dump="BENCH", inputs=inputs, lake=lake, langs=langs,
                                 boilerplate=config.boilerplate, workers=w, report=False,
                                 max_in_flight=1 if w == 0 else None, return_state=True)
            walls[w] = time.perf_counter() - t0
        print(f"flow, workers={w}: wall {walls[w]:.2f}s ({state.name})")
    n = len(inputs)
    if 0 in walls:
        print(f"Prefect overhead per archive (workers=0, one at a time, vs plain loop): "
              f"{1000 * (walls[0] - loop_wall) / n:.0f} ms")
    if 1 in walls:
        for w, t in walls.items():
            if w > 1:
                print(f"speed-up with {w} worker processes vs 1: {walls[1] / t:.2f}x")

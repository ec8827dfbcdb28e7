"""``warclake bench``: extraction speed and memory on one core, and where the time goes.

Runs the per-archive extraction (no Prefect) into a throw-away lake and reports docs/s,
MB/s of compressed input per core (CPU time), peak RSS and, with --profile, the share of
time per stage (grouped by module). ``--modes`` measures several configurations in one
run, each in a fresh process (its own peak RSS, no warm caches), beside ``read``: a bare
warcio read of every record, the ceiling of the reader, and ``reader``: every record through
the project's reader (every gzip member checked, damage resynced), its payload read as
extraction reads it (chunked and content codings undone), and ``resiliparse``: the C pipeline
people pick for speed (cli/bench_reference.py), to which every other row is given as a ratio
of MB/s. Each mode's process is pinned to one core. With ``--extract-processes`` each mode is
instead a whole ``warclake extract`` process (cli/bench_processes.py).
"""
from __future__ import annotations

import cProfile
import os
import pstats
import resource
import statistics
import tempfile
import time
from collections import defaultdict
from typing import Any

from warclake.cli import bench_reference
from warclake.tasks import native
from warclake.tasks.archive.inputs import resolve_inputs
from warclake.tasks.extract.archive import extract_archive
from warclake.tasks.extract.boilerplate import compiled as sieve_compiled  # loads nothing until asked
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.extract.language import LanguageDetector, forget_answers
from warclake.tasks.lake.owners import proc_stat
from warclake.tasks.runtime import collector

# module path fragment -> stage name, first match wins
STAGES = [
    ("warcio", "warc read + inflate"), ("isal", "warc read + inflate"), ("zlib", "warc read + inflate"),
    ("'read' of '_io", "warc read + inflate"),
    ("tasks/archive/reader", "warc read + inflate"), ("tasks/archive/lines", "warc read + inflate"),
    ("tasks/archive/gzip_members", "warc read + inflate"), ("tasks/archive/rewind_store", "warc read + inflate"),
    ("charset_normalizer", "charset (detector)"), ("tasks/extract/charset", "charset (sniff + decode)"),
    ("lingua", "language (lingua)"), ("tasks/extract/language", "language (buffer + routing)"),
    ("lexbor_walk", "paragraph walk"), ("selectolax", "html parse"), ("lexbor", "html parse"), ("re.Pattern", "regular expressions"),
    ("tasks/extract/html_paragraphs", "paragraph walk"), ("tasks/native", "paragraph walk"),
    ("tasks/extract/paragraph", "paragraph walk"), ("tasks/extract/boilerplate", "boilerplate"), ("pyarrow", "parquet write"),
    ("tasks/extract/archive", "parquet write"),
]
REFERENCE = bench_reference.MODE
NOT_EXTRACTION = ("read", "reader", REFERENCE)  # rows that are not a configuration of warclake's extraction


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="measure extraction speed (docs/s, MB/s per core) and peak memory")
    p.add_argument("--langs", default="ja")
    p.add_argument("--boilerplate", default="none")
    p.add_argument("--profile", action="store_true", help="show where the time goes, per stage")
    p.add_argument("--flow-workers", default=None, metavar="N,M",
                   help="also time the Prefect flow with these worker counts (e.g. 0,1,2): speed-up of "
                        "N worker processes over 1, and (0) Prefect's overhead per archive over the plain loop")
    p.add_argument("--modes", default=None, metavar="MODE,...",
                   help="compare modes in one run: 'read' (bare warcio), 'reader' (warclake's reader and "
                        "payload stream, as extraction reads) and LANGS[+BOILERPLATE], e.g. "
                        "read,reader,ja,all,all+sieve (LANGS joined by '/' for several: ja/en+sieve); "
                        "+signatures adds the corpus signatures (--corpus-signatures): all,all+signatures; "
                        f"'{REFERENCE}': the C pipeline (fastwarc, resiliparse's encoding detection, "
                        "main-content text and detect_fast, parquet zstd), every other row a ratio to it")
    p.add_argument("--walks", default=None, metavar="compiled,python",
                   help="with --modes: run every mode with each paragraph walk (WARCLAKE_NATIVE=1/0), "
                        "alternating, in one sitting")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="with --modes: measure every row N times, alternating, and report the median CPU")
    p.add_argument("--extract-processes", action="store_true",
                   help="with --modes: run each mode as a `warclake extract --workers 0` process of its own "
                        "(a fresh lake each; imports and model loading counted, as for a worker), alternating "
                        "the modes round by round, and report each run's CPU (user + system) and what each "
                        "mode adds to the first, per round and as the median")
    p.add_argument("--start-up", action="store_true",
                   help="with --extract-processes and two inputs or more: also run each mode on the first "
                        "input alone, every round, and report what a process pays once and its rate on "
                        "the rest (CPU s per MB beyond the first input), which a dump's run sees")
    p.add_argument("--markdown", default=None, metavar="FILE", help="with --modes: write the table to FILE")
    p.add_argument("inputs", nargs="+", metavar="INPUT")
    p.set_defaults(handler=run)


def stage_of(filename: str, function: str = "") -> str:
    """Stage of a profiled function; built-ins (filename "~") are told by their owner's name."""
    where = f"{filename} {function}" if filename == "~" else filename
    for frag, stage in STAGES:
        if frag in where:
            return stage
    return "other"


def extract_all(inputs: list[str], lake: str, config: ExtractConfig,
                prof: cProfile.Profile | None) -> tuple[int, int, int]:
    """Extract every input into ``lake`` (profiled when ``prof``): input bytes, records, documents."""
    in_bytes = records = docs = 0
    for path in inputs:
        if prof:
            prof.enable()
        s = extract_archive(path, "BENCH", lake, config)
        if prof:
            prof.disable()
        in_bytes += s["input_bytes"]
        records += s["records"]
        docs += s["documents"]
    return in_bytes, records, docs


def run(args) -> int:
    if args.start_up and not args.extract_processes:
        raise SystemExit("--start-up: with --modes and --extract-processes only")
    if args.modes:
        return run_modes(args)
    if args.extract_processes:
        raise SystemExit("--extract-processes: give the modes to compare with --modes, e.g. all,all+signatures")
    config = ExtractConfig.from_langs(args.langs, boilerplate=args.boilerplate)
    inputs = resolve_inputs(args.inputs)
    t_load = time.perf_counter()
    LanguageDetector.from_config(config).preload()  # model loading is a one-off per worker: report it apart
    collector.keep_off_the_hot_path()  # as a worker's start-up does
    load_s = time.perf_counter() - t_load
    prof = cProfile.Profile() if args.profile else None
    cpu0, t0 = time.process_time(), time.perf_counter()
    with tempfile.TemporaryDirectory() as lake:
        in_bytes, records, docs = extract_all(inputs, lake, config, prof)
        out_bytes = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(os.path.join(lake, "documents"))
                        for f in fs)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"inputs: {len(inputs)} archives, {in_bytes / 1e6:.1f} MB compressed, {records} records, {docs} documents")
    print(f"langs={','.join(config.langs)} boilerplate={config.boilerplate} {native.describe()}"
          + (f", {sieve_compiled.describe()}" if config.boilerplate == "sieve" else ""))
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
        # the table pstats reads its reports from (an attribute typeshed does not declare)
        for (filename, _, function), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
            per_stage[stage_of(filename, function)] += tottime
            total += tottime
        print("time by stage (profiled, own time):")
        for stage, t in sorted(per_stage.items(), key=lambda kv: -kv[1]):
            print(f"  {stage:28s} {t:7.2f}s  {100 * t / total:5.1f}%")
    return 0


def _own_cpu() -> float:
    """CPU seconds of this process alone (worker processes are children, not counted)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _api_server_cpu() -> float | None:
    """CPU seconds of Prefect's temporary API server, a child process of this one, which
    competes with the workers for the cores; None where /proc cannot tell (not Linux)."""
    total, found = 0.0, False
    try:
        pids = [int(d) for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return None
    for pid in pids:
        fields = proc_stat(pid)  # after the command name: state, ppid, ... utime, stime
        if fields is None or int(fields[1]) != os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if b"prefect.server" not in fh.read():
                    continue
        except OSError:  # gone meanwhile
            continue
        found = True
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total if found else None


def bench_flow(inputs: list[str], config: ExtractConfig, worker_counts: list[int], loop_wall: float) -> None:
    """Time the flow on the same inputs: a run's fixed cost, then each worker count with the
    orchestrating process's own CPU per archive and the temporary API server's."""
    from warclake.flows.dump_flow import extract_dump

    langs = ",".join(config.langs)
    kw: dict[str, Any] = dict(langs=langs, boilerplate=config.boilerplate, report=False, return_state=True)
    with tempfile.TemporaryDirectory() as warm:
        t0 = time.perf_counter()
        extract_dump(dump="WARMUP", inputs=inputs[:1], lake=warm, workers=1, **kw)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()  # the same archive again: planned as done, nothing to extract
        extract_dump(dump="WARMUP", inputs=inputs[:1], lake=warm, workers=1, **kw)
        fixed = time.perf_counter() - t0
    print(f"flow, first run in this process (temporary API server start + 1 archive): {first:.2f}s")
    print(f"flow, fixed cost of a run (flow start, planning, nothing to extract): {fixed:.2f}s")
    walls = {}
    for w in worker_counts:
        with tempfile.TemporaryDirectory() as lake:
            cpu0, server0, t0 = _own_cpu(), _api_server_cpu(), time.perf_counter()
            # workers=0 extracts inside the task thread; one archive at a time, so the
            # difference to the plain loop is Prefect's own cost per archive
            state = extract_dump(dump="BENCH", inputs=inputs, lake=lake, workers=w,
                                 max_in_flight=1 if w == 0 else None, **kw)
            walls[w] = time.perf_counter() - t0
            own, server1 = _own_cpu() - cpu0, _api_server_cpu()
        note = "" if w == 0 else f", orchestrating process {1000 * own / len(inputs):.0f} ms CPU per archive"
        if server0 is not None and server1 is not None:
            note += f", temporary API server {1000 * (server1 - server0) / len(inputs):.0f} ms CPU per archive"
        print(f"flow, workers={w}: wall {walls[w]:.2f}s{note} ({state.name})")
    n = len(inputs)
    if 0 in walls:
        print(f"Prefect overhead per archive (workers=0, one at a time, vs plain loop): "
              f"{1000 * (walls[0] - loop_wall) / n:.0f} ms")
    if 1 in walls:
        for w, t in walls.items():
            if w > 1:
                net = (f"{(walls[1] - fixed) / (t - fixed):.2f}x" if min(walls[1], t) > fixed
                       else "n/a (runs no longer than the fixed cost)")
                print(f"speed-up with {w} worker processes vs 1: {walls[1] / t:.2f}x; "
                      f"without the fixed cost: {net}")


# -- several modes in one run ------------------------------------------------------------
def mode_config(mode: str) -> ExtractConfig:
    """``all+sieve``: langs all, boilerplate sieve; ``ja/en``: langs ja,en; ``+signatures``:
    the corpus stage's per-archive outputs written while extracting (``--corpus-signatures``)."""
    langs, *extras = mode.split("+")
    boilerplate = [e for e in extras if e != "signatures"]
    if len(boilerplate) > 1:
        raise ValueError(f"mode {mode!r}: one boilerplate mode at most")
    return ExtractConfig.from_langs(langs.replace("/", ","), boilerplate=boilerplate[0] if boilerplate else "none",
                                    corpus_signatures="signatures" in extras)


def read_as_extraction_does(rec) -> int:
    """A record read the way extraction reads it: HTTP payloads through the payload stream
    (chunked and content codings undone, tasks/archive/content_encoding.py), other blocks raw, then
    the rest of the record drained and checked. Returns the bytes read (decoded)."""
    data = b""
    try:
        if rec.rec_type == "response" and rec.http_headers is not None and not rec.http_error:
            data, _ = rec.read_payload()
        else:
            data, _ = rec.read_raw()
    except Exception:  # a payload that does not decode is an outcome of extraction, not of reading
        pass
    rec.complete()
    return len(data)


def measure_mode(mode: str, inputs: list[str], profile: bool) -> dict:
    """One mode in this (fresh) process: CPU seconds, bytes, records, documents, peak RSS and,
    when profiled, seconds per stage."""
    in_bytes = sum(os.path.getsize(p) for p in inputs)
    records = docs = 0
    load_s = 0.0
    prof = cProfile.Profile() if profile else None
    if mode == "read":
        from warcio.archiveiterator import ArchiveIterator

        cpu0 = time.process_time()
        for path in inputs:
            with open(path, "rb") as fh:
                for rec in ArchiveIterator(fh):
                    rec.content_stream().read()
                    records += 1
        cpu = time.process_time() - cpu0
    elif mode == REFERENCE:
        bench_reference.load()  # imports are a one-off per process, as model loading is for the others
        with tempfile.TemporaryDirectory() as out:
            cpu0 = time.process_time()
            records, docs = bench_reference.run(inputs, out)
            cpu = time.process_time() - cpu0
    elif mode == "reader":
        from warclake.tasks.archive.reader import ArchiveReader

        cpu0 = time.process_time()
        for path in inputs:
            with open(path, "rb") as fh:
                for rec in ArchiveReader(fh):
                    read_as_extraction_does(rec)
                    records += 1
        cpu = time.process_time() - cpu0
    else:
        config = mode_config(mode)
        forget_answers()  # the profiled run follows the timed one in the same process
        t = time.process_time()
        LanguageDetector.from_config(config).preload()
        collector.keep_off_the_hot_path()  # as a worker's start-up does
        load_s = time.process_time() - t
        with tempfile.TemporaryDirectory() as lake:
            cpu0 = time.process_time()
            _, records, docs = extract_all(inputs, lake, config, prof)
            cpu = time.process_time() - cpu0
    stages: dict[str, float] = defaultdict(float)
    if prof:
        # the table pstats reads its reports from (an attribute typeshed does not declare)
        for (filename, _, function), (_, _, tottime, _, _) in pstats.Stats(prof).stats.items():  # type: ignore[attr-defined]
            stages[stage_of(filename, function)] += tottime
    walk = native.STATUS if mode not in NOT_EXTRACTION else "-"
    if mode not in NOT_EXTRACTION and mode_config(mode).boilerplate == "sieve":
        sieve_compiled.describe()  # the features' choice is made when they are first imported
        walk += f", sieve features {sieve_compiled.STATUS}"
    return {"mode": mode, "walk": walk, "cpu": cpu, "load": load_s, "in_bytes": in_bytes, "records": records, "docs": docs,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "stages": dict(stages)}


def run_modes(args) -> int:
    import multiprocessing
    import shlex
    import sys

    inputs = [p for p in resolve_inputs(args.inputs) if "://" not in p]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    # each mode's configuration (None: not one of the extraction), made first: a typo fails before minutes of measuring
    configs = [None if m in NOT_EXTRACTION else mode_config(m) for m in modes]
    if REFERENCE in modes:
        bench_reference.load()  # nor for want of the reference's libraries
    if args.extract_processes:
        if any(m in ("read", "reader") for m in modes) or args.walks or args.profile:
            raise SystemExit(f"--extract-processes: extraction modes and {REFERENCE} only (not read, reader), "
                             "without --walks and --profile")
        from warclake.cli.bench_processes import run_processes  # not imported by every command

        if args.start_up and len(inputs) < 2:
            raise SystemExit("--start-up: give two inputs or more (the first alone is run too)")
        return show_table(run_processes(modes, configs, inputs, args.repeat, args.start_up), args.markdown)
    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter per mode
    walks = [w.strip() for w in args.walks.split(",")] if args.walks else [None]
    for w in walks:
        if w not in (None, "compiled", "python"):
            raise SystemExit(f"--walks: 'compiled' or 'python', not {w!r}")
    rows = [(m, w) for m in modes for w in (walks if m not in NOT_EXTRACTION else [None])]
    samples: dict[tuple, list[dict]] = {row: [] for row in rows}
    saved = os.environ.get(native.ENV)
    try:
        for rep in range(max(1, args.repeat)):  # alternating rows: drift of the machine hits all alike
            for m, w in rows:
                if w is not None:  # the spawned interpreter reads it when it imports the walk
                    os.environ[native.ENV] = "1" if w == "compiled" else "0"
                with ctx.Pool(1, initializer=pin_to_one_core) as pool:
                    r = pool.apply(measure_mode, (m, inputs, False))
                    if args.profile and rep == 0 and m not in NOT_EXTRACTION:
                        r["stages"] = pool.apply(measure_mode, (m, inputs, True))["stages"]
                if samples[(m, w)]:
                    r["stages"] = samples[(m, w)][0]["stages"]
                samples[(m, w)].append(r)
                print(f"{m} ({r['walk']}): {r['in_bytes'] / 1e6 / r['cpu']:.1f} MB/s per core",
                      file=sys.stderr, flush=True)
    finally:
        if saved is None:
            os.environ.pop(native.ENV, None)
        else:
            os.environ[native.ENV] = saved
    results = []
    for row in rows:  # the run of median CPU time
        runs = sorted(samples[row], key=lambda r: r["cpu"])
        results.append(dict(runs[(len(runs) - 1) // 2], runs=len(runs)))
    mb = results[0]["in_bytes"] / 1e6
    ref = samples.get((REFERENCE, None))
    lines = [f"Inputs: {len(inputs)} archives, {mb:.1f} MB of WARC.gz. Command: "
             f"`warclake bench {' '.join(shlex.quote(a) for a in sys.argv[2:])}`" if sys.argv[1:2] == ["bench"]
             else f"Inputs: {len(inputs)} archives, {mb:.1f} MB of WARC.gz.", "",
             "| mode | MB/s per core |" + (f" × {REFERENCE} |" if ref else "")
             + " records/s | docs/s | CPU s | model load s | peak RSS MB | paragraph walk |",
             "|---|---:|" + ("---:|" if ref else "") + "---:|---:|---:|---:|---:|---|"]
    for row, r in zip(rows, results):
        ratio = f" {ratio_cell([x['cpu'] for x in ref], [x['cpu'] for x in samples[row]])} |" if ref else ""
        lines.append(f"| {r['mode']} | {r['in_bytes'] / 1e6 / r['cpu']:.1f} |{ratio} {r['records'] / r['cpu']:,.0f} | "
                     f"{r['docs'] / r['cpu']:,.0f} | {r['cpu']:.2f} | {r['load']:.2f} | {r['rss_mb']:.0f} | {r['walk']} |")
    if ref:
        lines += ["", f"× {REFERENCE}: MB/s per core as a multiple of the C pipeline's (fastwarc, resiliparse's "
                      "encoding detection, main-content text and detect_fast, parquet zstd) on the same inputs in "
                      "the same sitting; with --repeat the median of the rounds' ratios, their range in brackets."]
    if args.profile:
        names = sorted({s for r in results for s in r["stages"]})
        lines += ["", "Share of profiled time by stage:", "",
                  "| stage | " + " | ".join(f"{r['mode']} ({r['walk']})" for r in results if r["stages"]) + " |",
                  "|---|" + "---:|" * sum(1 for r in results if r["stages"])]
        for st in names:
            cells = [f"{100 * r['stages'].get(st, 0) / sum(r['stages'].values()):.1f} %"
                     for r in results if r["stages"]]
            lines.append(f"| {st} | " + " | ".join(cells) + " |")
    return show_table("\n".join(lines), args.markdown)


def ratio_cell(ref_cpu: list[float], cpu: list[float]) -> str:
    """A row's speed as a multiple of the reference's, round by round (the same inputs, so the
    ratio of CPU seconds): the median, and the range when there are several rounds."""
    ratios = [r / c for r, c in zip(ref_cpu, cpu)]
    med = statistics.median(ratios)
    return f"{med:.2f}" if len(ratios) == 1 else f"{med:.2f} ({min(ratios):.2f}-{max(ratios):.2f})"


def pin_to_one_core() -> None:
    """Run the measuring process on one core (the last it may use), as every row is measured."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})


def show_table(table: str, markdown: str | None) -> int:
    """Print the table, and write it to ``markdown`` when given."""
    print(table)
    if markdown:
        with open(markdown, "w", encoding="utf-8") as fh:
            fh.write(table + "\n")
    return 0

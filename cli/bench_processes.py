"""``warclake bench --modes A,B --extract-processes``: each mode as a whole ``warclake extract``
process, alternated round by round, and what each mode adds to the first in CPU time.

A worker pays its once-per-process costs (imports, model loading, a compiled module's check)
once, so they count here as they do for a worker: each run is ``warclake extract --workers 0
-q`` in a process of its own, into a fresh lake, and its CPU time is the user + system time
of that whole process (``os.wait4``). Alternating the modes within each round lets a drift
of the machine's load hit them alike; the percentage is taken per round, then its median.
The reference row (cli/bench_reference.py) runs the same way, as a process of its own, and
every mode's speed is also given as a multiple of it.

With ``start_up`` every mode also runs on the first input alone, in every round. The two runs
part a process's CPU into what it pays once (imports, lingua's models, compiled modules'
checks) and its rate on the rest: CPU s per MB beyond the first input. A dump's run sees that
rate, since a worker keeps its process from archive to archive; a bench on a few small
archives charges them the start-up too.
"""
from __future__ import annotations

import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

from warclake.cli import bench_reference
from warclake.tasks.corpus.storage.layout import ARCHIVE_STEP, ARCHIVE_TABLES, CorpusLayout
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.lake.layout import Lake, archive_name

DUMP = "BENCH"


def extract_command(config: ExtractConfig | None, inputs: list[str], lake: str) -> list[str]:
    """The ``warclake extract`` command line of a mode (``--workers 0``: the process measured
    is the one that extracts); the reference's own command when ``config`` is None."""
    if config is None:
        return [sys.executable, "-m", "warclake.cli.bench_reference", lake] + inputs
    cmd = [sys.executable, "-m", "warclake", "extract", "--dump", DUMP, "--lake", lake,
           "--langs", ",".join(config.langs), "--boilerplate", config.boilerplate, "--workers", "0", "-q"]
    return cmd + (["--corpus-signatures"] if config.corpus_signatures else []) + inputs


def pinned() -> None:
    """In the child before it runs: one core, as every row is measured."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})


def child_env(bytecode: str) -> dict:
    """The measured processes' environment: Python's bytecode kept (in the bench's own
    folder), as an installed package's processes find it, even where the shell forbids
    writing it (``PYTHONDONTWRITEBYTECODE``): compiling every module from source at each
    start is no cost of the work measured, and it would hit the rows unevenly."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = bytecode
    return env


def run_extract(mode: str, config: ExtractConfig | None, inputs: list[str], lake: str,
                env: dict | None = None) -> dict:
    """One run: the child's CPU seconds (user + system), wall seconds and peak RSS. A run that
    fails (an archive failed: its figures would be of less work) ends the bench, its output shown."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(extract_command(config, inputs, lake), stdout=out, stderr=subprocess.STDOUT,
                                preexec_fn=pinned, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)   # reaped here, not by Popen
        if proc.returncode != 0:
            out.seek(0)
            sys.stderr.write(out.read().decode("utf-8", "replace"))
            raise SystemExit(f"warclake: error: bench: mode {mode}: `warclake extract` exited with "
                             f"{proc.returncode} (its output above)")
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall, "rss_mb": usage.ru_maxrss / 1024}


def lake_counts(lake: str, inputs: list[str], reference: bool = False) -> tuple[int, int]:
    """Documents the run extracted (its summaries) and archives whose corpus signatures are
    complete (both outputs and the step's state file): what shows the mode really ran. For the
    reference, the rows of its parquet files."""
    if reference:
        import pyarrow.parquet as pq

        return sum(pq.ParquetFile(os.path.join(lake, f)).metadata.num_rows
                   for f in os.listdir(lake) if f.endswith(".parquet")), 0
    store, layout = Lake(lake), CorpusLayout(lake)
    docs = signed = 0
    for path in inputs:
        name = archive_name(path)
        docs += (store.read_summary(DUMP, name) or {}).get("documents", 0)
        files = [layout.file(t, DUMP, name) for t in ARCHIVE_TABLES] + [layout.state_path(ARCHIVE_STEP, DUMP, name)]
        signed += all(os.path.exists(f) for f in files)
    return docs, signed


def measure(modes: list[str], configs: list[ExtractConfig | None], inputs: list[str], repeat: int,
            start_up: bool = False) -> list[list[dict]]:
    """``rounds[r][m]``: mode m's run in round r, the modes in the order given in every round;
    with ``start_up`` each run also holds ``first``: the CPU s of the same mode on the first
    input alone, run just before it."""
    with tempfile.TemporaryDirectory(prefix="warclake-bench-bytecode-") as bytecode:
        env = child_env(bytecode)
        for mode, config in zip(modes, configs):   # unmeasured: bytecode and start-up caches written
            with tempfile.TemporaryDirectory() as lake:
                run_extract(mode, config, inputs[:1], lake, env)
        rounds = []
        for r in range(repeat):
            runs = []
            for mode, config in zip(modes, configs):
                first = None
                if start_up:
                    with tempfile.TemporaryDirectory() as lake:
                        first = run_extract(mode, config, inputs[:1], lake, env)["cpu"]
                with tempfile.TemporaryDirectory() as lake:
                    run = run_extract(mode, config, inputs, lake, env)
                    run["first"] = first
                    run["docs"], run["signed"] = lake_counts(lake, inputs, reference=config is None)
                runs.append(run)
                print(f"round {r + 1}, {mode}: {run['cpu']:.2f} CPU s", file=sys.stderr, flush=True)
            rounds.append(runs)
    return rounds


def added(run: dict, base: dict) -> float:
    return 100 * (run["cpu"] - base["cpu"]) / base["cpu"]


def spread(values) -> str:
    """One value, or its range when the runs disagree (they should not)."""
    lo, hi = min(values := list(values)), max(values)
    return f"{lo:,}" if lo == hi else f"{lo:,}-{hi:,}"


def table(modes: list[str], rounds: list[list[dict]], inputs: list[str]) -> str:
    mb = sum(os.path.getsize(p) for p in inputs) / 1e6
    head = (f"Inputs: {len(inputs)} archives, {mb:.1f} MB of WARC.gz. Each run is `warclake extract "
            f"--workers 0 -q` in a process of its own, into a fresh lake; CPU s is that process's user + "
            f"system time; the modes alternate, round by round ({len(rounds)} rounds), after one unmeasured "
            f"run of each on the first archive (bytecode and start-up caches in place, as an installed "
            f"package's processes find them).")
    if sys.argv[1:2] == ["bench"]:
        head += f" Command: `warclake bench {' '.join(shlex.quote(a) for a in sys.argv[2:])}`"
    extra = modes[1:]
    lines = [head, "",
             "| round | " + " | ".join(f"{m} CPU s" for m in modes)
             + "".join(f" | {m} adds to {modes[0]}" for m in extra) + " |",
             "|---|" + "---:|" * (len(modes) + len(extra))]
    for r, runs in enumerate(rounds, 1):
        lines.append(f"| {r} | " + " | ".join(f"{run['cpu']:.2f}" for run in runs)
                     + "".join(f" | {added(run, runs[0]):.1f} %" for run in runs[1:]) + " |")
    med = statistics.median
    lines.append("| median | " + " | ".join(f"{med(rs[i]['cpu'] for rs in rounds):.2f}" for i in range(len(modes)))
                 + "".join(f" | {med(added(rs[i], rs[0]) for rs in rounds):.1f} %" for i in range(1, len(modes)))
                 + " |")
    ref = modes.index(bench_reference.MODE) if bench_reference.MODE in modes else None
    lines += ["", "| mode | median CPU s | CPU s, min-max | MB/s per core |"
              + (f" × {bench_reference.MODE}, median (min-max) |" if ref is not None else "")
              + " median wall s | peak RSS MB | documents | archives with corpus signatures |",
              "|---|---:|---:|---:|" + ("---:|" if ref is not None else "") + "---:|---:|---:|---:|"]
    for i, mode in enumerate(modes):
        runs = [rs[i] for rs in rounds]
        cpu = [run["cpu"] for run in runs]
        ratio = ""
        if ref is not None:
            ratios = [rs[ref]["cpu"] / rs[i]["cpu"] for rs in rounds]  # same inputs: MB/s ratio = CPU ratio
            ratio = f" {med(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) |"
        lines.append(f"| {mode} | {med(cpu):.2f} | {min(cpu):.2f}-{max(cpu):.2f} | {mb / med(cpu):.1f} |{ratio} "
                     f"{med(run['wall'] for run in runs):.2f} | {max(run['rss_mb'] for run in runs):.0f} | "
                     f"{spread(run['docs'] for run in runs)} | {spread(run['signed'] for run in runs)} of {len(inputs)} |")
    return "\n".join(lines)


def start_up_table(modes: list[str], rounds: list[list[dict]], inputs: list[str]) -> str:
    """Per mode and round: the rate beyond the first input, r = (CPU s of all inputs - CPU s of
    the first) / (MB of all - MB of the first), and what the process paid once, CPU s of all
    inputs - r x MB of all; the medians over the rounds, and the reference's rate over the
    mode's."""
    mb_all = sum(os.path.getsize(p) for p in inputs) / 1e6
    mb_rest = mb_all - os.path.getsize(inputs[0]) / 1e6
    med = statistics.median
    ref = modes.index(bench_reference.MODE) if bench_reference.MODE in modes else None
    lines = [f"Start-up and the rate beyond the first input ({mb_rest:.1f} of {mb_all:.1f} MB), "
             "from a run on the first input alone before each run on all of them.", "",
             "| mode | once a process, CPU s | CPU s per MB beyond the first input | MB/s per core beyond it |"
             + (f" × {bench_reference.MODE} beyond it, median (min-max) |" if ref is not None else ""),
             "|---|---:|---:|---:|" + ("---:|" if ref is not None else "")]

    def rate(run: dict) -> float:
        return (run["cpu"] - run["first"]) / mb_rest

    for i, mode in enumerate(modes):
        rates = [rate(rs[i]) for rs in rounds]
        once = [rs[i]["cpu"] - rate(rs[i]) * mb_all for rs in rounds]
        # inputs too small for the machine's noise can give a rate of 0 or less: no speed then
        speed = f"{1 / med(rates):.1f}" if med(rates) > 0 else "-"
        cells = f"| {mode} | {med(once):.2f} | {med(rates):.4f} | {speed} |"
        if ref is not None:
            ratios = [rate(rs[ref]) / rate(rs[i]) for rs in rounds if rate(rs[ref]) > 0 and rate(rs[i]) > 0]
            cells += f" {med(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) |" if ratios else " - |"
        lines.append(cells)
    return "\n".join(lines)


def run_processes(modes: list[str], configs: list[ExtractConfig | None], inputs: list[str], repeat: int,
                  start_up: bool = False) -> str:
    """The table of ``repeat`` rounds (at least one), and with ``start_up`` the table of
    start-up and rate after it."""
    rounds = measure(modes, configs, inputs, max(1, repeat), start_up)
    out = table(modes, rounds, inputs)
    return out + "\n\n" + start_up_table(modes, rounds, inputs) if start_up else out

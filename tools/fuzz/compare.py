"""What the fuzzers that compare a compiled module with its Python reference share: their
options, loading the module from a file built elsewhere (e.g. under AddressSanitizer), and
the loop over numbered cases (every case replays alone with ``--start I --cases 1``)."""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable


def parse_options(prog: str, doc: str, argv: list[str] | None, default_cases: int) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog=f"python -m tools.fuzz.{prog}", description=doc.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=default_cases)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="first case number")
    ap.add_argument("--module", default=None, metavar="FILE",
                    help="load the compiled module from this file (e.g. an AddressSanitizer build)")
    return ap.parse_args(argv)


def load_module_file(name: str, path: str, register: bool = False):
    """The extension module built at ``path``, under its package name; ``register`` puts it
    in ``sys.modules`` so that later imports of ``name`` get it."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if register:
        sys.modules[name] = module
    return module


def compare_cases(opts: argparse.Namespace, difference: Callable[[int], str | None]) -> int:
    """Run ``difference(i)`` for each case; it returns None when both paths agree, else what
    differs. A crash kills the process: the last ``case`` line (every 10,000, flushed)
    locates it. Exit status 1 on any difference."""
    t0, diffs = time.monotonic(), 0
    for i in range(opts.start, opts.start + opts.cases):
        if (i - opts.start) % 10_000 == 0:
            print(f"case {i}", flush=True)
        why = difference(i)
        if why is not None:
            diffs += 1
            print(f"DIFF case {i} (--seed {opts.seed} --start {i} --cases 1) {why}", flush=True)
    print(f"{opts.cases} cases, {diffs} differences, {time.monotonic() - t0:.0f}s")
    return 1 if diffs else 0

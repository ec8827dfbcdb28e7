"""Remote inputs against a server that breaks on purpose: does every archive still come out
as from an undamaged transfer?

    python -m tools.faults.network [ARCHIVE_OR_FOLDER ...] [--timeout S] [--attempts N]

Each archive is first extracted from its local file (the reference). Then, for each fault
of :mod:`fault_server` (a reset, a body shorter than its Content-Length, a well-formed
reply shorter than the file, a reply without Content-Length cut off, a stall longer than
the read timeout, a 503; with and without Range support; a missing file), it is
extracted over HTTP from 127.0.0.1 the way a run does, attempts repeated on transient
errors as the flow's retries would (without their delays). One row per fault: the statuses,
how many archives gave documents and ledger identical to the reference, the attempts and
requests used, and the seconds. ``--big`` adds a generated archive over 4 MiB.
Exit status 1 when any archive differs from its reference or a fault ends otherwise than
expected.
"""
from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile
import time
from collections import Counter

import pyarrow.parquet as pq

from tools import SHARED_DATA
from tools.faults.server import FaultServer
from warclake.tasks.archive.inputs import is_archive_name
from warclake.tasks.extract.archive import extract_archive
from warclake.tasks.extract.config import ExtractConfig

DEFAULT_DATA = os.path.join(SHARED_DATA, "warc")

# (label, fault, ranges, what a correct client ends with)
CASES = [
    ("undamaged", "none", True, "same"),
    ("reset mid-body", "drop", True, "same"),
    ("short body", "short", True, "same"),
    ("stalled body", "stall", True, "same"),
    ("503 once", "5xx", True, "same"),
    ("reset, no Range", "drop", False, "same"),
    ("short body, no Range", "short", False, "same"),
    ("stalled body, no Range", "stall", False, "same"),
    ("reply shorter than the file", "truncate", True, "same"),
    ("reply shorter than the file, no Range", "truncate", False, "same"),
    ("no Content-Length, cut", "unsized", True, "same"),
    ("no Content-Length, cut, no Range", "unsized", False, "same"),
    ("404", "none", True, "not retried"),
]


def outputs(lake: str, name: str):
    read = lambda kind: pq.read_table(os.path.join(lake, kind, "dump=N", name + ".parquet")).to_pylist()  # noqa: E731
    return read("documents"), read("ledger")


def attempt(url: str, lake: str, config: ExtractConfig, attempts: int):
    """Extract like the flow: retry transient errors, stop on the others.
    Returns (status, attempts used)."""
    from warclake.flows.dump_flow import is_transient

    for n in range(1, attempts + 1):
        try:
            return extract_archive(url, "N", lake, config)["status"], n
        except Exception as exc:  # what the flow's retry condition sees
            if not is_transient(exc):
                return f"failed, not retried ({type(exc).__name__})", n
    return "failed after retries", attempts


def archives_in(specs: list[str]) -> list[str]:
    found = []
    for spec in specs:
        if os.path.isdir(spec):
            for root, _, names in os.walk(spec):
                found += [os.path.join(root, n) for n in names if is_archive_name(n)]
        else:
            found.append(spec)
    return sorted({os.path.abspath(p) for p in found}, key=lambda p: (os.path.basename(p), p))


def stage(archives: list[str], where: str) -> list[str]:
    """Copy the archives into one folder under unique names (the server serves one root)."""
    out = []
    for i, p in enumerate(archives):
        dest = os.path.join(where, f"{i:03d}-{os.path.basename(p)}")
        shutil.copyfile(p, dest)
        out.append(dest)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="*", help="archives or folders (default: the shared development archives)")
    ap.add_argument("--timeout", type=float, default=1.0, help="read timeout in seconds (the stall lasts 10x)")
    ap.add_argument("--attempts", type=int, default=4, help="attempts per archive, as the flow's retries")
    ap.add_argument("--big", action="store_true", help="add a generated archive over 4 MiB")
    args = ap.parse_args(argv)
    # the damaged shared archives and every resume would log a warning: the table says it all
    logging.getLogger("warclake.tasks").setLevel(logging.ERROR)
    config = ExtractConfig.from_langs("all", net_timeout=args.timeout)
    work = tempfile.mkdtemp(prefix="warclake-net-faults-")
    try:
        srcs = archives_in(args.inputs or [os.path.normpath(DEFAULT_DATA)])
        if args.big:
            from warclake.tasks.sample_dump import make_dump

            srcs += make_dump(os.path.join(work, "big"), files=1, pages_per_file=3200, truncate_last=False)
        if not srcs:
            print("no archives found", file=sys.stderr)
            return 2
        served = os.path.join(work, "served")
        os.makedirs(served)
        files = stage(srcs, served)
        ref_lake = os.path.join(work, "reference")
        refs = {}
        for f in files:
            s = extract_archive(f, "N", ref_lake, config)
            refs[f] = (s["status"], outputs(ref_lake, os.path.basename(f)))
        print(f"{len(files)} archives, {sum(os.path.getsize(f) for f in files):,} bytes; "
              f"read timeout {args.timeout:g}s, {args.attempts} attempts")
        header = ("fault", "Range", "statuses", "same docs+ledger", "attempts", "GETs", "seconds")
        rows = []
        bad = 0
        for n, (label, fault, ranges, expect) in enumerate(CASES):
            statuses, same, tries, gets = Counter(), 0, 0, 0
            t0 = time.time()
            for f in files:
                name = os.path.basename(f)
                lake = os.path.join(work, f"case{n}")
                with FaultServer(served, fault=fault, ranges=ranges, stall=10 * args.timeout,
                                 max_seconds=600) as srv:
                    target = "missing.warc.gz" if label == "404" else name
                    status, used = attempt(f"{srv.url}/{target}", lake, config, args.attempts)
                    gets += srv.gets
                tries += used
                statuses[status] += 1
                if expect == "same":
                    ok = status == refs[f][0] and outputs(lake, name) == refs[f][1]
                else:
                    ok = status.startswith("failed, not retried") and used == 1
                same += ok
                bad += not ok
            rows.append((label, "yes" if ranges else "no",
                         ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())),
                         f"{same}/{len(files)}" if expect == "same" else f"as expected {same}/{len(files)}",
                         str(tries), str(gets), f"{time.time() - t0:.1f}"))
        widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
        for r in [header, tuple("-" * w for w in widths), *rows]:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

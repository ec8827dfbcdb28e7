"""Scale benchmark of a dump's report and the catalogue: a lake of N archives, then each
step run as its own process, with its wall and CPU seconds and peak RSS.

    python -m tools.measure.report_scale --archives 1000,5000,20000 [--dir DIR] [--no-charts]

The lake is made from the real extractor's files: a few tiny archives of
``tasks.sample_dump.make_dump`` (``--langs all``) are extracted, and their documents, ledger
and summary are copied N times under new archive names (``warc_file`` rewritten), one in 50
of them as a ``failed`` summary; the steps then see N archives exactly as a run writes them.
Steps, in order:

- ``report, first``: ``warclake report`` with nothing rolled up yet (the rollup reads every archive);
- ``report, nothing new``: ``warclake report`` again (the rollup reads nothing; tables, charts and
  pages are written again, as the command always does);
- ``report step, nothing new``: the flow's report step (``build_dump_report``): nothing written;
- ``report step, 1 % new``: 1 % more archives, then the flow's report step;
- ``sql count(*)``: ``warclake sql -c "SELECT count(*) FROM documents"``.

Each step's process is measured whole (wall, CPU, peak RSS with its imports); the flow's
report step also says its own seconds, after the imports (in a flow, Prefect is loaded already).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

DUMP = "CC-MAIN-2099-01"


def make_lake(root: str, n: int, start: int = 0, template: str | None = None) -> None:
    """Archives ``start`` to ``n - 1`` of the dump, copied from a template lake's files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if template is None:
        template = root + ".template"
    if not os.path.isdir(template):
        from warclake.tasks.extract.archive import extract_archive
        from warclake.tasks.extract.config import ExtractConfig
        from warclake.tasks.sample_dump import make_dump

        paths = make_dump(template + ".warcs", files=3, pages_per_file=6, dump=DUMP, truncate_last=False)
        for p in paths:
            extract_archive(p, DUMP, template, ExtractConfig.from_langs("all"))
    names = sorted(f[:-5] for f in os.listdir(f"{template}/files/dump={DUMP}") if f.endswith(".json"))
    tables = {name: {kind: pq.read_table(f"{template}/{kind}/dump={DUMP}/{name}.parquet")
                     for kind in ("documents", "ledger")} for name in names}
    summaries = {name: json.load(open(f"{template}/files/dump={DUMP}/{name}.json")) for name in names}
    for kind in ("documents", "ledger", "files"):
        os.makedirs(f"{root}/{kind}/dump={DUMP}", exist_ok=True)
    for i in range(start, n):
        src = names[i % len(names)]
        name = f"{DUMP}-{i:06d}.warc.gz"
        for kind, t in tables[src].items():
            col = t.schema.get_field_index("warc_file")
            pq.write_table(t.set_column(col, "warc_file", pa.array([name] * t.num_rows, pa.string())),
                           f"{root}/{kind}/dump={DUMP}/{name}.parquet", compression="zstd")
        summary = dict(summaries[src], warc_file=name, input=f"/data/{name}")
        if i % 50 == 49:
            summary.update(status="failed", error="not a WARC file", documents=0, records=0)
        with open(f"{root}/files/dump={DUMP}/{name}.json", "w") as fh:
            json.dump(summary, fh)


def measure(cmd: list[str]) -> dict:
    """Run ``cmd``; its wall and CPU seconds and peak RSS (MB)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        if status != 0:
            raise SystemExit(f"{' '.join(cmd)} failed: {err.read().decode()}")
        lines = out.read().decode().splitlines()
    row = {"wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
           "peak_mb": usage.ru_maxrss // 1024}
    if lines and lines[-1].startswith("{"):
        row.update(json.loads(lines[-1]))
    return row


def steps(lake: str, out: str, charts: bool) -> list[tuple[str, list[str]]]:
    py = sys.executable
    report = [py, "-m", "warclake.cli.report", "report", "--lake", lake, "--dump", DUMP, "--out", out]
    if not charts:
        report.append("--no-charts")
    # the step as the flow runs it, in a process that has Prefect loaded already: its own
    # seconds are measured inside, after the imports
    step = [py, "-c", "import sys, time, json; from warclake.flows.report_flow import build_dump_report; "
                      "c, t = time.process_time(), time.perf_counter(); "
                      f"build_dump_report(sys.argv[1], {DUMP!r}, sys.argv[2]); "
                      "print(json.dumps({'step_wall_s': round(time.perf_counter() - t, 2), "
                      "'step_cpu_s': round(time.process_time() - c, 2)}))", lake, out]
    sql = [py, "-m", "warclake.cli.report", "sql", "--lake", lake, "-c", "SELECT count(*) FROM documents"]
    return [("report, first", report), ("report, nothing new", report),
            ("report step, nothing new", step), ("report step, 1 % new", step), ("sql count(*)", sql)]


def run(n: int, base: str, charts: bool) -> list[dict]:
    lake, out = f"{base}/lake-{n}", f"{base}/report-{n}"
    template = f"{base}/template"
    t0 = time.perf_counter()
    make_lake(lake, n, template=template)
    print(f"# {n} archives generated in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    rows = []
    for name, cmd in steps(lake, out, charts):
        if name == "report step, 1 % new":
            make_lake(lake, n + max(1, n // 100), start=n, template=template)
        if name == "sql count(*)":
            measure(cmd)  # the first builds the catalogue if it is missing; the figure is the next one
        row = {"archives": n, "step": name, **measure(cmd)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--archives", default="1000,5000", help="comma-separated lake sizes")
    ap.add_argument("--dir", default=None, help="work folder (default: a temporary one, removed)")
    ap.add_argument("--no-charts", action="store_true", help="reports without PNG charts")
    args = ap.parse_args(argv)
    base = args.dir or tempfile.mkdtemp(prefix="warclake-report-scale-")
    rows = []
    try:
        for n in (int(x) for x in args.archives.split(",")):
            rows += run(n, base, not args.no_charts)
    finally:
        if args.dir is None:
            shutil.rmtree(base, ignore_errors=True)
    print("\n| archives | step | process wall s | process CPU s | peak RSS MB | step wall s | step CPU s |\n"
          "|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['archives']:,} | {r['step']} | {r['wall_s']} | {r['cpu_s']} | {r['peak_mb']} "
              f"| {r.get('step_wall_s', '')} | {r.get('step_cpu_s', '')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

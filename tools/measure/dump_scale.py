"""The dump-scale benchmark: N tiny archives through the real ``warclake run``, end to end,
what orchestration, planning, report and catalogue cost as a dump grows.

    python -m tools.measure.dump_scale --archives 1000[,10000,...] [--remote --latency-ms 20]
        [--server embedded|external [--database-url URL]] [--json FILE] [--work DIR --keep]

Per size it generates N archives of ~3.5 KB (``tasks/sample_dump.make_dump``, 2 pages
each: what is measured is everything but extraction), then, each command a subprocess of
this one:

1. ``warclake run --dump D --lake L --workers 1 -q --langs all INPUT`` (INPUT: the dump's
   ``warc.paths.gz``), with a Prefect home of its own (``PREFECT_HOME`` under the work
   folder), so the run's temporary API server starts on a fresh SQLite database;
2. the same command again: a run with nothing to do;
3. ``warclake report --lake L --dump D`` and ``warclake sql --lake L -c "select count(*)
   from documents"``.

Of each it reports wall and CPU seconds (user + system of the command and every process it
waited for) and the peak RSS of the flow's process, of the API server and of the extraction
workers (their process tree sampled from /proc every ``--every`` seconds, and each process's
VmHWM); of the runs, the same per phase, cut at the timestamps of the run's log lines: start
(imports and the API server, to "Beginning flow run"), plan (to the line that counts the
dump's archives), extraction (to the last archive's line: per archive, the orchestration's
cost), report (to the report task's end) and finish (to the process's exit: waiting for the
server to record, stopping it); the log's lines; and the archive task runs (named
``extract <archive>``) Prefect's database holds after the first run, by state, against
those the run submitted (its final message: archives less those already done).

``--remote``: the archives and their listing are served over HTTP on 127.0.0.1 by a
threaded server of this tool, and the lake is ``s3://`` on moto's S3-compatible server
behind a proxy of this tool; both add ``--latency-ms`` to each request and count requests
(per archive: on the re-run, the target is none but the listings).

``--server external``: a ``prefect server start`` of this tool (its own home; SQLite, or
``--database-url``, e.g. ``postgresql+asyncpg://user:pw@127.0.0.1/db``, which must be an
empty database) that the runs report to through ``PREFECT_API_URL``, as a deployment's
would; its task runs are counted through its API. ``--ui`` turns its UI on and
``--screenshot FILE`` saves the first run's page from a headless Chromium.

A markdown table row per size goes to standard output (the per-phase table to standard
error), and with ``--json FILE`` every figure is appended to FILE's list; ``--table FILE``
prints the tables of the figures kept there.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timezone

from tools.faults.s3 import S3Proxy, free_port, moto_server
from tools.measure.dump_scale_servers import FileServer
from tools.measure.dump_scale_watch import LogPhases, TreeWatch, read_phases, run_watched

DUMP = "CC-MAIN-2099-01"
PAGES = 2            # pages per archive: ~3.5 KB archives
BUCKET = "dump-scale"
MB = 1024 * 1024
OURS = ("flow", "server", "workers")   # a phase's CPU: the run's processes and its API server, not the S3 server
QUIET = {"DO_NOT_TRACK": "1", "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}


def make_archives(work: str, n: int) -> str:
    """The dump's folder with n archives and warc.paths.gz (made once per work folder)."""
    from warclake.tasks.sample_dump import make_dump

    folder = os.path.join(work, f"dump-{n}")
    listing = os.path.join(folder, "warc.paths.gz")
    if not os.path.exists(listing):
        t0 = time.time()
        make_dump(folder + ".part", files=n, pages_per_file=PAGES, dump=DUMP, truncate_last=False)
        os.rename(folder + ".part", folder)
        print(f"# {n} archives generated in {time.time() - t0:.0f} s", file=sys.stderr)
    return folder


def _make_bucket(endpoint: str, bucket: str) -> None:
    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/{bucket}", method="PUT"), timeout=10).close()


def warclake(*args: str) -> list[str]:
    return [sys.executable, "-m", "warclake", *args]


def phases_of(run: dict, ph: LogPhases) -> list[dict]:
    """The run's phases (name, start, end) cut at its log's landmarks, each with its wall
    and CPU seconds and the peak RSS of the flow and the server within it."""
    after_plan = ph.last_archive or ph.planned   # with nothing extracted, the report follows the plan
    marks = [("start", run["start"]), ("plan", ph.begin),
             ("extraction", ph.planned if ph.last_archive else None),
             ("report", after_plan if ph.report_done else None),
             ("finish", ph.report_done or after_plan), ("", run["end"])]
    known = [(name, t) for name, t in marks if t is not None]
    watch: TreeWatch = run["watch"]
    out = []
    for (name, a), (_, b) in zip(known, known[1:]):
        if not name:
            continue
        out.append({"phase": name, "wall": max(0.0, b - a), "cpu": watch.cpu_between(a, b, OURS),
                    "cpu_roles": {role: watch.cpu_between(a, b, (role,)) for role in (*OURS, *watch.extra)},
                    "flow_rss": watch.peak_rss("flow", a, b), "server_rss": watch.peak_rss("server", a, b)})
    return out


def figures_of(run: dict, ph: LogPhases | None = None) -> dict:
    watch: TreeWatch = run["watch"]
    out = {"status": run["status"], "wall": run["wall"], "cpu": run["cpu"],
           "peak_rss": {role: watch.peak_rss(role) for role in ("flow", "server", "workers", *watch.extra)}}
    if ph is not None:
        out.update(log_lines=ph.lines, warnings=ph.warnings, archive_lines=ph.archive_lines,
                   archives_logged=ph.archives_logged,
                   archives=ph.archives, already_done=ph.already_done, final=ph.final,
                   phases=phases_of(run, ph))
        if ph.planned and ph.last_archive and ph.archives is not None:
            todo = ph.archives - (ph.already_done or 0)
            if todo:
                ext = next(p for p in out["phases"] if p["phase"] == "extraction")
                out["per_archive_ms"] = {"wall": 1000 * ext["wall"] / todo, "cpu": 1000 * ext["cpu"] / todo}
    return out


def archive_runs_sqlite(db: str) -> dict[str, int]:
    """Archive task runs by state type in a Prefect SQLite database."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        rows = con.execute("SELECT state_type, count(*) FROM task_run WHERE name LIKE 'extract %' "
                           "AND name LIKE '%.warc%' GROUP BY state_type").fetchall()
    return {str(state): n for state, n in rows}


def archive_runs_api(api: str) -> dict[str, int]:
    """Archive task runs by state type, through a Prefect server's API."""
    out = {}
    for state in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED", "RUNNING", "PENDING", "SCHEDULED", "PAUSED",
                  "CANCELLING"):
        body = {"task_runs": {"name": {"like_": ".warc"}, "state": {"type": {"any_": [state]}}}}
        req = urllib.request.Request(f"{api}/task_runs/count", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=120) as r:
            n = int(json.loads(r.read()))
        if n:
            out[state] = n
    return out


@contextlib.contextmanager
def external_server(home: str, database_url: str | None, ui: bool):
    """``prefect server start`` of the benchmark's own; yields (API URL, process)."""
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = dict(os.environ, **QUIET, PREFECT_HOME=home, PREFECT_SERVER_UI_ENABLED="true" if ui else "false",
               PREFECT_UI_API_URL=api)   # where the UI's pages find the API
    env.pop("PREFECT_API_URL", None)
    if database_url:
        env["PREFECT_API_DATABASE_CONNECTION_URL"] = database_url
    log = open(os.path.join(home, "server.log"), "wb")
    proc = subprocess.Popen([sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1",
                             "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        t0, deadline = time.time(), time.monotonic() + 300
        while True:
            try:
                with urllib.request.urlopen(f"{api}/health", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the Prefect server did not start ({home}/server.log)") from None
                time.sleep(0.2)
        print(f"# external Prefect server healthy in {time.time() - t0:.1f} s", file=sys.stderr)
        yield api, proc
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def screenshot(page: str, out: str, size: str = "1600,1000") -> None:
    """The page as a headless Chromium draws it, saved to ``out`` (PNG)."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or "chromium"
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync", "--no-first-run",
                        f"--user-data-dir={profile}", f"--window-size={size}", "--virtual-time-budget=20000",
                        f"--screenshot={os.path.abspath(out)}", page],
                       check=True, timeout=180, capture_output=True)


def bench(n: int, args) -> dict:
    """One size: the run, the re-run, the report and the query; every figure."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    mode = "remote" if args.remote else "local"
    base = os.path.join(os.path.abspath(args.work), f"run-{n}-{mode}-{args.server}-{stamp}")
    home = os.path.join(base, "prefect")
    os.makedirs(home)
    folder = make_archives(os.path.abspath(args.work), n)
    env = dict(os.environ, **QUIET, PREFECT_HOME=home)
    for name in ("PREFECT_API_URL", "PREFECT_LOGGING_LEVEL"):   # the run's log as a user sees it by default
        env.pop(name, None)
    result: dict = {"archives": n, "inputs": "http" if args.remote else "local", "lake": "s3" if args.remote else "local",
                    "server": args.server, "database": "postgresql" if args.database_url else "sqlite",
                    "latency_ms": args.latency_ms if args.remote else 0, "commit": _commit(),
                    "when": stamp, "archive_bytes": sum(os.path.getsize(os.path.join(folder, f))
                                                          for f in os.listdir(folder) if f.endswith(".warc.gz"))}
    latency = args.latency_ms / 1000 if args.remote else 0.0
    with contextlib.ExitStack() as stack:
        extra: dict[str, int] = {}
        files = s3proxy = None
        if args.remote:
            files = stack.enter_context(FileServer(folder, latency))
            s3_env, s3_proc = stack.enter_context(moto_server(base))
            _make_bucket(s3_env["AWS_ENDPOINT_URL"], BUCKET)
            s3proxy = stack.enter_context(S3Proxy(s3_env["AWS_ENDPOINT_URL"], latency))
            env.update(s3_env, AWS_ENDPOINT_URL=s3proxy.url)
            extra["s3 server"] = s3_proc.pid
            lake, source = f"s3://{BUCKET}/lake", f"{files.url}/warc.paths.gz"
        else:
            lake, source = os.path.join(base, "lake"), os.path.join(folder, "warc.paths.gz")
        api = None
        if args.server == "external":
            api, server_proc = stack.enter_context(external_server(home, args.database_url, args.ui))
            env["PREFECT_API_URL"] = api
            extra["server"] = server_proc.pid

        def counted() -> dict:
            return {"http": files.counted.take() if files else {}, "s3": s3proxy.take_counts() if s3proxy else {}}

        report_dir = os.path.join(base, "report")   # a remote lake's report would go to ./reports
        run_cmd = warclake("run", "--dump", DUMP, "--lake", lake, "--workers", "1", "-q", "--langs", "all",
                           "--report-dir", report_dir, source)
        result["commands"] = {"run": _shown(run_cmd)}
        counted()
        first = run_watched(run_cmd, os.path.join(base, "run1.log"), env, extra, args.every)
        ph1 = read_phases(os.path.join(base, "run1.log"))
        result["run"] = figures_of(first, ph1) | {"requests": counted()}
        result["run"]["submitted"] = (ph1.archives - (ph1.already_done or 0)) if ph1.archives is not None else None
        if api:
            result["run"]["task_runs"] = archive_runs_api(api)
        else:
            result["run"]["task_runs"] = archive_runs_sqlite(os.path.join(home, "prefect.db"))
        if args.screenshot and api:
            m = re.search(r"/runs/flow-run/([0-9a-f-]{36})", open(os.path.join(base, "run1.log")).read())
            if m:
                screenshot(api[: -len("/api")] + f"/runs/flow-run/{m.group(1)}", args.screenshot)
                result["screenshot"] = args.screenshot
        again = run_watched(run_cmd, os.path.join(base, "run2.log"), env, extra, args.every)
        ph2 = read_phases(os.path.join(base, "run2.log"))
        result["rerun"] = figures_of(again, ph2) | {"requests": counted()}
        report_cmd = warclake("report", "--lake", lake, "--dump", DUMP, "--out", report_dir)
        result["report"] = figures_of(run_watched(report_cmd, os.path.join(base, "report.log"), env, extra, args.every))
        result["report"]["requests"] = counted()
        sql_cmd = warclake("sql", "--lake", lake, "--csv", "-c", "select count(*) from documents")
        sql_log = os.path.join(base, "sql.log")
        result["sql"] = figures_of(run_watched(sql_cmd, sql_log, env, extra, args.every))
        result["sql"]["requests"] = counted()
        result["sql"]["answer"] = open(sql_log).read().strip().splitlines()[-1:]
        result["commands"].update(report=_shown(report_cmd), sql=_shown(sql_cmd))
    result["work"] = base
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return result


def _shown(cmd: list[str]) -> str:
    """A command as a reader would type it."""
    words = ["warclake", *cmd[3:]]
    return " ".join(f'"{w}"' if " " in w else w for w in words)


def _commit() -> str:
    """The commit of the warclake code the runs import (``-dirty`` with uncommitted changes);
    a copy outside git names its commit in a ``.commit`` file."""
    import warclake

    where = os.path.dirname(os.path.abspath(warclake.__file__))
    try:
        def git(*a: str) -> str:
            return subprocess.run(["git", *a], capture_output=True, text=True, cwd=where, check=True).stdout.strip()

        return git("rev-parse", "--short", "HEAD") + ("-dirty" if git("status", "--porcelain", "--untracked-files=no")
                                                       else "")
    except (OSError, subprocess.CalledProcessError):
        try:
            with open(os.path.join(where, ".commit")) as fh:
                return fh.read().strip()
        except OSError:
            return "?"


# -- tables ---------------------------------------------------------------------------------
COLUMNS = ["archives", "inputs / lake", "server", "run wall / CPU s", "start s", "plan s",
           "per archive wall / CPU ms", "report in the run s", "flow peak RSS MB", "API server peak RSS MB",
           "archive task runs recorded (final) / submitted", "log lines", "re-run wall s / flow peak MB",
           "re-run requests per archive", "`report` wall s / peak MB", "`sql` count wall s / peak MB"]


def _mb(b: int | float) -> str:
    return f"{b / MB:,.0f}"


def _phase(fig: dict, name: str) -> dict | None:
    return next((p for p in fig.get("phases", ()) if p["phase"] == name), None)


def row(r: dict) -> str:
    run, rerun = r["run"], r["rerun"]
    final = sum(v for k, v in run["task_runs"].items() if k in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED"))
    recorded = sum(run["task_runs"].values())
    per = run.get("per_archive_ms")
    start, plan, rep = _phase(run, "start"), _phase(run, "plan"), _phase(run, "report")
    req = "—"
    if r["inputs"] == "http":
        http, s3 = sum(rerun["requests"]["http"].values()), rerun["requests"]["s3"]
        lists = s3.get("list", 0)
        other = sum(s3.values()) - lists
        req = f"{(http + other) / r['archives']:.3f} (HTTP {http}, S3 {other}, + {lists} listings)"
    cells = [
        f"{r['archives']:,}",
        f"{r['inputs']} / {r['lake']}" + (f" ({r['latency_ms']} ms)" if r["latency_ms"] else ""),
        r["server"] + (f" ({r['database']})" if r["server"] == "external" else ""),
        f"{run['wall']:.1f} / {run['cpu']:.1f}",
        f"{start['wall']:.1f}" if start else "?",
        f"{plan['wall']:.2f}" if plan else "?",
        f"{per['wall']:.1f} / {per['cpu']:.1f}" if per else "?",
        f"{rep['wall']:.1f}" if rep else "?",
        _mb(run["peak_rss"]["flow"]),
        _mb(run["peak_rss"].get("server", 0)),
        f"{recorded:,} ({final:,}) / {run['submitted']:,}" if run.get("submitted") is not None else f"{recorded:,} / ?",
        f"{run['log_lines']:,}",
        f"{rerun['wall']:.1f} / {_mb(rerun['peak_rss']['flow'])}",
        req,
        f"{r['report']['wall']:.1f} / {_mb(r['report']['peak_rss']['flow'])}",
        f"{r['sql']['wall']:.2f} / {_mb(r['sql']['peak_rss']['flow'])}",
    ]
    return "| " + " | ".join(cells) + " |"


def header() -> str:
    return "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS)


def phase_table(r: dict) -> str:
    lines = [f"{r['archives']:,} archives, {r['inputs']} inputs, {r['lake']} lake, {r['server']} server "
             f"({r['database']}), commit {r['commit']}",
             "", "| run | phase | wall s | CPU s | flow peak RSS MB | API server peak RSS MB |", "|---|---|---|---|---|---|"]
    for which in ("run", "rerun"):
        for p in r[which].get("phases", ()):
            lines.append(f"| {which} | {p['phase']} | {p['wall']:.2f} | {p['cpu']:.2f} | {_mb(p['flow_rss'])} | "
                         f"{_mb(p['server_rss'])} |")
    return "\n".join(lines)


PROJECTED = [  # (what, its value in a result)
    ("run: flow peak RSS MB", lambda r: r["run"]["peak_rss"]["flow"] / MB),
    ("run: API server peak RSS MB", lambda r: r["run"]["peak_rss"].get("server", 0) / MB),
    ("run: CPU s", lambda r: r["run"]["cpu"]),
    ("run: log lines", lambda r: r["run"]["log_lines"]),
    ("re-run: wall s", lambda r: r["rerun"]["wall"]),
    ("re-run: CPU s", lambda r: r["rerun"]["cpu"]),
    ("re-run: flow peak RSS MB", lambda r: r["rerun"]["peak_rss"]["flow"] / MB),
    ("`report`: wall s", lambda r: r["report"]["wall"]),
    ("`report`: peak RSS MB", lambda r: r["report"]["peak_rss"]["flow"] / MB),
    ("`sql` count: wall s", lambda r: r["sql"]["wall"]),
    ("`sql` count: peak RSS MB", lambda r: r["sql"]["peak_rss"]["flow"] / MB),
]


def projection(results: list[dict], to: int) -> str:
    """Each figure fitted by a straight line (least squares) over the sizes measured, and
    that line's value at ``to`` archives: a linear projection, not a measurement."""
    sizes = [r["archives"] for r in results]
    lines = [f"| figure | {' | '.join(f'{n:,}' for n in sizes)} | per 1,000 archives | {to:,} (projected) |",
             "|---|" + "---|" * (len(sizes) + 2)]
    for what, value in PROJECTED:
        ys = [value(r) for r in results]
        n, mx, my = len(sizes), sum(sizes) / len(sizes), sum(ys) / len(ys)
        var = sum((x - mx) ** 2 for x in sizes)
        slope = sum((x - mx) * (y - my) for x, y in zip(sizes, ys)) / var if n > 1 and var else 0.0
        at = my + slope * (to - mx)
        lines.append(f"| {what} | {' | '.join(f'{y:,.1f}' for y in ys)} | {1000 * slope:,.2f} | {at:,.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.measure.dump_scale", description=__doc__.split("\n\n")[0])
    ap.add_argument("--archives", help="sizes, comma-separated (e.g. 1000,10000)")
    ap.add_argument("--remote", action="store_true", help="inputs over HTTP and the lake on S3, on 127.0.0.1")
    ap.add_argument("--latency-ms", type=float, default=20.0, help="added to each remote request (default: 20)")
    ap.add_argument("--server", choices=("embedded", "external"), default="embedded",
                    help="the run's own temporary API server (default) or one of this tool's")
    ap.add_argument("--database-url", default=None, help="--server external: its database (an empty one)")
    ap.add_argument("--ui", action="store_true", help="--server external: with its UI")
    ap.add_argument("--screenshot", default=None, help="--server external --ui: the first run's page, as PNG")
    ap.add_argument("--work", default=None, help="work folder (default: a new temporary one); archives are kept "
                                                  "there for the next call")
    ap.add_argument("--keep", action="store_true", help="keep the lake, logs and Prefect home of each size")
    ap.add_argument("--every", type=float, default=0.25, help="seconds between memory samples (default: 0.25)")
    ap.add_argument("--json", default=None, help="append every figure to this JSON file's list")
    ap.add_argument("--table", metavar="FILE", default=None,
                    help="print the tables of the figures a --json FILE holds, and run nothing")
    ap.add_argument("--project", type=int, metavar="N", default=None,
                    help="with --table: each figure's straight line over the sizes of 1,000 and more, at N archives")
    args = ap.parse_args(argv)
    if args.table:
        with open(args.table) as fh:
            kept = json.load(fh)
        print(header())
        print("\n".join(row(r) for r in kept))
        for r in kept:
            print("\n" + phase_table(r))
        if args.project:
            print("\n" + projection([r for r in kept if r["archives"] >= 1000], args.project))
        return 0
    if not args.archives:
        ap.error("--archives is needed (or --table)")
    if args.screenshot and not (args.server == "external" and args.ui):
        ap.error("--screenshot needs --server external --ui")
    made = args.work is None
    args.work = args.work or tempfile.mkdtemp(prefix="dump-scale-")
    try:
        print(header())
        rows = []
        for n in (int(s.replace("_", "")) for s in args.archives.split(",")):
            r = bench(n, args)
            rows.append(r)
            print(phase_table(r), file=sys.stderr)
            print(row(r), flush=True)
            if args.json:
                old = json.load(open(args.json)) if os.path.exists(args.json) else []
                with open(args.json, "w") as fh:
                    json.dump(old + [_plain(r)], fh, indent=1)
    finally:
        if made and not args.keep:
            shutil.rmtree(args.work, ignore_errors=True)
    return 0


def _plain(r: dict) -> dict:
    return json.loads(json.dumps(r, default=str))


if __name__ == "__main__":
    raise SystemExit(main())

"""``warclake run`` (the Prefect flow for one dump) and ``warclake demo`` (the whole job on a sample)."""
from __future__ import annotations

import os
import shutil
import sys
import time

from warclake.cli.corpus import add_decision_arguments, stage_options
from warclake.cli.extract import (
    add_extract_options,
    add_guard_options,
    add_plan_options,
    config_from_args,
    corpus_signatures,
    plan_settings,
    settings_of,
)
from warclake.cli.progress import TerminalProgress, archive_line
from warclake.tasks.extract.boilerplate import MODES
from warclake.tasks.lake.dump_lock import DumpLock
from warclake.tasks.lake.layout import Lake
from warclake.tasks.runtime.run_checks import check_counts, check_dask_address
from warclake.tasks.runtime.supervisor import INTERRUPTED, supervisor


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="run the Prefect flow for one dump (incremental, retried)")
    add_extract_options(p)
    add_run_options(p)
    p.set_defaults(handler=run)

    d = sub.add_parser("demo", help="generate a sample dump and run the whole job on it, no server needed")
    d.add_argument("--dir", default="demo", help="working folder for the sample dump, lake and report (default: ./demo)")
    d.add_argument("--langs", default="ja,en,zh,ru,de", help="target languages (default: ja,en,zh,ru,de)")
    d.add_argument("--boilerplate", default="sieve", choices=MODES, help="paragraph labelling mode (default: sieve)")
    d.add_argument("--files", type=int, default=6, help="archives in the sample dump")
    d.add_argument("--fresh", action="store_true", help="delete the demo folder first")
    d.add_argument("-q", "--quiet", action="store_true", help="no progress display on the terminal")
    add_run_options(d)
    d.set_defaults(handler=demo)


def add_run_options(p) -> None:
    p.add_argument("--workers", type=int, default=None,
                   help="extraction processes (default: all cores; 0 = inside the task thread)")
    p.add_argument("--max-in-flight", type=int, default=None, help="archives submitted at once")
    p.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="run tasks on an existing Dask cluster (scheduler address, e.g. tcp://10.0.0.5:8786)")
    add_guard_options(p)
    add_plan_options(p)
    p.add_argument("--report-dir", default=None, help="where the dump's report goes (default: <lake>/reports/<dump>; "
                   "for a remote lake ./reports/<dump>)")
    p.add_argument("--no-report", action="store_true", help="skip the report at the end")
    p.add_argument("--corpus", action="store_true",
                   help="then run the corpus stage on the dump (flow corpus-dump, on the same task runner)")
    add_decision_arguments(p)   # the corpus stage's, with --corpus


def flow_for(args):
    from warclake.flows.dump_flow import extract_dump

    if args.dask:
        from warclake.flows.dask_runner import on_cluster

        # Dask workers are processes already: extract inline there (workers=0).
        if args.workers is None:
            args.workers = 0
        return extract_dump.with_options(task_runner=on_cluster(args.dask))
    return extract_dump


def run_flow(args, inputs: list[str]):
    from warclake.flows.api_server import api_for_run
    from warclake.flows.progress import listening

    flow_fn = flow_for(args)
    workers = supervisor()
    workers.reset()
    bar = TerminalProgress(0, quiet=getattr(args, "quiet", False))

    def show(event: str, data: dict) -> None:
        if event == "planned":
            bar.plan(data["archives"], data["bytes"])
        elif event == "reading":
            bar.reading(data["name"], data["bytes"])
        else:
            bar.archive_done(data["input_bytes"], data["name"])
            if bar.enabled:   # without the bars, the archive's line in the flow's log shows as it is
                bar.print(archive_line(data["result"]) if data["result"] else f"{data['name']}: {data['status']}")

    # a Prefect server of the run's own when none is configured (flows/api_server.py)
    with api_for_run(), bar, listening(show), workers.on_ctrl_c():
        state = flow_fn(dump=args.dump, inputs=inputs, lake=args.lake, langs=args.langs, **settings_of(args),
                        **{k: v for k, v in plan_settings(args).items() if v is not None},
                        base_url=getattr(args, "base_url", None), workers=args.workers,
                        max_in_flight=args.max_in_flight, report=not args.no_report, report_dir=args.report_dir,
                        corpus=getattr(args, "corpus", False), corpus_signatures=corpus_signatures(args),
                        corpus_options=corpus_options(args), return_state=True)
    if not state.is_cancelled():  # interrupted: the Ctrl-C line said it
        print(state.message or state.name)
    return state


def corpus_options(args) -> dict | None:
    """The corpus stage's flow parameters from its options (None: all defaults); ValueError
    for a bad one, or for one given without --corpus."""
    from warclake.flows.corpus_flow import check_options, flow_parameters
    from warclake.tasks.corpus.stage import StageOptions

    opts = stage_options(args)
    if opts == StageOptions():
        return None
    if not args.corpus:
        raise ValueError("the corpus stage's options (thresholds, --quality, models, --drop-all-copies, "
                         "--judge-whole-pages) need --corpus")
    params = flow_parameters(opts)
    check_options(params)
    return params


def check_run_options(args) -> None:
    """Counts, the Dask address and the corpus stage's options, before Prefect starts: one
    clear line (ValueError)."""
    check_counts(args.workers, args.max_in_flight)
    if args.dask:
        check_dask_address(args.dask)
    corpus_options(args)


def run(args) -> int:
    config_from_args(args)  # checked here, before Prefect starts: one clear line
    check_run_options(args)
    Lake(args.lake).check_writable()
    # Another run of this dump: one line, before Prefect starts. This look is also the first
    # request to an object store, so a lake the client cannot use (no credentials, an endpoint
    # that does not answer) stops here too, in one line (cli/main.py), not inside the flow.
    DumpLock(args.lake, args.dump).check_free()
    state = run_flow(args, args.inputs)
    return 0 if state.is_completed() else INTERRUPTED if state.is_cancelled() else 1


def demo(args) -> int:
    from warclake.tasks.sample_dump import make_dump

    check_run_options(args)
    root = os.path.abspath(args.dir)
    if args.fresh and os.path.isdir(root):
        shutil.rmtree(root)
    dump_dir = os.path.join(root, "dump")
    args.dump = "CC-MAIN-2099-01"
    args.lake = os.path.join(root, "lake")
    args.report_dir = args.report_dir or os.path.join(root, "report")
    args.base_url = None
    if not os.path.exists(os.path.join(dump_dir, "warc.paths.gz")):
        make_dump(dump_dir, files=args.files, pages_per_file=80, dump=args.dump, truncate_last=True)
    t0 = time.time()
    state = run_flow(args, [os.path.join(dump_dir, "warc.paths.gz")])
    print(f"demo finished in {time.time() - t0:.1f}s")
    print(f"  lake:    {args.lake}")
    print(f"  report:  {args.report_dir}")
    print(f"  query:   {_command_prefix()}warclake sql --lake {args.lake}")
    # The demo's dump holds a deliberately truncated archive: salvaged, not failed.
    return 0 if state.is_completed() else 1


def _command_prefix() -> str:
    """How this user runs warclake: through a clone's ``./dev`` (its .venv is this Python's)
    or as an installed command."""
    venv = os.path.abspath(sys.prefix)
    dev = os.path.join(os.path.dirname(venv), "dev")
    if os.path.basename(venv) == ".venv" and os.path.isfile(dev):
        rel = os.path.relpath(dev)
        return (rel if rel.startswith(("/", ".")) else f"./{rel}") + " "
    return ""


if __name__ == "__main__":
    from warclake.cli.main import main

    sys.exit(main(["run", *sys.argv[1:]]))

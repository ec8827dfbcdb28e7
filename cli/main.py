"""The ``warclake`` command line."""
from __future__ import annotations

import argparse
import logging
import os
import sys

from warclake import __version__
from warclake.cli import bench, corpus, evaluate, extract, report, run, show
from warclake.tasks import native
from warclake.tasks.lake import storage_errors
from warclake.tasks.runtime.supervisor import INTERRUPTED, supervisor

# Command modules that each register their own subcommands with add_parser(subparsers).
COMMANDS = (extract, run, report, evaluate, bench, show, corpus)


class _Version(argparse.Action):
    """--version, worked out only when asked for: it loads and checks the compiled parts."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"warclake {__version__} ({native.describe_all()})")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="warclake",
        description="Common Crawl WARC/WET/WAT archives to an Uzushio-format parquet lake.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress")
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and which compiled parts run")
    sub = parser.add_subparsers(dest="command")
    for mod in COMMANDS:
        mod.add_parser(sub)
    return parser


def _bad_input(args, exc: BaseException) -> int:
    if args.verbose:
        raise exc
    print(f"warclake: error: {_one_line(exc)}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # The temporary API server of a server-less run can be slow to start on a busy machine.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # bare `warclake`: what it can do
        parser.print_help()
        return 0
    handler = logging.StreamHandler()
    handler.setFormatter(RunFormatter())
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, handlers=[handler])
    try:
        rc = args.handler(args)
    except (OSError, ValueError) as exc:  # bad input, a missing or unwritable lake
        return _bad_input(args, exc)
    except KeyboardInterrupt:  # stopped cleanly (tasks/runtime/supervisor.py); one line, no traceback
        if not supervisor().said_ctrl_c:
            print("warclake: interrupted", file=sys.stderr)
        return INTERRUPTED
    except Exception as exc:  # bad SQL, or an object store's client refused or failed (not an OSError)
        duckdb = sys.modules.get("duckdb")   # imported by the commands that use it, not here
        if duckdb is not None and isinstance(exc, duckdb.Error):
            return _bad_input(args, exc)
        if args.verbose or not storage_errors.is_storage_client_error(exc):
            raise
        lake = getattr(args, "lake", None)
        said = (storage_errors.unusable_lake(lake, exc) if lake
                else f"cannot use the object store: {storage_errors.describe(exc)}")
        print(f"warclake: error: {said}", file=sys.stderr)
        return 2
    return int(rc or 0)


class RunFormatter(logging.Formatter):
    """Log lines that say which run they belong to: Prefect's records carry the task or flow
    run's name (``extract CC-MAIN-...-00001.warc.gz``), which a plain format drops."""

    def __init__(self):
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        run = getattr(record, "task_run_name", None) or getattr(record, "flow_run_name", None)
        if run and run not in record.getMessage():
            head, sep, tail = line.partition(": ")
            line = f"{head}: [{run}] {tail}" if sep else line
        return line


def _one_line(exc: BaseException) -> str:
    """The error's own words on one line (DuckDB's messages span several)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if isinstance(exc, (OSError, ValueError)) else f"{type(exc).__name__}: {text}"




if __name__ == "__main__":
    sys.exit(main())

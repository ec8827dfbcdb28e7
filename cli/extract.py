"""``warclake extract``: a dump's run (tasks/extract/dump.py), one archive at a time in this process, no Prefect."""
from __future__ import annotations

import argparse
import os
import sys

from warclake.cli.progress import TerminalProgress, archive_line
from warclake.tasks.archive.inputs import resolve_inputs
from warclake.tasks.extract.archive import SIGNATURES_LEFT
from warclake.tasks.extract.boilerplate import MODES
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.extract.dump import DumpRun, InProcess, Notices, run_dump
from warclake.tasks.lake.dump_lock import DumpLockLost
from warclake.tasks.lake.layout import Lake, check_dump_name
from warclake.tasks.lake.plan import check_unique_names
from warclake.tasks.runtime.run_checks import check_extract_workers, extract_config
from warclake.tasks.runtime.supervisor import supervisor

DEFAULT = ExtractConfig()   # the options' defaults are the config's
# the extraction settings with an option of the same name (``extract`` and ``run``; ``demo`` has some)
SETTINGS = ("boilerplate", "min_lang_score", "min_chars", "net_timeout", "record_seconds", "worker_memory_mb")
# how the run plans (tasks/lake/plan.py): options of ``extract`` and ``run`` where add_plan_options adds them
PLAN_SETTINGS = ("recheck_inputs", "plan_threads")


def add_extract_options(p) -> None:
    """Options shared by ``extract`` and ``run``."""
    p.add_argument("--dump", required=True, type=dump_name, help="dump name, e.g. CC-MAIN-2024-22")
    p.add_argument("--lake", required=True, help="lake root: a folder or an fsspec URL (s3://...)")
    p.add_argument("--langs", default=",".join(DEFAULT.langs),
                   help="target languages, ISO 639-1, comma-separated, or 'all' (default: %(default)s)")
    p.add_argument("--boilerplate", default=DEFAULT.boilerplate, choices=MODES,
                   help="paragraph labelling (default: %(default)s)")
    p.add_argument("--min-lang-score", type=float, default=DEFAULT.min_lang_score, metavar="S",
                   help="pages whose language confidence is below S (0-1) are recorded as "
                        f"lang_undetermined (default: {DEFAULT.min_lang_score:g}, every page judged)")
    p.add_argument("--min-chars", type=int, default=DEFAULT.min_chars, metavar="N",
                   help="pages with fewer than N letters to judge are recorded as "
                        "lang_undetermined (default: %(default)s)")
    p.add_argument("--net-timeout", type=float, default=DEFAULT.net_timeout, metavar="SECONDS",
                   help="http(s) inputs: seconds without a byte before a read counts as stalled and "
                        f"is resumed or retried (default: {DEFAULT.net_timeout:g})")
    p.add_argument("--base-url", default=None,
                   help="base URL for relative entries of a warc.paths listing")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display on the terminal")
    p.add_argument("--force", action="store_true",
                   help="redo archives that are done already (same input, extractor version and config)")
    p.add_argument("--corpus-signatures", action=argparse.BooleanOptionalAction, default=None,
                   help="also write the corpus stage's per-archive outputs (paragraph and document "
                        "signatures, quality metrics) while extracting, so `warclake corpus` finds these "
                        "archives done (default: off, but on with `run --corpus`)")
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="archives, folders, globs, http(s)/s3 URLs or a warc.paths[.gz] listing")


def add_guard_options(p) -> None:
    """The watch on each record of an extraction worker (``extract`` and ``run``)."""
    p.add_argument("--record-seconds", type=float, default=DEFAULT.record_seconds, metavar="SECONDS",
                   help="a record whose work takes longer stops its worker and is ledgered timed_out "
                        f"(default: {DEFAULT.record_seconds:g})")
    p.add_argument("--worker-memory-mb", type=int, default=DEFAULT.worker_memory_mb, metavar="MIB",
                   help="a record during which its worker grows past this memory is stopped and ledgered "
                        "out_of_memory (default: %(default)s)")


def add_plan_options(p) -> None:
    """How the plan tells what is done (``extract`` and ``run``)."""
    p.add_argument("--recheck-inputs", action="store_true", default=None,
                   help="ask each remote input's size and ETag again, to redo one that changed (a request "
                        "each; by default an input the lake holds as done is not asked: a listed archive "
                        "does not change). Local inputs are always checked")
    p.add_argument("--plan-threads", type=int, default=None, metavar="N",
                   help=f"requests the plan makes at once (default: {DEFAULT.plan_threads})")


def dump_name(value: str) -> str:
    """argparse type: a dump name is a folder of the lake, so it is checked like a path part."""
    try:
        return check_dump_name(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def settings_of(args) -> dict:
    """The extraction settings the command has options for, as given (or their defaults)."""
    return {k: getattr(args, k) for k in SETTINGS if hasattr(args, k)}


def plan_settings(args) -> dict:
    """The plan's settings the command has options for (None: not given)."""
    return {k: getattr(args, k) for k in PLAN_SETTINGS if hasattr(args, k)}


def config_from_args(args) -> ExtractConfig:
    return extract_config(args.langs, **settings_of(args), **plan_settings(args),
                          corpus_signatures=corpus_signatures(args))


def corpus_signatures(args) -> bool:
    """``--corpus-signatures``, on by default when the corpus stage follows (``run --corpus``)."""
    given = getattr(args, "corpus_signatures", None)
    return bool(getattr(args, "corpus", False) if given is None else given)


def prepare(args) -> tuple[ExtractConfig, list[str]]:
    """Everything that can be checked before any work: config, the lake, the inputs."""
    config = config_from_args(args)
    check_extract_workers(getattr(args, "workers", 0))
    Lake(args.lake).check_writable()
    inputs = resolve_inputs(args.inputs, args.base_url)
    check_unique_names(inputs)
    return config, inputs


def add_parser(sub) -> None:
    p = sub.add_parser("extract", help="extract archives into the lake (sequential, no orchestration)")
    add_extract_options(p)
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="1 (default): each archive is read by a worker process that is watched, so a record "
                        "that hangs, swells or crashes it costs that record; 0: in this process, unwatched")
    add_guard_options(p)
    add_plan_options(p)
    p.set_defaults(handler=run)


def run(args) -> int:
    config, inputs = prepare(args)
    # Ctrl-C unwinds: the worker is stopped, the archive being written removes its
    # temporaries (the worker's are removed by the run), the lock is released
    workers = supervisor()
    workers.reset()
    notices = TerminalNotices(args.quiet)
    try:
        with workers.on_ctrl_c(unwind=True):
            try:
                done = run_dump(args.dump, inputs, args.lake, config, InProcess(progress=notices.bytes_read),
                                workers=args.workers, force=args.force, notices=notices)
            finally:
                notices.close()
    except DumpLockLost as exc:   # not bad input: the run stopped part-way (1, as a failed archive)
        print(f"warclake: error: {exc}", file=sys.stderr)
        return 1
    print(f"{len(done.todo)} archives in {done.seconds:.1f}s, {len(done.failed)} failed"
          + (f", {done.skipped} done already" if done.skipped else ""))
    return 1 if done.failed else 0


class TerminalNotices(Notices):
    """``extract``'s lines: what the plan skipped, one line per archive, and its bars on a
    terminal (tasks/extract/dump.py tells when)."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.bar: TerminalProgress | None = None
        self.sizes: dict[str, int | None] = {}

    def again(self, line: str) -> None:   # a summary the store failed to give, read again
        if not self.quiet:
            print(line, file=sys.stderr, flush=True)

    def planned(self, run: DumpRun) -> None:
        if run.skipped:
            print(f"{run.skipped} of {len(run.plan)} archives done already (same input, extractor version and "
                  f"config): skipped; --force redoes them", flush=True)
        self.sizes = {p.name: _local_size(p.input) for p in run.todo}
        self.bar = TerminalProgress(len(run.todo), sum(filter(None, self.sizes.values())) or None,
                                    quiet=self.quiet, planned=True).__enter__()

    def _bar(self) -> TerminalProgress:
        assert self.bar is not None, "the plan comes first"   # planned() made it
        return self.bar

    def started(self, item) -> None:
        self._bar().start_archive(item.name, self.sizes[item.name])

    def bytes_read(self, n: int) -> None:
        self._bar().bytes_read(n)

    def failed(self, item, exc: Exception) -> None:   # the input or the lake, not the archive's bytes
        self._bar().print(f"{item.name}: failed: {exc}", err=True)

    def finished(self, item, figures: dict | None) -> None:
        if figures is None:
            self._bar().archive_done(self.sizes[item.name])
            return
        self._bar().archive_done(figures["input_bytes"])
        self._bar().print(archive_line(figures))
        if figures.get(SIGNATURES_LEFT):   # the worker's own warning is not shown
            self._bar().print(f"{item.name}: {figures[SIGNATURES_LEFT]}", err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


def _local_size(path: str) -> int | None:
    """A local input's size for the progress bar (remote sizes come with their summary)."""
    try:
        return None if "://" in path else os.path.getsize(path)
    except OSError:
        return None

"""``warclake extract``: the extraction core as a plain loop, no Prefect involved."""
from __future__ import annotations

import argparse
import os
import sys
import time

from warclake.tasks.extract.boilerplate import MODES
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.lake.dump_lock import DumpLock, DumpLockLost
from warclake.tasks.extract.archive import SIGNATURES_LEFT, record_failure
from warclake.tasks.archive.inputs import resolve_inputs
from warclake.tasks.lake.layout import Lake, archive_name, check_dump_name
from warclake.tasks.lake.plan import check_unique_names, plan_dump
from warclake.tasks.runtime import retries
from warclake.tasks.runtime.supervisor import supervisor

from warclake.cli.progress import TerminalProgress, archive_line


def add_extract_options(p) -> None:
    """Options shared by ``extract`` and ``run``."""
    p.add_argument("--dump", required=True, type=dump_name, help="dump name, e.g. CC-MAIN-2024-22")
    p.add_argument("--lake", required=True, help="lake root: a folder or an fsspec URL (s3://...)")
    p.add_argument("--langs", default="ja",
                   help="target languages, ISO 639-1, comma-separated, or 'all' (default: ja)")
    p.add_argument("--boilerplate", default="none", choices=MODES,
                   help="paragraph labelling (default: none)")
    p.add_argument("--min-lang-score", type=float, default=0.0, metavar="S",
                   help="pages whose language confidence is below S (0-1) are recorded as "
                        "lang_undetermined (default: 0, every page judged)")
    p.add_argument("--min-chars", type=int, default=0, metavar="N",
                   help="pages with fewer than N letters to judge are recorded as "
                        "lang_undetermined (default: 0)")
    p.add_argument("--net-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="http(s) inputs: seconds without a byte before a read counts as stalled and "
                        "is resumed or retried (default: 60)")
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
    p.add_argument("--record-seconds", type=float, default=120.0, metavar="SECONDS",
                   help="a record whose work takes longer stops its worker and is ledgered timed_out (default: 120)")
    p.add_argument("--worker-memory-mb", type=int, default=8192, metavar="MIB",
                   help="a record during which its worker grows past this memory is stopped and ledgered "
                        "out_of_memory (default: 8192)")


def dump_name(value: str) -> str:
    """argparse type: a dump name is a folder of the lake, so it is checked like a path part."""
    try:
        return check_dump_name(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def config_from_args(args) -> ExtractConfig:
    return ExtractConfig.from_langs(args.langs, boilerplate=args.boilerplate,
                                    min_lang_score=getattr(args, "min_lang_score", 0.0),
                                    min_chars=getattr(args, "min_chars", 0),
                                    net_timeout=getattr(args, "net_timeout", 60.0),
                                    record_seconds=getattr(args, "record_seconds", 120.0),
                                    worker_memory_mb=getattr(args, "worker_memory_mb", 8192),
                                    corpus_signatures=corpus_signatures(args))


def corpus_signatures(args) -> bool:
    """``--corpus-signatures``, on by default when the corpus stage follows (``run --corpus``)."""
    given = getattr(args, "corpus_signatures", None)
    return bool(getattr(args, "corpus", False) if given is None else given)


def prepare(args) -> tuple[ExtractConfig, list[str]]:
    """Everything that can be checked before any work: config, the lake, the inputs."""
    config = config_from_args(args)
    check_workers(getattr(args, "workers", 0))
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
    p.set_defaults(handler=run)


def check_workers(workers) -> None:
    """``extract`` reads one archive at a time, in one watched worker or in its own process."""
    if workers not in (0, 1) or isinstance(workers, bool):
        raise ValueError(f"--workers {workers}: extract reads one archive at a time, in a watched worker process "
                         "(1, the default) or in its own process, unwatched (0); `warclake run --workers N` "
                         "extracts N at once")


def run(args) -> int:
    config, inputs = prepare(args)
    # Ctrl-C unwinds: the worker is stopped, the archive being written removes its
    # temporaries (the worker's are removed here), the lock is released
    workers = supervisor()
    workers.reset()
    try:
        with workers.on_ctrl_c(unwind=True), \
                DumpLock(args.lake, args.dump) as lock:   # one writer per dump and lake
            Lake(args.lake).clean_stale_tmp(args.dump)
            try:
                return _extract_all(args, config, inputs, lock)
            finally:
                workers.shutdown()
                if workers.interrupted:
                    Lake(args.lake).clean_stale_tmp(args.dump)   # what the stopped worker was writing
    except DumpLockLost as exc:   # not bad input: the run stopped part-way (1, as a failed archive)
        print(f"warclake: error: {exc}", file=sys.stderr)
        return 1


def _extract_one(path: str, args, config: ExtractConfig, progress) -> dict:
    """One archive, in a watched worker (or inline with ``--workers 0``). A worker that died
    on a record is given the archive again: a second death there ledgers that record
    ``worker_crashed`` and reading goes on after it (tasks/runtime/retries.py: WORKER)."""
    return retries.WORKER.run(
        lambda: supervisor().extract(path, args.dump, args.lake, config, args.workers, progress=progress))


def _extract_all(args, config: ExtractConfig, inputs: list[str], lock: DumpLock) -> int:
    done = 0
    if not args.force:  # incremental, as `run`: an archive whose summary says done is skipped
        # a summary the store fails to give is read again (each attempt said, unless quiet)
        said = None if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
        plan = plan_dump(inputs, args.dump, args.lake, config, progress=said)
        todo = [p.input for p in plan if p.todo]
        done = len(inputs) - len(todo)
        if done:
            print(f"{done} of {len(inputs)} archives done already (same input, extractor version and "
                  f"config): skipped; --force redoes them", flush=True)
        inputs = todo
    sizes = [_local_size(p) for p in inputs]
    failed = 0
    t0 = time.time()
    with TerminalProgress(len(inputs), sum(filter(None, sizes)) or None, quiet=args.quiet, planned=True) as bar:
        for path, size in zip(inputs, sizes):
            lock.check()   # DumpLockLost: another run took the dump over; stop before the next archive
            bar.start_archive(archive_name(path), size)
            try:
                s = _extract_one(path, args, config, bar.bytes_read)
            except OSError as exc:  # the input or the lake, not the archive's bytes
                failed += 1
                bar.print(f"{archive_name(path)}: failed: {exc}", err=True)
                try:
                    record_failure(path, args.dump, args.lake, config, f"{type(exc).__name__}: {exc}")
                except OSError:
                    pass  # the lake itself is failing: the line above says what happened
                bar.archive_done(size)
                continue
            bar.archive_done(s["input_bytes"])
            bar.print(archive_line({**s, "documents": s["outcomes"].get("kept", 0), "damaged": len(s["skipped"])}))
            if s.get(SIGNATURES_LEFT):   # the worker's own warning is not shown
                bar.print(f"{archive_name(path)}: {s[SIGNATURES_LEFT]}", err=True)
            if s["status"] == "failed":
                failed += 1
    print(f"{len(inputs)} archives in {time.time() - t0:.1f}s, {failed} failed"
          + (f", {done} done already" if done else ""))
    return 1 if failed else 0


def _local_size(path: str) -> int | None:
    """A local input's size for the progress bar (remote sizes come with their summary)."""
    try:
        return None if "://" in path else os.path.getsize(path)
    except OSError:
        return None

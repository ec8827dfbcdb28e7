"""A flow that extracts the newest dump found under a folder of dumps.

The folder (local path or fsspec URL) holds one sub-folder per dump, named like Common
Crawl's ``CC-MAIN-YYYY-WW``; those names sort by date as plain strings, so the newest is
the largest name. Inside a dump's folder, a ``warc.paths.gz`` (or ``warc.paths``) listing
is used when present (relative entries resolved against ``base_url`` if given), otherwise
every archive in the folder.

The dump is picked when the run starts, not when it is deployed: a weekly schedule on this
flow picks up each new dump as soon as its folder appears, and finishes the previous
week's archives if the newest is still the same (the extraction itself is incremental).
"""
from __future__ import annotations

import posixpath
import re

import fsspec
from prefect import flow, get_run_logger
from prefect.states import Failed

from warclake.flows.dump_flow import DumpFailed, extract_dump
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.runtime.run_checks import check_counts, check_dask_address, extract_config

DUMP_PATTERN = r"CC-MAIN-\d{4}-\d{2}"
LISTINGS = ("warc.paths.gz", "warc.paths")
DEFAULT = ExtractConfig()   # the flow's defaults are the config's


def _fs(root: str):
    fs, path = fsspec.core.url_to_fs(root)
    return fs, path.rstrip("/") or path


def list_dumps(root: str, pattern: str = DUMP_PATTERN) -> list[str]:
    """Names of the dump folders directly under ``root`` matching ``pattern``, oldest first."""
    fs, path = _fs(root)
    rx = re.compile(pattern)
    names = set()
    for entry in fs.ls(path, detail=True):
        # HTTP listings have no real directories: a link ending in "/" stands for one
        name = posixpath.basename(entry["name"].rstrip("/"))
        if entry.get("type") == "directory" or entry["name"].endswith("/"):
            if rx.fullmatch(name):
                names.add(name)
    return sorted(names)


def newest_dump(root: str, pattern: str = DUMP_PATTERN) -> str:
    dumps = list_dumps(root, pattern)
    if not dumps:
        raise FileNotFoundError(f"no dump folder matching {pattern!r} under {root!r}")
    return dumps[-1]


def dump_inputs(root: str, dump: str) -> list[str]:
    """The dump's listing if it has one, else its folder (every archive in it)."""
    fs, path = _fs(root)
    folder = posixpath.join(path, dump)
    for listing in LISTINGS:
        if fs.exists(posixpath.join(folder, listing)):
            return [_unstrip(fs, root, posixpath.join(folder, listing))]
    return [_unstrip(fs, root, folder)]


def _unstrip(fs, root: str, path: str) -> str:
    # keep local roots as plain paths, which the rest of the pipeline treats as local
    return fs.unstrip_protocol(path) if "://" in root else path


@flow(name="extract-newest-dump", flow_run_name="newest dump under {root}", log_prints=True,
      persist_result=False)
def extract_newest_dump(root: str, lake: str, langs: str = ",".join(DEFAULT.langs),
                        boilerplate: str = DEFAULT.boilerplate, base_url: str | None = None, workers: int | None = None,
                        max_in_flight: int | None = None, report: bool = True,
                        report_dir: str | None = None, retry_delays: list[float] | None = None,
                        pattern: str = DUMP_PATTERN, dask: str | None = None, corpus: bool = False,
                        corpus_options: dict | None = None):
    """Find the newest dump folder under ``root`` and run ``extract-dump`` on it.

    dask: a Dask scheduler address to run the archives on (workers then default to 0:
    Dask workers are processes already).
    corpus, corpus_options: then run the corpus stage on the dump, with these options (see
    ``extract-dump``).
    """
    try:  # mistakes in the parameters: one line, before the cluster or the dump is touched
        extract_config(langs, boilerplate=boilerplate)
        check_counts(workers, max_in_flight)
        if dask:
            check_dask_address(dask)
        dump = newest_dump(root, pattern)
    except (ValueError, OSError) as exc:
        get_run_logger().error("%s", exc)
        return Failed(message=str(exc), data=DumpFailed(str(exc), {"root": root}))
    inputs = dump_inputs(root, dump)
    get_run_logger().info("newest dump under %s: %s (inputs %s)", root, dump, inputs)
    target = extract_dump
    if dask:
        from warclake.flows.dask_runner import on_cluster

        target = extract_dump.with_options(task_runner=on_cluster(dask))
        workers = 0 if workers is None else workers
    # Returning the sub-flow's state makes this run Completed/Failed exactly as the dump's run.
    return target(dump=dump, inputs=inputs, lake=lake, langs=langs, boilerplate=boilerplate,
                  base_url=base_url, workers=workers, max_in_flight=max_in_flight, report=report,
                  report_dir=report_dir, retry_delays=retry_delays, corpus=corpus,
                  corpus_options=corpus_options, return_state=True)

"""Where the CPU-heavy extraction runs.

Prefect's process-pool and Dask task runners start a temporary API server per worker
process when no server is configured (about 11 s each), so in the embedded default the
flow keeps Prefect's tasks in threads and sends each archive to a plain process pool
owned here: all cores, no server. On Dask (or any runner whose workers are already
separate processes), extraction runs inline in the task.
"""
from __future__ import annotations

import atexit
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor

from warclake.tasks.config import ExtractConfig
from warclake.tasks.extract_archive import extract_archive

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_pool_size = 0


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _pool_for(size: int, config: ExtractConfig | None = None) -> ProcessPoolExecutor:
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size != size:
            if _pool is not None:
                _pool.shutdown(wait=True)
            # forkserver, not fork: the parent runs Prefect's threads and event loops; the
            # server process imports the extraction modules once, so workers start fast
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(["warclake.tasks.extract_archive"])
            _pool = ProcessPoolExecutor(max_workers=size, mp_context=ctx, initializer=_init_worker,
                                        initargs=(config,))
            _pool_size = size
        return _pool


def _init_worker(config: ExtractConfig | None = None) -> None:
    os.environ.setdefault("DO_NOT_TRACK", "1")
    if config is not None:  # lingua's models load at the worker's start, not in its first archive
        from warclake.tasks.language import LanguageDetector
        LanguageDetector.from_config(config).preload()


def shutdown() -> None:
    global _pool
    with _lock:
        if _pool is not None:
            _pool.shutdown(wait=True, cancel_futures=True)
            _pool = None


atexit.register(shutdown)


def run_extraction(input_path: str, dump: str, lake: str, config: ExtractConfig, workers: int) -> dict:
    """Extract one archive in a worker process (workers >= 1) or in this thread (workers == 0)."""
    if workers <= 0:
        return extract_archive(input_path, dump, lake, config)
    return _pool_for(workers, config).submit(extract_archive, input_path, dump, lake, config).result()

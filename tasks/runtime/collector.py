"""The garbage collector kept off extraction's hot path, once per process at start-up.

Extraction makes and drops millions of small containers (paragraphs, rows, paths), almost
none of them in reference cycles. With CPython's defaults (a young collection every 700
net allocations) that is about 500 young and 50 middle collections an archive, and every
full collection walks the ~45,000 objects that imports and models left behind. Here the
objects of start-up are frozen (never walked again, never freed: they live as long as the
process anyway) and a young collection waits for 10,000 allocations: the collector's time
falls from ~4 % of `--langs all` to ~1 %, peak memory the same (cli/bench.py measures it).
Cycles are still collected. At exit the frozen objects are handed back to the collector,
so the interpreter's last collection frees them as it would have (extension modules such as
DuckDB's report instances left unfreed at exit).
"""
from __future__ import annotations

import atexit
import gc
import os

YOUNG_THRESHOLD = 10_000  # net allocations between two young collections (CPython: 700)
_settled_in: int | None = None  # the pid that settled it (a forked child inherits the setting)


def keep_off_the_hot_path() -> None:
    """Collect once, freeze what start-up made, and collect the young less often; once per process."""
    global _settled_in
    if _settled_in == os.getpid():
        return
    _settled_in = os.getpid()
    gc.collect()
    gc.freeze()
    atexit.register(gc.unfreeze)
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)

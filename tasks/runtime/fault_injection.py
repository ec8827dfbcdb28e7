"""TEST-ONLY fault injector: makes an extraction worker crash, hang or swell on chosen pages.

Set ``WARCLAKE_TEST_FAULT=<kind>:<marker>[,<kind>:<marker>...]`` (kind ``crash``, ``hang`` or
``swell``) and the worker, on a response record whose URL contains ``marker``, exits at once as a segfault or the OOM
killer would end it (``crash``), never returns (``hang``) or grows its memory without end
(``swell``). The tests use it to check that a dead or runaway worker costs one page. Unset
(always, outside the tests), :func:`from_env` returns None and the reader pays nothing.
"""
from __future__ import annotations

import os
import time
from typing import Callable

ENV = "WARCLAKE_TEST_FAULT"


def from_env() -> Callable[[object], None] | None:
    faults = [part.split(":", 1) for part in os.environ.get(ENV, "").split(",") if ":" in part]
    if not faults:
        return None

    def fault(rec) -> None:
        if rec.rec_type != "response" or not rec.url:
            return
        for kind, marker in faults:
            if marker in rec.url:
                _fail(kind)

    return fault


def _fail(kind: str) -> None:
    if kind == "crash":
        os._exit(70)
    if kind == "hang":
        while True:
            time.sleep(1)
    if kind == "swell":
        hoard = []
        while True:   # ~1 GB a second, until the parent stops this process
            hoard.append(bytearray(40 << 20))
            time.sleep(0.04)

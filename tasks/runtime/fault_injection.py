"""TEST-ONLY fault injector: makes an extraction worker crash, hang, swell or stop at chosen pages or moments.

Set ``WARCLAKE_TEST_FAULT=<kind>:<marker>[,<kind>:<marker>...]``. On a response record whose
URL contains ``marker``, once its work began, the worker exits at once as a segfault or the
OOM killer would end it (``crash``), never returns (``hang``), grows its memory to
``SWELL_CAP`` and holds it (``swell``) or stops to be killed (``stop-in``); ``stop-before``
stops it before that record's work begins (the records before it done: between two records).
``stop-start`` and ``stop-write`` stop it in the archive whose name contains ``marker``:
opened, before its first record, and with its records all read while its outputs are written
(documents published, ledger not). The tests use it to check that a dead or runaway worker
costs one page, and that a worker killed anywhere else costs nothing.

A stop happens once per run: the first worker to reach it writes its pid into the file
``<WARCLAKE_TEST_STOPS>/<kind>`` and waits there for the test to kill it; the archive read
again passes. Unset (always, outside the tests), :func:`from_env` returns None and the
reader pays nothing.
"""
from __future__ import annotations

import os
import time

ENV = "WARCLAKE_TEST_FAULT"
STOPS = "WARCLAKE_TEST_STOPS"   # the folder where a stopped worker writes its pid
# far above the tests' worker limit (1,500 MB), low enough that two test runs side by side
# never make the kernel's OOM killer end the worker before its parent does
SWELL_CAP = 4 << 30


class Faults:
    def __init__(self, faults: list[tuple[str, str]]):
        self.faults = faults

    def __call__(self, rec) -> None:
        """A record whose work began."""
        for kind, marker in self._on(rec):
            if kind == "stop-in":
                _stop(kind)
            elif not kind.startswith("stop"):
                _fail(kind)

    def before(self, rec) -> None:
        """A record about to be worked on."""
        for kind, _marker in self._on(rec):
            if kind == "stop-before":
                _stop(kind)

    def at(self, moment: str, archive: str) -> None:
        """``start`` or ``write`` of an archive."""
        for kind, marker in self.faults:
            if kind == f"stop-{moment}" and marker in archive:
                _stop(kind)

    def _on(self, rec):
        if rec.rec_type != "response" or not rec.url:
            return []
        return [(kind, marker) for kind, marker in self.faults if marker in rec.url]


def from_env() -> Faults | None:
    parts = [part for part in os.environ.get(ENV, "").split(",") if ":" in part]
    faults = [(kind, marker) for kind, _, marker in (part.partition(":") for part in parts)]
    return Faults(faults) if faults else None


def _fail(kind: str) -> None:
    if kind == "crash":
        os._exit(70)
    if kind == "hang":
        while True:
            time.sleep(1)
    if kind == "swell":
        hoard: list[bytearray] = []
        chunk = 40 << 20
        # 2 GB at once, then ~1 GB a second up to the cap, until the parent stops this process
        while True:
            if len(hoard) * chunk < SWELL_CAP:
                hoard.append(bytearray(chunk))   # (at once: a loaded machine must not make it a timeout)
            if len(hoard) > 50:
                time.sleep(0.04)


def _stop(kind: str) -> None:
    """The first time: say where, and wait to be killed."""
    folder = os.environ[STOPS]
    tmp = os.path.join(folder, f".{kind}.{os.getpid()}.tmp")
    with open(tmp, "w") as fh:
        fh.write(f"{os.getpid()}\n")
    try:
        os.link(tmp, os.path.join(folder, kind))   # whole, and only once
    except FileExistsError:
        return
    finally:
        os.unlink(tmp)
    while True:
        time.sleep(1)

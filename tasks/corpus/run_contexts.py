"""The dump contexts of one corpus run whose steps are separate calls (the flow's tasks),
shared by the calls made in the run's own process: one layout, so each state file of the
global steps is read at most once per run (``CorpusLayout.cache_states``), and each dump's
inputs found once. A call made in another process (a Dask worker) finds no such run there
and builds its own context, as a call on its own does.

Sharing is sound for the same reasons as in ``stage.run_stage``: the run holds the lake's
corpus lock, so the writes of state files are the run's own, made through this layout; and
a dump's manifest is final once its per-archive step ran, before any global step."""
from __future__ import annotations

import os
import secrets
import threading

from .dump_inputs import DumpInputs
from .layout import CorpusLayout
from .stage import GLOBAL_STATE_STEPS, DumpContext, StageOptions


class RunContexts:
    def __init__(self, layout: CorpusLayout, known: dict[str, DumpInputs] | None = None):
        self.layout = layout.cache_states(GLOBAL_STATE_STEPS)
        self.known = dict(known or {})
        self._lock = threading.Lock()   # two tasks at once (threads) read a missing dump's manifest once

    def context(self, dumps: list[str], dump: str, opts: StageOptions) -> DumpContext:
        with self._lock:
            return DumpContext.build(self.layout, dumps, dump, opts, self.known)


# run token -> (the process that holds it, its contexts). The process id keeps a forked
# child from using its parent's copy, whose cache the parent's writes no longer update.
_RUNS: dict[str, tuple[int, RunContexts]] = {}


def register(contexts: RunContexts) -> str:
    """A token naming the run's contexts to the calls of this process; ``release`` it at the end."""
    token = secrets.token_hex(8)
    _RUNS[token] = (os.getpid(), contexts)
    return token


def release(token: str) -> None:
    _RUNS.pop(token, None)


def context_of(token: str | None, lake: str, dumps: list[str], dump: str, opts: StageOptions) -> DumpContext:
    """The run's shared context of ``dump`` when this process holds the run, else one of its own."""
    held = _RUNS.get(token) if token else None
    if held is not None and held[0] == os.getpid():
        return held[1].context(dumps, dump, opts)
    return DumpContext.build(lake, dumps, dump, opts)

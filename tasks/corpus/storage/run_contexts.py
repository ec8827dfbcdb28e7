"""The dump contexts of one corpus run whose steps are separate calls (the flow's tasks),
shared by the calls made in the run's own process: one layout, so each state file of the
global steps is read at most once per run (``CorpusLayout.cache_states``), and each dump's
inputs found once. A call made in another process (a Dask worker) cannot see that layout:
the run's process passes it what the run knows (``Known``: each dump's inputs, and the
state files the run's calls read or wrote so far, gathered from their results), so it reads
only what no call of the run has read yet.

Sharing is sound for the same reasons as in ``stage.run_stage``: the run holds the lake's
corpus lock, so the writes of state files are the run's own, made through this layout or by
calls whose results the run's process has gathered before it passes them on (the steps run
one after another, a step's partitions at once, and a call reads only the state files of
earlier steps and its own); and a dump's manifest is final once its per-archive step ran,
before any global step of it."""
from __future__ import annotations

import os
import secrets
import threading
from dataclasses import dataclass, field

from warclake.tasks.corpus.stage import GLOBAL_STATE_STEPS, DumpContext, StageOptions
from warclake.tasks.corpus.storage.dump_inputs import DumpInputs
from warclake.tasks.corpus.storage.layout import CorpusLayout


class RunContexts:
    def __init__(self, layout: CorpusLayout, known: dict[str, DumpInputs] | None = None):
        """``known``: the run's own dict of each dump's inputs, shared (the run adds each
        dump's once its per-archive steps are through)."""
        self.layout = layout.cache_states(GLOBAL_STATE_STEPS)
        self.known = {} if known is None else known
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


@dataclass
class Known:
    """What the run's process passes to a call that may run in another process."""
    inputs: dict[str, DumpInputs] = field(default_factory=dict)   # each dump's, as its manifest holds them
    states: dict[str, bytes | None] = field(default_factory=dict)  # state path -> bytes, gathered so far

    def snapshot(self) -> "Known":
        """A copy to pass to a phase's calls (a Dask client sends parameters while results come in)."""
        return Known(self.inputs, dict(self.states))

    def gather(self, states: dict[str, bytes | None]) -> None:
        """The state files a call held when it ended (``states_of``); a state one call of a
        phase saw missing and another wrote stays written (the calls start from one snapshot)."""
        for path, data in states.items():
            if data is not None or self.states.get(path) is None:
                self.states[path] = data

    def learn(self, states: dict[str, bytes | None]) -> None:
        """The state files the run's own process read (its layout's): those the calls'
        results have not given already (a call's is newer than what the process read before it)."""
        for path, data in states.items():
            self.states.setdefault(path, data)


def context_of(token: str | None, lake: str, dumps: list[str], dump: str, opts: StageOptions,
               known: Known | None = None) -> DumpContext:
    """The run's shared context of ``dump`` when this process holds the run, else one of
    its own, which starts from what the run knows (``known``)."""
    held = _RUNS.get(token) if token else None
    if held is not None and held[0] == os.getpid():
        return held[1].context(dumps, dump, opts)
    if known is None:
        return DumpContext.build(lake, dumps, dump, opts)
    layout = CorpusLayout(lake).cache_states(GLOBAL_STATE_STEPS).know_states(known.states)
    return DumpContext.build(layout, dumps, dump, opts, dict(known.inputs))


def states_of(token: str | None, ctx: DumpContext) -> dict[str, bytes | None]:
    """The state files a call's context holds, for the run's process to gather: none when
    the call ran in that process (its layout is the run's)."""
    held = _RUNS.get(token) if token else None
    if held is not None and held[0] == os.getpid():
        return {}
    return ctx.layout.known_states()

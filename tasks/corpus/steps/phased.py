"""A global step run as phases of tasks (``para_pairs``, ``doc_decisions``): each task of a
phase is done once (``CorpusLayout.once``), its state file named after the phase and its
partition, the last phase's named as the step's own; work files under ``work/<step>``."""
from __future__ import annotations

from typing import ClassVar

from warclake.tasks.corpus.storage.layout import CorpusLayout


class PhasedStep:
    STEP: ClassVar[str]          # the step's name
    LAST: ClassVar[str]          # the phase whose state file is the step's
    LAST_STATE: ClassVar[str]    # that state file's name
    layout: CorpusLayout
    dump: str
    key: dict                    # the step's inputs and settings
    parts: int

    def state_name(self, phase: str, part: int | None) -> str:
        if phase == self.LAST:
            return self.LAST_STATE
        return phase if part is None else f"{phase}-{self.layout.part_name(part)}"

    def work(self, what: str, part: int | None = None) -> str:
        return self.layout.file(f"work/{self.STEP}", self.dump,
                                what if part is None else f"{what}-{self.layout.part_name(part)}")

    def run(self, con, phase: str, part: int | None = None) -> bool:
        """One task of ``phase`` unless done: whether it did work."""
        key = {**self.key, "phase": phase, "parts": self.parts, "part": part}
        return self.layout.once(self.STEP, self.dump, self.state_name(phase, part), key,
                                getattr(self, "_" + phase), con, part)

"""The per-archive outputs of a dump that the global steps read, and their identity."""
from __future__ import annotations

import os
from dataclasses import dataclass

from .archive_step import STEP as SIGN_STEP
from .settings import fingerprint_of
from .layout import CorpusLayout


@dataclass
class DumpInputs:
    dump: str
    archives: list[str]          # archives whose per-archive step is done
    identity: str                # digest of their step keys: changes when any is redone

    def files(self, layout: CorpusLayout, table: str) -> list[str]:
        return [layout.file(table, self.dump, a) for a in self.archives]


def dump_inputs(layout: CorpusLayout, dump: str) -> DumpInputs:
    d = os.path.dirname(layout.state_path(SIGN_STEP, dump, "x"))
    keys = []
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if name.endswith(".json") and not name.startswith("."):
            warc = name[: -len(".json")]
            st = layout.read_state(SIGN_STEP, dump, warc)
            if st and os.path.exists(layout.file("docsigs", dump, warc)) \
                    and os.path.exists(layout.file("paragraphs", dump, warc)):
                keys.append((warc, st["key"]))
    return DumpInputs(dump, [w for w, _ in keys], fingerprint_of(keys))

"""The per-archive outputs of a dump that the global steps read, and their identity."""
from __future__ import annotations

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
    keys = []
    docsigs, paragraphs = (set(layout.names(layout.dir(t, dump))) for t in ("docsigs", "paragraphs"))
    for name in layout.names(layout.dir(f"state/{SIGN_STEP}", dump)):
        if name.endswith(".json"):
            warc = name[: -len(".json")]
            st = layout.read_state(SIGN_STEP, dump, warc)
            if st and warc + ".parquet" in docsigs and warc + ".parquet" in paragraphs:
                keys.append((warc, st["key"]))
    return DumpInputs(dump, [w for w, _ in keys], fingerprint_of(keys))

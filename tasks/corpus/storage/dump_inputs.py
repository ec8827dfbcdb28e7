"""The per-archive outputs of a dump that the global steps read, and their identity: from
the dump's manifest (one read; manifest.py), rebuilt from the state files when missing."""
from __future__ import annotations

from dataclasses import dataclass

from warclake.tasks.corpus.settings import fingerprint_of
from warclake.tasks.corpus.storage.layout import CorpusLayout
from warclake.tasks.corpus.storage.manifest import load_entries


@dataclass
class DumpInputs:
    dump: str
    archives: list[str]          # archives whose per-archive step is done
    identity: str                # digest of their step keys: changes when any is redone

    def files(self, layout: CorpusLayout, table: str) -> list[str]:
        return [layout.file(table, self.dump, a) for a in self.archives]


def dump_inputs(layout: CorpusLayout, dump: str) -> DumpInputs:
    return inputs_of(dump, load_entries(layout, dump))


def inputs_of(dump: str, entries: dict[str, dict]) -> DumpInputs:
    """The inputs named by a manifest's entries (as ``load_entries`` or the run's
    ``ManifestWriter`` hold them)."""
    keys = [(w, entries[w]) for w in sorted(entries)]
    return DumpInputs(dump, [w for w, _ in keys], fingerprint_of(keys))

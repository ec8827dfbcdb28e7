"""The per-dump manifest of the per-archive step: which archives are done, with their keys,
in one file, so the global steps read one object instead of a state file per archive.

    <lake>/corpus/manifest/dump=<D>/signatures.json
    {"step": "signatures", "dump": D, "archives": [[warc-name, key], ...]}   (names sorted)

An entry is written only after the archive's state file (so only for an archive that is
complete), and the file is replaced whole (a temporary renamed, or one PUT), so a crash
leaves the previous manifest or the next one, never a half.

Staleness. An entry is current when its key is the key the per-archive step would give the
archive now: its documents file's size (all sizes from one listing of the dump's
documents folder), its extraction summary and the signature settings (``archive_step.
archive_key``). Before the per-archive step, ``ManifestWriter.reconcile`` drops every entry
that is not current or whose archive is no longer finished, and writes the manifest at
once if it dropped any: an archive about to be redone is never claimed while its files are
replaced. Archives with a current entry need no task; the others are added as their step
completes (the file rewritten at most every ``flush_every`` archives or ``flush_seconds``,
and at the end). A manifest that is missing or unreadable is rebuilt from the state files
(one listing and one read per archive, once).
"""
from __future__ import annotations

import json
import time

from warclake.tasks.corpus.signals.archive_step import STEP as SIGN_STEP
from warclake.tasks.corpus.signals.archive_step import archive_key
from warclake.tasks.corpus.storage.layout import CorpusLayout, read_bytes, write_bytes

NAME = "signatures"


def manifest_path(layout: CorpusLayout, dump: str) -> str:
    return layout.file("manifest", dump, NAME, ".json")


def read_manifest(layout: CorpusLayout, dump: str) -> dict[str, dict] | None:
    """{archive: key} of the dump's manifest; None when it is missing or does not parse. An
    error of the storage is raised (the caller's retry reads it again), not taken for a
    missing manifest, which would be rebuilt at the cost of a read per archive."""
    try:
        data = json.loads(read_bytes(manifest_path(layout, dump)))
        return {w: k for w, k in data["archives"]}
    except (FileNotFoundError, ValueError, KeyError, TypeError):
        return None


def write_manifest(layout: CorpusLayout, dump: str, entries: dict[str, dict]) -> None:
    data = {"step": SIGN_STEP, "dump": dump, "archives": [[w, entries[w]] for w in sorted(entries)]}
    write_bytes(manifest_path(layout, dump), json.dumps(data, sort_keys=True, default=str).encode())


def from_state_files(layout: CorpusLayout, dump: str) -> dict[str, dict]:
    """{archive: key} of every archive whose per-archive step is done, from its state file
    and outputs (three listings and one read per archive)."""
    docsigs, paragraphs = (set(layout.names(layout.dir(t, dump))) for t in ("docsigs", "paragraphs"))
    found = {}
    for name in layout.names(layout.dir(f"state/{SIGN_STEP}", dump)):
        if name.endswith(".json"):
            warc = name[: -len(".json")]
            st = layout.read_state(SIGN_STEP, dump, warc)
            if st and warc + ".parquet" in docsigs and warc + ".parquet" in paragraphs:
                found[warc] = st["key"]
    return found


def rebuild_manifest(layout: CorpusLayout, dump: str) -> dict[str, dict]:
    entries = from_state_files(layout, dump)
    write_manifest(layout, dump, entries)
    return entries


def load_entries(layout: CorpusLayout, dump: str) -> dict[str, dict]:
    """The manifest's entries, rebuilt from the state files when it is missing."""
    entries = read_manifest(layout, dump)
    return entries if entries is not None else rebuild_manifest(layout, dump)


def documents_sizes(layout: CorpusLayout, dump: str) -> dict[str, int]:
    """Size of each documents file of the dump, by archive name: one listing."""
    return {w: int(e["size"]) for w, e in layout.listing(layout.lake.dir("documents", dump), ".parquet").items()}


def _as_stored(key: dict) -> dict:
    """A key as it reads back from JSON (tuples become lists)."""
    return json.loads(json.dumps(key, sort_keys=True, default=str))


class ManifestWriter:
    """The manifest of one dump while its per-archive step runs (one writer: the run's
    coordinating process, which holds the corpus lock)."""

    def __init__(self, layout: CorpusLayout, dump: str, flush_every: int = 1000, flush_seconds: float = 30.0):
        self.layout, self.dump = layout, dump
        self.flush_every, self.flush_seconds = flush_every, flush_seconds
        stored = read_manifest(layout, dump)
        self.rebuilt = stored is None
        self.entries: dict[str, dict] = from_state_files(layout, dump) if stored is None else stored
        self._pending, self._last = 0, time.monotonic()
        self._dirty = self.rebuilt

    def reconcile(self, archives: list[tuple[str, dict]], sig) -> list[tuple[str, dict]]:
        """Drop the entries that are not current for these finished archives (and write the
        manifest at once if any went); returns the archives that need their step run."""
        sizes = documents_sizes(self.layout, self.dump)
        want = {}
        for warc, summary in archives:
            if warc in sizes:
                want[warc] = _as_stored(archive_key(None, summary, sig, size=sizes[warc]))
        stale = [w for w, k in self.entries.items() if want.get(w) != k]
        for w in stale:
            del self.entries[w]
        if stale or self._dirty:
            self.flush()
        return [(w, s) for w, s in archives if w not in self.entries]

    def add(self, warc: str, key: dict) -> None:
        """An archive whose step has completed (its state file written). A write that
        failed is tried again by the next call, so the caller may retry this one."""
        key = _as_stored(key)
        if self.entries.get(warc) != key:
            self.entries[warc] = key
            self._pending += 1
            self._dirty = True
        if self._dirty and (self._pending >= self.flush_every
                            or time.monotonic() - self._last >= self.flush_seconds):
            self.flush()

    def flush(self) -> None:
        write_manifest(self.layout, self.dump, self.entries)
        self._pending, self._last, self._dirty = 0, time.monotonic(), False

    def close(self) -> None:
        if self._dirty:
            self.flush()

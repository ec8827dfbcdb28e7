"""What the corpus stage needs from each archive's extraction summary, read once per summary.

    <lake>/corpus/manifest/dump=<D>/summaries.json
    {"dump": D, "summaries": {warc-name: {"tag": ..., "status": ..., "schema_version": ...,
                                          "config_fingerprint": ..., "finished": ...}}}

A dump of 90,000 archives has 90,000 summaries; reading each on every corpus run would cost a
GET per archive even when nothing changed. One listing of the dump's ``files`` folder gives
each summary's identity (``tag``: its ETag and size on an object store; size, modification
time and inode on a local disk, where a rewrite renames a new file into place). A summary
whose tag is the one recorded is not read again; a new or changed one is read and recorded.
The record is only a cache of the summaries it names: it is checked against the listing on
every run, written whole (a temporary renamed, or one PUT) and only when it changed, and a
missing or unreadable one is rebuilt by reading every summary once.
"""
from __future__ import annotations

import json
import logging

from warclake.tasks.corpus.storage.layout import CorpusLayout, read_bytes, write_bytes

log = logging.getLogger(__name__)

FIELDS = ("status", "schema_version", "config_fingerprint", "finished")   # what the stage reads


def cache_path(layout: CorpusLayout, dump: str) -> str:
    return layout.file("manifest", dump, "summaries", ".json")


def tag_of(entry: dict) -> str | None:
    """A listed file's identity, or None when the store's listing gives nothing to tell a
    changed file by (then it is read every time)."""
    etag = entry.get("ETag") or entry.get("etag") or entry.get("md5Hash")
    if etag:
        return f"{etag}/{entry.get('size')}"
    mtime = entry.get("mtime") or entry.get("LastModified") or entry.get("updated")
    if mtime is None:
        return None
    return f"{entry.get('size')}/{mtime}/{entry.get('ino', '')}"


def _read_cache(layout: CorpusLayout, dump: str) -> dict[str, dict]:
    """The record; empty when it is missing or does not parse (an error of the storage is
    raised: taken for a missing record, it would cost a read of every summary)."""
    try:
        return dict(json.loads(read_bytes(cache_path(layout, dump)))["summaries"])
    except (FileNotFoundError, ValueError, KeyError, TypeError):
        return {}


def summary_fields(layout: CorpusLayout, dump: str) -> dict[str, dict]:
    """{archive: its summary's FIELDS} for every readable summary of the dump (one listing,
    one read of the record, and one read per summary that is new or changed)."""
    listed = layout.listing(layout.lake.dir("files", dump), ".json")
    cached = _read_cache(layout, dump)
    found, changed = {}, set(cached) - set(listed)
    for warc, entry in listed.items():
        tag, hit = tag_of(entry), cached.get(warc)
        if tag is not None and hit is not None and hit.get("tag") == tag:
            found[warc] = hit
            continue
        summary = layout.lake.read_summary(dump, warc)   # an error of the storage is raised
        changed.add(warc)
        if summary is not None:   # unreadable (being written, damaged): not done, not recorded
            found[warc] = {"tag": tag, **{f: summary.get(f) for f in FIELDS}}
    if changed:
        keep = {w: e for w, e in sorted(found.items()) if e["tag"] is not None}
        try:
            write_bytes(cache_path(layout, dump),
                        json.dumps({"dump": dump, "summaries": keep}, sort_keys=True, default=str).encode())
        except OSError as exc:   # a cache: the next run reads the summaries again
            log.warning("dump %s: the record of its summaries could not be written (%s)", dump, exc)
    return {w: {f: e.get(f) for f in FIELDS} for w, e in found.items()}


def finished_archives(lake: str | CorpusLayout, dump: str) -> list[tuple[str, dict]]:
    """(archive name, its summary's FIELDS) of the dump's archives whose extraction
    finished (not ``failed``) and gave a documents file, in name order."""
    layout = lake if isinstance(lake, CorpusLayout) else CorpusLayout(lake)
    documents = layout.listing(layout.lake.dir("documents", dump), ".parquet")
    fields = summary_fields(layout, dump)
    return [(w, s) for w, s in sorted(fields.items()) if s.get("status") != "failed" and w in documents]

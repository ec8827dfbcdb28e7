"""Done marks: what a plan needs of each summary, in names a listing gives.

    <lake>/done/dump=<DUMP>/<warc-name>/<fingerprint>~<identity key>~<summary tag>

An archive's summary is the record of what is done; its mark is an empty file written after
it, naming the summary's config fingerprint, a digest of its input identity and a tag of the
summary itself (its MD5 on an object store: what the listing's ETag of a whole PUT is; its
size and mtime in nanoseconds on a local lake). A mark counts only while its tag is the one
the listing gives for the summary, so a summary rewritten or edited since (another run, by
hand) has no valid mark and is read. One listing of the summaries and one of the marks
decide a dump's done archives without reading one summary.

Only ``complete`` and ``salvaged`` summaries get a mark: a ``failed`` one is read, and redone.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import posixpath
from dataclasses import dataclass, field

DONE_STATUSES = ("complete", "salvaged")
FOLDER = "done"


def identity_key(identity: dict | None) -> str:
    """A short digest of an input identity (size, mtime, ETag...), stable across runs."""
    blob = json.dumps(identity or {}, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def summary_md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def mark_name(summary: dict, tag: str) -> str:
    return f"{summary.get('config_fingerprint')}~{identity_key(summary.get('input_identity'))}~{tag}"


@dataclass(frozen=True)
class Mark:
    fingerprint: str
    identity_key: str
    tag: str

    @classmethod
    def parse(cls, name: str) -> "Mark | None":
        parts = name.split("~")
        return cls(*parts) if len(parts) == 3 and all(parts) else None


@dataclass
class Listed:
    """One archive in the listings: its summary's tag (None: the listing gives none that a
    mark can match) and its marks."""
    tag: str | None = None
    summary: bool = False
    marks: list[Mark] = field(default_factory=list)

    def valid_mark(self) -> Mark | None:
        """The mark written for the summary that is there now, if any."""
        if not self.summary or self.tag is None:
            return None
        return next((m for m in self.marks if m.tag == self.tag), None)


def local_tag(path: str) -> str:
    st = os.stat(path)
    return f"{st.st_size}-{st.st_mtime_ns}"


def listed_tag(info: dict) -> str | None:
    """The tag of a summary as an object store's listing gives it: the MD5 its ETag or
    ``md5Hash`` holds (an ETag that is not an MD5, as of an encrypted object, gives none)."""
    etag = str(info.get("ETag") or info.get("etag") or "").strip('"').lower()
    if len(etag) == 32 and all(c in "0123456789abcdef" for c in etag):
        return etag
    md5 = info.get("md5Hash")
    if md5:
        try:
            return base64.b64decode(md5).hex()
        except (binascii.Error, ValueError):
            return None
    return None


def list_local(summaries_dir: str, marks_dir: str) -> dict[str, Listed]:
    """The listings of a local lake: one scan of the summaries, one of the marks."""
    out: dict[str, Listed] = {}
    try:
        with os.scandir(summaries_dir) as it:
            for e in it:
                if e.name.endswith(".json") and not e.name.startswith(".") and e.is_file():
                    st = e.stat()
                    out[e.name[:-len(".json")]] = Listed(f"{st.st_size}-{st.st_mtime_ns}", True)
    except FileNotFoundError:
        return out
    try:
        with os.scandir(marks_dir) as it:
            archives = [e.name for e in it if e.is_dir()]
    except FileNotFoundError:
        return out
    for name in archives:
        if name not in out:
            continue
        try:
            marks = os.listdir(os.path.join(marks_dir, name))
        except FileNotFoundError:   # removed meanwhile: no mark
            continue
        out[name].marks = [m for m in map(Mark.parse, marks) if m is not None]
    return out


def list_remote(fs, summaries_dir: str, marks_dir: str) -> dict[str, Listed]:
    """The listings of a lake on an object store: each one recursive listing (pages of up to
    1,000 names on S3), never a request per archive."""
    out: dict[str, Listed] = {}
    for path, info in _find(fs, summaries_dir).items():
        base = posixpath.basename(path)
        if posixpath.dirname(path).rstrip("/") == summaries_dir.rstrip("/") and base.endswith(".json") \
                and info.get("type") != "directory":
            out[base[:-len(".json")]] = Listed(listed_tag(info), True)
    prefix = marks_dir.rstrip("/") + "/"
    for path in _find(fs, marks_dir):
        rel = path[len(prefix):] if path.startswith(prefix) else ""
        name, _, mark = rel.rpartition("/")
        parsed = Mark.parse(mark)
        if name in out and parsed is not None:
            out[name].marks.append(parsed)
    return out


def _find(fs, path: str) -> dict:
    """Everything under ``path`` with its details, freshly listed (none: an empty dict)."""
    try:
        found = fs.find(path, detail=True, withdirs=False)
    except FileNotFoundError:
        return {}
    finally:   # what the listing cached (the folder and those below it) would answer later looks instead
        fs.invalidate_cache(path)
        for cached in [k for k in getattr(fs, "dircache", {}) if k.startswith(path.rstrip("/") + "/")]:
            fs.dircache.pop(cached, None)
    return {fs._strip_protocol(k): v for k, v in found.items()}

"""Finding a dump's archives and telling whether one changed.

An input is a local path or any fsspec URL (http(s)://, s3://, ...). A dump's inputs come
from files, directories, globs, or a Common Crawl style ``warc.paths[.gz]`` listing whose
relative entries are resolved against a base URL.
"""
from __future__ import annotations

import glob
import gzip
import os

import fsspec

from warclake.tasks.archive.reader import TransientInputError
from warclake.tasks.archive.remote_stream import (
    DEFAULT_RESUMES,
    DEFAULT_TIMEOUT,
    RemoteStream,
    http_head,
    http_request,
)

ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz", ".wet", ".wet.gz", ".wat", ".wat.gz",
                    ".warc.wet.gz", ".warc.wat.gz")


def is_url(s: str) -> bool:
    return "://" in s


def is_http(s: str) -> bool:
    return s.lower().startswith(("http://", "https://"))


def is_archive_name(name: str) -> bool:
    return name.lower().split("?", 1)[0].endswith(ARCHIVE_SUFFIXES)


def is_paths_listing(name: str) -> bool:
    low = name.lower()
    return low.endswith((".paths", ".paths.gz"))


def read_paths_listing(listing: str, base_url: str | None = None) -> list[str]:
    """Entries of a ``warc.paths(.gz)`` file, made absolute against ``base_url``.

    Without a base URL, relative entries resolve against the listing's own folder
    (for a local copy of a dump) -- Common Crawl's are relative to its data host.
    """
    if is_http(listing):
        with RemoteStream(listing) as resp:   # resumed when cut, never taken short
            raw = resp.read()
    else:
        if not is_url(listing) and not os.path.exists(listing):
            raise FileNotFoundError(f"input {listing!r} does not exist")
        with fsspec.open(listing, "rb") as fh:
            raw = fh.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    entries = [ln.strip() for ln in raw.decode("utf-8").splitlines() if ln.strip() and not ln.startswith("#")]
    base = base_url if base_url is not None else _parent(listing)
    return [e if is_url(e) or os.path.isabs(e) else _join(base, e) for e in entries]


def _parent(p: str) -> str:
    return p.rsplit("/", 1)[0] if is_url(p) else os.path.dirname(os.path.abspath(p))


def _join(base: str, rel: str) -> str:
    if is_url(base):
        return base.rstrip("/") + "/" + rel.lstrip("/")
    return os.path.join(base, rel)


def resolve_inputs(specs: list[str], base_url: str | None = None) -> list[str]:
    """Expand files, directories, globs and paths listings into archive paths/URLs.

    Order is preserved, duplicates dropped. A spec that matches nothing raises
    FileNotFoundError naming it: a typo must not look like an empty dump.
    """
    out: list[str] = []
    for spec in specs:
        found = _expand(spec, base_url)
        if not found:
            raise FileNotFoundError(_nothing_found(spec))
        out.extend(found)
    seen, unique = set(), []
    for p in out:
        if p not in seen:
            seen.add(p)
            unique.append(p)
    return unique


def _nothing_found(spec: str) -> str:
    """Why a spec gave no archive, in the words a user needs to fix it."""
    if is_paths_listing(spec):
        return f"the listing {spec!r} names no archives"
    if any(ch in spec for ch in "*?["):
        return f"no file matches {spec!r}"
    if os.path.isdir(spec):
        return (f"no archives in folder {spec!r} (looked for names ending in "
                f"{', '.join(ARCHIVE_SUFFIXES[:4])}, ...)")
    return f"input {spec!r} does not exist"


def _expand(spec: str, base_url: str | None) -> list[str]:
    if is_paths_listing(spec):
        return read_paths_listing(spec, base_url)
    if is_url(spec):
        if any(ch in spec for ch in "*?["):
            fs, _ = fsspec.core.url_to_fs(spec)
            return sorted(fs.unstrip_protocol(p) for p in fs.glob(spec) if is_archive_name(p))
        return [spec]
    if os.path.isdir(spec):
        found: list[str] = []
        for root, _, names in os.walk(spec):
            found.extend(os.path.join(root, n) for n in names if is_archive_name(n))
        return sorted(os.path.abspath(p) for p in found)
    if any(ch in spec for ch in "*?["):
        return sorted(os.path.abspath(p) for p in glob.glob(spec, recursive=True) if os.path.isfile(p))
    if os.path.exists(spec):
        return [os.path.abspath(spec)]
    return []


def input_identity(path: str, timeout: float = DEFAULT_TIMEOUT) -> dict:
    """What tells that an input changed: size plus mtime (local) or ETag/Last-Modified (remote)."""
    if not is_url(path):
        st = os.stat(path)
        return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}
    if is_http(path):
        h = http_head(path, timeout)   # over a kept-alive connection: a plan asks thousands
        ident: dict[str, int | str | None] = {"size": int(h["Content-Length"]) if h.get("Content-Length") else None}
        for key in ("ETag", "Last-Modified"):
            if h.get(key):
                ident[key.lower().replace("-", "_")] = h[key]
        return ident
    fs, p = fsspec.core.url_to_fs(path)
    info = fs.info(p)
    ident = {"size": info.get("size")}
    for key in ("ETag", "etag", "LastModified", "last_modified", "mtime", "Last-Modified"):
        if info.get(key) is not None:
            ident[key.lower().replace("-", "_")] = str(info[key])
    return ident


def open_input(path: str, timeout: float = DEFAULT_TIMEOUT, resumes: int = DEFAULT_RESUMES,
               size: int | None = None):
    """A binary stream of the archive; remote files are streamed, not downloaded whole.

    ``size`` is the size :func:`input_identity` found. http(s) inputs are read by
    :class:`RemoteStream` (timeouts, Range resumes, a body short of ``size`` or of its
    Content-Length is an error, never an end); other URLs by fsspec, and a stream that ends
    before ``size`` raises :class:`TransientInputError` there too.
    """
    if not is_url(path):
        return open(path, "rb", buffering=1 << 20)
    if is_http(path):
        return RemoteStream(path, timeout=timeout, resumes=resumes, expected_size=size)
    fs, p = fsspec.core.url_to_fs(path)
    try:
        fh = fs.open(p, "rb", block_size=1 << 22)
    except FileNotFoundError as exc:  # fsspec's word for any failed lookup: let retries decide
        raise TransientInputError(f"opening {path} failed: {exc}") from exc
    return fh if size is None else SizeCheckedStream(fh, size, path)


class SizeCheckedStream:
    """Passes reads through; an end before ``size`` bytes, or bytes past it, is transient
    (the object changed or the store gave a short read), never the archive's end."""

    def __init__(self, raw, size: int, name: str):
        self._raw, self.size, self.name, self.pos = raw, size, name, 0

    def read(self, n: int = -1) -> bytes:
        data = self._raw.read(n)
        self.pos += len(data)
        if (not data and n != 0 and self.pos < self.size) or self.pos > self.size:
            raise TransientInputError(f"{self.name}: the stream gave {self.pos} bytes where its size is "
                                      f"{self.size} (it changed meanwhile, or the read was cut short)")
        return data

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def open_at(path: str, offset: int, timeout: float = DEFAULT_TIMEOUT):
    """A stream of the input from byte ``offset`` on, to read the record there: a seek for
    files, a ``Range`` request over HTTP (a server that ignores it is an error, not the
    wrong bytes)."""
    if not is_url(path):
        fh = open(path, "rb")
        fh.seek(offset)
        return fh
    if is_http(path):
        resp = http_request("GET", path, timeout, {"Range": f"bytes={offset}-"})
        if resp.status != 206 and offset:
            resp.close()
            raise OSError(f"{path}: the server does not answer Range requests (HTTP {resp.status}), "
                          f"so the record at {offset} cannot be read alone")
        return resp
    fs, p = fsspec.core.url_to_fs(path)
    fh = fs.open(p, "rb")
    fh.seek(offset)
    return fh

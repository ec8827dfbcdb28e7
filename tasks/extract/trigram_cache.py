"""The first pass's penalty table, kept in a file of the user's cache folder so that a worker
reads it (~10 ms) instead of building it from lingua's embedded models (~1 s per process).

Where: ``$WARCLAKE_CACHE_DIR``, else ``$XDG_CACHE_HOME/warclake``, else ``~/.cache/warclake``.
The file's name is a digest of what the table is made from: the lingua extension module's
path, size and modification time, the languages and their order, the penalty scale and
this file format. Another lingua (or another build of it) names another file.

Safety: the file holds a digest of its contents, checked on every read; a file that is
short, long, foreign or damaged is ignored and rewritten. It is written under a name of its
own, then renamed into place, so no process ever reads a half-written table. Any failure to
read or write the cache only costs the build, never the table.
"""
from __future__ import annotations

import hashlib
import os
import struct
import tempfile
from pathlib import Path

import numpy as np

MAGIC = b"WLTRIGR1"      # format of the file; part of its name's digest too
_HEAD = struct.Struct("<8sQQ32s")   # magic, keys, languages, blake2b-256 of the payload


def cache_dir() -> Path:
    if os.environ.get("WARCLAKE_CACHE_DIR"):
        return Path(os.environ["WARCLAKE_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "warclake"


def cache_path(source: Path, langs: tuple[str, ...], scale: int, missing: int) -> Path:
    st = source.stat()
    ident = repr((MAGIC, str(source.resolve()), st.st_size, st.st_mtime_ns, langs, scale, missing))
    name = hashlib.blake2b(ident.encode(), digest_size=12).hexdigest()
    return cache_dir() / f"trigrams-{name}.bin"


def load(path: Path, n_langs: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(keys, penalties) from ``path``, or None when it is missing or not a whole, sound table."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) < _HEAD.size:
        return None
    magic, n_keys, langs, digest = _HEAD.unpack_from(data)
    payload = memoryview(data)[_HEAD.size:]
    if magic != MAGIC or langs != n_langs or len(payload) != n_keys * (8 + n_langs):
        return None
    if hashlib.blake2b(payload, digest_size=32).digest() != digest:
        return None
    keys = np.frombuffer(payload, dtype="<i8", count=n_keys)
    penalty = np.frombuffer(payload, dtype=np.uint8, offset=8 * n_keys).reshape(n_keys, n_langs)
    if n_keys and not (keys[1:] > keys[:-1]).all():
        return None
    return keys, penalty


def store(path: Path, keys: np.ndarray, penalty: np.ndarray) -> None:
    """Write the table to ``path`` whole or not at all (a rename into place); errors pass silently."""
    payload = np.ascontiguousarray(keys, dtype="<i8").tobytes() + np.ascontiguousarray(penalty, dtype=np.uint8).tobytes()
    head = _HEAD.pack(MAGIC, len(keys), penalty.shape[1], hashlib.blake2b(payload, digest_size=32).digest())
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".part", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(head)
            fh.write(payload)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass

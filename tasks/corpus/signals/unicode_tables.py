"""The per-code-point tables the compiled corpus passes are configured with, stored
compactly for one version of Python's Unicode data.

Building them from ``unicodedata`` and the ``str`` methods costs about 0.07 CPU s, paid by
every process that signs documents; reading them from ``unicode_tables_<version>.bin``
beside this module costs a few milliseconds. The file is used only when its version is
``unicodedata.unidata_version`` (the data ``str.lower``, ``str.isalpha`` and
``unicodedata`` answer from); under another version the tables are built in Python, from
the same definitions: ``quality.class_table_built``, ``quality.lower_table_built`` and
``normalise.simple_nfkc_lower_table_built``. ``tests/corpus/test_corpus_unicode_tables.py`` checks
that the stored tables equal what the definitions give.

``python -m warclake.tasks.corpus.signals.unicode_tables`` writes the file for the running Python.
"""
from __future__ import annotations

import os
import struct
import sys
import unicodedata
import zlib
from functools import lru_cache

BMP = 0x10000
_SEP = "\0"     # between the stored NFKC forms (none holds it)


def path(version: str | None = None) -> str:
    """The file for ``version`` of the Unicode data (this Python's by default)."""
    version = version or unicodedata.unidata_version
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), f"unicode_tables_{version}.bin")


@lru_cache(maxsize=1)
def stored() -> tuple[bytes, list, list] | None:
    """(class bytes, lower case per code point, NFKC lower form per code point) for this
    Python's Unicode data, or None when no file was written for it (or it cannot be read:
    one warning line)."""
    try:
        with open(path(), "rb") as fh:
            return _decode(zlib.decompress(fh.read()))    # zlib's checksum catches a damaged file
    except FileNotFoundError:
        return None
    except (OSError, ValueError, struct.error, zlib.error) as exc:   # built instead, as for another version
        sys.stderr.write(f"warclake: the stored Unicode tables are unreadable ({exc}); building them\n")
        return None


def _decode(blob: bytes) -> tuple[bytes, list, list]:
    import numpy as np

    classes, at = blob[:BMP], BMP
    lower = (np.frombuffer(blob, "<i4", BMP, at) + np.arange(BMP, dtype=np.int32)).tolist()
    at += 4 * BMP
    n_none, n_other = struct.unpack_from("<II", blob, at)
    at += 8
    none_at = np.frombuffer(blob, "<u2", n_none, at).tolist()
    at += 2 * n_none
    other_at = np.frombuffer(blob, "<u2", n_other, at).tolist()
    at += 2 * n_other
    others = blob[at:].decode("utf-8").split(_SEP)
    if len(others) != n_other:
        raise ValueError(f"{path()}: {len(others)} NFKC forms, not {n_other}")
    # every other code point is its own form: the characters in order, the surrogates between
    plane = np.concatenate((np.arange(0xD800, dtype="<u4"), np.arange(0xE000, BMP, dtype="<u4")))
    nfkc: list[str | None] = list(plane.tobytes().decode("utf-32-le"))
    nfkc[0xD800:0xD800] = [None] * 0x800
    for i in none_at:
        nfkc[i] = None
    for i, form in zip(other_at, others):
        nfkc[i] = form
    return classes, lower, nfkc


def encode(classes: bytes, lower: list, nfkc: list) -> bytes:
    """The tables as bytes: the classes, each lower case less its code point, where the NFKC
    table has None, where a form is not the code point's own character and those forms."""
    import numpy as np

    if len(classes) != BMP or len(lower) != BMP or len(nfkc) != BMP:
        raise ValueError("every table must cover the Basic Multilingual Plane")
    none_at = [i for i, x in enumerate(nfkc) if x is None]
    other_at = [i for i, x in enumerate(nfkc) if x is not None and x != chr(i)]
    if any(not nfkc[i] or _SEP in nfkc[i] for i in other_at):
        raise ValueError("an NFKC form is empty or holds the separator")
    return (bytes(classes) + (np.asarray(lower, np.int64) - np.arange(BMP)).astype("<i4").tobytes()
            + struct.pack("<II", len(none_at), len(other_at))
            + np.asarray(none_at, "<u2").tobytes() + np.asarray(other_at, "<u2").tobytes()
            + _SEP.join(nfkc[i] for i in other_at).encode("utf-8"))


def built() -> tuple[bytes, list, list]:
    """The tables from their definitions, under this Python's Unicode data."""
    from warclake.tasks.corpus.signals.normalise import simple_nfkc_lower_table_built
    from warclake.tasks.corpus.signals.quality import class_table_built, lower_table_built

    return class_table_built().tobytes(), lower_table_built(), simple_nfkc_lower_table_built()


def write() -> str:
    """Write the file for this Python's Unicode data; returns its path."""
    out = path()
    tables = built()
    blob = encode(*tables)
    if _decode(blob) != tables:
        raise ValueError("the encoded tables do not read back equal")
    with open(out + ".tmp", "wb") as fh:
        fh.write(zlib.compress(blob, 9))
    os.replace(out + ".tmp", out)
    return out


if __name__ == "__main__":
    print(write())

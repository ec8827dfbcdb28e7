"""A lake document's text as paragraphs, and the normalised forms that are hashed.

The lake stores paragraphs as ``<css-path>\\x1c<text>`` joined by a blank line, with link
text between ``\\x02`` and ``\\x03``. Hashes are taken over the text with the path and the
markers removed, Unicode NFKC, lower case and whitespace runs as one space, so the same
sentence under another template or link markup hashes alike.
"""
from __future__ import annotations

import hashlib
import unicodedata
from functools import lru_cache

from warclake.tasks.extract.paragraph import LINK_END, LINK_START, PARA_SEP, PATH_SEP

_MARKERS = str.maketrans("", "", LINK_START + LINK_END)


def split_paragraphs(text: str | None) -> list[tuple[str, str]]:
    """(css path, text with link markers) per paragraph; the path is '' when absent."""
    if not text:
        return []
    out = []
    for p in text.split(PARA_SEP):
        path, sep, body = p.partition(PATH_SEP)
        out.append((path, body) if sep else ("", p))
    return out


def plain(body: str) -> str:
    """The paragraph's text without link markers."""
    return body.translate(_MARKERS)


def nfkc_lower(body: str) -> str:
    """NFKC, then lower case (markers and whitespace kept)."""
    return unicodedata.normalize("NFKC", body).lower()


def normalise(body: str) -> str:
    """The form a paragraph is compared in: NFKC, lower case, markers removed, whitespace
    collapsed."""
    return " ".join(plain(nfkc_lower(body)).split())


def normalised_document(text: str) -> str:
    """The whole lake text in NFKC and lower case (paths, separators and markers kept).
    ASCII text is in NFKC already."""
    return text.lower() if text.isascii() else nfkc_lower(text)


def simple_nfkc_lower_table() -> list:
    """:func:`simple_nfkc_lower_table_built`, stored for this Python's Unicode data
    (``unicode_tables``), else built (once per process)."""
    from warclake.tasks.corpus.signals import unicode_tables

    stored = unicode_tables.stored()
    return stored[2] if stored is not None else simple_nfkc_lower_table_built()


@lru_cache(maxsize=1)
def simple_nfkc_lower_table_built() -> list:
    """Per BMP code point, ``normalize("NFKC", c).lower()`` (at most 8 characters) when
    every text made only of such characters normalises character by character, else None.
    Kept: characters whose decomposition starts with a base character (combining class
    0) that never composes with a character before it (not the second of a canonical pair,
    a Hangul vowel or final consonant), whose NFKC form holds no such character either, and
    no capital sigma (its lower case depends on its neighbours). In such a text every
    character's decomposition starts with a character that blocks the one before from
    composing or reordering across it, so its NFKC is that of each character in turn."""
    seconds = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    for cp in range(0x20000):     # later planes hold only one-character decompositions
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<") and len(d.split()) == 2:
            seconds.add(int(d.split()[1], 16))
    out: list[str | None] = []
    for cp in range(0x10000):
        c = chr(cp)
        if 0xD800 <= cp < 0xE000:
            out.append(None)
            continue
        n = unicodedata.normalize("NFKC", c)
        first = unicodedata.normalize("NFKD", c)[:1]
        low = n.lower()
        ok = (0 < len(low) <= 8 and "\u03a3" not in n and unicodedata.combining(first) == 0
              and ord(first) not in seconds and not any(ord(x) in seconds or unicodedata.combining(x) for x in n[:1]))
        out.append(low if ok else None)
    return out


def hash64(s: str) -> int:
    """A stable signed 64-bit hash (BLAKE2b), the type DuckDB and parquet store as BIGINT."""
    return int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little", signed=True)


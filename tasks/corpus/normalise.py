"""A lake document's text as paragraphs, and the normalised forms that are hashed.

The lake stores paragraphs as ``<css-path>\\x1c<text>`` joined by a blank line, with link
text between ``\\x02`` and ``\\x03``. Hashes are taken over the text with the path and the
markers removed, Unicode NFKC, lower case and whitespace runs as one space, so the same
sentence under another template or link markup hashes alike.
"""
from __future__ import annotations

import hashlib
import unicodedata

from warclake.tasks.paragraph import LINK_END, LINK_START, PARA_SEP, PATH_SEP

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


def normalise(body: str) -> str:
    """The form a paragraph is compared in: NFKC, lower case, markers removed, whitespace
    collapsed."""
    return " ".join(plain(unicodedata.normalize("NFKC", body).lower()).split())


def normalised_document(text: str) -> str:
    """The whole lake text in NFKC and lower case (paths, separators and markers kept).
    ASCII text is in NFKC already."""
    return text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).lower()


def hash64(s: str) -> int:
    """A stable signed 64-bit hash (BLAKE2b), the type DuckDB and parquet store as BIGINT."""
    return int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little", signed=True)


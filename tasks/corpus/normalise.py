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
    """The form a paragraph is compared in: NFKC, lower case, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", plain(body)).lower().split())


def hash64(s: str) -> int:
    """A stable signed 64-bit hash (BLAKE2b), the type DuckDB and parquet store as BIGINT."""
    return int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little", signed=True)


def clean_paragraphs(paras: list[tuple[str, str]], labels: list[str] | None) -> list[tuple[int, str, str]]:
    """(index from 1, path, body) of the paragraphs (as ``split_paragraphs`` gives them) the
    corpus starts from: the ones labelled 'good' when the document has labels, all of them
    when it has none."""
    return [(i, path, body) for i, (path, body) in enumerate(paras, 1)
            if labels is None or (i - 1 < len(labels) and labels[i - 1] == "good")]

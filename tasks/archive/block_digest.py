"""WARC-Block-Digest: the one checksum a plain (uncompressed) WARC record carries.

A gzip member's CRC covers a record in a .warc.gz; in a plain .warc a changed byte inside
a block is only visible against this digest ("sha1:BASE32", as Common Crawl writes it;
also hex, and sha256/sha512/md5).
"""
from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Iterable

_ALGORITHMS = {"sha1", "sha256", "sha512", "md5"}


def block_digest_ok(declared: str | None, block: bytes | Iterable[bytes]) -> bool | None:
    """True/False when ``declared`` can be checked against ``block`` (bytes, or its pieces
    in order); None when there is no digest or its algorithm or encoding is not one we
    know (not evidence of damage)."""
    if not declared or ":" not in declared:
        return None
    algo, _, value = declared.partition(":")
    algo, value = algo.strip().lower().replace("-", ""), value.strip()
    if algo not in _ALGORITHMS:
        return None
    h = hashlib.new(algo)
    for piece in (block,) if isinstance(block, (bytes, bytearray, memoryview)) else block:
        h.update(piece)
    digest = h.digest()
    try:
        if len(value) == 2 * len(digest):
            return binascii.unhexlify(value) == digest
        return base64.b32decode(value.upper() + "=" * (-len(value) % 8)) == digest
    except (binascii.Error, ValueError):
        return None

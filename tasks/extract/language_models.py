"""lingua's own trigram models, read from the installed lingua package (no network, no copy).

lingua (the Rust build on PyPI) carries its language models inside its extension module as
brotli-compressed JSON files (``trigrams.json.br`` per language: relative frequencies as
fractions, each with the trigrams that have it). The files are found through the module's
relocations: each embedded file is a (path, contents) pair of slices, and the ones whose
path is ``trigrams.json.br`` hold a trigram model; the JSON names its language. Nothing
here depends on lingua's Python API, only on the file: should a lingua build lay its files
out otherwise, :func:`trigram_models` raises and the first pass stays off.
"""
from __future__ import annotations

import json
import math
import mmap
import re
import struct
from pathlib import Path

import numpy as np

SCALE = 8         # penalty units per nat: -ln(p) * SCALE, rounded
MISSING = 255     # the penalty of a trigram a language's model lacks (others have it)


def _extension_path() -> Path:
    import lingua

    folder = Path(lingua.__file__).parent
    found = sorted(folder.glob("lingua*.so")) + sorted(folder.glob("lingua*.pyd"))
    if not found:
        raise FileNotFoundError(f"no lingua extension module in {folder}")
    return found[0]


def _embedded_files(data, name: bytes):
    """Contents of the files called ``name`` embedded in an x86-64 ELF module."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError("not a 64-bit ELF module")
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    entsize, count, names_at = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQ", data, shoff + i * entsize) for i in range(count)]
    names_off = sections[names_at][4]

    def section_name(i: int) -> bytes:
        start = names_off + sections[i][0]
        return bytes(data[start:data.find(b"\0", start)])

    loaded = [(addr, off, size) for (_, kind, _, addr, off, size) in sections if addr and kind != 8]

    def file_offset(vaddr: int) -> int:
        for addr, off, size in loaded:
            if addr <= vaddr < addr + size:
                return vaddr - addr + off
        return -1   # not in the file (.bss) or not an address

    rela = next(i for i in range(count) if section_name(i) == b".rela.dyn")
    _, _, _, _, off, size = sections[rela]
    relative = {r_off: addend for r_off, info, addend in struct.iter_unpack("<QQq", data[off:off + size])
                if info & 0xFFFFFFFF == 8}   # R_X86_64_RELATIVE: a pointer the loader fills in
    for where, target in relative.items():
        # a (path, contents) pair of slices: path pointer, its length, contents pointer, its length;
        # only these few bytes are read (scanning the module would map all of its 90 MB)
        if where + 16 not in relative:
            continue
        at, path_at, start = file_offset(where), file_offset(target), file_offset(relative[where + 16])
        if min(at, path_at, start) < 0 or struct.unpack_from("<Q", data, at + 8)[0] != len(name):
            continue
        if data[path_at:path_at + len(name)] != name:
            continue
        length = struct.unpack_from("<Q", data, at + 24)[0]
        yield bytes(data[start:start + length])


def trigram_models(names: dict[str, str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``names``: lingua's language name (``ENGLISH``) -> our code; returns code -> (trigram
    keys, their penalties), for every language asked for (raises when one is missing)."""
    with open(_extension_path(), "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return _models(data, names)


def _models(data, names: dict[str, str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    import brotli

    out = {}
    for blob in _embedded_files(data, b"trigrams.json.br"):
        raw = brotli.decompress(blob)
        # the language comes first in the file: skip the others without parsing them
        head = re.match(rb'\{"language":"([A-Z_]+)"', raw)
        code = names.get(head.group(1).decode()) if head else None
        if code is None:
            continue
        grams, pens, counts = [], [], []
        for fraction, listed in json.loads(raw)["ngrams"].items():
            num, den = fraction.split("/")
            grams.append(listed)
            pens.append(min(MISSING - 1, round(-math.log(int(num) / int(den)) * SCALE)))
            counts.append((len(listed) + 1) // 4)   # trigrams of three code points, one space apart
        cps = np.frombuffer(" ".join(grams).encode("utf-32-le"), dtype="<u4")
        cps = cps[cps != 32].reshape(-1, 3).astype(np.int64)
        out[code] = ((cps[:, 0] << 42) | (cps[:, 1] << 21) | cps[:, 2],
                     np.repeat(np.array(pens, dtype=np.uint8), counts))
    missing = sorted(set(names.values()) - set(out))
    if missing:
        raise ValueError(f"no trigram model found in lingua for {missing}")
    return out


def trigram_key(gram: str) -> int:
    """Three code points in one integer (21 bits each)."""
    return (ord(gram[0]) << 42) | (ord(gram[1]) << 21) | ord(gram[2])


def penalty_table(langs: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(sorted trigram keys int64, penalties uint8 [trigram, language of ``langs``]): each
    language's -ln(frequency) * SCALE of each trigram any of them has, MISSING where its
    model lacks it. Read from the user's cache when a sound copy made from this lingua is
    there (:mod:`trigram_cache`), else built and stored there."""
    from warclake.tasks.extract import trigram_cache

    path = trigram_cache.cache_path(_extension_path(), tuple(langs), SCALE, MISSING)
    table = trigram_cache.load(path, len(langs))
    if table is None:
        table = build_penalty_table(langs)
        trigram_cache.store(path, *table)
    return table


def build_penalty_table(langs: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`penalty_table` made from lingua's embedded models."""
    from lingua import IsoCode639_1, Language

    names = {Language.from_iso_code_639_1(getattr(IsoCode639_1, c.upper())).name: c for c in langs}
    models = trigram_models(names)
    keys_per, pens_per, cols = [], [], []
    for col, code in enumerate(langs):
        keys, pens = models.pop(code)
        keys_per.append(keys)
        pens_per.append(pens)
        cols.append(np.full(len(keys), col, dtype=np.int16))
    every = np.concatenate(keys_per)
    keys, rows = np.unique(every, return_inverse=True)
    table = np.full((len(keys), len(langs)), MISSING, dtype=np.uint8)
    table[rows, np.concatenate(cols)] = np.concatenate(pens_per)
    return keys, table

"""A labelled charset set built from real text: every chardet-corpus file decoded with its true
label, re-encoded into each web code page that can hold it, and wrapped as a page without a
declaration, with a correct ``<meta charset>``, and under a wrong HTTP header.

Deterministic (no randomness, sorted inputs), generated on demand and never stored. The split
is by source file (``split_of`` of gold.py on the file's id), so one text never sits in both
the tuning and the held-back part, whatever code page it was re-encoded into.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from warclake.tasks.evaluation.gold import split_of

# Target code pages (Python codec, WHATWG name) and the family they are reported under.
TARGETS = {
    "windows-1252": ("cp1252", "latin-western"), "iso-8859-15": ("iso8859_15", "latin-western"),
    "iso-8859-2": ("iso8859_2", "latin-central"), "windows-1250": ("cp1250", "latin-central"),
    "iso-8859-16": ("iso8859_16", "latin-central"),
    "iso-8859-4": ("iso8859_4", "baltic"), "iso-8859-13": ("iso8859_13", "baltic"),
    "windows-1257": ("cp1257", "baltic"),
    "windows-1254": ("cp1254", "turkish"), "iso-8859-9": ("iso8859_9", "turkish"),
    "windows-1251": ("cp1251", "cyrillic"), "koi8-r": ("koi8_r", "cyrillic"),
    "iso-8859-5": ("iso8859_5", "cyrillic"), "iso-8859-7": ("iso8859_7", "greek"),
    "windows-1253": ("cp1253", "greek"), "windows-1255": ("cp1255", "hebrew"),
    "windows-1256": ("cp1256", "arabic"), "windows-874": ("cp874", "thai"),
    "windows-31j": ("cp932", "cjk-ja"), "euc-jp": ("euc_jp", "cjk-ja"),
    "gbk": ("gbk", "cjk-zh"), "big5": ("big5", "cjk-zh"), "euc-kr": ("euc_kr", "cjk-ko"),
}
FAMILY = {name: fam for name, (_, fam) in TARGETS.items()}
VARIANTS = ("none", "meta", "wrong-header")
# A non-Latin code page is only used for text written in a non-Latin script (an English text
# with one pound sign re-encoded into Big5 or Greek is not a page anyone serves).
MIN_SCRIPT_LETTERS = 20
_SCRIPT = {"cyrillic": r"[\u0400-\u04ff]", "greek": r"[\u0370-\u03ff]", "hebrew": r"[\u0590-\u05ff]",
           "arabic": r"[\u0600-\u06ff]", "thai": r"[\u0e00-\u0e7f]",
           "cjk-ja": r"[\u3040-\u30ff\u4e00-\u9fff]", "cjk-zh": r"[\u4e00-\u9fff]",
           "cjk-ko": r"[\uac00-\ud7a3]"}
# The text kept from each source: enough for the cascade's 20 KiB window.
MAX_CHARS = 8000

_DECLARATION = re.compile(
    r"<meta\b[^>]*charset[^>]*>|<\?xml[^>]*\?>|@charset\s+\"[^\"]*\"\s*;?", re.I)


@dataclass(frozen=True)
class Case:
    id: str          # source file id, target code page and variant
    source: str      # the chardet corpus file it came from
    split: str       # 'tuning' or 'heldout', from the source id
    charset: str     # true WHATWG name
    family: str
    variant: str     # none | meta | wrong-header
    body: bytes
    content_type: str | None
    text: str        # what a correct decoder returns


def _wrong_header(name: str) -> str:
    # The usual wrong default of servers; for the Western pages, the Central one.
    return "windows-1250" if FAMILY[name] == "latin-western" else "iso-8859-1"


def source_texts(root: Path) -> Iterator[tuple[str, str]]:
    """(id, text) of every chardet-corpus file that decodes with its true label, declarations
    removed (the cases add their own)."""
    from tools.measure.charset import _TRUE_CODEC, chardet_files, true_encoding

    for folder, path in chardet_files(root):
        label = true_encoding(folder)
        try:
            text = path.read_bytes().decode(_TRUE_CODEC.get(label, label))
        except (LookupError, UnicodeDecodeError):
            continue
        text = _DECLARATION.sub("", text.lstrip("\ufeff"))[:MAX_CHARS]
        if not text.isascii():
            yield f"{folder}/{path.name}", text


def cases(root: Path, split: str | None = None, variants: tuple[str, ...] = VARIANTS) -> Iterator[Case]:
    for sid, text in source_texts(root):
        part = split_of(sid)
        if split and split != "all" and part != split:
            continue
        for name, (codec, family) in TARGETS.items():
            if family in _SCRIPT and len(re.findall(_SCRIPT[family], text)) < MIN_SCRIPT_LETTERS:
                continue
            try:
                encoded = text.encode(codec)
            except UnicodeEncodeError:
                continue
            for variant in variants:
                decl = f'<meta charset="{name}">' if variant == "meta" else ""
                page = f"<html><head>{decl}<title>page</title></head><body>\n".encode() + encoded \
                    + b"\n</body></html>"
                truth = page.decode(codec)
                ctype = f"text/html; charset={_wrong_header(name)}" if variant == "wrong-header" else "text/html"
                yield Case(f"{sid}|{name}|{variant}", sid, part, name, family, variant, page, ctype, truth)

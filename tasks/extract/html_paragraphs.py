"""HTML to Uzushio paragraphs with selectolax (lexbor).

``extract_paragraphs(html) -> list[Paragraph]``; ``join_paragraphs`` of the result is the
lake's ``text`` column (the data contract: sql/README.md).

Rules (the data contract, in detail):

* Paragraph boundaries: the start and the end of every tag in ``BLOCK_TAGS`` (and ``hr``,
  which only splits). A block nested in another block ends the outer block's current
  text run; text after the inner block, still inside the outer one, is a new paragraph
  with the outer block's path. Text directly under ``body`` (or under inline elements
  only) has the path ``body``.
* Tables as rows: a ``tr`` of ``MIN_ROW_CELLS`` or more cells (``td``/``th``) that are all
  simple is a data row, one paragraph with the row's path: the texts of its cells that are
  not empty, in order, joined by ``ROW_SEP`` (`` | ``); a ``<br>`` in a cell is a space there
  (a row is one line), and each cell's link markers balance on their own. A cell is simple
  when it holds no ``table`` and no pre-like element, at most one run of text (text not all
  whitespace, between the block starts, block ends and ``hr`` inside the cell), no blank
  line (two ``<br>`` with only whitespace text between them) and at most ``MAX_CELL_CHARS``
  characters that are not whitespace. Any other row (a page laid out in a table, a row of
  one cell) is read as blocks, as everywhere else: one paragraph per run.
* Subtrees of ``DROP_TAGS`` (script, style, svg, iframe, forms' select/textarea, ...) are
  skipped, and so are comments; ``head`` and ``title`` never produce paragraphs.
* ``<noscript>``: the page is parsed as a browser running scripts does, so a noscript
  element holds its markup as raw text, skipped. A noscript in ``body`` is read instead,
  as an inline element holding its markup parsed, when it is the page's main text: it
  gives at least ``NOSCRIPT_MIN_PARAGRAPHS`` paragraphs and ``NOSCRIPT_MIN_CHARS``
  characters, and ``NOSCRIPT_RATIO`` times the characters of the rest of the body (a
  forum thread served whole to readers without scripts, beside an empty script shell). A
  fallback line ("enable JavaScript"), a tracking pixel or a copy of text the body
  already shows stays skipped.
* Path: every element from ``body`` to the paragraph's block, inline ones included
  (``body>span>div``), each as ``tag.class1.class2#id``. Classes are split on whitespace
  and kept in document order; ``>``, ``.``, ``#``, whitespace and ASCII control
  characters are removed from tag names, classes and ids so the path stays parseable.
  A path of more than ``MAX_PATH_ELEMENTS`` elements (only broken markup gets there)
  keeps its first and last halves with a ``...`` element between them. Each element is cut
  to ``MAX_SEGMENT_CHARS`` characters (a cut ending in ``.`` or ``#`` drops it).
* Links: text inside ``<a href=...>`` (any value, even empty) is wrapped in
  ``\\x02...\\x03``; ``<a>`` without ``href`` is a named anchor, not a link. Nested links
  give one pair of markers; a link spanning a block is closed at the end of each run and
  reopened in the next, so markers balance in every paragraph. Links without text vanish.
* Whitespace: ``<br>`` (and a newline inside ``pre``-like tags) is a line break. Any run of
  Unicode whitespace and line breaks becomes one character: ``\\n`` if the run held a line
  break, a space otherwise, so text never contains ``\\n\\n``. Whitespace next to a marker
  is moved outside the link (``a <a> b </a> c`` -> ``a \\x02b\\x03 c``). Paragraphs are
  stripped; empty ones (also those of only zero-width characters) are dropped. Stray
  ``\\x01``-``\\x05`` characters in the page are removed; so is a leading BOM.
* Code stays code: inside ``PRE_TAGS`` (all of whose text is one paragraph run or more,
  since they are blocks) spaces and tabs are kept as written: a line's indentation and
  the runs inside it. Each line loses its trailing spaces and tabs, and lines left empty
  are dropped (so ``\\n\\n`` still never occurs); other whitespace follows the rule above.
* ``n_tags``: element start tags walked since the previous emitted paragraph, up to the
  end of this one (``body`` and void elements included, comments and the inside of
  dropped subtrees not). Tags of blocks that produced no text count towards the next
  paragraph.

``warclake.tasks.native`` has a compiled walk giving exactly these paragraphs, used when it
is built and passes its import-time check; the Python walk below is the reference.

The walk follows ``first_child``/``next`` with an explicit stack (no recursion, so
10,000-deep documents are fine). That is fewer Python-level node objects than
``traverse()`` plus parent look-ups, dropped subtrees are never entered, and CSS paths are
built only for the ancestors of emitted paragraphs.
"""
from __future__ import annotations

import re
import sys

from selectolax.lexbor import LexborHTMLParser

from warclake.tasks.extract.paragraph import LINK_END, LINK_START, Paragraph

BLOCK_TAGS = frozenset(
    "address article aside blockquote body caption center dd details dialog dir div dl dt "
    "fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup legend li "
    "listing main menu nav ol p plaintext pre search section summary table tbody td tfoot "
    "th thead tr ul xmp".split()
)
# Newlines in these keep their line structure (code, verse), like <br>.
PRE_TAGS = frozenset("pre listing xmp plaintext".split())
DROP_TAGS = frozenset(
    "applet audio canvas datalist embed frameset head iframe map math noembed noframes "
    "noscript object script select style svg template textarea title video".split()
)
# Void elements never have children: the walk does not look for any.
VOID_TAGS = frozenset(
    "area base basefont bgsound br col frame hr image img input keygen link meta "
    "param source track wbr".split()
)

# Paths of more elements keep the first _PATH_HEAD and the last _PATH_TAIL with "..."
# between: real pages stay far below (max 43 on the gold sets), while 10,000-deep
# broken markup would otherwise give quadratic output.
MAX_PATH_ELEMENTS = 100
_PATH_HEAD = _PATH_TAIL = MAX_PATH_ELEMENTS // 2
# One path element (``tag.classes#id``) keeps at most this many characters: a multi-MB
# class attribute must not become a multi-MB path (real ones stay far below).
MAX_SEGMENT_CHARS = 256

_BR = "\x01"  # line-break sentinel inside a raw run; becomes "\n" when normalised
# A space and a tab of a pre-like block inside a raw run: kept as written (not collapsed).
_SP, _TAB = "\x04", "\x05"


# When a body <noscript> is the page's main text. Measured on the tuning parts of the gold
# sets (8,667 noscripts, 606 with text): the 32 that hold a page's main text (forum
# threads) give 27-175 paragraphs, 2,100-31,000 characters and 50 times or more the text
# of the rest of the body; every other one at most 1.1 times the rest of the body, or one
# line of 46 characters on a page with no other text. The limits sit in that gap.
NOSCRIPT_MIN_PARAGRAPHS = 3
NOSCRIPT_MIN_CHARS = 500
NOSCRIPT_RATIO = 3
# A noscript's raw text runs from its start tag to the first "</noscript" end tag.
_NOSCRIPT = re.compile("<noscript", re.I)
_NOSCRIPT_END = re.compile("</noscript[\t\n\f\r />]", re.I)
_NOSCRIPT_BYTES = re.compile(b"<noscript", re.I)
_NOSCRIPT_END_BYTES = re.compile(b"</noscript[\t\n\f\r />]", re.I)

# Tables as rows (see the module docstring): a row of 2 or more cells is a data row when
# every cell is simple: no table or pre-like element in it, at most one run of text, no
# blank line (two <br> with only whitespace between them) and at most MAX_CELL_CHARS
# characters that are not whitespace. Its cells' texts, joined by ROW_SEP, are one paragraph.
ROW_SEP = " | "
MAX_CELL_CHARS = 1000
MIN_ROW_CELLS = 2

# Kinds of element, as bit flags kept on the stack.
_INLINE, _BLOCK, _LINK, _PRE, _CACHED, _ROW, _CELL = 0, 1, 2, 4, 8, 16, 32
# Dispatch codes for elements that are not plain inline ones.
_C_BLOCK, _C_PRE, _C_DROP, _C_A, _C_BR, _C_VOID, _C_HR, _C_NOSCRIPT = 1, 2, 3, 4, 5, 6, 7, 8
_C_TABLE, _C_TR, _C_CELL = 9, 10, 11   # blocks, with the row rules


# Names for the ids of standard HTML elements, so a path part needs no string decode.
_KNOWN_TAGS = (
    "a abbr acronym address area article aside audio b bdi bdo big blink blockquote body "
    "br button canvas caption center cite code col colgroup data datalist dd del details "
    "dfn dialog dir div dl dt em embed fieldset figcaption figure font footer form h1 h2 "
    "h3 h4 h5 h6 header hgroup hr i iframe img input ins kbd label legend li main map mark "
    "marquee menu meter nav nobr noscript object ol optgroup option output p picture pre progress q "
    "rp rt ruby s samp search section select small source span strike strong sub summary "
    "sup table tbody td textarea tfoot th thead time tr tt u ul var video wbr"
).split()


def _tag_ids() -> tuple[dict[int, int], dict[int, str], int, int]:
    """lexbor's numeric ids for the tags above (static for known HTML tags)."""
    probe = LexborHTMLParser("<body>x<!--c--></body>")
    tid = lambda name: probe.create_node(name).tag_id  # noqa: E731
    codes: dict[int, int] = {}
    for name in VOID_TAGS:
        codes[tid(name)] = _C_VOID
    for name in BLOCK_TAGS:
        codes[tid(name)] = _C_PRE if name in PRE_TAGS else _C_BLOCK
    for name in DROP_TAGS:
        codes[tid(name)] = _C_DROP
    codes[tid("noscript")] = _C_NOSCRIPT  # dropped unless opened (_open_noscripts)
    codes[tid("table")] = _C_TABLE
    codes[tid("tr")] = _C_TR
    codes[tid("td")] = codes[tid("th")] = _C_CELL
    codes[tid("a")] = _C_A
    codes[tid("br")] = _C_BR
    codes[tid("hr")] = _C_HR
    names = {tid(name): name for name in _KNOWN_TAGS}
    body = probe.body
    text = body.first_child if body is not None else None
    comment = text.next if text is not None else None
    assert text is not None and comment is not None   # the probe's "x" and <!--c-->
    return codes, names, text.tag_id, comment.tag_id


_CODES, _TAG_NAMES, _TEXT_ID, _COMMENT_ID = _tag_ids()

# The page may carry the sentinel/marker characters themselves, raw or as character
# references; only then is every text node cleaned (rare, so checked once per page).
_CTRL_REF = re.compile(r"&#(?:0*[1-5](?![0-9])|[xX]0*[1-5](?![0-9a-fA-F]))")
_CTRL_REF_BYTES = re.compile(_CTRL_REF.pattern.encode())


def dirty_bytes(html: bytes) -> bool:
    """The UTF-8 page carries the walk's sentinel characters U+0001-U+0005, raw or as
    character references."""
    return (b"\x01" in html or b"\x02" in html or b"\x03" in html or b"\x04" in html
            or b"\x05" in html or _CTRL_REF_BYTES.search(html) is not None)


_BR_RUN = re.compile("\x01+")
_PRE_LINK_START = re.compile("\x02([\x04\x05 \n]+)")
_PRE_LINK_END = re.compile("([\x04\x05 \n]+)\x03")
_WS_RUN = re.compile("[ \n]{2,}")
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff \n\x02\x03"
# Deleted from tag names, classes and ids so a path stays parseable; whitespace is
# left for str.split(), which separates classes and is joined away elsewhere.
_PATH_BAD = re.compile(r"[\x00-\x08\x0e-\x1b\x7f>.#]")


def _clean(value: str) -> str:
    # the checks are ~5x cheaper than the regex, which is rarely needed
    if "." in value or "#" in value or ">" in value or not value.isprintable():
        return _PATH_BAD.sub("", value)
    return value


def _one_ws(m: re.Match) -> str:
    return "\n" if "\n" in m.group() else " "


def _normalise(raw: str) -> str:
    # Everything here is C-speed str.split/join/replace; the one callback regex runs
    # only when whitespace was moved out of a link or an empty link removed.
    raw = " ".join(raw.split())
    if _BR in raw:
        raw = raw.replace(" " + _BR, _BR).replace(_BR + " ", _BR)
        if _BR + _BR in raw:
            raw = _BR_RUN.sub(_BR, raw)
        raw = raw.replace(_BR, "\n")
    if LINK_START in raw:
        n = len(raw)
        # now the inside of an empty link can only be "", " " or "\n"
        raw = raw.replace("\x02\x03", "").replace("\x02 \x03", " ").replace("\x02\n\x03", "\n")
        if "\x02 " in raw or "\x02\n" in raw or " \x03" in raw or "\n\x03" in raw:
            # whitespace just inside a link belongs outside it
            raw = (raw.replace("\x02 ", " \x02").replace("\x02\n", "\n\x02")
                   .replace(" \x03", "\x03 ").replace("\n\x03", "\x03\n"))
            n = -1
        if len(raw) != n:
            raw = _WS_RUN.sub(_one_ws, raw)
    raw = raw.strip(" \n")
    if _SP in raw or _TAB in raw:  # a pre-like block's run: its lines keep their spacing
        raw = _pre_lines(raw)
    # zero-width characters are not whitespace, but a paragraph of nothing else is empty
    return raw if raw.strip(_INVISIBLE) else ""


def _pre_lines(raw: str) -> str:
    """The normalised run of a pre-like block: kept spacing just inside a link moves out of
    it, each line loses its trailing spacing, empty lines go, kept spaces and tabs are
    written back."""
    if LINK_START in raw:
        raw = _PRE_LINK_END.sub("\x03\\1", _PRE_LINK_START.sub("\\1\x02", raw)).replace("\x02\x03", "")
    lines = (line.rstrip(" \x04\x05") for line in raw.split("\n"))
    return "\n".join(line for line in lines if line).replace(_SP, " ").replace(_TAB, "\t")


def _tag_name_of(raw: str) -> str:
    """Path name of a tag outside the known ones (custom elements, ``o:p``...)."""
    return "".join(_clean(raw).split())[:MAX_SEGMENT_CHARS] or "x"


def _segment_of(name: str, cls: str | None, ident: str | None) -> str:
    """``name.class1.class2#id``, cut to MAX_SEGMENT_CHARS (both walks build it here)."""
    if cls:
        parts = _clean(cls).split()  # classes split on any whitespace
        if parts:
            name += "." + ".".join(parts)
    if ident:
        ident = "".join(_clean(ident).split())
        if ident:
            name += "#" + ident
    if len(name) > MAX_SEGMENT_CHARS:
        name = name[:MAX_SEGMENT_CHARS].rstrip(".#")
    return name


def _segment(node) -> str:
    """``tag.class1.class2#id`` for one element."""
    name = _TAG_NAMES.get(node.tag_id)
    if name is None:
        name = _tag_name_of(node.tag or "")
    # one dict of all attributes is ~2x cheaper than attrs.get(), which raises KeyError
    # inside for every element without a class
    attributes = node.attributes
    if not attributes:
        return name
    return _segment_of(name, attributes.get("class"), attributes.get("id"))


def _take(buf: list[str], in_link: int) -> str:
    """The normalised text of a finished run; an open link is closed in it."""
    if in_link:
        if len(buf) == 1:  # only the reopened link start
            return ""
        buf.append(LINK_END)
    return _normalise("".join(buf))


def _path_of(i: int, stack: list, kinds: list[int], paths: list[str]) -> str:
    """CSS path of stack entry i; paths[k] caches it for the first len(paths) entries."""
    top = min(i, MAX_PATH_ELEMENTS - 1)
    for k in range(len(paths), top + 1):
        paths.append(paths[-1] + ">" + _segment(stack[k]))
        kinds[k] |= _CACHED  # so that popping it invalidates its path
    if i == top:
        return paths[i]
    # absurdly deep (broken) markup: keep both ends so paths stay bounded
    tail = ">".join([_segment(stack[k]) for k in range(i + 1 - _PATH_TAIL, i + 1)])
    return paths[_PATH_HEAD - 1] + ">...>" + tail


class TooManyParagraphs(ValueError):
    """The page has more paragraphs than the caller's limit (the walk stops there)."""


def extract_paragraphs(html: str | bytes, max_paragraphs: int | None = None, *,
                       utf8: bytes | None = None, scan=None) -> list[Paragraph]:
    """Paragraphs of an HTML document, in document order (see the module docstring).
    Raises TooManyParagraphs once more than ``max_paragraphs`` were found. Runs the
    compiled walk when warclake.tasks.native has one, else the Python walk below.
    ``utf8``: the same document as exactly ``html.encode("utf-8")`` (a body that was
    strictly valid UTF-8): parsed instead, which spares encoding the text again.
    ``scan``: ``page_scan.scan(utf8)`` when already made (its dirty and noscript looks)."""
    return _paragraphs(utf8 if utf8 is not None else html, max_paragraphs, _COMPILED_WALK,
                       utf8 is not None, scan)


def python_paragraphs(html: str | bytes, max_paragraphs: int | None = None, *,
                      utf8: bytes | None = None) -> list[Paragraph]:
    """extract_paragraphs by the Python walk: the reference the compiled one must equal."""
    return _paragraphs(utf8 if utf8 is not None else html, max_paragraphs, None, utf8 is not None)


def _paragraphs(html, max_paragraphs, compiled, valid_utf8: bool = False, scan=None) -> list[Paragraph]:
    if valid_utf8:  # bytes the parser reads as they are: the same tree as their text's
        if html[:3] == b"\xef\xbb\xbf":
            html = html[3:]
        if scan is not None:   # made on the bytes with their BOM: it holds no '&', '<' or U+0001-5
            dirty, noscript = scan[2], scan[3]
        else:
            dirty = dirty_bytes(html)
            noscript = _long_noscript(html, _NOSCRIPT_BYTES, _NOSCRIPT_END_BYTES)
    else:
        if isinstance(html, (bytes, bytearray, memoryview)):
            html = bytes(html).decode("utf-8", "replace")
        if html[:1] == "\ufeff":  # a BOM left by a plain utf-8 decode would be body text
            html = html[1:]
        dirty = ("\x01" in html or "\x02" in html or "\x03" in html or "\x04" in html
                 or "\x05" in html or _CTRL_REF.search(html) is not None)
        noscript = _long_noscript(html, _NOSCRIPT, _NOSCRIPT_END)
    if not html:
        return []
    tree = LexborHTMLParser(html, scripting=True)  # scripting: <noscript> is one text node
    body = tree.body
    if body is None:  # a frameset document
        return []
    out = _walk(body, dirty, max_paragraphs, compiled)
    if noscript:
        opened = _open_noscripts(body, out, dirty, compiled)
        if opened:  # the fragments' parsers stay alive until the tree is walked again
            out = _walk(body, dirty, max_paragraphs, compiled)
    return out


def _long_noscript(html, start, end) -> bool:
    """Whether a noscript may hold NOSCRIPT_MIN_CHARS characters: its markup is at least as
    long (a cheap test on the page's source, so most pages never look for noscripts)."""
    for m in start.finditer(html):
        close = end.search(html, m.end())
        if (close.start() if close else len(html)) - m.end() >= NOSCRIPT_MIN_CHARS:
            return True
    return False


def _walk(body, dirty: bool, max_paragraphs, compiled) -> list[Paragraph]:
    if compiled is not None:
        # the tree (and so every node the walk reads) lives until this call returns
        out = compiled(body.mem_id, dirty, -1 if max_paragraphs is None else max_paragraphs)
        if out is not None:
            return out
    return _python_walk(body, dirty, max_paragraphs)


def _chars(paragraphs: list[Paragraph]) -> int:
    return sum(len(p.text) - p.text.count(LINK_START) - p.text.count(LINK_END) for p in paragraphs)


def _open_noscripts(body, paragraphs: list[Paragraph], dirty: bool, compiled) -> list:
    """Replace the raw text of each body ``<noscript>`` that is the page's main text (see
    the module docstring) by its markup parsed; ``paragraphs``: the walk without them.
    Returns the parsers of the fragments read (their nodes were copied into the tree)."""
    rest = _chars(paragraphs)
    need = max(NOSCRIPT_MIN_CHARS, NOSCRIPT_RATIO * rest)
    opened = []
    for ns in body.css("noscript"):
        raw_node = ns.first_child
        if raw_node is None or raw_node.tag_id != _TEXT_ID or raw_node.next is not None:
            continue
        raw = raw_node.text_content
        if len(raw) < need:  # its text is never longer than its markup
            continue
        fragment = LexborHTMLParser(raw, scripting=True)
        fbody = fragment.body
        if fbody is None:
            continue
        paras = _walk(fbody, dirty, None, compiled)
        if len(paras) < NOSCRIPT_MIN_PARAGRAPHS or _chars(paras) < need:
            continue
        for child in list(fbody.iter(include_text=True)):
            raw_node.insert_before(child)
        raw_node.decompose()
        opened.append(fragment)
    return opened


def _python_walk(body, dirty: bool, max_paragraphs: int | None) -> list[Paragraph]:
    # The open elements, body first (parallel lists, for speed), and the CSS paths of
    # the first len(paths) of them, built lazily for the ancestors of paragraphs only.
    stack = [body]
    kinds = [_BLOCK | _CACHED]
    paths = ["body"]
    blocks = [0]  # stack indexes of the open blocks; the last one owns the current run
    out: list[Paragraph] = []
    buf: list[str] = []
    ntags = 1  # body
    in_link = pre = 0
    row = False  # inside a data row (rows never nest: a data row's cells hold no table)
    cells: list[str] = []  # the texts of its cells so far

    # Depth-first walk over first_child/next: dropped subtrees are never entered and an
    # element closes exactly when its children run out. The end of a run is written out
    # inline at its three sites, not in a closure: closures turn the loop's locals into
    # cell variables, which costs ~7 % of the walk.
    # hot constants as locals: LOAD_FAST beats LOAD_GLOBAL (~4 % of the walk)
    text_id, comment_id, codes_get = _TEXT_ID, _COMMENT_ID, _CODES.get
    # checked where a block starts (every paragraph but the last ends at one)
    limit = max_paragraphs if max_paragraphs is not None else float("inf")
    inline, block, link, cached = _INLINE, _BLOCK, _LINK, _CACHED
    node = body.first_child
    while True:
        if node is None:  # the children of stack[-1] are done: close it
            if len(stack) == 1:
                break
            k = kinds[-1]
            if k:
                if k & _CELL:  # a cell of a data row ends: its text is one of the row's
                    if buf:
                        text = _take(buf, in_link)
                        buf = [LINK_START] if in_link else []
                        if text:
                            cells.append(text.replace("\n", " "))
                elif k & _ROW:  # a data row ends: its cells are one paragraph
                    if buf:
                        text = _take(buf, in_link)
                        buf = [LINK_START] if in_link else []
                        if text:
                            cells.append(text.replace("\n", " "))
                    if cells:
                        path = _path_of(blocks[-1], stack, kinds, paths)
                        out.append(Paragraph(path, ROW_SEP.join(cells), ntags))
                        ntags = 0
                        cells = []
                    blocks.pop()
                    row = False
                elif k & block:
                    if buf:  # may build (and flag) this element's path
                        text = _take(buf, in_link)
                        buf = [LINK_START] if in_link else []
                        if text:
                            path = _path_of(blocks[-1], stack, kinds, paths)
                            out.append(Paragraph(path, text, ntags))
                            ntags = 0
                    blocks.pop()
                    if k & _PRE:
                        pre -= 1
                elif k & link:
                    in_link -= 1
                    if not in_link:
                        buf.append(LINK_END)
                if kinds[-1] & cached:
                    del paths[len(stack) - 1:]
            kinds.pop()
            node = stack.pop().next
            continue
        tid = node.tag_id
        if tid == text_id:
            t = node.text_content
            node = node.next
            if buf or pre or not t.isspace():  # leading whitespace of a run is stripped anyway
                if dirty:  # replace() is far faster than translate() here
                    t = (t.replace("\x01", "").replace("\x02", "").replace("\x03", "")
                         .replace("\x04", "").replace("\x05", ""))
                if pre:
                    t = t.replace("\n", _BR).replace(" ", _SP).replace("\t", _TAB)
                buf.append(t)
            continue
        if tid == comment_id:
            node = node.next
            continue
        code = codes_get(tid)
        if code is None:
            kind = inline
        elif row:  # inside a data row: its cells split it, nothing else does
            if code == _C_CELL:
                if buf:
                    text = _take(buf, in_link)
                    buf = [LINK_START] if in_link else []
                    if text:
                        cells.append(text.replace("\n", " "))
                kind = _CELL
            elif code == _C_A and "href" in node.attrs:
                kind = link
                if not in_link:
                    buf.append(LINK_START)
                in_link += 1
            elif code == _C_BR:
                buf.append(_BR)
                ntags += 1
                node = node.next
                continue
            elif (code == _C_NOSCRIPT and _opened(node, text_id)) or code <= _C_PRE or code >= _C_TABLE or code == _C_A:
                kind = inline
            else:  # void, dropped or hr
                ntags += 1
                node = node.next
                continue
        elif code <= _C_PRE or code >= _C_TABLE:
            if len(out) > limit:
                raise TooManyParagraphs(f"more than {max_paragraphs} paragraphs")
            if buf:  # before counting: this start tag belongs to the next paragraph
                text = _take(buf, in_link)
                buf = [LINK_START] if in_link else []
                if text:
                    path = _path_of(blocks[-1], stack, kinds, paths)
                    out.append(Paragraph(path, text, ntags))
                    ntags = 0
            blocks.append(len(stack))
            kind = block
            if code == _C_PRE:
                kind |= _PRE
                pre += 1
            elif code == _C_TR and _data_row(node, text_id, comment_id):
                kind = _ROW
                row = True
        elif code == _C_NOSCRIPT and _opened(node, text_id):
            kind = inline
        elif code == _C_A:
            if "href" in node.attrs:
                kind = link
                if not in_link:
                    buf.append(LINK_START)
                in_link += 1
            else:
                kind = inline
        else:  # a leaf for this walk: void or dropped
            if code == _C_BR:
                buf.append(_BR)
            elif code == _C_HR and buf:
                text = _take(buf, in_link)
                buf = [LINK_START] if in_link else []
                if text:
                    path = _path_of(blocks[-1], stack, kinds, paths)
                    out.append(Paragraph(path, text, ntags))
                    ntags = 0
            ntags += 1
            node = node.next
            continue
        ntags += 1
        stack.append(node)
        kinds.append(kind)
        node = node.first_child  # None closes it right away

    if buf:
        text = _take(buf, 0)
        if text:
            path = _path_of(blocks[-1], stack, kinds, paths)
            out.append(Paragraph(path, text, ntags))
    return out


def _data_row(tr, text_id: int, comment_id: int) -> bool:
    """A ``tr`` of MIN_ROW_CELLS cells or more, each of them simple (see ROW_SEP)."""
    n = 0
    child = tr.first_child
    while child is not None:
        if _CODES.get(child.tag_id) == _C_CELL:
            if not _simple_cell(child, text_id, comment_id):
                return False
            n += 1
        child = child.next
    return n >= MIN_ROW_CELLS


def _simple_cell(cell, text_id: int, comment_id: int) -> bool:
    """No table or pre-like element, at most one run of text (as the walk would cut it:
    text that is not all whitespace, between block boundaries), no blank line (two ``<br>``
    with only whitespace text between), at most MAX_CELL_CHARS non-whitespace characters."""
    codes_get = _CODES.get
    runs = chars = 0
    in_run = br = False
    stack = [cell]
    node = cell.first_child
    while True:
        if node is None:
            if len(stack) == 1:
                return True
            done = stack.pop()
            if codes_get(done.tag_id) == _C_BLOCK:
                in_run = False  # a block's end ends a run
            node = done.next
            continue
        tid = node.tag_id
        if tid == text_id:
            t = node.text_content
            if not t.isspace():
                chars += len("".join(t.split()))
                if chars > MAX_CELL_CHARS:
                    return False
                if not in_run:
                    runs += 1
                    if runs > 1:
                        return False
                    in_run = True
                br = False
            node = node.next
            continue
        if tid == comment_id:
            node = node.next
            continue
        code = codes_get(tid)
        if code is None or code == _C_A or (code == _C_NOSCRIPT and _opened(node, text_id)):
            stack.append(node)
            node = node.first_child
            continue
        if code == _C_BLOCK:
            in_run = False  # and so does its start
            stack.append(node)
            node = node.first_child
            continue
        if code == _C_PRE or code >= _C_TABLE:
            return False
        if code == _C_BR:
            if br:
                return False
            br = True
        elif code == _C_HR:
            in_run = False
        node = node.next  # void, dropped or hr: no children to read


def _opened(noscript, text_id: int) -> bool:
    """A noscript is read when it holds more than text: its markup was parsed into it."""
    child = noscript.first_child
    while child is not None and child.tag_id == text_id:
        child = child.next
    return child is not None


def _compiled_walk():
    from warclake.tasks import native
    return native.paragraph_walk(sys.modules[__name__])


_COMPILED_WALK = _compiled_walk()

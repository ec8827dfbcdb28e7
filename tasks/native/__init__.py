"""warclake's compiled core (Cython) and the choice between it and the Python reference.

``lexbor_walk.pyx`` walks the tree selectolax built, reading lexbor's node structures
through warclake's own declarations (``lexbor_layout.pxi``). Whether it runs is decided
once per process, when ``html_paragraphs`` is imported:

* ``WARCLAKE_NATIVE=0`` in the environment: the Python walk, silently (for comparisons);
* the module was not built (no compiler at install): the Python walk, one warning line;
* the module reads a field of lexbor's structs otherwise than selectolax's own API on
  ``LAYOUT_PAGE`` (a selectolax whose lexbor layout changed), or gives other paragraphs
  than the Python walk on the fixed pages below: the Python walk, one warning line (naming
  the field in the first case).

``STATUS`` ("compiled" or "python") and ``REASON`` say what was chosen and why.
"""
from __future__ import annotations

import os
import sys

ENV = "WARCLAKE_NATIVE"
STATUS = "python"
REASON = "not loaded"

# Fixed pages for the import-time check: every rule of the walk the structs decide
# (tags, classes, ids, links, text data, custom names, depth, table rows: a data row and a
# layout row) is exercised at least once.
CHECK_PAGES = (
    "<html><head><title>t</title></head><body>lead <b>bold</b><div class='a b' id=x>"
    "one <a href=/u>link <i>in</i></a> two<p>para<br>line</p>tail</div></body></html>",
    "<body><ul class=nav><li><a href='#'>Home</a></li><li><a>anchor</a></li></ul>"
    "<pre>  code\n  more</pre><hr><table><tr><td>cell</td></tr><tr><th>a <a href=/r>b</a></th><td>c<br>d</td></tr>"
    "<tr><td><p>one</p><p>two</p></td><td>x</td></tr></table></body>",
    "<body><my-widget class=w>custom</my-widget><o:p>word</o:p><xmp>x<y</xmp>"
    "<div class='" + "k" * 300 + "'>long class</div><font id='a.b#c'>font</font></body>",
    "<body>" + "<div>" * 130 + "deep" + "</div>" * 130 + "after</body>",
    "<body><p>caf\u00e9 \u65e5\u672c\u8a9e \u00a0nbsp\u3000ideo\u200b</p>"
    "<script>no</script><style>no</style><!-- c --><p>&#2;ctrl\x03 &amp; <a href>\u00a0</a>"
    "</p><noscript>ns</noscript><textarea>t</textarea></body>",
    "<body><b>shell</b><noscript>on</noscript><noscript data-path=/t/1><div id=m>"
    + "<p>post <a href=/u>by <i>someone</i></a> with words enough to be a thread</p>" * 12
    + "<my-post>custom</my-post></div></noscript></body>",
)

# The page on which each field of lexbor_layout.pxi the walk reads is compared with
# selectolax's API: text, a comment, attributes with and without values, per-document tag
# names short and long (inline and pointed-to), and SVG's names written otherwise than
# their local names (an element's and an attribute's qualified_name, an attribute's prefix).
LAYOUT_PAGE = (
    "<html><head><title>t</title></head><body>lead<!--note--><b class='a b' id=x data-foo=1 hidden>"
    "bold \u00e9</b><x-y>short</x-y><my-widget-with-a-long-name>long</my-widget-with-a-long-name>"
    "<svg viewBox='0 0 1 1'><clipPath></clipPath><use href='/a' xlink:href='/b'/></svg></body></html>")


# What load_checked decided, by module name: (what, STATUS, REASON).
LOADED: dict[str, tuple[str, str, str]] = {}


def load_checked(name: str, what: str, reference: str, check):
    """See :func:`_load_checked`; the outcome is also noted in :data:`LOADED`."""
    module, status, reason = _load_checked(name, what, reference, check)
    LOADED[name] = (what, status, reason)
    return module, status, reason


def _load_checked(name: str, what: str, reference: str, check):
    """Import this package's compiled module ``name`` and run ``check(module)``, which
    raises on any difference from the Python reference: (module or None, STATUS, REASON).
    Not built or failing its check: None, with one warning line naming ``reference``;
    ``WARCLAKE_NATIVE=0``: None, silently."""
    if os.environ.get(ENV, "1").strip() == "0":
        return None, "python", f"{ENV}=0"
    try:   # through __import__, so a test can hide a built module
        module = __import__(f"{__name__}.{name}", fromlist=["_"])
    except ImportError as exc:
        reason = f"compiled {what} not built ({exc})"
    else:
        try:
            check(module)
        except Exception as exc:  # noqa: BLE001 - any doubt leaves the reference
            reason = f"compiled {what} failed its check ({exc})"
        else:
            return module, "compiled", f"checked against the {reference}"
    sys.stderr.write(f"warclake: {reason}; using the {reference}\n")
    return None, "python", reason


def _names_of_static_tags(hp) -> dict[int, str]:
    """Clean path names of the static lexbor tag ids an ancestor can have, as the Python
    walk names them (its table, else selectolax's ``node.tag``)."""
    from selectolax.lexbor import LexborHTMLParser

    names = sorted(set(hp._KNOWN_TAGS) | hp.BLOCK_TAGS | set(_MORE_TAGS.split()))
    tree = LexborHTMLParser("<body>" + "".join(f"<{n}></{n}>" for n in names) + "</body>")
    out: dict[int, str] = {}
    for name in names:
        tid = tree.create_node(name).tag_id
        if tid < 65536:  # a static id (a larger one is per document)
            out[tid] = hp._TAG_NAMES.get(tid) or hp._tag_name_of(name)
    return out


# HTML element names beyond html_paragraphs' own table that lexbor knows statically.
_MORE_TAGS = ("bgsound frame image isindex keygen menuitem multicol nextid noembed rb rtc "
              "slot spacer xmp listing plaintext html mi mn mo ms mtext mglyph malignmark "
              "annotation-xml foreignobject desc")


def paragraph_walk(hp):
    """The compiled walk configured with html_paragraphs' tables (``hp``), or None."""
    global STATUS, REASON
    pw, STATUS, REASON = load_checked("lexbor_walk", "core", "Python paragraph walk",
                                      lambda pw: _check_walk(pw, hp))
    return None if pw is None else pw.walk


def _check_layout(pw) -> None:
    """Read LAYOUT_PAGE's nodes through lexbor_layout.pxi's structs and compare every field
    with selectolax's API (compiled against lexbor's own headers); raises naming the first
    field that disagrees. The node fields are compared first and follow no pointer; the
    attributes, texts and name entries they point to are read only once those agree."""
    from selectolax.lexbor import LexborHTMLParser, LexborNode

    tree = LexborHTMLParser(LAYOUT_PAGE)   # alive while its nodes are read
    root = tree.root
    if root is None:
        raise ValueError("lexbor layout: the check page has no root")
    nodes: list[LexborNode] = []
    todo = [root]
    while todo:   # document order, through selectolax's links
        node = todo.pop()
        nodes.append(node)
        kids, child = [], node.first_child
        while child is not None:
            kids.append(child)
            child = child.next
        todo.extend(reversed(kids))

    def at(node) -> int:
        return 0 if node is None else node.mem_id

    def agree(field: str, ours, theirs) -> None:
        if ours != theirs:
            raise ValueError(f"lexbor layout: {field} reads {ours!r:.60} where selectolax has {theirs!r:.60}")

    for node in nodes:
        f = pw.layout_node(node.mem_id)
        agree("lx_node.local_name", f["local_name"], node.tag_id)
        for link in ("next", "prev", "parent", "first_child", "last_child"):
            agree(f"lx_node.{link}", f[link], at(getattr(node, link)))
        kind = 1 if node.is_element_node else 3 if node.is_text_node else 8 if node.is_comment_node else f["type"]
        agree("lx_node.type", f["type"], kind)
    for node in nodes:
        if node.is_text_node or node.is_comment_node:
            text = node.text_content if node.is_text_node else node.comment_content
            agree("lx_character_data.data", pw.layout_text(node.mem_id), None if text is None else text.encode())
        if not node.is_element_node:
            continue
        tag = node.tag
        if tag is None:
            raise ValueError("lexbor layout: an element without a name")
        if node.tag_id >= 65536:   # a per-document name: the entry at its address names itself
            name, tag_id = pw.layout_tag_entry(node.tag_id)
            agree("lx_tag_data.u/length", name, tag.encode())
            agree("lx_tag_data.tag_id", tag_id, node.tag_id)
        el = pw.layout_element(node.mem_id)
        agree("lx_element.qualified_name (set)", el["qualified_name"] != 0, tag != tag.lower())
        if el["qualified_name"]:
            agree("lx_element.qualified_name", pw.layout_tag_entry(el["qualified_name"])[0], tag.encode())
        attrs, written = el["attrs"], list(node.attributes.items())
        agree("lx_element.first_attr/lx_attr.next (attributes)", len(attrs), len(written))
        agree("lx_element.last_attr", el["last_attr"], attrs[-1]["address"] if attrs else 0)
        agree("lx_attr.value", [a["value"] for a in attrs], [v if v is None else v.encode() for _, v in written])
        for k, (a, (key, _)) in enumerate(zip(attrs, written)):
            agree("lx_attr.owner", a["owner"], node.mem_id)
            agree("lx_attr.prev", a["prev"], attrs[k - 1]["address"] if k else 0)
            # the walk leaves a page to Python when an attribute's written name is not its local name
            agree("lx_attr.qualified_name (set)", a["qualified_name"] != 0, key != key.split(":")[-1].lower())
            agree("lx_attr.node.prefix (set)", a["prefix"] != 0, ":" in key)


def _check_walk(pw, hp) -> None:
    """Check lexbor's layout as the walk reads it, configure the compiled walk and compare
    it with the Python walk on CHECK_PAGES."""
    from selectolax.lexbor import LexborHTMLParser

    _check_layout(pw)
    probe = LexborHTMLParser("<body><a class=c id=i href=h>x</a></body>")   # alive while its nodes are read
    link = probe.css_first("a")
    if link is None:
        raise ValueError("the probe page has no link")
    ids = dict(zip(("class", "id", "href"), pw.attribute_ids(link.mem_id)))
    if any(q != 0 for _, q in ids.values()):
        raise ValueError("unexpected attribute layout")
    if pw.MAX_SEGMENT_CHARS != hp.MAX_SEGMENT_CHARS:
        raise ValueError("the path element cap differs from html_paragraphs'")
    pw.configure(hp._CODES, _names_of_static_tags(hp), hp._TEXT_ID, hp._COMMENT_ID,
                 ids["class"][0], ids["id"][0], ids["href"][0], hp._segment_of, hp._tag_name_of, hp.Paragraph, hp.TooManyParagraphs,
                 hp.MAX_PATH_ELEMENTS, hp._PATH_HEAD, hp._PATH_TAIL)
    if pw.whitespace_table(0x3100) != [c for c in range(0x3100) if chr(c).isspace()]:
        raise ValueError("whitespace table differs from str.isspace")

    def walk_or_fail(*args):
        out = pw.walk(*args)
        if out is None:
            raise ValueError("a check page was left to the Python walk")
        return out

    for page in CHECK_PAGES:
        if hp._paragraphs(page, None, walk_or_fail) != hp._paragraphs(page, None, None):
            raise ValueError("paragraphs differ from the Python walk on a check page")


def describe() -> str:
    """"paragraph walk: compiled" or "paragraph walk: python (why)", for --version and bench."""
    import warclake.tasks.extract.html_paragraphs  # noqa: F401 - the choice is made on its import

    return f"paragraph walk: {STATUS}" + ("" if STATUS == "compiled" else f" ({REASON})")


# How --version names the modules load_checked knows (else by the ``what`` of their loader).
_LABELS = {"lexbor_walk": "paragraph walk", "sieve_features": "sieve features",
           "sieve_structure": "sieve structure", "corpus_signatures": "corpus signatures",
           "corpus_quality": "corpus quality metrics", "corpus_step": "corpus per-archive pass",
           "language_trigrams": "first-pass language scores", "page_scan": "page pre-scan",
           "language_text": "language text scans", "corpus_fasttext": "fastText scorer"}


def describe_all() -> str:
    """Every compiled module and whether it runs ("walk: compiled; ...; signatures: python
    (why)"), for ``warclake --version``: the modules that choose on import are imported and
    the lazy ones asked, then whatever :func:`load_checked` noted is listed."""
    import warclake.tasks.extract.boilerplate.features  # noqa: F401 - the sieve's choice is made on import
    import warclake.tasks.extract.html_paragraphs  # noqa: F401 - the walk's choice is made on import
    import warclake.tasks.extract.language  # noqa: F401 - the text scans' choice is made on import
    import warclake.tasks.extract.page_scan  # noqa: F401 - the pre-scan's choice is made on import
    from warclake.tasks.corpus.signals import archive_pass, fasttext_native, quality, signatures

    signatures.compiled_module()
    quality.compiled_module()
    archive_pass.compiled_module()
    fasttext_native.compiled_module()
    from warclake.tasks.extract import language_first_pass

    if language_first_pass.table() is None:   # lingua's models unreadable: the module is never tried
        LOADED.setdefault("language_trigrams", ("first-pass language scores", "python",
                                                f"first pass off: {language_first_pass._FAILED}"))
    parts = []
    order = list(_LABELS) + [n for n in LOADED if n not in _LABELS]
    for name in (n for n in order if n in LOADED):
        what, status, reason = LOADED[name]
        parts.append(f"{_LABELS.get(name, what)}: {status}" + ("" if status == "compiled" else f" ({reason})"))
        if name == "sieve_features" and "sieve_structure" not in LOADED:
            # the structure columns' module is loaded (and noted) only by compiled features
            parts.append(f"sieve structure: python ({reason if status != 'compiled' else 'not loaded'})")
    return "; ".join(parts)

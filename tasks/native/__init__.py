"""warclake's compiled core (Cython) and the choice between it and the Python reference.

``lexbor_walk.pyx`` walks the tree selectolax built, reading lexbor's node structures
through warclake's own declarations (``lexbor_layout.pxi``). Whether it runs is decided
once per process, when ``html_paragraphs`` is imported:

* ``WARCLAKE_NATIVE=0`` in the environment: the Python walk, silently (for comparisons);
* the module was not built (no compiler at install): the Python walk, one warning line;
* the module gives other paragraphs than the Python walk on the fixed pages below (a
  selectolax whose lexbor layout changed): the Python walk, one warning line.

``STATUS`` ("compiled" or "python") and ``REASON`` say what was chosen and why.
"""
from __future__ import annotations

import os
import sys

ENV = "WARCLAKE_NATIVE"
STATUS = "python"
REASON = "not loaded"

# Fixed pages for the import-time check: every rule of the walk the structs decide
# (tags, classes, ids, links, text data, custom names, depth) is exercised at least once.
CHECK_PAGES = (
    "<html><head><title>t</title></head><body>lead <b>bold</b><div class='a b' id=x>"
    "one <a href=/u>link <i>in</i></a> two<p>para<br>line</p>tail</div></body></html>",
    "<body><ul class=nav><li><a href='#'>Home</a></li><li><a>anchor</a></li></ul>"
    "<pre>  code\n  more</pre><hr><table><tr><td>cell</td></tr></table></body>",
    "<body><my-widget class=w>custom</my-widget><o:p>word</o:p><xmp>x<y</xmp>"
    "<div class='" + "k" * 300 + "'>long class</div><font id='a.b#c'>font</font></body>",
    "<body>" + "<div>" * 130 + "deep" + "</div>" * 130 + "after</body>",
    "<body><p>caf\u00e9 \u65e5\u672c\u8a9e \u00a0nbsp\u3000ideo\u200b</p>"
    "<script>no</script><style>no</style><!-- c --><p>&#2;ctrl\x03 &amp; <a href>\u00a0</a>"
    "</p><noscript>ns</noscript><textarea>t</textarea></body>",
)


def _warn(message: str) -> None:
    sys.stderr.write(f"warclake: {message}; using the Python paragraph walk\n")


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
    if os.environ.get(ENV, "1").strip() == "0":
        STATUS, REASON = "python", f"{ENV}=0"
        return None
    try:
        from . import lexbor_walk as pw
    except ImportError as exc:
        STATUS, REASON = "python", f"compiled core not built ({exc})"
        _warn(REASON)
        return None
    try:
        from selectolax.lexbor import LexborHTMLParser

        probe = LexborHTMLParser("<body><a class=c id=i href=h>x</a></body>")
        ids = dict(zip(("class", "id", "href"), pw.attribute_ids(probe.css_first("a").mem_id)))
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
    except Exception as exc:  # noqa: BLE001 - any doubt leaves the reference walk
        STATUS, REASON = "python", f"compiled core failed its check ({exc})"
        _warn(REASON)
        return None
    STATUS, REASON = "compiled", "checked against the Python walk"
    return pw.walk


def describe() -> str:
    """"paragraph walk: compiled" or "paragraph walk: python (why)", for --version and bench."""
    import warclake.tasks.html_paragraphs  # noqa: F401 - the choice is made on its import

    return f"paragraph walk: {STATUS}" + ("" if STATUS == "compiled" else f" ({REASON})")

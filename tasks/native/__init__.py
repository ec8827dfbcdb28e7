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


def _check_walk(pw, hp) -> None:
    """Configure the compiled walk and compare it with the Python walk on CHECK_PAGES."""
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


def describe() -> str:
    """"paragraph walk: compiled" or "paragraph walk: python (why)", for --version and bench."""
    import warclake.tasks.extract.html_paragraphs  # noqa: F401 - the choice is made on its import

    return f"paragraph walk: {STATUS}" + ("" if STATUS == "compiled" else f" ({REASON})")


# How --version names the modules load_checked knows (else by the ``what`` of their loader).
_LABELS = {"lexbor_walk": "paragraph walk", "sieve_features": "sieve features",
           "sieve_structure": "sieve structure", "corpus_signatures": "corpus signatures",
           "corpus_quality": "corpus quality metrics", "corpus_step": "corpus per-archive pass"}


def describe_all() -> str:
    """Every compiled module and whether it runs ("walk: compiled; ...; signatures: python
    (why)"), for ``warclake --version``: the modules that choose on import are imported and
    the lazy ones asked, then whatever :func:`load_checked` noted is listed."""
    import warclake.tasks.extract.boilerplate.features  # noqa: F401 - the sieve's choice is made on import
    import warclake.tasks.extract.html_paragraphs  # noqa: F401 - the walk's choice is made on import
    from warclake.tasks.corpus.signals import archive_pass, quality, signatures

    signatures.compiled_module()
    quality.compiled_module()
    archive_pass.compiled_module()
    parts = []
    order = list(_LABELS) + [n for n in LOADED if n not in _LABELS]
    for name in (n for n in order if n in LOADED):
        what, status, reason = LOADED[name]
        parts.append(f"{_LABELS.get(name, what)}: {status}" + ("" if status == "compiled" else f" ({reason})"))
        if name == "sieve_features" and "sieve_structure" not in LOADED:
            # the structure columns' module is loaded (and noted) only by compiled features
            parts.append(f"sieve structure: python ({reason if status != 'compiled' else 'not loaded'})")
    return "; ".join(parts)

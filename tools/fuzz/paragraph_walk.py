"""Generated and mutated pages through the compiled and the Python paragraph walk.

    python -m tools.fuzz.paragraph_walk --cases N [--seed S] [--start I] [--hostile]

Case ``i`` of seed ``S`` is always the same page (``--start I --cases 1`` replays it): random
and misnested markup from a vocabulary of every kind of tag the walk treats differently,
classes and ids with separators and control characters, huge attributes and texts, deep
nesting, tables (data rows, layout cells, nested tables, empty, spanning and header cells,
links around and inside them, cells near the walk's row limits, broken rows), noscripts holding whole threads (read when they are the page's text), control
and marker characters raw and as references, CJK and Unicode whitespace, broken UTF-8
given as bytes, and cut, spliced and repeated slices of those pages.
``--hostile`` first runs the full-size hostile pages of ``hostile_pages`` that the
extractor parses at all (``html_limits`` turns the others away before parsing).

Each page goes through ``extract_paragraphs`` with the compiled walk and with the Python
one (also with a random paragraph limit), and, when it is valid UTF-8, through the compiled
walk once more parsed from those bytes (as extraction parses such pages); a difference in paragraphs or in the exception
raised is printed with its case number. A crash of the compiled code kills the process:
the last ``case`` line printed (every 1,000 cases, flushed) locates it. Exit 1 on any
difference; the last line sums up cases, differences and pages left to the Python walk.

``--module FILE`` loads the compiled walk from FILE instead, e.g. a build under
AddressSanitizer (any memory error aborts with its report)::

    cython -3 tasks/native/lexbor_walk.pyx -o /tmp/asan/lexbor_walk.c
    gcc -shared -fPIC -O1 -g -fsanitize=address -fno-omit-frame-pointer \
        -I"$(python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
        /tmp/asan/lexbor_walk.c -o /tmp/asan/lexbor_walk.so
    ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \
        python -m tools.fuzz.paragraph_walk --module /tmp/asan/lexbor_walk.so --cases 20000
"""
from __future__ import annotations

import argparse
import random
import sys
import time

BLOCKS = ("div p li ul ol td tr table th h1 h2 section article header footer nav main "
          "blockquote pre xmp listing plaintext dd dt dl form center body caption").split()
INLINES = ("span b i em strong font small code label abbr sub sup u s q time mark "
           "my-widget o:p x-Y:Z foo_bar custom-element-with-a-long-name-over-sixteen").split()
DROPS = "script style svg math iframe noscript template textarea select title head object".split()
VOIDS = "br hr img input wbr meta link area col embed source image".split()
TEXTS = ["word", "two words", " ", "\n", "\t", "  \n  ", "\u00a0", "\u3000", "\u2028", "\u200b",
         "\ufeff", "\u2060", "\x85", "\x1c", "\x0b", "日本語の文章", "中文段落", "한국어",
         "café", "Ünïcödé", "\x01", "\x02", "\x03", "\x04", "\x05", "&#1;", "&#x2;", "&#03;",
         "&#0;", "&#4;", "&#x05;", "    indented", "\n\t\tcode  x", "  \n", "\t",
         "&amp;", "&nbsp;", "&lt;b&gt;", "&#xD800;", "&#x110000;", "\x00", "\x7f", "\x08",
         ".", "#", ">", "\r\n", "😀", "\U0010fffd", "a" * 50]
MAX_PAGE_CHARS = 300_000
ATTR_CHARS = ["a", "b", " ", ".", "#", ">", "\t", "\n", "\x01", "\x1b", "\x7f", "日", "\u00a0",
              "\u3000", "-", "_", "\x0c", "\x1f", "&amp;", '"', "'"]


def _attr_value(rng: random.Random) -> str:
    if rng.random() < 0.02:
        return "c " * rng.randint(100, 5000)  # a huge class: the path part cap
    return "".join(rng.choice(ATTR_CHARS) for _ in range(rng.randint(0, 12)))


def _attrs(rng: random.Random, tag: str) -> str:
    out = []
    for _ in range(rng.choice((0, 0, 1, 2, 3))):
        name = rng.choice(("class", "id", "href", "CLASS", "Id", "HREF", "title", "class",
                           "xlink:href", "data-x"))
        if rng.random() < 0.2:
            out.append(f" {name}")
        else:
            q = rng.choice(("'", '"', ""))
            v = _attr_value(rng)
            if not q:
                v = v.replace(" ", "").replace(">", "") or "v"
            out.append(f" {name}={q}{v.replace(q, '') if q else v}{q}")
    return "".join(out)


def _markup(rng: random.Random, budget: list[int], depth: int = 0) -> str:
    """Markup of at most budget[0] pieces in all (shared by the nested calls)."""
    parts: list[str] = []
    for _ in range(rng.randint(1, 8)):
        if budget[0] <= 0:
            break
        budget[0] -= 1
        r = rng.random()
        if r < 0.08 and depth < 40:
            parts.append(_table(rng, budget, depth))
        elif r < 0.35:
            parts.append(rng.choice(TEXTS) if rng.random() < 0.8
                         else "x" * rng.randint(1, 20000))
        elif r < 0.75 and depth < 40:
            tag = rng.choice(BLOCKS + INLINES + ["a", "a", "a"])
            inner = _markup(rng, budget, depth + 1) if rng.random() < 0.7 else ""
            close = f"</{tag}>" if rng.random() < 0.85 else ""
            parts.append(f"<{tag}{_attrs(rng, tag)}>{inner}{close}")
        elif r < 0.83:
            parts.append(f"<{rng.choice(VOIDS)}{_attrs(rng, 'v')}>")
        elif r < 0.88:
            tag = rng.choice(DROPS)
            if tag == "noscript" and rng.random() < 0.5:
                parts.append(_noscript_thread(rng, budget, depth))
            else:
                parts.append(f"<{tag}>{rng.choice(TEXTS)}<p>hidden</p></{tag}>")
        elif r < 0.93:  # a stray end tag or a comment: misnesting
            parts.append(rng.choice(("</div>", "</p>", "</a>", "</li>", "</table>", "<!-- c -->",
                                     "<!--", "-->", "</body>", "<body>", "<html>", "<?php x ?>",
                                     "<![CDATA[x]]>", "<!DOCTYPE html>", "</pre>")))
        else:  # deep nesting
            tag = rng.choice(("div", "b", "li", "span", "a href=x", "p"))
            n = rng.randint(50, 400)
            parts.append(f"<{tag}>" * n + "deep" + f"</{tag.split()[0]}>" * rng.randint(0, n))
    return "".join(parts)


CELL_TEXTS = ["1", "2.50 EUR", "Tea", "a<br>b", "a<br><br>b", "a<br> <br>b", "", " ", "<b>x</b> y",
              "<a href=/p>link</a>", "<a> anchor </a>", "<p>one</p>", "<p>one</p><p>two</p>",
              "<div><div>nested</div></div>", "x<div>y</div>", "<div></div>x", "x<hr>", "x<hr>y",
              "<ul><li>a<li>b</ul>", "<pre>  code\n  x</pre>", "<img src=a>", "<script>s</script>z",
              "<span>\u3000</span>", "日本語", "\u200b", "&#2;", "<noscript>n</noscript>",
              "<input type=hidden>v", "<table><tr><td>i<td>j</table>", "<br>", "<br>x<br>"]


def _cell(rng: random.Random, budget: list[int], depth: int) -> str:
    r = rng.random()
    if r < 0.6:
        inner = rng.choice(CELL_TEXTS)
    elif r < 0.7:  # near and past the row's cell limit (html_paragraphs.MAX_CELL_CHARS)
        inner = rng.choice(("w", "日", "w ", " w\n")) * rng.choice((999, 1000, 1001, 2500))
    else:
        inner = _markup(rng, budget, depth + 1)
    tag = "th" if rng.random() < 0.2 else "td"
    attrs = rng.choice(("", "", " colspan=2", " rowspan=3", " class='c x'", " id=k"))
    close = f"</{tag}>" if rng.random() < 0.7 else ""
    return f"<{tag}{attrs}>{inner}{close}"


def _table(rng: random.Random, budget: list[int], depth: int) -> str:
    """A table: rows of 0-40 cells (sometimes 200), header rows, captions, sections, links
    around the table, whitespace and stray text between cells, rows left open."""
    rows = []
    for _ in range(rng.choice((1, 2, 3, 5, 12))):
        n = rng.choice((0, 1, 2, 2, 3, 4, 7, 40)) if rng.random() < 0.97 else 200
        sep = rng.choice(("", "", "\n  ", " ", "stray", "<!-- c -->", "<a href=x>"))
        row = sep.join(_cell(rng, budget, depth) for _ in range(n))
        rows.append(f"<tr{rng.choice(('', ' class=r'))}>{row}" + ("</tr>" if rng.random() < 0.8 else ""))
    body = "".join(rows)
    if rng.random() < 0.3:
        body = f"<{rng.choice(('thead', 'tbody', 'tfoot'))}>{body}"
    if rng.random() < 0.2:
        body = "<caption>cap <b>b</b></caption>" + body
    table = f"<table{rng.choice(('', ' class=data', ' border=0'))}>{body}" + ("</table>" if rng.random() < 0.85 else "")
    wrap = rng.random()
    if wrap < 0.1:
        return f"<a href=/t>{table}</a>"
    if wrap < 0.2:
        return f"<ul><li>{table}</li></ul>"
    if wrap < 0.25:
        return f"<pre>{table}</pre>"
    return table


def _noscript_thread(rng: random.Random, budget: list[int], depth: int) -> str:
    """A noscript holding a page's text (as forum threads do), often enough text to be read
    (html_paragraphs' NOSCRIPT_* limits), with random markup, and sometimes cut short."""
    posts = []
    for _ in range(rng.choice((1, 2, 3, 4, 8, 30))):
        words = " ".join(rng.choice(("post", "reply", "text", "日本語", "x" * 9, "&amp;", "\n"))
                         for _ in range(rng.randint(1, 120)))
        inner = _markup(rng, budget, depth + 1) if rng.random() < 0.3 else ""
        posts.append(f"<div class=post{_attrs(rng, 'div')}><p>{words}</p>{inner}</div>")
    close = "</noscript>" if rng.random() < 0.9 else ""
    return f"<noscript data-path=/t/x>{''.join(posts)}{close}"


def _document(rng: random.Random) -> str:
    budget = [rng.randint(1, 120)]
    parts = []
    while budget[0] > 0:
        parts.append(_markup(rng, budget))
    return "".join(parts)


def _page(rng: random.Random, seeds: list[bytes]) -> str | bytes:
    r = rng.random()
    if r < 0.6 or not seeds:
        head = rng.choice(("", "<html><head><title>t</title></head>", "\ufeff", "<!DOCTYPE html>"))
        page = head + rng.choice(("<body>", "", "<body class='b'>")) + _document(rng)
        if rng.random() < 0.15:  # broken UTF-8 (extract_paragraphs decodes bytes with replace)
            raw = bytearray(page.encode("utf-8", "surrogatepass"))
            for _ in range(rng.randint(1, 8)):
                if raw:
                    raw[rng.randrange(len(raw))] = rng.choice((0x80, 0xC3, 0xE6, 0xF0, 0xFF, 0xED))
            return bytes(raw)
        return page
    # a mutation of an earlier page: cut, splice, repeat
    def text(p):
        return p.decode("utf-8", "replace") if isinstance(p, bytes) else p

    base = text(rng.choice(seeds))
    a, b = sorted(rng.randrange(len(base) + 1) for _ in range(2))
    other = text(rng.choice(seeds))
    c = rng.randrange(len(other) + 1)
    choice = rng.random()
    if choice < 0.3:
        out = base[:a] + base[b:]
    elif choice < 0.6:
        out = base[:a] + other[c:c + rng.randint(0, 400)] + base[a:]
    else:
        out = base[:a] + base[a:b] * rng.randint(2, 4) + base[b:]
    out = out[:MAX_PAGE_CHARS]  # mutations of mutations must not grow without bound
    return out if rng.random() < 0.5 else out.encode("utf-8", "surrogatepass")


def _hostile_shapes() -> list[str]:
    """The hostile pages' shapes, small enough for every case."""
    return ["<body>" + "<div>" * 3000 + "x", "<body>" + "<div>a " * 500 + "</div>" * 500,
            "<body>" + "<ul><li>x" * 300, "<body>" + "<p>a" * 2000,
            "<body>" + "<p><a href='/x'>link</a> text" * 300, "<body>" + "<b>x" * 3000,
            "<body><div class='" + "c " * 30000 + "'>x</div>", "<body>" + "word " * 20000,
            "<body>" + "<svg><path d='M0'/>" * 500,
            "<body><table>" + "<tr><td>a<td>b<td>c" * 500 + "</table>",
            "<body>" + "<table><tr><td>x<td>" * 300 + "y",
            "<body><table><tr>" + "<td><a href=/x>c</a> 1" * 3000 + "</table>"]


def _exact_utf8(page: str | bytes) -> bytes | None:
    """The page as the strictly valid UTF-8 bytes extraction parses directly, if it has them."""
    try:
        if isinstance(page, str):
            return page.encode("utf-8")
        page.decode("utf-8")
        return page
    except UnicodeError:
        return None


def _outcome(fn, page, limit):
    try:
        return fn(page, limit)
    except Exception as exc:  # noqa: BLE001 - the exception is part of the outcome
        return (type(exc).__name__, str(exc))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.fuzz.paragraph_walk",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="first case number")
    ap.add_argument("--hostile", action="store_true", help="also the full-size hostile pages")
    ap.add_argument("--module", default=None, metavar="FILE",
                    help="the compiled walk from this built module (e.g. an AddressSanitizer build)")
    args = ap.parse_args(argv)
    if args.module:  # must be in place before html_paragraphs imports (and checks) the walk
        import importlib.util

        name = "warclake.tasks.native.lexbor_walk"
        spec = importlib.util.spec_from_file_location(name, args.module)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module

    from warclake.tasks import native
    from warclake.tasks.extract import html_paragraphs as hp

    if hp._COMPILED_WALK is None:
        print(f"no compiled walk to compare: {native.REASON}", file=sys.stderr)
        return 2
    print(f"compiled walk: {sys.modules['warclake.tasks.native.lexbor_walk'].__file__}", flush=True)
    left = [0]

    def compiled(page, limit):
        def counting(*a):
            out = hp._COMPILED_WALK(*a)
            left[0] += out is None
            return out
        return hp._paragraphs(page, limit, counting)

    def compiled_utf8(data, limit):  # the page's exact UTF-8 bytes, parsed as they are
        return hp._paragraphs(data, limit, hp._COMPILED_WALK, True)

    pages: list[tuple[str, str | bytes]] = []
    if args.hostile:  # those the extractor parses at all (html_limits, as extract_record does)
        from tools.fuzz.hostile_pages import _pages
        from warclake.tasks.extract.config import ExtractConfig
        from warclake.tasks.extract.html_limits import too_complex

        cfg = ExtractConfig()
        for name, html in _pages().items():
            if not too_complex(html.decode(), cfg.max_depth, cfg.max_tags):
                pages.append((f"hostile {name}", html))
    diffs = 0
    t0 = time.monotonic()
    for name, page in pages:
        if _outcome(compiled, page, None) != _outcome(hp.python_paragraphs, page, None):
            diffs += 1
            print(f"DIFF {name}", flush=True)
    seeds: list[str | bytes] = _hostile_shapes()
    for i in range(args.start, args.start + args.cases):
        rng = random.Random(args.seed * 1_000_003 + i)
        page = _page(rng, seeds)
        limit = rng.choice((None, None, None, 0, 1, 5, 50))
        a = _outcome(compiled, page, limit)
        b = _outcome(hp.python_paragraphs, page, limit)
        data = _exact_utf8(page)
        if a != b or (data is not None and _outcome(compiled_utf8, data, limit) != b):
            diffs += 1
            print(f"DIFF case {i} (seed {args.seed}): replay with --seed {args.seed} "
                  f"--start {i} --cases 1", flush=True)
        if len(seeds) < 200:
            seeds.append(page)
        elif rng.random() < 0.05:
            seeds[rng.randrange(len(seeds))] = page
        if (i + 1) % 1000 == 0:
            print(f"case {i + 1}: {diffs} differences, {time.monotonic() - t0:.0f} s", flush=True)
    print(f"{args.cases} cases (seed {args.seed}, from {args.start}) + {len(pages)} hostile pages: "
          f"{diffs} differences, 0 crashes, {left[0]} pages left to the Python walk")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())

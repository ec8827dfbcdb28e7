"""Generated and mutated pages through the compiled and the Python sieve features.

    python -m tools.fuzz.sieve --cases N [--seed S] [--start I]

Case ``i`` of seed ``S`` is always the same page (``--start I --cases 1`` replays it). Half
the cases are HTML pages of ``fuzz_native`` (random and misnested markup, huge attributes
and texts, deep nesting, control characters, CJK, broken UTF-8, cut and spliced pages)
turned into paragraphs by the extractor; the other half are paragraph lists written
directly, with what no walk would give but a lake read back may hold: lone surrogates,
NUL, stray link markers, empty and odd path elements, non-ASCII and capital tags, class
names of every feature group in camelCase and capitals, huge texts and paths, ``n_tags``
of any size, and repeats. Each page gets a random language (stoplists, CJK, none).

Both paths must give the same feature matrix bit for bit, the same tree scores of the
shipped model bit for bit and the same labels, and ``matrix_parts`` the paragraphs' paths
and plain texts; a difference is printed with its case
number. A crash of the compiled code kills the process: the last ``case`` line printed
(every 1,000 cases, flushed) locates it. Exit 1 on any difference.

``--module FILE`` loads the compiled features from FILE instead, e.g. a build under
AddressSanitizer (any memory error aborts with its report); the directory of the copy keeps
Cython from naming the module after this checkout::

    mkdir -p /tmp/asan && cp tasks/native/sieve_features.pyx /tmp/asan/
    cython -3 /tmp/asan/sieve_features.pyx -o /tmp/asan/sieve_features.c
    gcc -shared -fPIC -O1 -g -fsanitize=address -fno-omit-frame-pointer \\
        -I"$(python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \\
        /tmp/asan/sieve_features.c -o /tmp/asan/sieve_features.so
    ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \\
        python -m tools.fuzz.sieve --module /tmp/asan/sieve_features.so --cases 5000

``--structure-module FILE`` does the same for the compiled structure columns
(``sieve_structure``, built the same way from its own ``.pyx``); give both to run the whole
compiled matrix under the sanitizer.

``--lines N`` first puts N generated short lines (dates, times, "says:", comment and related
headings, cut, re-cased, with Unicode digits, spaces and word characters and the letters
that fold to ASCII) through the structure columns' C matchers (``line_marks``) and the
Python patterns of ``structure``; paragraph texts of the pages are drawn from the same
pieces now and then.
"""
from __future__ import annotations

import random
import sys
import time

from tools.fuzz.compare import load_module_file, parse_options

MAX_PAGE_CHARS = 3_000_000
LANGS = ("en", "en", "de", "fr", "it", "es", "tr", "ru", "pl", "ja", "zh", "", "el", "xx")
TEXT_PIECES = [
    "the", "The", "of", "and", "it", "is", "der", "die", "und", "le", "la", "de", "il", "è",
    "l'homme", "dell'anno", "L’Année", "d'", "'tis", "o’clock", "don't", "x'y'z", "a’b'c",
    "word", "Word", "WORD", "İstanbul", "İ", "ΣΟΦΟΣ", "σοφός", "Σ", "ß", "ẞ", "ǅ", "ﬁ", "Ω",
    "日本語の", "文章です", "。", "中文", "的", "了", "한국어", "𠮷", "😀", "𐐀𐐨", "\U0010fffd",
    " ", "  ", "\n", "\t", "\u00a0", "\u3000", "\u2028", "\u200b", "\x85", "\x0b", "\x1c",
    ".", "!", "?", "。", "！", ")", "]", "\"", "'", "”", "’", "…", "|", "»", "•", ":", ";",
    "©", "0", "123", "4.5", "%", "€", "-", "_", "#", ">", "\x02", "\x03", "\x00", "\x01",
    "\ud800", "\udfff", "\ufeff", "\u0130\u0307", "A.B.C.", "e.g.", "U.S.", "x" * 200,
    "$", "$5", "£", "¥", "₹", "$ 9", "+$29", "US$",
]
# pieces of the short lines the structure columns match (structure._DATE_LINE and the others)
LINE_PIECES = [
    "jan", "January", "FEB", "mar", "March", "Mar.", "apr", "april", "may", "jun", "june", "jul",
    "july", "aug", "sep", "sept", "Sept.", "september", "oct", "nov", "dec", "december", "ago",
    "AGO", "minute", "minutes", "hour", "hours", "day", "days", "week", "months", "years", "1",
    "2", "12", "123", "2012", "05", "\u0663", "\uff11\uff12", "\u00b2", "4:05", "4.05", "pm",
    "a.m", "p.m.", "PM", "says", "said", "wrote", ":", " :", "reply", "Reply", "report",
    "report abuse", "permalink", "quote", "like", "flag", "recommend", "link to this",
    "comments", "comment", "responses", "response", "replies", "thoughts", "reactions",
    "opinions", "no", "one", "two", "three", "leave", "post", "add", "write", "submit", "a",
    "your", "new", "reader", "user", "discussion", "join", "start", "the", "conversation",
    "what do you think", "trackback", "trackbacks", "related", "recommended", "similar",
    "popular", "trending", "most", "read", "viewed", "emailed", "shared", "commented", "more",
    "latest", "recent", "top", "posts", "stories", "articles", "news", "reads", "videos",
    "links", "headlines", "entries", "from", "on", "in", "you", "might", "also", "enjoy",
    "be interested", "see", "elsewhere", "around the web", "(", ")", "(12)", "/", "-", ".", "_",
    " ", "  ", "\u00a0", "\u3000", "\n", "\t", "x", "\u00e9", "\u65e5\u672c", "\u0130",
    "\u212a", "\u017f", "\u0131", "!", "?", "...", "#", "\x85", "\u2028", "\x1c", "0", "9",
    "\u216b", "ab_", "\x02", "\x03"]
LINE_SEPS = ["", " ", " ", " ", "", "\n", ".", "-", "/", ":", "\u00a0"]
TAGS = ["body", "div", "p", "li", "ul", "td", "tr", "table", "h1", "h2", "H3", "h6", "h7", "h",
        "span", "a", "b", "font", "center", "nav", "header", "footer", "aside", "article",
        "main", "form", "select", "option", "section", "blockquote", "dd", "dt", "th", "pre",
        "DIV", "Select", "\u212abd", "\u212aey", "blocKquote", "my-widget", "o:p", "ünï", "",
        "x" * 60, "h1\u0130"]
CLASS_WORDS = ["nav", "Nav", "NAV", "navBar", "mainContent", "HTMLParser", "commentsList",
               "sidebar", "side-bar", "ad", "AdSlot", "footer", "site_footer", "Footer2",
               "related", "shareButtons", "byline", "search", "content", "post", "entry",
               "x1", "", "日本", "a.b", "c#d", "\u212aey", "ÜberNav", "menu" * 10, "q" * 40,
               "postBody", "cooked", "tabPanel", "product-card", "heroSection", "listingItem"]


def _path(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.choice((0, 1, 1, 2, 3, 4, 6, 10, 30))):
        el = rng.choice(TAGS)
        for _ in range(rng.choice((0, 0, 1, 2))):
            el += rng.choice((".", ".", "#")) + rng.choice(CLASS_WORDS)
        parts.append(el)
    if rng.random() < 0.02:
        parts.append("div." + ".".join(rng.choice(CLASS_WORDS) for _ in range(2000)))
    return ">".join(parts)


def _line(rng: random.Random) -> str:
    """A short line of structure pieces: cut, re-cased, at most 96 characters."""
    line = "".join(rng.choice(LINE_PIECES) + rng.choice(LINE_SEPS)
                   for _ in range(rng.choice((1, 2, 2, 3, 3, 4, 5, 6, 8, 12))))
    if rng.random() < 0.3:
        line = line[rng.randrange(len(line) + 1):]
    if rng.random() < 0.3:
        line = line.upper() if rng.random() < 0.5 else line.title()
    return line[:96]


def _lines(count: int, seed: int) -> int:
    """Short lines through the C matchers and the Python patterns; the differences."""
    from warclake.tasks.extract.boilerplate import features, structure

    ss = sys.modules.get("warclake.tasks.native.sieve_structure")
    if ss is None:
        import warclake.tasks.native.sieve_structure as ss
    ss.configure(structure, features._STRUCTURE.start)   # as compiled does
    rng = random.Random(seed)
    diffs = in_python = 0
    patterns = (structure._DATE_LINE, structure._RECORD_LINE, structure._COMMENT_HEAD,
                structure._RELATED_HEAD)
    for _ in range(count):
        line = _line(rng)
        got = ss.line_marks(line)
        if got is None:
            in_python += 1
            continue
        want = tuple(p.search(line) is not None for p in patterns)
        if tuple(bool(g) for g in got) != want:
            diffs += 1
            print(f"DIFF line {line!r}: C {got}, patterns {want}", flush=True)
    print(f"{count} lines (seed {seed}): {diffs} differences, {in_python} left to the patterns",
          flush=True)
    return diffs


def _text(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.05:
        return ""
    if r < 0.15:
        return _line(rng)
    if r < 0.06:  # a huge text
        return (" ".join(rng.choice(TEXT_PIECES) for _ in range(50))) * rng.randint(50, 400)
    return "".join(rng.choice(TEXT_PIECES) + rng.choice(("", " ", " ", " ", "\n"))
                   for _ in range(rng.choice((1, 2, 5, 12, 40, 120))))


def _paragraphs(rng: random.Random, seeds: list):
    from warclake.tasks.extract.paragraph import Paragraph

    if seeds and rng.random() < 0.3:  # a mutation of an earlier page: cut, splice, repeat
        base = list(rng.choice(seeds))
        other = rng.choice(seeds)
        a, b = sorted(rng.randrange(len(base) + 1) for _ in range(2))
        choice = rng.random()
        if choice < 0.3:
            out = base[:a] + base[b:]
        elif choice < 0.6:
            c = rng.randrange(len(other) + 1)
            out = base[:a] + other[c:c + rng.randint(0, 50)] + base[a:]
        else:
            out = base[:a] + base[a:b] * rng.randint(2, 4) + base[b:]
        return _capped(out[:3000])
    paths = [_path(rng) for _ in range(rng.randint(1, 12))]
    texts = [_text(rng) for _ in range(rng.randint(1, 12))]
    return _capped([Paragraph(rng.choice(paths), rng.choice(texts),
                              rng.choice((0, 0, 1, 2, 3, 7, 40, 10**6)))
                    for _ in range(rng.choice((1, 2, 3, 8, 30, 100, 400)))])


def _capped(paras: list) -> list:
    """The first paragraphs of a page up to MAX_PAGE_CHARS of text (the Python reference
    needs ~40 bytes a character: a 100 M-character page would take gigabytes)."""
    size = 0
    for k, p in enumerate(paras):
        size += len(p.text)
        if size > MAX_PAGE_CHARS:
            return paras[:k]
    return paras


def _outcome(fn, *args):
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - the exception is part of the outcome
        return (type(exc).__name__, str(exc))


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    structure_module = None
    lines = 0
    if "--lines" in argv:
        k = argv.index("--lines")
        lines = int(argv[k + 1])
        del argv[k:k + 2]
    if "--structure-module" in argv:
        k = argv.index("--structure-module")
        structure_module = argv[k + 1]
        del argv[k:k + 2]
    args = parse_options("sieve", __doc__, argv, 1000)
    # both must be in place before features imports (and checks) them
    if args.module:
        load_module_file("warclake.tasks.native.sieve_features", args.module, register=True)
    if structure_module:
        load_module_file("warclake.tasks.native.sieve_structure", structure_module, register=True)

    from tools.fuzz.paragraph_walk import _hostile_shapes, _page
    from warclake.tasks.extract.boilerplate import compiled, features, model
    from warclake.tasks.extract.html_paragraphs import extract_paragraphs

    if features._COMPILED is None:
        print(f"no compiled features to compare: {compiled.REASON}", file=sys.stderr)
        return 2
    print(f"compiled features: {sys.modules['warclake.tasks.native.sieve_features'].__file__}; "
          f"structure columns: {compiled.STRUCTURE_STATUS} "
          f"{getattr(sys.modules.get('warclake.tasks.native.sieve_structure'), '__file__', '')}",
          flush=True)
    forest = model.load()
    sf = sys.modules["warclake.tasks.native.sieve_features"]
    line_diffs = _lines(lines, args.seed) if lines else 0

    def both(paras, lang):
        X = _outcome(features._COMPILED, paras, lang)
        R = _outcome(features.python_matrix, paras, lang)
        if isinstance(X, tuple) or isinstance(R, tuple):
            return X == R, "exception" if X == R else f"outcome {X!r:.200} != {R!r:.200}"
        if X.tobytes() != R.tobytes():
            cols = sorted({features.NAMES[c] for c in ((X != R) | (X.view("u8") != R.view("u8"))).nonzero()[1]})
            return False, f"columns {cols[:8]}"
        if compiled.margin(forest, X).tobytes() != forest.margin(R).tobytes():
            return False, "tree scores"
        parts = _outcome(sf.matrix_parts, paras, lang, len(features.NAMES))
        if isinstance(parts, tuple) and len(parts) == 3 and (
                parts[1] != [p.path for p in paras] or parts[2] != [p.plain for p in paras]):
            return False, "paths or plain texts of matrix_parts"
        return True, ""

    html_seeds: list = _hostile_shapes()
    para_seeds: list = []
    diffs = errors = n_paras = 0
    t0 = time.monotonic()
    for i in range(args.start, args.start + args.cases):
        rng = random.Random(args.seed * 1_000_003 + i)
        if rng.random() < 0.5:
            page = _page(rng, html_seeds)
            paras = _outcome(extract_paragraphs, page)
            if isinstance(paras, tuple):
                paras = []
            if len(html_seeds) < 200:
                html_seeds.append(page)
            elif rng.random() < 0.05:
                html_seeds[rng.randrange(len(html_seeds))] = page
        else:
            paras = _paragraphs(rng, para_seeds)
            if len(para_seeds) < 200:
                para_seeds.append(paras)
            elif rng.random() < 0.05:
                para_seeds[rng.randrange(len(para_seeds))] = paras
        lang = rng.choice(LANGS)
        n_paras += len(paras)
        same, why = both(paras, lang)
        errors += why == "exception"
        if not same:
            diffs += 1
            print(f"DIFF case {i} (seed {args.seed}, {why}): replay with --seed {args.seed} "
                  f"--start {i} --cases 1", flush=True)
        if (i + 1) % 1000 == 0:
            print(f"case {i + 1}: {diffs} differences, {time.monotonic() - t0:.0f} s", flush=True)
    print(f"{args.cases} cases (seed {args.seed}, from {args.start}), {n_paras} paragraphs: "
          f"{diffs} differences, 0 crashes, {errors} pages both paths refused alike")
    return 1 if diffs or line_diffs else 0


if __name__ == "__main__":
    sys.exit(main())

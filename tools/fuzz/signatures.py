"""Generated lake documents through the compiled and the numpy corpus signatures.

    python -m tools.fuzz.signatures --cases N [--seed S] [--start I] [--module FILE]

Case ``i`` of seed ``S`` is always the same batch (``--start I --cases 1`` replays it): one to
six lake texts (or empty, or None) of paragraphs with and without CSS paths, made of ASCII,
Latin, Greek (final sigma), Cyrillic, CJK, astral characters, combining marks, NFKC forms,
every kind of Unicode whitespace, the lake's own separators and link markers in and out of
place, and texts shorter than an n-gram; paragraph labels absent, short, long or mixed;
random n-gram sizes and MinHash sizes. Each batch goes through (NFKC by the one-look-up
table where every character of a text is in it, by unicodedata otherwise)
``signatures.sign_documents`` both ways; a difference is printed with its case number. A
crash of the compiled code kills the process: the last ``case`` line printed (every 10,000
cases, flushed) locates it. Exit 1 on any difference.

``--module FILE`` loads the compiled module from FILE instead, e.g. a build under
AddressSanitizer (any memory error aborts with its report)::

    mkdir -p /tmp/asan && cp tasks/native/corpus_*.pyx tasks/native/corpus_*.pxi /tmp/asan/
    cython -3 /tmp/asan/corpus_signatures.pyx -o /tmp/asan/corpus_signatures.c
    gcc -shared -fPIC -O1 -g -fsanitize=address -fno-omit-frame-pointer \\
        -I"$(python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \\
        /tmp/asan/corpus_signatures.c -o /tmp/asan/corpus_signatures.so
    ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \\
        python -m tools.fuzz.signatures --module /tmp/asan/corpus_signatures.so --cases 20000
"""
from __future__ import annotations

import random
import sys

from tools.fuzz.compare import compare_cases, load_module_file, parse_options

PIECES = ["word", "Two Words", "ΟΔΟΣ", "ΑΣ", "σ", "Σ", "ς", "Привет", "日本語の文章", "中文段落", "한국어",
          "\U0002000b", "\U0001F600", "\U0010fffd", "e\u0301", "\u0301", "\u1e9b\u0323", "ﬁ", "Ａ",
          "²", "㎏", "İ", "ß", "ǅ", "\u212a", "ſ", " ", "  ", "\t", "\u00a0", "\u3000", "\u2028",
          "\u2029", "\x85", "\x0b", "\x0c", "\r", "\x1d", "\x1e", "\x1f", "\u200b", "\ufeff",
          "\x02", "\x03", "\x1c", "\n", "\n\n", "\n\n\n", ".", "#", ">", "-", "'", "a", "é", "x" * 60]
PATHS = ["body>p", "body>div.nav>ul>li", "body>footer>p", "html>body>div#main>article>p",
         "body>div.site-footer>a", "body>aside", "body>div.content-sidebar>p", "", "body>ΣΑ",
         "body>div.日本", "body>p\n"]
LABELS = ("good", "bad", None)


def _paragraph(rng: random.Random) -> str:
    body = "".join(rng.choice(PIECES) for _ in range(rng.choice((0, 1, 2, 3, 5, 8, 20, 60))))
    r = rng.random()
    if r < 0.15:
        return body                                   # no path
    return rng.choice(PATHS) + "\x1c" + body


def case(seed: int, i: int) -> tuple[list, list, int, int, int]:
    """(texts, labels, paragraph n-gram, document n-gram, MinHash size) of case ``i``."""
    rng = random.Random(f"{seed}:{i}")
    texts, labels = [], []
    for _ in range(rng.randint(1, 6)):
        r = rng.random()
        if r < 0.05:
            texts.append(None)
        elif r < 0.1:
            texts.append("")
        else:
            texts.append("\n\n".join(_paragraph(rng) for _ in range(rng.randint(1, 12))))
        r = rng.random()
        if r < 0.3:
            labels.append(None)
        else:
            n = (texts[-1] or "").count("\n\n") + 1 + rng.choice((-2, -1, 0, 0, 0, 1))
            labels.append([rng.choice(LABELS) if rng.random() < 0.1 else rng.choice(("good", "bad"))
                           for _ in range(max(0, n))])
    return (texts, labels, rng.choice((1, 2, 3, 3, 4)), rng.choice((1, 2, 5, 5, 7)),
            rng.choice((1, 7, 64, 120, 128)))


def _load(path: str):
    from warclake.tasks.corpus.signals.normalise import simple_nfkc_lower_table

    mod = load_module_file("warclake.tasks.native.corpus_signatures", path)
    mod.configure_nfkc(simple_nfkc_lower_table())
    return mod


def main(argv: list[str] | None = None) -> int:
    from warclake.tasks.corpus.signals import signatures as sg
    from warclake.tasks.corpus.signals.quality import is_chrome_path

    opts = parse_options("signatures", __doc__, argv, 10_000)
    native = _load(opts.module) if opts.module else sg.compiled_module()
    if native is None:
        print(f"fuzz_signatures: no compiled signatures ({sg.REASON})", file=sys.stderr)
        return 2

    def difference(i: int) -> str | None:
        texts, labels, pn, dn, perm = case(opts.seed, i)
        texts = [t or "" for t in texts]
        got = sg._sign_compiled(native, texts, labels, is_chrome_path, pn, dn, perm)
        want = sg.sign_documents_reference(texts, labels, is_chrome_path, pn, dn, perm)
        return None if sg.signed_equal(got, want) else repr(texts)

    return compare_cases(opts, difference)


if __name__ == "__main__":
    raise SystemExit(main())

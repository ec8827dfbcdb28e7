"""Generated texts through the compiled and the Python first-pass language scores.

    python -m tools.fuzz.language_first_pass --cases N [--seed S] [--start I] [--module FILE]

Case ``i`` of seed ``S`` is always the same text (``--start I --cases 1`` replays it): words
and trigrams of lingua's models (English, German, Russian, Vietnamese...), letters of every
class of the letter table's edges (ASCII, Latin-1 with its two non-letters, Latin
Extended-A/B up to U+024F and just past it, Cyrillic with its combining marks and the
characters past U+04FF), capitals whose lower case is longer (U+0130) or lies outside the
table (U+023A), astral characters, CJK, digits, punctuation and every kind of whitespace;
words of one to hundreds of letters; empty texts and texts of 100,000 characters. Each text
goes through ``first_pass.scores`` both ways; a difference is printed with its case number.
A crash of the compiled code kills the process: the last ``case`` line printed (every
10,000 cases, flushed) locates it. Exit 1 on any difference.

``--module FILE`` loads the compiled module from FILE instead, e.g. a build under
AddressSanitizer (any memory error aborts with its report)::

    mkdir -p /tmp/asan && cp tasks/native/language_trigrams.pyx /tmp/asan/
    cython -3 /tmp/asan/language_trigrams.pyx -o /tmp/asan/language_trigrams.c
    gcc -shared -fPIC -O1 -g -fsanitize=address -fno-omit-frame-pointer \\
        -I"$(python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \\
        -I"$(python -c 'import numpy; print(numpy.get_include())')" \\
        /tmp/asan/language_trigrams.c -o /tmp/asan/language_trigrams.so
    ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \\
        python -m tools.fuzz.language_first_pass --module /tmp/asan/language_trigrams.so --cases 5000
"""
from __future__ import annotations

import random
import sys

from tools.fuzz.compare import compare_cases, load_module_file, parse_options

WORDS = ["the", "and", "The", "THE", "with", "which", "through", "und", "der", "schließt", "Straße",
         "öffnet", "à", "été", "garçon", "más", "niño", "ação", "và", "của", "được", "Việt",
         "и", "в", "Библиотека", "открывается", "ЗДРАВСТВУЙТЕ", "її", "ґанок", "ў", "ђак", "қазақ",
         "ab", "a", "x", "q" * 40, "abcdefghijklmnopqrstuvwxyz" * 8]
PIECES = ["\u00d7", "\u00f7", "\u00aa", "\u00b5", "\u00ba", "\u00c0", "\u00ff", "\u0100", "\u017f",
          "\u0180", "\u01c4", "\u01c5", "\u01c6", "\u0130", "\u0131", "\u023a", "\u023e", "\u024f",
          "\u0250", "\u02b0", "\u0370", "\u03a3", "\u03c2", "\u03ff", "\u0400", "\u0481", "\u0482",
          "\u0483", "\u0489", "\u048a", "\u04c0", "\u04cf", "\u04ff", "\u0500", "\u052f", "\u0530",
          "\u1e9e", "\u2c65", "\U0001d400", "\U0010fffd", "\U0001F600", "日本語", "한국어", "ไทย",
          "e\u0301", "\u0301", "\ufb01", "\uff21", "123", "3.14", "-", "'", "’", ".", ",", "!",
          " ", "  ", "\t", "\n", "\u00a0", "\u3000", "\u2028", "\x00", "\x7f", "\x85"]


def text_of(seed: int, i: int) -> str:
    rng = random.Random(f"{seed}:{i}")
    r = rng.random()
    if r < 0.02:
        return ""
    n = rng.choice((1, 2, 3, 5, 10, 40, 200)) if r < 0.99 else 20_000
    out = []
    for _ in range(n):
        x = rng.random()
        if x < 0.5:
            out.append(rng.choice(WORDS))
        elif x < 0.8:
            out.append(rng.choice(PIECES))
        else:   # a run of random characters from the table's range and its edges
            out.append("".join(chr(rng.choice((rng.randrange(0x20, 0x540), rng.randrange(0x540, 0x3000))))
                               for _ in range(rng.randint(1, 12))))
        if rng.random() < 0.6:
            out.append(" ")
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    from warclake.tasks.extract import language_first_pass as fp

    opts = parse_options("language_first_pass", __doc__, argv, 10_000)
    t = fp.table()
    if t is None:
        print("fuzz_first_pass: lingua's models could not be read", file=sys.stderr)
        return 2
    if opts.module:
        native = load_module_file("warclake.tasks.native.language_trigrams", opts.module)
        native.configure(fp.LETTERS, fp.LOWER, t.keys, t.penalty)
    else:
        native = t.module
    if native is None:
        print(f"fuzz_first_pass: no compiled first-pass scores ({t.reason})", file=sys.stderr)
        return 2

    def difference(i: int) -> str | None:
        text = text_of(opts.seed, i)
        got, want = tuple(native.scores(text)), fp.reference_scores(text, t)
        if got == want:
            return None
        return f"known {got[0]} against {want[0]}: {text[:300]!r}"

    return compare_cases(opts, difference)


if __name__ == "__main__":
    raise SystemExit(main())

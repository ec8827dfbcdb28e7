"""Generated pages through the compiled and the Python language text scans.

    python -m tools.fuzz.language_text --cases N [--seed S] [--start I] [--module FILE]

Case ``i`` of seed ``S`` is always the same text (``--start I --cases 1`` replays it): the
openers and closers of hidden blocks in every spelling the patterns know and near misses
(``<scripts``, ``<script-x``, ``</SCRİPT``, ``</ſtyle``, unclosed ones, comments cut short),
markup, the screen's English and foreign words in every case, words with digits,
underscores and accents, letters at the edges of the Latin table (U+00D7, U+00F7, U+024F,
U+0250), every kind of Unicode whitespace, CJK, astral characters and runs of random
characters; texts of 0 to ~100,000 characters, with small and large windows. Each text
goes through ``language_buffer``, ``latin_letters`` and ``english_words_share`` both ways;
a difference is printed with its case number. Exit 1 on any difference.

``--module FILE`` loads the compiled module from FILE instead, e.g. a build under
AddressSanitizer (any memory error aborts with its report)::

    mkdir -p /tmp/asan && cp tasks/native/language_text.pyx /tmp/asan/
    cython -3 --module-name warclake.tasks.native.language_text /tmp/asan/language_text.pyx \\
        -o /tmp/asan/language_text.c
    gcc -shared -fPIC -O1 -g -fsanitize=address -fno-omit-frame-pointer \\
        -I"$(python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \\
        /tmp/asan/language_text.c -o /tmp/asan/language_text.so
    PYTHONMALLOC=malloc ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \\
        python -m tools.fuzz.language_text --module /tmp/asan/language_text.so --cases 5000
"""
from __future__ import annotations

import random
import sys

from tools.fuzz.compare import compare_cases, load_module_file, parse_options

MARKUP = ["<script>", "<SCRIPT type=x>", "<Script\n>", "</script>", "</SCRIPT >", "</script\t>",
          "<style>", "<STYLE a>", "</style>", "</Style\n >", "<svg>", "<SVG>", "</svg>", "<noscript>",
          "</NOSCRIPT>", "<template>", "</Template>", "<!--", "-->", "--", "<!-", "<scripts>",
          "<script-x>", "<script_y>", "<scriptα>", "</SCRİPT>", "</ſtyle>", "</ſcript>", "</scrıpt>",
          "<sCript>", "<p>", "</p>", "<div class='a'>", "<", ">", "</", "<a href=/x>", "&amp;",
          "<title>", "</title>", "<body>"]
WORDS = ["the", "The", "THE", "and", "that", "with", "which", "their", "about", "after", "one",
         "der", "und", "für", "Für", "não", "är", "että", "için", "của", "và", "là", "có", "más",
         "yang", "ini", "ang", "ng", "lorem", "ipsum", "it", "its", "all", "can", "more",
         "dog_s", "2nd", "x²", "٣٤", "café", "été", "ÉTÉ", "İstanbul", "ı", "ſ", "K", "straße",
         "a", "x" * 17, "abcdefghijklmnop", "abcdefghijklmnopq"]
PROSE = ["the", "and", "that", "with", "this", "from", "have", "which", "they", "you", "are", "be",
         "house", "garden", "river", "people", "said", "over", "time", "year", "The", "And"]
PIECES = ["\u00d7", "\u00f7", "\u00c0", "\u00d6", "\u00d8", "\u00f6", "\u00f8", "\u024f", "\u0250",
          "\u00a0", "\u1680", "\u2000", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
          "\u0085", "\x1c", "\x1d", "\x1e", "\x1f", "\x7f", "\x7e", " ", "\n", "\t", "\r", "\x0b", "\x0c",
          "日本語", "あ", "中文", "한국어", "Русский", "\U0001f600", "\U00020000", "½", "_", "-", "0", "9"]


def text_of(seed: int, i: int) -> tuple[str, int, int]:
    """(text, max_chars, window) of case ``i``."""
    rng = random.Random(f"{seed}:{i}")
    r = rng.random()
    max_chars = rng.choice((1, 3, 10, 100, 1000))
    window = rng.choice((1, 7, 50, 100, 500, 20480))
    if r < 0.02:
        return "", max_chars, window
    n = rng.choice((1, 3, 10, 40, 200, 1000)) if r < 0.99 else 20_000
    if r < 0.3:   # prose the screen may pass: English words, a few others near its limits
        words = [rng.choice(PROSE) if rng.random() < 0.9 else rng.choice(WORDS + PIECES)
                 for _ in range(rng.choice((10, 14, 15, 16, 40, 300)))]
        return " ".join(words), max_chars, window
    out = []
    for _ in range(n):
        x = rng.random()
        if x < 0.25:
            out.append(rng.choice(MARKUP))
        elif x < 0.6:
            out.append(rng.choice(WORDS))
        elif x < 0.85:
            out.append(rng.choice(PIECES))
        elif x < 0.95:   # filler: long hidden contents and long words
            out.append(rng.choice("xé日 ") * rng.choice((1, 10, 250, 1000, 5000)))
        else:
            out.append("".join(chr(rng.choice((rng.randrange(0x20, 0x300), rng.randrange(0x300, 0x3100),
                                               rng.randrange(0x10000, 0x10400))))
                               for _ in range(rng.randint(1, 12))))
        if rng.random() < 0.5:
            out.append(" ")
    return "".join(out), max_chars, window


def main(argv: list[str] | None = None) -> int:
    from warclake.tasks.extract import language as lang

    opts = parse_options("language_text", __doc__, argv, 10_000)
    if opts.module:
        native = load_module_file("warclake.tasks.native.language_text", opts.module)
        native.configure(lang.ENGLISH_WORDS, lang.FOREIGN_WORDS, lang._OPENERS, lang._HIDDEN_CLOSE)
    else:
        native = lang._TEXT
    if native is None:
        print("fuzz_language_text: no compiled language text scans", file=sys.stderr)
        return 2
    screen = (lang.SCREEN_MIN_WORDS, lang.SCREEN_MIN_SHARE, lang.SCREEN_MIN_DISTINCT,
              lang.SCREEN_MAX_FOREIGN, lang.SCREEN_MAX_ACCENTED)

    def difference(i: int) -> str | None:
        text, max_chars, window = text_of(opts.seed, i)
        got = native.language_buffer(text, max_chars, window, lang.READ_FACTOR)
        want = lang.reference_language_buffer(text, max_chars, window)
        if got != want:
            return f"buffer {got[:80]!r} against {want[:80]!r} ({max_chars}, {window}): {text[:300]!r}"
        letters = lang.reference_latin_letters(text)
        if native.latin_letters(text) != letters:
            return f"latin letters {native.latin_letters(text)} against {letters}: {text[:300]!r}"
        got, want = native.english_words_share(text, letters, *screen), lang.reference_english_words_share(text, letters)
        if got != want:
            return f"screen {got} against {want}: {text[:300]!r}"
        return None

    return compare_cases(opts, difference)


if __name__ == "__main__":
    raise SystemExit(main())

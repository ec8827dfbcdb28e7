"""Generated lake documents through the compiled and the Python quality metrics.

    python -m tools.fuzz.quality --cases N [--seed S] [--start I] [--module FILE]

Case ``i`` of seed ``S`` is always the same document (``--start I --cases 1`` replays it):
paragraphs with and without CSS paths (chrome paths among them), made of words, stop words,
runs of plain ASCII of 15 to 33 characters, CJK, kana, Hangul, Thai, astral characters,
combining marks, capital sigma, dotted capital I and other characters whose lower case is
longer, every kind of Unicode whitespace,
bullets, ellipses, sentence ends and closing quotes, the phrases the line rules look for,
curly brackets, the lake's separators and link markers in and out of place; repeated
lines, paragraphs and runs of words (sometimes hundreds of times); empty documents; labels
absent, fitting or not; a language among en, ja, zh, th, de and none. Each document goes
through ``quality`` both ways; a difference is printed with its case number. A crash of
the compiled code kills the process: the last ``case`` line printed (every 10,000 cases,
flushed) locates it. Exit 1 on any difference.

``--module FILE`` loads the compiled module from FILE instead, e.g. a build under
AddressSanitizer (any memory error aborts with its report)::

    mkdir -p /tmp/asan && cp tasks/native/corpus_*.pyx tasks/native/corpus_*.pxi /tmp/asan/
    cython -3 /tmp/asan/corpus_quality.pyx -o /tmp/asan/corpus_quality.c
    gcc -shared -fPIC -O1 -g -fsanitize=address -fno-omit-frame-pointer \\
        -I"$(python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \\
        /tmp/asan/corpus_quality.c -o /tmp/asan/corpus_quality.so
    ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \\
        python -m tools.fuzz.quality --module /tmp/asan/corpus_quality.so --cases 5000
"""
from __future__ import annotations

import random
import sys

from tools.fuzz.compare import compare_cases, load_module_file, parse_options

WORDS = ["the", "be", "to", "of", "and", "that", "have", "with", "The", "THE", "word", "river",
         "Internationalisation", "a", "I", "x" * 40, "42", "3.14", "#tag", "{", "}", "{x}",
         "javascript", "JavaScript", "Terms of Use", "privacy policy", "uses cookies", "cookie",
         "lorem ipsum", "Lorem Ipsum", "LOREM", "ipsum",
         # runs of plain ASCII (the counts take them at once): punctuation and controls inside
         # words, phrases inside longer words, lengths about the 16 positions of a look-up
         "don't", "(word),", "e-mail", "a\x01b", "\x7f", "myjavascriptcode", "xlorem", "Privacy-Policy",
         "x" * 15, "Y" * 16, "abcdefghijklmnopq", "z" * 31, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg",
         # words with punctuation around them, and of nothing else; sentence ends with
         # closing marks after them and without
         "the,", "(the)", "“with”", "«and»", "SS14,", "SS14", "—", "...the", "to!", "¿of?", "'that'",
         "·", "„be‚", "»", "more »", '."', ".”", ".)", "!’", "{x}.", "{."]
PIECES = ["日本語の文章", "東京", "ひらがな", "カタカナ", "中文段落", "隐私政策", "使用条款", "プライバシーポリシー",
          "利用規約", "クッキー", "한국어", "개인정보", "이용약관", "ภาษาไทย", "ຂໍ້ຄວາມ", "ខ្មែរ", "မြန်မာ",
          "\U0002000b", "\U0002a6d6", "\U0001F600", "\U00010400", "\U0010fffd", "e\u0301", "\u0301",
          "ΟΔΟΣ", "ΑΣ", "Σ", "σ", "ς", "İ", "ﬁ", "ß", "ǅ", "\u212a", "Ａ", "ａ", "Ⅻ", "\u0130stanbul",
          " ", "  ", "\t", "\u00a0", "\u3000", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\r",
          "\x1d", "\x1e", "\x1f", "\u200b", "\ufeff", "\n", "\n\n", "\n\n\n", "\x02", "\x03", "\x1c",
          ".", "...", "....", "…", "．．．", "・・・", "・", "!", "?", "。", "！", "？", "｡", "؟", "।",
          '"', "'", "”", "’", "»", "」", "』", ")", "•", "‣", "●", "○", "◦", "▪", "■", "►", "▶",
          "➢", "➤", "✓", "✔", "·", "- ", "* ", "– ", "— ", "→", "-", "*", "#", ">"]
PATHS = ["body>p", "body>div.nav>ul>li", "body>footer>p", "html>body>div#main>article>p",
         "body>div.site-footer>a", "body>aside", "body>div.content-sidebar>p", "", "body>ΣΑ",
         "body>div.日本", "body>nav>a", "body>div#comments>p",
         # class names with and without a boundary after the chrome word, and layouts
         "body>div.commented>p", "body>div.sidebar-right>p", "body>div.left-sidebar>p",
         "body>div.global-nav-false", "body>div.Main-Nav_links>a", "body>div.nav--x", "body>div.site-",
         "body>div.a.NAVIGATION#x>p", "body>div.right-sidebar#page-content>p", "body>ul.nav-open-menu>li",
         # a page's frame: items that differ only in their digits, chrome on it and past it, not ASCII
         "body>div#comments>article#c-1>p", "body>div#comments>article#c-22>p", "body>div#comments>article#c-22",
         "body>div#comments>div.comment-3_wrap>p", "body>div#comments>div.comment-47_wrap>p",
         "body>div.sidebar-container>main>p", "body>div.sidebar-container>nav.é>p", "body>div.menu-ü>p",
         "body>div#comments>p.ü1", "body>div#comments>", "body>div#comments>>p"]
LANGS = ("en", "en", "ja", "zh", "th", "de", None)
LABELS = ("good", "bad", None)


def _line(rng: random.Random) -> str:
    out = []
    for _ in range(rng.choice((0, 1, 2, 3, 5, 8, 12, 30))):
        r = rng.random()
        out.append(rng.choice(WORDS) if r < 0.45 else rng.choice(PIECES))
        if rng.random() < 0.5:
            out.append(" ")
    return "".join(out)


def _body(rng: random.Random) -> str:
    lines = [_line(rng) for _ in range(rng.choice((1, 1, 1, 2, 3, 6)))]
    if rng.random() < 0.1:    # a line repeated
        lines += [rng.choice(lines)] * rng.randint(1, 4)
    return "\n".join(lines)


def document(seed: int, i: int) -> tuple[str, list | None, str | None]:
    """(text, labels, lang) of case ``i``."""
    rng = random.Random(f"{seed}:{i}")
    r = rng.random()
    if r < 0.03:
        text = ""
    else:
        paras = []
        for _ in range(rng.randint(1, 14)):
            body = _body(rng)
            if rng.random() < 0.15:
                paras.append(body)                         # no path
            else:
                paras.append(rng.choice(PATHS) + "\x1c" + body)
        if rng.random() < 0.15:                            # paragraphs repeated
            paras += [rng.choice(paras)] * rng.randint(1, 5)
        text = "\n\n".join(paras)
        if rng.random() < 0.05:                            # huge repetition of a run of words
            run = " ".join(rng.choice(WORDS + PIECES[:20]) for _ in range(rng.randint(1, 12)))
            text += "\n\nbody>p\x1c" + " ".join([run] * rng.choice((50, 300, 2000)))
    r = rng.random()
    if r < 0.35:
        labels = None
    else:
        n = text.count("\n\n") + 1 + rng.choice((-2, -1, 0, 0, 0, 0, 1))
        labels = [rng.choice(LABELS) if rng.random() < 0.05 else rng.choice(("good", "bad"))
                  for _ in range(max(0, n))]
    return text, labels, rng.choice(LANGS)


def _load(path: str):
    from warclake.tasks.corpus.signals import quality

    mod = load_module_file("warclake.tasks.native.corpus_quality", path)
    mod.configure(quality._CLASS.tobytes(), quality._lower_table())
    return mod


def main(argv: list[str] | None = None) -> int:
    from warclake.tasks.corpus.signals import quality as q

    opts = parse_options("quality", __doc__, argv, 10_000)
    native = _load(opts.module) if opts.module else q.compiled_module()
    if native is None:
        print(f"fuzz_quality: no compiled quality metrics ({q.REASON})", file=sys.stderr)
        return 2

    def difference(i: int) -> str | None:
        text, labels, lang = document(opts.seed, i)
        got = q._metrics_compiled(native, text, labels, lang)
        want = q.document_metrics_reference(text, labels, lang)
        if q.metrics_equal(got, want):
            return None
        return f"{[k for k in want if not q.metrics_equal({k: got.get(k)}, {k: want[k]})]}: {text[:300]!r}"

    return compare_cases(opts, difference)


if __name__ == "__main__":
    raise SystemExit(main())

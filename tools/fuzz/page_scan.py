"""Generated pages through the compiled and the Python page pre-scan.

    python -m tools.fuzz.page_scan --cases N [--seed S] [--start I] [--module FILE]

Case ``i`` of seed ``S`` is always the same page (``--start I --cases 1`` replays it): pieces
of markup around what the scan looks for -- ``<`` and ``</`` at the page's ends and in runs,
``<noscript`` and ``</noscript`` in every case with every terminator and near misses, raw
texts just under, at and over NOSCRIPT_MIN_CHARS, character references to U+0001-U+0005 in
decimal and hex with leading zeros and (hex) digits after them, the bytes 0x00-0x06, UTF-8
of other scripts and random bytes; empty pages, pages of one byte and pages of 300 KB (past
the scan's blocks of 255 bytes). Each page goes through ``page_scan.scan`` both ways, the
compiled one on a copy of exactly the page's size; a difference is printed with its case
number. Exit 1 on any difference.

``--module FILE`` loads the compiled module from FILE instead, e.g. a build under
AddressSanitizer (any memory error aborts with its report)::

    mkdir -p /tmp/asan && cp tasks/native/page_scan.pyx /tmp/asan/
    cython -3 --module-name warclake.tasks.native.page_scan /tmp/asan/page_scan.pyx -o /tmp/asan/page_scan.c
    gcc -shared -fPIC -O1 -g -fsanitize=address -fno-omit-frame-pointer \\
        -I"$(python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \\
        /tmp/asan/page_scan.c -o /tmp/asan/page_scan.so
    PYTHONMALLOC=malloc ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \\
        python -m tools.fuzz.page_scan --module /tmp/asan/page_scan.so --cases 20000
"""
from __future__ import annotations

import random
import sys

import numpy as np

from tools.fuzz.compare import compare_cases, load_module_file, parse_options

PIECES = [b"<", b"</", b"<<", b"<//", b">", b"/", b"<p>", b"</p>", b"<div class=a>", b"<nav>", b"<n",
          b"<noscript>", b"<NOSCRIPT>", b"<NoScript ", b"<noscrip", b"<noscriptx>", b"< noscript>",
          b"</noscript>", b"</NOSCRIPT\t", b"</noscript\n", b"</noscript\x0c", b"</noscript\r",
          b"</noscript ", b"</noscript/", b"</noscript\x0b", b"</noscriptx", b"</noscript", b"</ noscript>",
          b"&", b"&#", b"&#x", b"&#X", b"&#1", b"&#5", b"&#6", b"&#0", b"&#000003", b"&#x0004",
          b"&#x5f", b"&#x5g", b"&#15", b"&#1;", b"&amp;", b"&#38;#1;", b"#1", b"x", b"0", b"9",
          b"a", b"f", b"F", b"G", b";",
          b"\x00", b"\x01", b"\x02", b"\x03", b"\x04", b"\x05", b"\x06", b"\x7f", b"\xff",
          "日本語".encode(), "é".encode(), b"\xef\xbb\xbf", b" ", b"\n", b"\t"]


def page_of(seed: int, i: int) -> bytes:
    rng = random.Random(f"{seed}:{i}")
    r = rng.random()
    if r < 0.02:
        return b""
    if r < 0.04:
        return rng.choice(PIECES)[:1]
    n = rng.choice((1, 2, 3, 5, 10, 40, 200)) if r < 0.99 else 6_000
    out = []
    for _ in range(n):
        x = rng.random()
        if x < 0.7:
            out.append(rng.choice(PIECES))
        elif x < 0.85:   # filler: raw text near the noscript threshold
            out.append(b"y" * rng.choice((1, 10, 250, 480, 488, 489, 490, 491, 500, 501, 1000)))
        else:
            out.append(bytes(rng.randrange(256) for _ in range(rng.randint(1, 12))))
    return b"".join(out)


def main(argv: list[str] | None = None) -> int:
    from warclake.tasks.extract import page_scan as ps

    opts = parse_options("page_scan", __doc__, argv, 20_000)
    native = load_module_file("warclake.tasks.native.page_scan", opts.module) if opts.module else ps._MODULE
    if native is None:
        print("fuzz_page_scan: no compiled page pre-scan", file=sys.stderr)
        return 2

    def difference(i: int) -> str | None:
        page = page_of(opts.seed, i)
        # a copy of exactly its size (bytes carry a NUL after their end): a read past it is caught
        exact = np.frombuffer(page, dtype=np.uint8).copy()
        got, want = tuple(native.scan(exact, ps.NOSCRIPT_MIN_CHARS)), tuple(ps.reference_scan(page))
        if got == want:
            return None
        return f"{got} against {want}: {page[:300]!r}"

    return compare_cases(opts, difference)


if __name__ == "__main__":
    raise SystemExit(main())

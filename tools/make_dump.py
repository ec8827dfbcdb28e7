"""A Common-Crawl-like dump from real pages on disk: the input of reproducible benchmarks.

    python -m tools.make_dump OUT PAGES_DIR [PAGES_DIR ...]
        [--files 4] [--mb-per-file 25] [--seed 1] [--dump CC-MAIN-2099-01]

Every ``.html``/``.htm`` file (also ``.html.gz``) under the PAGES_DIRs is a page, its bytes
the HTTP payload as they are (any encoding). Pages are de-duplicated, shuffled by the seed
and used round-robin until each archive reaches its size (repeats compress better than a
real crawl; the summary line gives the ratio). Each capture is written as Common Crawl
writes it (one warcinfo, then request, response and metadata records, each its own gzip
member), with the quirks of real crawls: 7 % non-200 statuses, a charset in the HTTP header
for most pages (the page's own declaration, sometimes a wrong ISO-8859-1 default), payloads
over 1 MiB cut there with ``WARC-Truncated: length``. ``warc.paths.gz`` lists the archives.
The same arguments give the same files.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import random
import re
import sys
from datetime import datetime, timedelta, timezone

from warcio.warcwriter import WARCWriter

from warclake.tasks.sample_dump import Page, _write_capture

PAYLOAD_CAP = 1 << 20  # Common Crawl's payload limit
_DECLARED = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_:.-]+)""", re.I)


def find_pages(dirs: list[str]) -> list[tuple[str, bytes]]:
    """(path, bytes) of every distinct HTML page under dirs, in a stable order."""
    seen: set[bytes] = set()
    out = []
    for top in dirs:
        for root, subdirs, names in os.walk(top):
            subdirs.sort()
            for name in sorted(names):
                low = name.lower()
                path = os.path.join(root, name)
                if low.endswith(".html.gz"):
                    data = gzip.decompress(open(path, "rb").read())
                elif low.endswith((".html", ".htm")):
                    data = open(path, "rb").read()
                else:
                    continue
                digest = hashlib.blake2b(data, digest_size=16).digest()
                if data.strip() and digest not in seen:
                    seen.add(digest)
                    out.append((path, data))
    return out


def _capture(rnd: random.Random, source: str, data: bytes, n: int) -> Page:
    declared = _DECLARED.search(data[:4096])
    r = rnd.random()
    if declared and r < 0.75:
        encoding = declared.group(1).decode("ascii", "replace")
    elif r < 0.8:
        encoding = "ISO-8859-1"  # a lazy server default, often wrong
    else:
        encoding = ""
    host = f"site{rnd.randint(1, 5000)}.example"
    name = hashlib.blake2b(f"{source}#{n}".encode(), digest_size=6).hexdigest()
    page = Page(url=f"http://{host}/{name}.html", lang="", encoding=encoding, html=data[:PAYLOAD_CAP])
    page.truncated = len(data) > PAYLOAD_CAP
    if rnd.random() < 0.07:
        page.status = rnd.choice((301, 404, 500))
    return page


def make_dump(out: str, dirs: list[str], files: int = 4, mb_per_file: float = 25.0, seed: int = 1,
              dump: str = "CC-MAIN-2099-01") -> dict:
    pages = find_pages(dirs)
    if not pages:
        raise SystemExit(f"no .html/.htm pages under {' '.join(dirs)}")
    rnd = random.Random(seed)
    order = list(range(len(pages)))
    rnd.shuffle(order)
    os.makedirs(out, exist_ok=True)
    names, n, payload = [], 0, 0
    start = datetime(2099, 1, 1, tzinfo=timezone.utc)
    for f in range(files):
        name = f"{dump}-{f:05d}.warc.gz"
        with open(os.path.join(out, name), "wb") as fh:
            writer = WARCWriter(fh, gzip=True)
            writer.write_record(writer.create_warcinfo_record(name, {"software": "warclake make_dump",
                                                                     "isPartOf": dump}))
            while fh.tell() < mb_per_file * 1e6:
                source, data = pages[order[n % len(order)]]
                _write_capture(writer, rnd, _capture(rnd, source, data, n), start + timedelta(seconds=n))
                payload += min(len(data), PAYLOAD_CAP)
                n += 1
        names.append(name)
    with gzip.open(os.path.join(out, "warc.paths.gz"), "wt") as fh:
        fh.write("".join(f"{name}\n" for name in names))
    size = sum(os.path.getsize(os.path.join(out, name)) for name in names)
    return {"captures": n, "pages": len(pages), "payload_mb": payload / 1e6, "mb": size / 1e6}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.make_dump",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("pages", nargs="+", metavar="PAGES_DIR")
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--mb-per-file", type=float, default=25.0, help="compressed MB per archive (about)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dump", default="CC-MAIN-2099-01")
    a = ap.parse_args(argv)
    s = make_dump(a.out, a.pages, a.files, a.mb_per_file, a.seed, a.dump)
    print(f"{s['captures']} captures of {s['pages']} distinct pages ({s['captures'] / s['pages']:.2f} "
          f"uses a page); payload {s['payload_mb']:.1f} MB, archives {s['mb']:.1f} MB, "
          f"ratio {s['payload_mb'] / max(s['mb'], 1e-9):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

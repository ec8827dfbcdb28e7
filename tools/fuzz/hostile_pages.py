"""Time and memory of the extractor on hostile pages, one page per fresh process.

    python -m tools.fuzz.hostile_pages [--langs all] [--boilerplate sieve]

Each page (pathological nesting, very many paragraphs or links, huge attributes, text with
no markup, every page under the payload limit) is written as a one-record archive and
extracted by ``extract_archive`` in its own process, so the peak RSS is that page's. Prints
a table: outcome, CPU seconds, peak RSS. Exit 1 when a page takes 5 s or more or 1 GB.
"""
from __future__ import annotations

import argparse
import io
import multiprocessing
import os
import resource
import sys
import tempfile
import time

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

MAX_SECONDS = 5.0
MAX_RSS_MB = 1024


def _pages() -> dict[str, bytes]:
    def body(inner: str) -> bytes:
        return f"<html><head><title>t</title></head><body>{inner}</body></html>".encode()

    return {
        "300,000 unclosed <div> (1.5 MB)": body("<div>" * 300_000 + "x"),
        "100,000 nested <div>, closed": body("<div>a " * 100_000 + "</div>" * 100_000),
        "20,000 nested lists": body("<ul><li>x" * 20_000),
        "19,000 nested <div> (under the limit)": body("<div>a " * 19_000),
        "2,000,000 <p> (8 MB)": body("<p>a" * 2_000_000),
        "450,000 <p> (under the tag limit)": body("<p>a" * 450_000),
        "45,000 <p> (under every limit)": body("<p>a b c" * 45_000),
        "40,000 paragraphs of links": body("<p><a href='/x'>link</a> text" * 40_000),
        "300,000 nested <b>": body("<b>x" * 300_000),
        "one 7 MB attribute": body("<div class='" + "c " * 3_500_000 + "'>x</div>"),
        "7 MB of text, no markup": body("word " * 1_400_000),
        "100,000 nested <svg>": body("<svg><path d='M0'/>" * 100_000),
        "50,000 <table> rows of cells": body("<table>" + "<tr><td>a<td>b<td>c" * 50_000 + "</table>"),
    }


def _archive(path: str, html: bytes) -> None:
    with open(path, "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
        w.write_record(w.create_warc_record("http://hostile.example/", "response",
                                            payload=io.BytesIO(html), http_headers=http))


def _measure(args: tuple[str, str, str]) -> tuple[str, float, float]:
    """In a fresh process: (outcome, CPU seconds of the extraction, peak RSS MB)."""
    path, langs, boilerplate = args
    from warclake.tasks.extract.archive import extract_archive
    from warclake.tasks.extract.config import ExtractConfig
    from warclake.tasks.extract.language import LanguageDetector

    config = ExtractConfig.from_langs(langs, boilerplate=boilerplate)
    LanguageDetector.from_config(config).preload()
    with tempfile.TemporaryDirectory() as lake:
        t0 = time.process_time()
        summary = extract_archive(path, "H", lake, config)
        cpu = time.process_time() - t0
    outcome = next((k for k, v in summary["outcomes"].items() if v and k not in ("not_response",)), "?")
    return outcome, cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.fuzz.hostile_pages", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--langs", default="all")
    ap.add_argument("--boilerplate", default="sieve")
    args = ap.parse_args(argv)
    ctx = multiprocessing.get_context("spawn")
    bad = 0
    print(f"`--langs {args.langs} --boilerplate {args.boilerplate}`, one page per fresh process\n")
    print("| page | payload MB | outcome | CPU s | peak RSS MB |")
    print("|---|---:|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, html in _pages().items():
            path = os.path.join(tmp, "page.warc.gz")
            _archive(path, html)
            with ctx.Pool(1) as pool:
                outcome, cpu, rss = pool.apply(_measure, ((path, args.langs, args.boilerplate),))
            bad += cpu >= MAX_SECONDS or rss >= MAX_RSS_MB
            print(f"| {name} | {len(html) / 1e6:.1f} | {outcome} | {cpu:.2f} | {rss:.0f} |", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

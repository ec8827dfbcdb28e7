"""The same pages through warclake's clean path and the C pipeline, stage by stage: CPU
milliseconds per page of each stage, for ``reports/benchmarks.md``.

    python -m tools.measure.stage_profile [--repeat 3] [--langs all] ARCHIVE...

Each stage runs alone over every page of an archive (archive by archive, so the pages held
stay small), timed by the process's CPU clock (``time.process_time``: user + system of
this process, so the machine's other load counts little); a stage's figure is its sum over
the archives, the least of ``--repeat`` passes, divided by the pipeline's pages. A stage is
fed what the stage before it made, as in an extraction:

* warclake: ``read`` is every record through ``ArchiveReader`` and the payload of each
  HTML page of a 200 response (inflate, WARC and HTTP heads, de-chunking); ``inflate`` is
  the archive's gzip members by the standard ``zlib``, a reference point (the readers
  inflate with their own, faster, libraries); ``charset`` the
  cascade; ``parse`` lexbor's parse alone, ``parse+walk`` the page scan, tag limits,
  parse and paragraph walk (``walk`` is their difference); ``language`` routing, the
  English screen, the first pass and lingua, with a fresh detector and an empty answer table
  each pass (lingua's models load in the first pass only: the least pass leaves them out);
  the ``sieve`` stages on the pages whose language is a target: the core feature columns
  (``matrix_parts``), the structure columns, the paragraph trees, the page-kind row and
  trees, the labels; ``write`` the documents' rows to zstd parquet (``_RowWriter``).
* the C pipeline (``cli/bench_reference.py``): FastWARC's read of the response records and
  the HTML pages' payloads, Resiliparse's ``detect_encoding`` and ``bytes_to_str``,
  ``HTMLTree.parse``, ``extract_plain_text(main_content=True)`` on the tree,
  ``detect_fast``, zstd parquet.

Pages are counted as each pipeline chooses them (both: HTTP 200, HTML by Content-Type or,
for warclake, by a sniff when there is none). Prints a markdown table and the CPU model.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
import zlib
from collections import defaultdict

W_STAGES = ("inflate", "read", "charset", "parse", "parse+walk", "walk", "language",
            "sieve: core columns", "sieve: structure columns", "sieve: trees",
            "sieve: page kind", "sieve: labels", "write")
C_STAGES = ("inflate", "read", "charset", "parse", "extract", "language", "write")


def cpu_model() -> str:
    """``lscpu``'s model name, and whether the CPU has AVX-512 and AVX2."""
    name = platform.processor() or "unknown"
    flags = ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = line.split(":", 1)[1]
                    break
    except OSError:
        pass
    have = [f for f in ("avx2", "avx512f", "avx512bw", "bmi2") if f" {f} " in f" {flags} "]
    return f"{name} ({', '.join(have) or 'no AVX2'}), {os.cpu_count()} CPUs"


def inflate(path: str) -> int:
    """Every gzip member of the file inflated by the standard zlib (the bytes out)."""
    out = pos = 0
    with open(path, "rb") as fh:
        data = memoryview(fh.read())
    while pos < len(data):
        d = zlib.decompressobj(31)
        while not d.eof and pos < len(data):
            chunk = data[pos:pos + 16384]
            out += len(d.decompress(chunk))
            pos += len(chunk) - len(d.unused_data)
        if not d.eof:
            break
    return out


class Clock:
    """CPU seconds per stage of one pass."""

    def __init__(self):
        self.seconds: dict[str, float] = defaultdict(float)

    def run(self, stage: str, fn, items):
        t = time.process_time()
        out = [fn(x) for x in items]
        self.seconds[stage] += time.process_time() - t
        return out


def warclake_pass(paths: list[str], langs: str, clock: Clock) -> int:
    """One pass of warclake's stages over the archives; the HTML pages seen."""
    from warclake.tasks.archive.reader import ArchiveReader
    from warclake.tasks.extract import language
    from warclake.tasks.extract.archive import _RowWriter
    from warclake.tasks.extract.boilerplate import compiled, features, model, page_kind
    from warclake.tasks.extract.charset import decode_body
    from warclake.tasks.extract.config import ExtractConfig
    from warclake.tasks.extract.dates import document_date
    from warclake.tasks.extract.doc_id import doc_id
    from warclake.tasks.extract.html_limits import too_complex
    from warclake.tasks.extract.html_paragraphs import extract_paragraphs
    from warclake.tasks.extract.page_scan import scan as scan_page
    from warclake.tasks.extract.paragraph import join_paragraphs
    from warclake.tasks.extract.record import HTML_TYPES, looks_like_html, media_type
    from warclake.tasks.lake import schema
    from warclake.tasks.native import sieve_features, sieve_structure
    from selectolax.lexbor import LexborHTMLParser

    cfg = ExtractConfig.from_langs(langs, boilerplate="sieve")
    language.forget_answers()
    detector = language.LanguageDetector.from_config(cfg)
    forest = model.load()
    width = len(features.NAMES)
    in_main = features._IDX["in_main"]
    structured = compiled.STRUCTURE_STATUS == "compiled" and compiled.STATUS == "compiled"
    pages = 0
    for path in paths:
        clock.run("inflate", inflate, [path])
        t = time.process_time()
        held = []
        with open(path, "rb") as fh:
            for raw in ArchiveReader(fh, max_payload=cfg.max_payload):
                if raw.rec_type != "response" or raw.http_headers is None or raw.http_status != 200:
                    continue
                ctype = raw.http_headers.get("content-type")
                if media_type(ctype) and media_type(ctype) not in HTML_TYPES:
                    continue
                body, _ = raw.read_payload()
                raw.complete()
                if not ctype and not looks_like_html(body):
                    continue
                held.append((raw.record_id, raw.offset, raw.url, raw.warc_date,
                             dict(raw.http_headers), body, ctype))
        clock.seconds["read"] += time.process_time() - t
        pages += len(held)
        decoded = clock.run("charset", lambda h: decode_body(h[5], h[6], cfg.charset_window), held)
        pairs = [(h, d) for h, d in zip(held, decoded) if d is not None]

        def parse_only(d):
            return LexborHTMLParser(d.utf8 if d.utf8 is not None else d.text, scripting=True)

        clock.run("parse", parse_only, [d for _, d in pairs])

        def walk(d):
            try:
                if d.utf8 is None:
                    if too_complex(d.text, cfg.max_depth, cfg.max_tags):
                        return None
                    return extract_paragraphs(d.text, cfg.max_paragraphs)
                scan = scan_page(d.utf8)
                if too_complex(d.utf8, cfg.max_depth, cfg.max_tags, scan[:2]):
                    return None
                return extract_paragraphs(d.text, cfg.max_paragraphs, utf8=d.utf8, scan=scan)
            except Exception:
                return None

        paras = clock.run("parse+walk", walk, [d for _, d in pairs])
        live = [(h, d, p) for (h, d), p in zip(pairs, paras) if p]

        def lang_of(item):
            _, d, p = item
            lead, size = [], 0
            for x in p:
                if size > cfg.latin_buffer_chars:
                    break
                lead.append(x.plain)
                size += len(x.plain) + 1
            return detector.plan(d.text, "\n".join(lead))

        planned = clock.run("language", lang_of, live)
        decided = clock.run("language", lambda c: c if isinstance(c, language.LangResult)
                            else detector.run(c), planned)
        kept = [(h, d, p, r) for (h, d, p), r in zip(live, decided) if r.accepted]
        plist = [(p, r.lang) for _, _, p, r in kept]
        if structured:
            parts = clock.run("sieve: core columns",
                              lambda pl: sieve_features.matrix_parts(list(pl[0]), pl[1], width), plist)

            def fill(part):
                X, paths_, plains = part
                sieve_structure.fill(X, paths_, plains, in_main)
                return X

            mats = clock.run("sieve: structure columns", fill, parts)
        else:
            mats = clock.run("sieve: core columns", lambda pl: features.matrix(pl[0], pl[1]), plist)
        probs = clock.run("sieve: trees", lambda X: model._probabilities(forest, X).tolist(), mats)
        cuts = clock.run("sieve: page kind",
                         lambda X: page_kind.page_cutoff(forest, X, compiled.margin), mats)
        labels = clock.run("sieve: labels", lambda a: model.labels(a[0], a[1], a[2]),
                           list(zip(probs, cuts, [p for p, _ in plist])))
        rows = [{"text": join_paragraphs(p), "docId": doc_id(h[0], os.path.basename(path), h[1]),
                 "url": h[2], "charset": d.charset, "lang": r.lang,
                 "date": document_date(h[3], h[4].get("date"), h[4].get("last-modified")),
                 "dump": "CC-MAIN-2099-01", "warc_file": os.path.basename(path),
                 "warc_offset": h[1], "charset_source": d.source, "lang_score": r.score,
                 "boilerplate": "sieve", "paragraph_labels": lab}
                for (h, d, p, r), lab in zip(kept, labels)]
        with tempfile.TemporaryDirectory() as tmp:
            t = time.process_time()
            w = _RowWriter(os.path.join(tmp, "d.parquet"), schema.DOCUMENTS, 256, 64 << 20,
                           None, schema.DOCUMENTS_NO_DICTIONARY, schema.DOCUMENTS_NO_STATISTICS)
            for row in rows:
                w.add(row)
            w.close()
            clock.seconds["write"] += time.process_time() - t
    clock.seconds["walk"] = clock.seconds["parse+walk"] - clock.seconds["parse"]
    return pages


def c_pass(paths: list[str], clock: Clock) -> int:
    """One pass of the C pipeline's stages (``cli/bench_reference.py``); the HTML pages seen."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from fastwarc.warc import ArchiveIterator, WarcRecordType
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding
    from resiliparse.parse.html import HTMLTree
    from resiliparse.parse.lang import detect_fast

    from warclake.cli.bench_reference import is_html_page

    sch = pa.schema([("url", pa.string()), ("date", pa.string()), ("charset", pa.string()),
                     ("lang", pa.string()), ("lang_rank", pa.int32()), ("text", pa.string())])
    pages = 0
    for path in paths:
        clock.run("inflate", inflate, [path])
        t = time.process_time()
        held = []
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh, record_types=WarcRecordType.response, parse_http=True):
                if is_html_page(rec):
                    held.append((rec.headers.get("WARC-Target-URI"), rec.headers.get("WARC-Date"),
                                 rec.reader.read()))
        clock.seconds["read"] += time.process_time() - t
        pages += len(held)
        enc = clock.run("charset", lambda h: detect_encoding(h[2]), held)
        texts = clock.run("charset", lambda a: bytes_to_str(a[0][2], a[1]), list(zip(held, enc)))
        trees = clock.run("parse", HTMLTree.parse, texts)
        plain = clock.run("extract", lambda tr: extract_plain_text(tr, main_content=True), trees)
        del trees
        langs = clock.run("language", lambda x: detect_fast(x) if x else None, plain)
        with tempfile.TemporaryDirectory() as tmp:
            t = time.process_time()
            cols: dict[str, list] = {n: [] for n in sch.names}
            with pq.ParquetWriter(os.path.join(tmp, "c.parquet"), sch, compression="zstd") as w:
                for (url, date, _), e, x, lr in zip(held, enc, plain, langs):
                    if not x:
                        continue
                    for n, v in zip(sch.names, (url, date, e, lr[0], lr[1], x)):
                        cols[n].append(v)
                    if len(cols["text"]) >= 1024:
                        w.write_table(pa.table(cols, schema=sch))
                        cols = {n: [] for n in sch.names}
                w.write_table(pa.table(cols, schema=sch))
            clock.seconds["write"] += time.process_time() - t
    return pages


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("archives", nargs="+")
    ap.add_argument("--repeat", type=int, default=3, help="passes of each pipeline; the least is shown")
    ap.add_argument("--langs", default="all", help="warclake's target languages (default: all)")
    ap.add_argument("--only", choices=("warclake", "c"), help="one pipeline only")
    args = ap.parse_args(argv)
    best: dict[str, dict[str, float]] = {"warclake": {}, "c": {}}
    pages = {"warclake": 0, "c": 0}
    runs = [k for k in ("warclake", "c") if args.only in (None, k)]
    for _ in range(args.repeat):     # alternated, so both see the same load
        for kind in runs:
            clock = Clock()
            pages[kind] = (warclake_pass(args.archives, args.langs, clock) if kind == "warclake"
                           else c_pass(args.archives, clock))
            for s, v in clock.seconds.items():
                best[kind][s] = min(best[kind].get(s, v), v)
    print(f"CPU: {cpu_model()}; pages: warclake {pages['warclake']}, C pipeline {pages['c']}; "
          f"least of {args.repeat} passes, process CPU ms per page")
    print()
    print("| pipeline | stage | ms per page | CPU s |")
    print("|---|---|---:|---:|")
    for kind in runs:
        stages = W_STAGES if kind == "warclake" else C_STAGES
        n = max(pages[kind], 1)
        total = 0.0
        for s in stages:
            v = best[kind].get(s, 0.0)
            if s not in ("inflate", "parse", "walk") or kind == "c" and s == "parse":
                total += v
            print(f"| {'warclake' if kind == 'warclake' else 'C pipeline'} | {s} | "
                  f"{1000 * v / n:.3f} | {v:.2f} |")
        print(f"| {'warclake' if kind == 'warclake' else 'C pipeline'} | total (inflate in read; "
              f"parse in parse+walk) | {1000 * total / n:.3f} | {total:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

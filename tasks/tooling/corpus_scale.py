"""Scale benchmark of the corpus stage: a generated lake of N documents made from real
pages, then the per-archive step and the global steps timed, with peak RSS.

    python -m warclake.tasks.tooling.corpus_scale --docs 100000 [--dir DIR] [--workers 2]

The documents are recombined from the sentences of the Dragnet and CLEANEVAL gold texts
(``../shared/data/gold``): 1-4 sentences make a paragraph, 4-16 paragraphs a page, and each
site adds its navigation and footer paragraphs (its template) to every page. 4 % of pages
are copied word for word to another site, 4 % copied with one paragraph changed, and 1 %
carry a licence notice many sites share. The global steps (paragraph statistics, candidate
pairs, decisions) run in a child process, so its peak RSS is theirs alone.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import random
import resource
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "shared", "data", "gold")
DUMP = "CC-MAIN-2099-01"


def sentence_pool(gold: str, limit: int = 400_000) -> list[str]:
    files = sorted(glob.glob(os.path.join(gold, "dragnet", "GoldStandard", "*.txt")))
    files += sorted(glob.glob(os.path.join(gold, "cleaneval", "*", "GoldStandard", "*.txt")))
    if not files:
        raise FileNotFoundError(f"no gold texts under {gold} (the shared development data)")
    out = []
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for line in text.splitlines():
            line = " ".join(line.replace("<p>", " ").replace("<h>", " ").replace("<l>", " ").split())
            if line.startswith("URL:"):
                continue
            for s in line.split(". "):
                if 30 <= len(s) <= 400:
                    out.append(s.rstrip(".") + ".")
    random.Random(1).shuffle(out)
    return out[:limit]


def generate(lake: str, docs: int, per_archive: int, seed: int = 2026) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from warclake.tasks.config import SCHEMA_VERSION
    from warclake.tasks.schema import DOCUMENTS
    from datetime import datetime, timedelta, timezone
    import uuid

    rng = random.Random(seed)
    pool = sentence_pool(SHARED)
    n_sites = max(20, docs // 50)
    sites = [f"www.site{i}.{rng.choice(['com', 'org', 'net', 'co.uk', 'jp', 'de'])}" for i in range(n_sites)]
    templates = [[("body>nav#menu>ul", " | ".join(rng.choice(pool)[:20] for _ in range(4)), "bad"),
                  ("body>footer>p.copyright", f"Copyright {s}. All rights reserved.", "bad")] for s in sites]
    notice = ("body>div.cookie>p", "This site uses cookies to improve your experience. By continuing "
              "to browse you agree to our use of cookies.", "bad")
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)

    def paragraph():
        return " ".join(rng.choice(pool) for _ in range(rng.randint(1, 4)))

    made, archive, rows = 0, 0, []
    recent: list[tuple[list, int]] = []

    def flush():
        nonlocal rows, archive
        if not rows:
            return
        name = f"{DUMP}-{archive:05d}.warc.gz"
        for i, r in enumerate(rows):
            r.update(dump=DUMP, warc_file=name, warc_offset=i * 4096)
        path = os.path.join(lake, "documents", f"dump={DUMP}", name + ".parquet")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=DOCUMENTS), path, compression="zstd")
        summary = {"dump": DUMP, "warc_file": name, "status": "complete", "schema_version": SCHEMA_VERSION,
                   "config_fingerprint": "corpus-scale", "documents": len(rows),
                   "finished": "2099-01-01T00:00:00+00:00"}
        spath = os.path.join(lake, "files", f"dump={DUMP}", name + ".json")
        os.makedirs(os.path.dirname(spath), exist_ok=True)
        with open(spath, "w") as fh:
            json.dump(summary, fh)
        rows, archive = [], archive + 1

    while made < docs:
        site = min(int(rng.paretovariate(1.2)) - 1, n_sites - 1) if rng.random() < 0.5 else rng.randrange(n_sites)
        r = rng.random()
        if r < 0.08 and recent:   # a copy of a recent page on another site, exact or edited
            body, _ = rng.choice(recent)
            body = list(body)
            if r < 0.04 and len(body) > 1:
                body[rng.randrange(len(body))] = ("body>div.entry>p", paragraph(), "good")
        else:
            body = [("body>div#content>p", paragraph(), "good") for _ in range(rng.randint(4, 16))]
            recent.append((body, site))
            recent = recent[-1000:]
        paras = [templates[site][0]] + body + ([notice] if rng.random() < 0.01 else []) + [templates[site][1]]
        text = "\n\n".join(f"{p}\x1c{t}" for p, t, _ in paras)
        rows.append({"text": text, "docId": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                     "url": f"https://{sites[site]}/page/{made}", "charset": "utf-8", "lang": "en",
                     "date": t0 + timedelta(seconds=rng.randrange(86400 * 60)), "charset_source": "meta",
                     "lang_score": 0.99, "boilerplate": "sieve", "paragraph_labels": [lab for _, _, lab in paras]})
        made += 1
        if len(rows) == per_archive:
            flush()
    flush()


def _sign(args):
    from warclake.tasks.corpus.archive_step import sign_archive

    lake, dump, warc, summary = args
    return sign_archive(lake, dump, warc, summary)


def sign_all(lake: str, workers: int) -> dict:
    from warclake.tasks.corpus.archive_step import finished_archives

    items = [(lake, DUMP, w, s) for w, s in finished_archives(lake, DUMP)]
    t0 = time.monotonic()
    with ProcessPoolExecutor(workers) as pool:
        res = list(pool.map(_sign, items))
    return {"seconds": round(time.monotonic() - t0, 1), "archives": len(res),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)}


def global_steps(lake: str, memory_limit: str, threads: int) -> dict:
    """The global steps alone (the per-archive step must be done), timed step by step."""
    from warclake.tasks.corpus import stage
    from warclake.tasks.corpus.settings import SignatureConfig

    opts = stage.StageOptions(memory_limit=memory_limit, threads=threads)
    parts = range(SignatureConfig().partitions)
    dumps = [DUMP]
    times = {}
    t = time.monotonic()
    for p in parts:
        stage.stats_task(lake, DUMP, p, opts)
    times["paragraph_stats"] = time.monotonic() - t
    t = time.monotonic()
    for p in parts:
        stage.pairs_task(lake, dumps, DUMP, p, opts)
    times["pairs"] = time.monotonic() - t
    t = time.monotonic()
    for p in parts:
        stage.para_decisions_task(lake, dumps, DUMP, p, opts)
    times["paragraph_decisions"] = time.monotonic() - t
    t = time.monotonic()
    stage.doc_decisions_task(lake, dumps, DUMP, opts)
    times["document_decisions"] = time.monotonic() - t
    summary = stage.dump_summary(lake, DUMP, len(parts))
    return {**{k: round(v, 1) for k, v in times.items()}, "total": round(sum(times.values()), 1), **summary,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--dir", default=None, help="work folder (default: /tmp/warclake-corpus-scale-<docs>)")
    ap.add_argument("--docs-per-archive", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2, help="processes of the per-archive step")
    ap.add_argument("--memory-limit", default="2GB")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--global-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    work = args.dir or os.path.join("/tmp", f"warclake-corpus-scale-{args.docs}")
    lake = os.path.join(work, "lake")
    if args.global_only:
        print(json.dumps(global_steps(lake, args.memory_limit, args.threads)))
        return 0
    out = {"docs": args.docs}
    if not os.path.isdir(os.path.join(lake, "files")):
        t = time.monotonic()
        generate(lake, args.docs, args.docs_per_archive)
        out["generate_s"] = round(time.monotonic() - t, 1)
    out["per_archive"] = sign_all(lake, args.workers)
    # the global steps from scratch, in a child process: its peak RSS is theirs
    for step in ("para_stats", "pairs", "para_decisions", "doc_decisions"):
        subprocess.run(["rm", "-rf", os.path.join(lake, "corpus", "state", step)], check=True)
    t = time.monotonic()
    child = subprocess.run([sys.executable, "-m", "warclake.tasks.tooling.corpus_scale", "--global-only",
                            "--docs", str(args.docs), "--dir", work, "--memory-limit", args.memory_limit,
                            "--threads", str(args.threads)], capture_output=True, text=True)
    if child.returncode:
        sys.stderr.write(child.stderr)
        return child.returncode
    out["global"] = json.loads(child.stdout.strip().splitlines()[-1])
    out["global"]["wall_s"] = round(time.monotonic() - t, 1)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

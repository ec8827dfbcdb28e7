"""The plan of a re-run with nothing to do, on a lake on an S3-compatible server far away.

Writes N archives' summaries and done marks into a lake on moto's S3 server (directly),
then plans the dump through the counting proxy with a latency added to every
request, its inputs https URLs that are never contacted (a listed archive is not asked
again). Prints the plan's wall and CPU seconds, its requests by kind and per archive.

    python -m tools.measure.plan_rerun --archives 20000 --latency 0.02

The S3 server and the proxy are tools/faults/s3.py's.
"""
from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from tools.faults.s3 import S3Proxy, moto_server
from warclake.tasks.extract.config import EXTRACTOR_VERSION, ExtractConfig
from warclake.tasks.lake.layout import Lake
from warclake.tasks.lake.plan import plan_dump

DUMP = "CC-MAIN-2099-03"
BUCKET = "plan-rerun"


def summary(name: str, config: ExtractConfig) -> dict:
    """A summary of the size and keys of a real one (its figures made up)."""
    return {"warc_file": name, "dump": DUMP, "status": "complete", "input_path": f"https://data.example/{name}",
            "input_bytes": 1_100_000_000, "input_identity": {"size": 1_100_000_000, "etag": f'"{name}"',
                                                             "last_modified": "Tue, 21 May 2024 10:00:00 GMT"},
            "extractor_version": EXTRACTOR_VERSION, "config_fingerprint": config.fingerprint(),
            "config": config.as_dict(), "records": 120_000, "documents": 30_000,
            "outcomes": {"kept": 30_000, "not_response": 80_000, "http_status": 10_000}, "skipped": [],
            "started": "2026-01-01T00:00:00", "finished": "2026-01-01T00:10:00", "seconds": 600.0}


def use_endpoint(url: str) -> None:
    import s3fs

    os.environ["AWS_ENDPOINT_URL"] = url
    s3fs.S3FileSystem.clear_instance_cache()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--archives", type=int, default=20_000)
    ap.add_argument("--latency", type=float, default=0.02, help="seconds added to each request (default 0.02)")
    ap.add_argument("--threads", type=int, default=16, help="the plan's threads")
    ap.add_argument("--recheck", action="store_true", help="plan with recheck_inputs (inputs are never served: "
                                                            "only for a lake without remote inputs)")
    args = ap.parse_args()
    config = ExtractConfig.from_langs("ja", plan_threads=args.threads)
    names = [f"{DUMP}-{i:05d}.warc.gz" for i in range(args.archives)]
    with tempfile.TemporaryDirectory() as work, moto_server(work) as (env, _proc):
        os.environ.update(env)
        lake = Lake(f"s3://{BUCKET}/lake")
        lake.fs.mkdir(BUCKET)
        t0 = time.monotonic()
        with ThreadPoolExecutor(32) as pool:
            list(pool.map(lambda n: lake.write_summary(DUMP, n, summary(n, config)), names))
        print(f"wrote {args.archives} summaries and marks in {time.monotonic() - t0:.0f} s")
        with S3Proxy(env["AWS_ENDPOINT_URL"], latency=args.latency) as proxy:
            use_endpoint(proxy.url)
            inputs = [f"https://data.example/crawl/{n}" for n in names]
            t0, c0 = time.monotonic(), time.process_time()
            Lake(f"s3://{BUCKET}/lake").listing(DUMP)   # the listings alone: mostly the server's time
            listing_wall, listing_cpu = time.monotonic() - t0, time.process_time() - c0
            proxy.reset_counts()
            t0, c0 = time.monotonic(), time.process_time()
            plan = plan_dump(inputs, DUMP, f"s3://{BUCKET}/lake", config)
            wall, cpu = time.monotonic() - t0, time.process_time() - c0
            reqs = proxy.taken()
    reasons = Counter(p.reason for p in plan)
    kinds = Counter("list" if r.is_list else r.method for r in reqs)
    print(f"archives {args.archives}, latency {args.latency * 1000:.0f} ms, plan threads {args.threads}")
    print(f"reasons {dict(reasons)}")
    print(f"the two listings alone: wall {listing_wall:.2f} s, CPU {listing_cpu:.2f} s")
    print(f"plan wall {wall:.2f} s, CPU {cpu:.2f} s, peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB")
    print(f"requests {len(reqs)} ({dict(kinds)}), {len(reqs) / args.archives:.4f} per archive; "
          f"requests that are not listings: {sum(not r.is_list for r in reqs)}")


if __name__ == "__main__":
    main()

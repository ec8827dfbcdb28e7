"""``warclake extract``: the extraction core as a plain loop, no Prefect involved."""
from __future__ import annotations

import sys
import time

from warclake.tasks.boilerplate import MODES
from warclake.tasks.config import ExtractConfig
from warclake.tasks.extract_archive import extract_archive
from warclake.tasks.inputs import resolve_inputs


def add_extract_options(p) -> None:
    """Options shared by ``extract`` and ``run``."""
    p.add_argument("--dump", required=True, help="dump name, e.g. CC-MAIN-2024-22")
    p.add_argument("--lake", required=True, help="lake root: a folder or an fsspec URL (s3://...)")
    p.add_argument("--langs", default="ja",
                   help="target languages, ISO 639-1, comma-separated, or 'all' (default: ja)")
    p.add_argument("--boilerplate", default="none", choices=MODES,
                   help="paragraph labelling (default: none)")
    p.add_argument("--base-url", default=None,
                   help="base URL for relative entries of a warc.paths listing")
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="archives, folders, globs, http(s)/s3 URLs or a warc.paths[.gz] listing")


def config_from_args(args) -> ExtractConfig:
    return ExtractConfig.from_langs(args.langs, boilerplate=args.boilerplate)


def add_parser(sub) -> None:
    p = sub.add_parser("extract", help="extract archives into the lake (sequential, no orchestration)")
    add_extract_options(p)
    p.set_defaults(handler=run)


def run(args) -> int:
    config = config_from_args(args)
    inputs = resolve_inputs(args.inputs, args.base_url)
    failed = 0
    t0 = time.time()
    for path in inputs:
        try:
            s = extract_archive(path, args.dump, args.lake, config)
        except OSError as exc:
            failed += 1
            print(f"{path}: error: {exc}", file=sys.stderr)
            continue
        kept = s["outcomes"].get("kept", 0)
        note = f" (broke at {s['error_offset']}: {s['error']})" if s["error"] else ""
        print(f"{s['warc_file']}: {s['status']}, {s['records']} records, {kept} documents{note}")
        if s["status"] == "failed":
            failed += 1
    print(f"{len(inputs)} archives in {time.time() - t0:.1f}s, {failed} failed")
    return 1 if failed else 0

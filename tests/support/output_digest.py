"""A canonical digest of what the extractor writes for the sample dump, per boilerplate mode:
every document and ledger row, in archive and offset order, as sorted-key JSON (a score
rounded to 4 places), so run times, paths and the writer's row groups do not enter it.

``python tests/support/output_digest.py WORKDIR`` prints {"walk": which paragraph walk ran,
"digests": {mode: [fingerprint, digest]}} as JSON (how a process with other compiled parts,
or none, is asked).
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import sys
import uuid
from contextlib import contextmanager

import pyarrow.parquet as pq

from warclake.tasks.extract.archive import extract_archive
from warclake.tasks.extract.boilerplate import MODES
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.lake.layout import Lake
from warclake.tasks.sample_dump import make_dump

DUMP = "CC-MAIN-2099-01"
LANGS = "ja,en,zh,ru,de"   # the demo's: every script routing and lingua's Latin and Cyrillic paths


def sample(workdir: str) -> list[str]:
    """The sample dump: two archives, the last one truncated (salvaged), the same bytes on
    every call."""
    with fixed_warc_ids_and_dates():
        return make_dump(os.path.join(workdir, "dump"), files=2, pages_per_file=40, dump=DUMP, truncate_last=True)


@contextmanager
def fixed_warc_ids_and_dates():
    """warcio's record ids (random) and the warcinfo record's date (now) drawn from a seeded
    generator and a fixed day, so the records' bytes -- and every offset -- are the same
    on every call (the sample's pages and their ids are seeded already)."""
    from warcio.recordbuilder import RecordBuilder

    rnd = random.Random(44)
    saved = RecordBuilder.__dict__["_make_warc_id"], RecordBuilder.__dict__["_make_warc_date"]
    RecordBuilder._make_warc_id = classmethod(
        lambda cls: f"<urn:uuid:{uuid.UUID(int=rnd.getrandbits(128), version=4)}>")
    RecordBuilder._make_warc_date = classmethod(
        lambda cls, use_micros=False: "2024-05-20T00:00:00Z")
    try:
        yield
    finally:
        RecordBuilder._make_warc_id, RecordBuilder._make_warc_date = saved


def canonical(value):
    if isinstance(value, float):
        return round(value, 4)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def lake_digest(lake: str, names: list[str]) -> str:
    h = hashlib.sha256()
    for kind in ("documents", "ledger"):
        for name in sorted(names):
            rows = pq.read_table(Lake(lake).path(kind, DUMP, name)).to_pylist()
            for row in sorted(rows, key=lambda r: r["warc_offset"]):
                h.update(json.dumps({k: canonical(v) for k, v in row.items()}, sort_keys=True,
                                    ensure_ascii=False).encode())
                h.update(b"\n")
    return h.hexdigest()[:24]


def digests(workdir: str, modes=MODES) -> dict[str, tuple[str, str]]:
    """{mode: (config fingerprint, digest of the sample dump's outputs)}."""
    paths = sample(workdir)
    names = [os.path.basename(p) for p in paths]
    out = {}
    for mode in modes:
        config = ExtractConfig.from_langs(LANGS, boilerplate=mode)
        lake = os.path.join(workdir, f"lake-{mode}")
        for p in paths:
            extract_archive(p, DUMP, lake, config)
        out[mode] = (config.fingerprint(), lake_digest(lake, names))
    return out


if __name__ == "__main__":
    from warclake.tasks import native

    found = digests(sys.argv[1])
    print(json.dumps({"walk": native.STATUS, "digests": found}))

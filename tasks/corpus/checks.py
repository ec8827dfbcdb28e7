"""Checks before the corpus stage does any work, each failing with one clear line."""
from __future__ import annotations

import pyarrow.parquet as pq

from warclake.tasks.config import SCHEMA_VERSION
from warclake.tasks.dump_lock import DumpLock
from warclake.tasks.lake import Lake

from .archive_step import finished_archives

REQUIRED_COLUMNS = {"text", "docId", "url", "lang", "date", "dump", "warc_file", "paragraph_labels"}


class NoDocuments(FileNotFoundError):
    """The lake (or the dump) has no finished documents to build a corpus from."""


def dumps_to_process(lake: str, dump: str | None) -> list[str]:
    """The dumps the run covers, in order (dump names sort by crawl time: CC-MAIN-YYYY-WW):
    every dump up to ``dump`` (earlier ones are needed to deduplicate against), or all."""
    lk = Lake(lake).require()
    if not lk.is_local:
        raise ValueError(f"the corpus stage needs a local lake; {lk.url} is remote")
    dumps = lk.dumps()
    if dump is not None:
        lk.require_dump(dump)
        dumps = [d for d in dumps if d <= dump]
    return dumps


def check_inputs(lake: str, dumps: list[str]) -> dict[str, list[tuple[str, dict]]]:
    """The finished archives of each dump; raises when a dump is being extracted, was
    written by an older schema, or when there is no document at all."""
    lk = Lake(lake)
    found = {}
    for d in dumps:
        DumpLock(lk, d).check()   # DumpLocked names the run still extracting it
        archives = finished_archives(lake, d)
        for warc, summary in archives:
            version = str(summary.get("schema_version"))
            if version != SCHEMA_VERSION:
                raise ValueError(f"dump {d} ({warc}) was extracted with lake schema version {version}; "
                                 f"this warclake reads version {SCHEMA_VERSION}: extract the dump again")
        if archives:
            warc = archives[0][0]
            missing = REQUIRED_COLUMNS - set(pq.read_schema(lk.path("documents", d, warc)).names)
            if missing:
                raise ValueError(f"dump {d} ({warc}) is of an older lake schema: documents lack "
                                 f"{', '.join(sorted(missing))}; extract the dump again")
        found[d] = archives
    if not any(found.values()):
        where = f"dump {dumps[0]}" if len(dumps) == 1 else "the lake"
        raise NoDocuments(f"{where} at {lk.url} has no finished documents to build a corpus from")
    return found

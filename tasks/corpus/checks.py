"""Checks before the corpus stage does any work, each failing with one clear line.

``prepare`` runs all of them, for the library (``warclake corpus``) and for the flow
(``warclake corpus --flow``, a deployment) alike: thresholds and quality overrides, the lake
(reachable, present), each dump (not being extracted, of this lake schema) and at least one
finished document. ``warclake corpus --flow`` makes the cheap ones (``check_request``: no
summary read) before Prefect starts, so a mistyped option costs no flow run; the summaries
are looked at once, in the flow.
"""
from __future__ import annotations

from warclake.tasks.corpus.settings import DecisionConfig
from warclake.tasks.corpus.signals.summaries import finished_archives
from warclake.tasks.corpus.storage.layout import CorpusLayout, read_schema
from warclake.tasks.corpus.storage.run_lock import CorpusLock
from warclake.tasks.extract.config import SCHEMA_VERSION
from warclake.tasks.lake.dump_lock import DumpLock
from warclake.tasks.lake.layout import Lake
from warclake.tasks.lake.storage_errors import is_storage_client_error, unusable_lake

REQUIRED_COLUMNS = {"text", "docId", "url", "lang", "date", "dump", "warc_file", "paragraph_labels"}


class NoDocuments(FileNotFoundError):
    """The lake (or the dump) has no finished documents to build a corpus from."""


def prepare(lake: str, dump: str | None, decide: DecisionConfig,
            lock: bool = True) -> tuple[list[str], dict[str, list]]:
    """(dumps, finished archives per dump) of a run, after every check (``lock``: the
    corpus lock's too; a caller that waits for the lock takes it after)."""
    dumps = check_request(lake, dump, decide, lock)
    return dumps, check_inputs(lake, dumps)


def check_request(lake: str, dump: str | None, decide: DecisionConfig, lock: bool = True) -> list[str]:
    """The dumps of a run, after the checks that read no summary: the settings, the lake
    answering, the dump being one of its dumps, no extraction holding a dump's lock, no
    other corpus run holding the lake's. A few listings, so a command can make them before
    it starts Prefect."""
    from warclake.tasks.corpus.steps.decide import check_quality_overrides

    check_quality_overrides(decide)
    dumps = dumps_to_process(lake, dump)
    lk = Lake(lake)
    for d in dumps:
        DumpLock(lk, d).check_free()   # DumpLocked names the run still extracting it
    if lock:
        CorpusLock(lk).check_free()   # CorpusLocked names the corpus run holding the lake
    return dumps


def reachable(lake: str) -> Lake:
    """The lake, read once to see that it is there: FileNotFoundError when it is not, and an
    OSError naming it when its storage does not answer (an endpoint that is down, refused
    credentials), instead of the storage client's own exception."""
    lk = Lake(lake)
    try:
        return lk.require()
    except FileNotFoundError:
        raise
    except Exception as exc:  # botocore's and aiohttp's errors are not OSErrors
        if is_storage_client_error(exc):
            raise OSError(unusable_lake(lk.url, exc, "read")) from exc
        raise OSError(f"cannot read the lake at {lk.url}: {' '.join(str(exc).split()) or type(exc).__name__}") from exc


def dumps_to_process(lake: str, dump: str | None) -> list[str]:
    """The dumps the run covers, in order (dump names sort by crawl time: CC-MAIN-YYYY-WW):
    every dump up to ``dump`` (earlier ones are needed to deduplicate against), or all."""
    lk = reachable(lake)
    dumps = lk.dumps()
    if dump is not None:
        lk.require_dump(dump)
        dumps = [d for d in dumps if d <= dump]
    return dumps


def check_inputs(lake: str, dumps: list[str]) -> dict[str, list[tuple[str, dict]]]:
    """The finished archives of each dump (each summary read once, then only when it
    changes: summaries.py); raises when a dump was written by an older schema, or when
    there is no document at all."""
    layout = CorpusLayout(lake)
    found = {}
    for d in dumps:
        archives = finished_archives(lake, d)
        for warc, summary in archives:
            version = str(summary.get("schema_version"))
            if version != SCHEMA_VERSION:
                raise ValueError(f"dump {d} ({warc}) was extracted with lake schema version {version}; "
                                 f"this warclake reads version {SCHEMA_VERSION}: extract the dump again")
        if archives:
            warc = archives[0][0]
            missing = REQUIRED_COLUMNS - set(read_schema(layout.documents(d, warc)).names)
            if missing:
                raise ValueError(f"dump {d} ({warc}) is of an older lake schema: documents lack "
                                 f"{', '.join(sorted(missing))}; extract the dump again")
        found[d] = archives
    if not any(found.values()):
        where = f"dump {dumps[0]}" if len(dumps) == 1 else "the lake"
        raise NoDocuments(f"{where} at {layout.lake.url} has no finished documents to build a corpus from")
    return found

"""Which of a dump's archives still need work, decided by the lake (not by any cache).

An archive is done when its summary JSON is in the lake, says ``complete`` or ``salvaged``,
and was written for the same input (size + mtime or ETag), the same extractor version and
the same config. Only a missing summary (or one that does not parse) makes an archive
"new": a summary the store fails to give is read again (``retries.INPUTS``), and an error
that lasts ends the planning, naming the summary, instead of having the archive redone.
"""
from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from warclake.tasks.archive.inputs import input_identity
from warclake.tasks.extract.config import EXTRACTOR_VERSION, ExtractConfig
from warclake.tasks.lake.layout import Lake, archive_name
from warclake.tasks.runtime.retries import INPUTS, RetryPolicy


@dataclass
class PlanItem:
    input: str
    name: str
    identity: dict | None
    reason: str   # new | changed | outdated | failed | retry | missing | done

    @property
    def todo(self) -> bool:
        # "missing" stays to do: extracting it fails loudly instead of skipping it silently
        return self.reason != "done"


def identity_matches(old: dict | None, new: dict | None) -> bool:
    if not old or not new:
        return False
    keys = set(old) & set(new)
    return bool(keys) and all(str(old[k]) == str(new[k]) for k in keys) and old.get("size") == new.get("size")


def plan_item(path: str, dump: str, lake: Lake, config: ExtractConfig, retry: RetryPolicy = INPUTS,
              progress=None) -> PlanItem:
    name = archive_name(path)
    try:
        ident = input_identity(path)
    except FileNotFoundError:
        return PlanItem(path, name, None, "missing")
    except OSError:
        ident = None  # cannot stat now (network): try to process, the task retries transient errors
    summary = retry.run(lambda: lake.read_summary(dump, name), f"{name}: its summary", progress)
    if summary is None:
        reason = "new"
    elif summary.get("status") == "failed":
        reason = "failed"  # a failed archive is never done: every run tries it again
    elif ident is not None and not identity_matches(summary.get("input_identity"), ident):
        reason = "changed"
    elif summary.get("extractor_version") != EXTRACTOR_VERSION or \
            summary.get("config_fingerprint") != config.fingerprint():
        reason = "outdated"
    elif ident is None:
        reason = "retry"
    else:
        reason = "done"
    return PlanItem(path, name, ident, reason)


def check_unique_names(paths: list[str]) -> None:
    """Two inputs with one base name would overwrite each other in the lake."""
    dup = [n for n, c in Counter(archive_name(p) for p in paths).items() if c > 1]
    if dup:
        raise ValueError(f"inputs share archive names (lake files are named after them): {dup[:5]}")


def plan_dump(paths: list[str], dump: str, lake: Lake | str, config: ExtractConfig,
              threads: int = 16, retry: RetryPolicy = INPUTS, progress=None) -> list[PlanItem]:
    """Plan every input; lookups run in threads since remote ones are network round trips.
    ``retry``: how a summary the store failed to give is read again (``progress`` is told
    of each new attempt)."""
    lake = lake if isinstance(lake, Lake) else Lake(lake)
    check_unique_names(paths)

    def plan(p: str) -> PlanItem:
        return plan_item(p, dump, lake, config, retry, progress)

    if len(paths) < 4:
        return [plan(p) for p in paths]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(plan, paths))

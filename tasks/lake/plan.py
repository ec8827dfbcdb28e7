"""Which of a dump's archives still need work, decided by the lake (not by any cache).

An archive is done when its summary JSON is in the lake, says ``complete`` or ``salvaged``,
and was written for the same input (size + mtime or ETag), the same extractor version and
the same config (``ExtractConfig.fingerprint``, which holds both).

One listing of the dump's summaries and one of its done marks (``done_marks.py``) decide
what each summary says without reading it; only a summary without a valid mark is read.
Only a summary missing from the listing (or one that does not parse) makes an archive
"new": a listing or a summary the store fails to give is read again (``retries.INPUTS``),
and an error that lasts ends the planning, naming the folder or the summary, instead of
having archives redone.

A remote input is not asked for its identity again (Common Crawl's archives never change
once listed) unless ``recheck_inputs``; a local one is (a stat costs no request).
"""
from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from warclake.tasks.archive.inputs import input_identity, is_url
from warclake.tasks.extract.config import EXTRACTOR_VERSION, ExtractConfig
from warclake.tasks.lake.done_marks import Listed, Mark, identity_key
from warclake.tasks.lake.layout import Lake, archive_name
from warclake.tasks.runtime.retries import INPUTS, RetryPolicy

NOT_ASKED = object()   # an input whose identity the plan did not ask for


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


def ask_identity(path: str, recheck: bool, timeout: float):
    """The input's identity now; NOT_ASKED for a remote input unless ``recheck``; None when
    it cannot be told now (the network); FileNotFoundError when it is gone."""
    if is_url(path) and not recheck:
        return NOT_ASKED
    try:
        return input_identity(path, timeout)
    except FileNotFoundError:
        raise
    except OSError:
        return None   # cannot stat now (network): try to process, the task retries transient errors


def decide(summary: dict | None, ident, fingerprint: str) -> str:
    """An archive's reason from its summary and the identity asked (or NOT_ASKED)."""
    if summary is None:
        return "new"
    if summary.get("status") == "failed":
        return "failed"  # a failed archive is never done: every run tries it again
    if ident is not None and ident is not NOT_ASKED and not identity_matches(summary.get("input_identity"), ident):
        return "changed"
    if summary.get("extractor_version") != EXTRACTOR_VERSION or summary.get("config_fingerprint") != fingerprint:
        return "outdated"
    return "retry" if ident is None else "done"


def decide_from_mark(mark: Mark, ident, fingerprint: str) -> str | None:
    """What ``decide`` would say of the summary a valid mark was written for, or None when
    the summary must be read (the identity asked is not the one the mark names: the
    summary's own may still match it, as ``identity_matches`` allows)."""
    if ident is not None and ident is not NOT_ASKED and identity_key(ident) != mark.identity_key:
        return None
    if mark.fingerprint != fingerprint:   # the fingerprint holds the extractor version
        return "outdated"
    return "retry" if ident is None else "done"


class Planner:
    """Plans inputs against one listing of the dump's summaries and marks."""

    def __init__(self, dump: str, lake: Lake, config: ExtractConfig, listing: dict[str, Listed],
                 retry: RetryPolicy = INPUTS, progress=None):
        self.dump, self.lake, self.config, self.listing = dump, lake, config, listing
        self.retry, self.progress = retry, progress
        self.fingerprint = config.fingerprint()

    def needs_network(self, path: str) -> bool:
        """Whether planning ``path`` asks something of the network (or of a remote lake)."""
        if is_url(path) and self.config.recheck_inputs:
            return True
        listed = self.listing.get(archive_name(path))
        return listed is not None and listed.valid_mark() is None and not self.lake.is_local

    def plan(self, path: str) -> PlanItem:
        name = archive_name(path)
        try:
            ident = ask_identity(path, self.config.recheck_inputs, self.config.net_timeout)
        except FileNotFoundError:
            return PlanItem(path, name, None, "missing")
        known = None if ident is NOT_ASKED else ident
        listed = self.listing.get(name)
        if listed is None:
            return PlanItem(path, name, known, "new")
        mark = listed.valid_mark()
        reason = decide_from_mark(mark, ident, self.fingerprint) if mark is not None else None
        if reason is None:   # the listings cannot tell: the summary is read
            summary = self.retry.run(lambda: self.lake.read_summary(self.dump, name), f"{name}: its summary",
                                     self.progress)
            reason = decide(summary, ident, self.fingerprint)
        return PlanItem(path, name, known, reason)


def check_unique_names(paths: list[str]) -> None:
    """Two inputs with one base name would overwrite each other in the lake."""
    dup = [n for n, c in Counter(archive_name(p) for p in paths).items() if c > 1]
    if dup:
        raise ValueError(f"inputs share archive names (lake files are named after them): {dup[:5]}")


def plan_dump(paths: list[str], dump: str, lake: Lake | str, config: ExtractConfig,
              threads: int | None = None, retry: RetryPolicy = INPUTS, progress=None) -> list[PlanItem]:
    """Plan every input from one listing of the dump's summaries and marks. What needs the
    network (a summary the listings cannot decide, an identity to ask) runs in ``threads``
    threads (default: ``config.plan_threads``), the rest in this one. ``retry``: how a
    listing or a summary the store failed to give is read again (``progress`` is told of
    each new attempt)."""
    lake = lake if isinstance(lake, Lake) else Lake(lake)
    check_unique_names(paths)
    listing = retry.run(lambda: lake.listing(dump), f"{dump}: the listing of its summary files", progress)
    planner = Planner(dump, lake, config, listing, retry, progress)
    remote = [p for p in paths if planner.needs_network(p)]
    threads = threads or config.plan_threads
    asked: dict[str, PlanItem] = {}
    if remote:
        with ThreadPoolExecutor(min(threads, len(remote))) as pool:
            asked = dict(zip(remote, pool.map(planner.plan, remote)))
    return [asked[p] if p in asked else planner.plan(p) for p in paths]

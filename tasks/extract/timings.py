"""Where an archive's extraction time goes: records and seconds per stage of the extractor,
as datatrove's pipeline statistics give them per step. Timed with ``time.perf_counter``
around each stage of a record (never per HTML node), so the bookkeeping stays a few hundred
nanoseconds a record."""
from __future__ import annotations

from time import perf_counter

# read: the archive's bytes to a record and its payload (inflate, de-chunk, decode);
# charset: the charset cascade; language: script routing and lingua; parse: the HTML parse
# and the paragraph walk (one call of tasks/extract/html_paragraphs.py); boilerplate: the paragraph
# labels; write: rows into the documents and ledger files, and their publication.
STAGES = ("read", "charset", "language", "parse", "boilerplate", "write")


class StageStats:
    """Per stage, how many records passed through it and the seconds they spent there."""

    __slots__ = ("counts", "seconds")

    def __init__(self):
        self.counts = dict.fromkeys(STAGES, 0)
        self.seconds = dict.fromkeys(STAGES, 0.0)

    def add(self, stage: str, started: float) -> float:
        """Count one record in ``stage`` since ``started`` (a perf_counter value); returns now."""
        now = perf_counter()
        self.counts[stage] += 1
        self.seconds[stage] += now - started
        return now

    def extra(self, stage: str, count: int, seconds: float) -> None:
        """A stage outside STAGES, timed as a whole (the corpus signatures made during extraction)."""
        self.counts[stage] = count
        self.seconds[stage] = seconds

    def as_dict(self) -> dict:
        """The summary's ``stages``: {stage: {"count": records, "seconds": seconds}}."""
        return {s: {"count": self.counts[s], "seconds": round(self.seconds[s], 4)} for s in self.counts}


clock = perf_counter

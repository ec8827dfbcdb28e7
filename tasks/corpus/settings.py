"""The corpus stage's settings, split in two by what they cost to change.

- ``SignatureConfig``: how signatures are made (n-gram sizes, MinHash size, LSH bands).
  Changing it redoes the per-archive step and every global step.
- ``DecisionConfig``: thresholds and options of the rules. Changing it redoes only the
  decision step, which reads the stored signatures, statistics and candidate pairs.

Each has a fingerprint, stored with what it produced, so a re-run knows what is current.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields, replace

# Bump when the stage's outputs for the same input and settings change.
CORPUS_VERSION = "6"
# DuckDB's memory limit of a global step (beyond it DuckDB spills to disk); how the steps
# run, not what they give, so outside both configs
DEFAULT_MEMORY_LIMIT = "2GB"


def fingerprint_of(obj) -> str:
    """A short stable digest of a JSON-able value (keys sorted)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class SignatureConfig:
    doc_ngram: int = 5          # characters per shingle of a document's MinHash
    num_perm: int = 120         # MinHash values per document
    bands: int = 24             # LSH bands x rows = num_perm; 24 x 5 finds a pair of
    rows: int = 5               # Jaccard 0.7 with probability 0.988, 0.6 with 0.86, 0.5 with 0.53
    para_ngram: int = 3         # characters per shingle of a paragraph's SimHash
    partitions: int = 8         # hash-prefix partitions of the global steps
    # the quality rules measure the whole page, not the text the corpus keeps (the metrics
    # are taken in the per-archive step)
    judge_whole_pages: bool = False

    def __post_init__(self):
        if self.bands * self.rows != self.num_perm:
            raise ValueError(f"bands x rows ({self.bands} x {self.rows}) must equal num_perm ({self.num_perm})")
        for f in ("doc_ngram", "num_perm", "bands", "rows", "para_ngram"):
            if getattr(self, f) < 1:
                raise ValueError(f"{f} must be at least 1")
        if not 1 <= self.partitions <= 256:
            raise ValueError(f"partitions {self.partitions} out of range 1..256")

    def fingerprint(self) -> str:
        return fingerprint_of({**asdict(self), "corpus_version": CORPUS_VERSION})


# name: (low, high, meaning) of every threshold the user may set
THRESHOLD_RANGES: dict[str, tuple[float, float, str]] = {
    "similarity": (0.3, 1.0, "estimated Jaccard of two documents' MinHash at or above which they are near-duplicates"),
    "template_min_pages": (2, 1e9, "pages of one host carrying a paragraph (not labelled good) that make it the site's template"),
    "template_min_pages_good": (2, 1e9, "the same for a paragraph the boilerplate stage labelled good"),
    "notice_min_domains": (2, 1e9, "registered domains carrying a paragraph (not labelled good) that make it a notice or licence"),
    "notice_min_domains_good": (2, 1e9, "the same for a paragraph labelled good"),
    "min_paragraph_chars": (0, 1e9, "paragraphs shorter than this (normalised characters) are never judged repeated"),
}


@dataclass(frozen=True)
class DecisionConfig:
    similarity: float = 0.6            # chosen on the tuning part of the near-duplicate set (reports/corpus_eval.md)
    template_min_pages: int = 3
    template_min_pages_good: int = 10
    notice_min_domains: int = 4
    notice_min_domains_good: int = 10
    min_paragraph_chars: int = 1
    drop_all_copies: bool = False       # drop every copy of a duplicate cluster, keep none
    keep_repeats_in_document: bool = False   # no repeated_in_document rule: a page's repeated text is kept
    quality: dict = field(default_factory=dict)   # quality rule name -> threshold override
    scores: dict = field(default_factory=dict)    # model-score rule name -> threshold (steps/score_rules.py)

    def __post_init__(self):
        for name, (lo, hi, _) in THRESHOLD_RANGES.items():
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not lo <= v <= hi:
                raise ValueError(f"threshold {name}={v!r} out of range [{lo:g}, {hi:g}]")

    def with_values(self, **kw) -> "DecisionConfig":
        known = {f.name for f in fields(self)}
        unknown = set(kw) - known
        if unknown:
            raise ValueError(f"unknown thresholds: {', '.join(sorted(unknown))}")
        return replace(self, **kw)

    def fingerprint(self) -> str:
        return fingerprint_of({**asdict(self), "corpus_version": CORPUS_VERSION})

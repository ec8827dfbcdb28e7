"""Extraction settings, and the fingerprint that decides when outputs are outdated: the
settings that change the documents, the extractor version, and what else the documents
depend on (the data files a boilerplate mode reads, the libraries whose answers are written).
"""
import hashlib
import json
import unicodedata
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import metadata, resources

from warclake.tasks.extract.language import LANG_WINDOW_CHARS, LATIN_BUFFER_CHARS, UZUSHIO_BUFFER_CHARS

# Bump when the extractor's output for the same input and config changes (its code; the data
# files and libraries below are in the fingerprint by their digests and versions).
# tests/extract/test_output_pinned.py fails when the sample dump's documents change without it.
EXTRACTOR_VERSION = "7"
# Bump with any change to the documents/ledger/files schema (the data contract).
SCHEMA_VERSION = "4"

# Settings that change how inputs are read, never the documents: changing them redoes nothing.
NOT_IN_FINGERPRINT = frozenset({"net_timeout", "net_resumes", "record_seconds", "worker_memory_mb",
                                "corpus_signatures", "recheck_inputs", "plan_threads"})

# The package data each boilerplate mode reads (paths under tasks/extract/): their bytes
# change its labels. The stop lists serve jusText's stop-word density and sieve's features.
MODE_DATA = {"justext": ("boilerplate/stoplists",),
             "sieve": ("boilerplate/sieve.json", "boilerplate/stoplists")}
# The libraries whose answers become the documents, whatever the mode: the language
# (lingua, and its trigram models behind the first pass), the detected charset
# (charset-normalizer), the parsed tree (selectolax's lexbor), the WARC headers (warcio).
LIBRARIES = ("lingua-language-detector", "charset-normalizer", "selectolax", "warcio")


@lru_cache(maxsize=None)
def data_digest(rel: str) -> str:
    """A digest of a package data file, or of a folder's files (names and bytes)."""
    node = resources.files("warclake.tasks.extract").joinpath(rel)
    files = sorted((f for f in node.iterdir() if f.is_file()), key=lambda f: f.name) if node.is_dir() else [node]
    h = hashlib.sha256()
    for f in files:
        data = f.read_bytes()
        h.update(f"{f.name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()[:16]


@lru_cache(maxsize=1)
def library_versions() -> dict[str, str]:
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def output_dependencies(boilerplate: str) -> dict:
    """What besides the settings and the code decides a mode's documents (the fingerprint's
    ``depends`` part): its data files' digests, the libraries' versions and the Unicode
    database of Python (character classes, case, normalisation)."""
    return {"data": {rel: data_digest(rel) for rel in MODE_DATA.get(boilerplate, ())},
            "libraries": library_versions(), "unicode": unicodedata.unidata_version}


@dataclass(frozen=True)
class ExtractConfig:
    langs: tuple[str, ...] = ("ja",)          # ISO 639-1 targets; ("all",) keeps every language
    boilerplate: str = "none"                 # a mode of tasks/extract/boilerplate (MODES)
    charset_window: int = 20 * 1024           # bytes strictly decoded per charset candidate
    # Language buffers (tasks/extract/language.py), in characters of the decoded text:
    lang_window_chars: int = LANG_WINDOW_CHARS        # how far into the page the buffers read
    uzushio_buffer_chars: int = UZUSHIO_BUFFER_CHARS  # Uzushio buffer: script routing, non-Latin lingua
    latin_buffer_chars: int = LATIN_BUFFER_CHARS      # Latin buffer: Latin-script lingua
    # Minimums a page's language evidence must meet, or it is recorded as lang_undetermined.
    # 0 by default: lingua judges short text too, and "all" keeps every page.
    min_lang_score: float = 0.0               # lingua's confidence (script decisions: the script's share)
    min_chars: int = 0                        # letters (or characters of the deciding script) judged
    max_payload: int = 8 * 1024 * 1024        # larger payloads are recorded as oversize
    # Bounds on one page's work, far above the development pages (deepest nesting 56, most
    # tags 28,400, most paragraphs 3,158, longest text 1.9 M characters); pages past them
    # are too_complex.
    max_depth: int = 20_000                   # element nesting (lexbor's parse is quadratic in it)
    max_tags: int = 500_000                   # "<" characters: the parser's time and memory
    max_paragraphs: int = 50_000
    max_text_chars: int = 20_000_000
    # Remote inputs (tasks/archive/remote_stream.py): how they are read, not what comes out, so
    # they are left out of the fingerprint.
    net_timeout: float = 60.0                 # seconds without a byte before a read is stalled
    net_resumes: int = 5                      # Range resumes of a broken body within one attempt
    # Guards of an extraction worker (tasks/runtime/supervisor.py): a record that takes longer, or during
    # which the worker's memory grows past the limit, stops the worker and is ledgered
    # timed_out / out_of_memory; reading goes on after it. Not in the fingerprint either.
    record_seconds: float = 120.0             # one record's work, seconds
    worker_memory_mb: int = 8192              # a worker's resident memory, MiB
    # Also write the corpus stage's per-archive outputs (tasks/corpus/signals/archive_step.py) from
    # the row groups of documents as they are written: what else is written, not what the
    # documents are, so not in the fingerprint either.
    corpus_signatures: bool = False
    # How a run plans (tasks/lake/plan.py), not what comes out: not in the fingerprint either.
    recheck_inputs: bool = False              # ask each remote input's identity again (a request each)
    plan_threads: int = 16                    # the plan's requests at once (reads, identities)

    @classmethod
    def from_langs(cls, langs: str | list[str] | tuple[str, ...] | None = None, **kw) -> "ExtractConfig":
        """A config of these target languages (ISO 639-1, comma-separated; None: the
        default's) and settings, checked first (tasks/runtime/run_checks.py: ValueError)."""
        from warclake.tasks.runtime.run_checks import check_extract_settings

        if langs is None:
            langs = cls.langs
        elif isinstance(langs, str):
            langs = [s.strip() for s in langs.split(",") if s.strip()]
        check_extract_settings(langs, kw)
        threads = kw.get("plan_threads", cls.plan_threads)
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"plan_threads {threads!r} is not a positive number of threads")
        return cls(langs=tuple(sorted(set(langs))), **kw)

    def as_dict(self) -> dict:
        """Every setting, as JSON values (the summary's ``config``)."""
        return {**asdict(self), "langs": list(self.langs)}

    def fingerprint(self) -> str:
        """Stable short hash of everything that changes the output: the settings (but
        NOT_IN_FINGERPRINT), the extractor and schema versions, and ``output_dependencies``."""
        d = {k: v for k, v in self.as_dict().items() if k not in NOT_IN_FINGERPRINT}
        d["extractor_version"] = EXTRACTOR_VERSION
        d["schema_version"] = SCHEMA_VERSION
        d["depends"] = output_dependencies(self.boilerplate)
        blob = json.dumps(d, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

"""Extraction settings and the version stamp that decides when outputs are outdated."""
import hashlib
import json
from dataclasses import asdict, dataclass

# Bump when the extractor's output for the same input and config changes.
EXTRACTOR_VERSION = "1"
# Bump with any change to the documents/ledger/files schema (the data contract).
SCHEMA_VERSION = "1"


@dataclass(frozen=True)
class ExtractConfig:
    langs: tuple[str, ...] = ("ja",)          # ISO 639-1 targets; ("all",) keeps every language
    boilerplate: str = "none"                 # none | justext | density | bte | <model name>
    charset_window: int = 20 * 1024           # bytes strictly decoded per charset candidate
    lang_window_bytes: int = 20 * 1024        # body bytes looked at for the language buffer
    lang_max_chars: int = 4000                # characters in the language buffer
    max_payload: int = 8 * 1024 * 1024        # larger payloads are recorded as oversize

    @classmethod
    def from_langs(cls, langs: str | list[str] | tuple[str, ...] = "ja", **kw) -> "ExtractConfig":
        if isinstance(langs, str):
            langs = [s.strip() for s in langs.split(",") if s.strip()]
        return cls(langs=tuple(sorted(set(langs))), **kw)

    def fingerprint(self) -> str:
        """Stable short hash of everything that changes the output."""
        d = asdict(self)
        d["extractor_version"] = EXTRACTOR_VERSION
        d["schema_version"] = SCHEMA_VERSION
        blob = json.dumps(d, sort_keys=True, default=list).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

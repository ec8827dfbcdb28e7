"""Types of corpus_quality.pyx: the counts behind the corpus stage's quality metrics."""
from collections.abc import Callable, Sequence
from typing import Any

COUNTS: tuple[str, ...]
PHRASES: tuple[str, ...]
STOP_WORDS: tuple[str, ...]

def configure(classes: bytes, lower: list[int]) -> None: ...
def chrome_path_of(path: str) -> int: ...
# by name: ints, booleans (char_mode, labels_fit) and the lists "top" (3) and "dup" (6)
def document_counts(text: str, labels: Sequence[str] | None, lang_units: object, english: bool,
                    is_chrome: Callable[[str], object], chrome_cache: dict[str, bool]) -> dict[str, Any]: ...

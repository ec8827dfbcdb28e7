"""Types of corpus_step.pyx: the corpus stage's per-archive step in one compiled pass."""
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

COUNTS: tuple[str, ...]
PHRASES: tuple[str, ...]
STOP_WORDS: tuple[str, ...]

def configure(classes: bytes, lower: list[int]) -> None: ...
def configure_nfkc(table: list[str | None]) -> None: ...
def simple_nfkc_lower(text: str) -> str | None: ...
def chrome_path_of(path: str) -> int: ...
def count_names() -> tuple[str, ...]: ...
def count_paragraphs(offsets: NDArray[np.int64], data: NDArray[np.uint8], valid: NDArray[np.uint8]) -> int: ...
def sign_and_count(offsets: NDArray[np.int64], data: NDArray[np.uint8], valid: NDArray[np.uint8],
                   lab_off: NDArray[np.int64], lab_valid: NDArray[np.uint8], lab_code: NDArray[np.int8],
                   lang_flags: NDArray[np.uint8], is_chrome: Callable[[str], object], chrome_cache: dict[str, bool],
                   nfkc_lower: Callable[[str], str], para_ngram: int, doc_ngram: int, bins: int, min_chars: int,
                   kept_only: bool,
                   p_hash: NDArray[np.int64], p_sim: NDArray[np.uint64], p_chars: NDArray[np.int32],
                   path_off: NDArray[np.int64], path_data: NDArray[np.uint8], pi: int, path_pos: int,
                   d_hash: NDArray[np.int64], d_chars: NDArray[np.int32], d_minhash: NDArray[np.uint32],
                   d_paras: NDArray[np.int32], count_rows: NDArray[np.int64],
                   counted: NDArray[np.uint8]) -> tuple[int, int]: ...

"""Types of corpus_signatures.pyx: the corpus stage's per-document signatures."""
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

def configure_nfkc(table: list[str | None]) -> None: ...
def simple_nfkc_lower(text: str) -> str | None: ...
def chrome_path_of(path: str) -> int: ...
def sign_documents(texts: list[str], norms: list[str], labels: list[Sequence[str] | None],
                   is_chrome: Callable[[str], object], para_ngram: int, doc_ngram: int, bins: int, min_chars: int,
                   p_hash: NDArray[np.int64], p_sim: NDArray[np.uint64], p_chars: NDArray[np.int32],
                   p_paths: list[Any], d_hash: NDArray[np.int64], d_chars: NDArray[np.int32],
                   d_minhash: NDArray[np.uint32], d_paras: NDArray[np.int32],
                   chrome_rules: bool = False) -> int: ...

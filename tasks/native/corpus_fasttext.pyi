"""Types of corpus_fasttext.pyx: a fastText classifier's label probability per lake document."""
import numpy as np
from numpy.typing import NDArray

def fnv_hash(token: bytes) -> int: ...

class Model:
    def __init__(self, entry_bytes: NDArray[np.uint8], entry_off: NDArray[np.int64], types: NDArray[np.int8],
                 wi: NDArray[np.float32], wo: NDArray[np.float32], nwords: int, word_ngrams: int, bucket: int,
                 minn: int, maxn: int, loss: int, left: NDArray[np.int32], parent: NDArray[np.int32]) -> None: ...
    def label_index(self, label: bytes) -> int: ...

def score_documents(model: Model, offsets: NDArray[np.int64], data: NDArray[np.uint8], valid: NDArray[np.uint8],
                    lab_off: NDArray[np.int64], lab_valid: NDArray[np.uint8], lab_code: NDArray[np.int8],
                    label: int, out: NDArray[np.float64], scored: NDArray[np.uint8]) -> None: ...

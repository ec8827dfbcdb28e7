"""Types of language_trigrams.pyx: the trigram penalties of the first-pass language identifier."""
import numpy as np
from numpy.typing import NDArray

def configure(letters: list[int], lower: list[int], keys: NDArray[np.int64], penalty: NDArray[np.uint8]) -> None: ...
# (trigrams known, per language the sum of their penalties)
def scores(text: str) -> tuple[int, list[int]]: ...

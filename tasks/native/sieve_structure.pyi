"""Types of sieve_structure.pyx: the sieve's page-structure columns."""
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

FOLDS_TO_ASCII: tuple[int, ...]

def configure(structure: ModuleType, first: int) -> None: ...
def fill(X: NDArray[np.float64], paths: list[str], plains: list[str], in_main_col: int) -> None: ...
def line_marks(line: str) -> tuple[bool, bool, bool, bool] | None: ...

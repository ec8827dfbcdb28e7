"""Types of sieve_features.pyx: the sieve's feature matrix and tree margins."""
from collections.abc import Callable, Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from warclake.tasks.extract.paragraph import Paragraph

# lang -> (stoplist, is CJK, jusText's parameters: max link density, length low and high,
# stopwords low and high, max heading distance, no headings)
LANG_FACTORY: Callable[[str], tuple[Iterable[str], bool, tuple[float, int, int, float, float, int, bool]]] | None

class LangConfig:
    @property
    def cjk(self) -> bool: ...
    @property
    def has_stops(self) -> bool: ...
    def __init__(self, stops: Iterable[str], cjk: bool,
                 params: tuple[float, int, int, float, float, int, bool]) -> None: ...

def configure(names: tuple[str, ...], path_groups: dict[str, Iterable[str]], ancestor_tags: tuple[str, ...],
              own_tags: tuple[str, ...], headings: Iterable[str], text_cols: tuple[str, ...],
              context_cols: tuple[str, ...], offsets: tuple[int, ...], windows: tuple[int, ...],
              text_table: Sequence[int], text_bits: dict[str, int], end_chars: str, markup_per_tag: float,
              density_min: int, density_base: float, stdev: Callable[[Sequence[float]], float],
              np_log: Callable[..., NDArray[np.float64]], np_log1p: Callable[..., NDArray[np.float64]]) -> None: ...
def lower_table() -> list[int]: ...
def matrix(paragraphs: list[Paragraph], lang: str) -> NDArray[np.float64]: ...
def matrix_parts(paragraphs: list[Paragraph], lang: str,
                 width: int) -> tuple[NDArray[np.float64], list[str], list[str]]: ...
def margin(X: NDArray[np.float64], feature: NDArray[np.int64], threshold: NDArray[np.float64],
           leaf: NDArray[np.float64], base: float, depth: int) -> NDArray[np.float64]: ...

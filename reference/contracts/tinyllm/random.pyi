# Contract of tinyllm.random (course module M06.3): O'Neill's PCG-XSH-RR 32, seeded as pcg32_srandom_r.
from typing import overload

import numpy as np

Size = int | tuple[int, ...]

class PCG32:
    def __init__(self, seed: int = 11, stream: int = 0) -> None: ...
    def next_u32(self) -> int: ...
    @overload
    def uniform(self, low: float = 0.0, high: float = 1.0, size: None = None) -> float: ...
    @overload
    def uniform(self, low: float = 0.0, high: float = 1.0, *, size: Size) -> np.ndarray: ...  # float64
    @overload
    def normal(self, mean: float = 0.0, std: float = 1.0, size: None = None) -> float: ...
    @overload
    def normal(self, mean: float = 0.0, std: float = 1.0, *, size: Size) -> np.ndarray: ...  # float64

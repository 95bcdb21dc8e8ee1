"""PCG32: the course's random number generator (module M06.3).

The real PCG-XSH-RR 64/32 generator of Melissa O'Neill (pcg-random.org), seeded exactly like the
reference C code's ``pcg32_srandom_r``, so any course language reproduces the same numbers from the
same seed. numpy's generators are not used on purpose: their streams are not specified across
versions, and the course's default initialisations must stay identical for every student.
"""

from __future__ import annotations

import math
import numpy as np

_MASK64 = (1 << 64) - 1
_MULTIPLIER = 6364136223846793005
_TWO_TO_MINUS_32 = 1.0 / (1 << 32)

Size = int | tuple[int, ...]


class PCG32:
    """One PCG32 stream: ``seed`` picks the starting state, ``stream`` one of 2**63 sequences."""

    def __init__(self, seed: int = 11, stream: int = 0) -> None:
        for name, value in (("seed", seed), ("stream", stream)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"PCG32 {name} must be a non-negative int, got {value!r}")
        # pcg32_srandom_r(initstate=seed, initseq=stream)
        self._state = 0
        self._increment = ((stream << 1) | 1) & _MASK64  # must be odd
        self._step()
        self._state = (self._state + seed) & _MASK64
        self._step()

    def _step(self) -> None:
        self._state = (self._state * _MULTIPLIER + self._increment) & _MASK64

    def next_u32(self) -> int:
        """The next 32-bit output: xorshift the high bits, then rotate by the top five bits."""
        old = self._state
        self._step()
        xorshifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rotation = old >> 59
        return ((xorshifted >> rotation) | (xorshifted << (-rotation & 31))) & 0xFFFFFFFF

    def _unit(self, count: int) -> np.ndarray:
        """``count`` float64 draws in [0, 1), one 32-bit output each."""
        return _output(self._states(count)).astype(np.float64) * _TWO_TO_MINUS_32

    def _states(self, count: int) -> np.ndarray:
        """The states the next ``count`` outputs are made from, the generator moved past them.

        Computed in numpy by doubling, as an LCG jumps ahead: with the first ``n`` states known,
        the next ``n`` are each ``n`` steps on, ``a**n * s + c * (1 + a + ... + a**(n-1))`` modulo
        2**64 (uint64 arithmetic wraps there), so ``count`` states take about log2(count) array
        operations instead of ``count`` Python steps: a model's default initialisation draws
        thousands of numbers, and every test and grading run builds models."""
        states = np.empty(count, dtype=np.uint64)
        if count == 0:
            return states
        states[0] = self._state
        known, multiplier, increment = 1, _MULTIPLIER, self._increment  # one step: s -> a*s + c
        while known < count:
            more = min(known, count - known)
            states[known:known + more] = states[:more] * np.uint64(multiplier) + np.uint64(increment)
            multiplier, increment = (multiplier * multiplier) & _MASK64, (multiplier * increment + increment) & _MASK64
            known += more
        self._state = int(states[-1])
        self._step()
        return states

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Size | None = None) -> float | np.ndarray:
        """Uniform on [low, high): a float, or a float64 array of shape ``size`` filled row-major."""
        if not high >= low:
            raise ValueError(f"uniform() needs low <= high, got low={low}, high={high}")
        shape = _shape(size)
        draws = low + (high - low) * self._unit(math.prod(shape))
        return float(draws[0]) if size is None else draws.reshape(shape)


    def normal(self, mean: float = 0.0, std: float = 1.0, size: Size | None = None) -> float | np.ndarray:
        """Gaussian draws by Box-Muller; each draw consumes two outputs and uses only the cosine.

        Dropping the sine half keeps the generator's state the only state, so a draw never
        depends on whether an earlier call asked for an odd or even number of values.
        """
        if not std >= 0:
            raise ValueError(f"normal() needs std >= 0, got {std}")
        shape = _shape(size)
        count = math.prod(shape)
        pairs = self._unit(2 * count).reshape(count, 2)
        radius = np.sqrt(-2.0 * np.log1p(-pairs[:, 0]))  # log(1 - u): u < 1, so never log(0)
        draws = mean + std * radius * np.cos(2.0 * math.pi * pairs[:, 1])
        return float(draws[0]) if size is None else draws.reshape(shape)


def _output(states: np.ndarray) -> np.ndarray:
    """``next_u32``'s output function on an array of states (uint64)."""
    xorshifted = (((states >> np.uint64(18)) ^ states) >> np.uint64(27)) & np.uint64(0xFFFFFFFF)
    rotation = states >> np.uint64(59)
    rotated = (xorshifted >> rotation) | (xorshifted << ((np.uint64(32) - rotation) & np.uint64(31)))
    return rotated & np.uint64(0xFFFFFFFF)


def _shape(size: Size | None) -> tuple[int, ...]:
    if size is None:
        return (1,)
    dims = (size,) if not isinstance(size, (tuple, list)) else size
    if any(not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0 for n in dims):
        raise ValueError(f"size must be a non-negative int or a tuple of them, got {size!r}")
    return tuple(int(n) for n in dims)

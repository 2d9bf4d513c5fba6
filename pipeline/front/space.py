"""The perturbation configuration space Θ = {0, …, ℓ−1}^n (TestNav §3.1).

A configuration θ = (θ_1, …, θ_n) gives one level per perturbation type; level 0 is the identity.
Configurations are indexed in lexicographic order with θ_1 most significant, so that configurations
sharing a prefix (θ_1..θ_j) are contiguous, which is what prefix reuse in the cache relies on.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np


@dataclass(frozen=True)
class Space:
    """The lattice Θ of `len(names)` perturbation types, each at `levels` levels (0 = inactive)."""

    names: tuple[str, ...]
    levels: int

    def __post_init__(self) -> None:
        if len(self.names) < 1:
            raise ValueError("a space needs at least one perturbation type, got none")
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"perturbation names must be distinct, got {list(self.names)}")
        if int(self.levels) < 2:
            raise ValueError(f"levels must be at least 2 (level 0 plus one active level), got {self.levels}")
        object.__setattr__(self, "names", tuple(self.names))
        object.__setattr__(self, "levels", int(self.levels))

    @property
    def n_dims(self) -> int:
        return len(self.names)

    @property
    def size(self) -> int:
        """|Θ| = ℓ^n."""
        return self.levels**self.n_dims

    def validate(self, theta: Sequence[int]) -> tuple[int, ...]:
        """Return θ as a tuple of ints, or raise naming the bad level and the valid range."""
        theta = tuple(int(t) for t in theta)
        if len(theta) != self.n_dims:
            raise ValueError(f"configuration {theta} has {len(theta)} levels; the space {self.names} needs {self.n_dims}")
        for name, level in zip(self.names, theta):
            if not 0 <= level < self.levels:
                raise ValueError(f"level {level} of {name!r} is outside the space: valid levels are 0..{self.levels - 1}")
        return theta

    def index(self, theta: Sequence[int]) -> int:
        """Position of θ in lexicographic order (θ_1 most significant)."""
        idx = 0
        for level in self.validate(theta):
            idx = idx * self.levels + level
        return idx

    def indices(self, thetas: np.ndarray) -> np.ndarray:
        """Vectorised `index` for an (m, n) integer array."""
        thetas = np.asarray(thetas, dtype=np.int64).reshape(-1, self.n_dims)
        if thetas.size and (thetas.min() < 0 or thetas.max() >= self.levels):
            bad = thetas[(thetas < 0) | (thetas >= self.levels)][0]
            raise ValueError(f"level {bad} is outside the space: valid levels are 0..{self.levels - 1}")
        weights = self.levels ** np.arange(self.n_dims - 1, -1, -1, dtype=np.int64)
        return thetas @ weights

    def theta(self, index: int) -> tuple[int, ...]:
        """Inverse of `index`."""
        if not 0 <= int(index) < self.size:
            raise ValueError(f"index {index} is outside the space: valid indices are 0..{self.size - 1}")
        return tuple(int(v) for v in self.grid()[int(index)])

    def grid(self) -> np.ndarray:
        """All |Θ| configurations as an (|Θ|, n) int array, in index order."""
        axes = np.meshgrid(*[np.arange(self.levels)] * self.n_dims, indexing="ij")
        return np.stack([a.ravel() for a in axes], axis=1).astype(np.int64)

    @staticmethod
    def order(theta: Sequence[int] | np.ndarray) -> int | np.ndarray:
        """Perturbation order: the number of active perturbations |{i : θ_i > 0}| (TestNav appendix)."""
        arr = np.asarray(theta)
        if arr.ndim == 1:
            return int((arr > 0).sum())
        return (arr > 0).sum(axis=1)

    def neighbours(self, theta: Sequence[int]) -> list[tuple[int, ...]]:
        """Configurations that differ from θ by ±1 in exactly one dimension, in a fixed order."""
        theta = self.validate(theta)
        out = []
        for i in range(self.n_dims):
            for step in (-1, 1):
                level = theta[i] + step
                if 0 <= level < self.levels:
                    out.append(theta[:i] + (level,) + theta[i + 1 :])
        return out

    def label(self, theta: Iterable[int]) -> str:
        return "(" + ",".join(str(int(t)) for t in theta) + ")"

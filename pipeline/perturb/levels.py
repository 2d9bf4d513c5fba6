"""Argument checks shared by the text and code perturbation families: TestNav's levels 0..5 (§4.1, level
0 the identity) and non-negative integer seeds."""
from __future__ import annotations

MAX_LEVEL = 5


def check_level(level: int) -> int:
    """`level` as an int, or a ValueError naming it unless it is an integer in 0..MAX_LEVEL."""
    if isinstance(level, bool) or not hasattr(level, "__index__"):
        raise ValueError(f"level must be an integer in 0..{MAX_LEVEL}, got {level!r}")
    if not 0 <= int(level) <= MAX_LEVEL:
        raise ValueError(f"level {int(level)} is outside the valid range 0..{MAX_LEVEL}")
    return int(level)


def check_seed(seed: int) -> int:
    """`seed` as an int, or a ValueError unless it is a non-negative integer."""
    if isinstance(seed, bool) or not hasattr(seed, "__index__") or int(seed) < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)

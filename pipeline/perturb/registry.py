"""Registry of perturbation families T_i, keyed by name, one entry per family and modality.

A family maps (input, level, seed) to a perturbed input; level 0 is the identity. A new family is a
`register(...)` call plus a config entry naming it; nothing else changes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

Apply = Callable[[Any, int, int], Any]


@dataclass(frozen=True)
class Perturbation:
    """One perturbation type T_i: `apply(x, level, seed)`, level 0..max_level, level 0 = identity."""

    name: str
    modality: str
    max_level: int
    _apply: Apply

    def apply(self, x: Any, level: int, seed: int) -> Any:
        if not 0 <= level <= self.max_level:
            raise ValueError(f"level {level} of {self.name!r} is outside 0..{self.max_level}")
        return x if level == 0 else self._apply(x, level, seed)


_FACTORIES: dict[str, Callable[[], Perturbation]] = {}


def register(name: str, factory: Callable[[], Perturbation]) -> None:
    _FACTORIES[name] = factory


def available() -> list[str]:
    _register_builtins()
    return sorted(_FACTORIES)


def get_perturbation(name: str) -> Perturbation:
    """The family called `name`, or a ValueError listing the valid names."""
    _register_builtins()
    if name not in _FACTORIES:
        raise ValueError(f"unknown perturbation {name!r}; valid choices: {', '.join(sorted(_FACTORIES))}")
    return _FACTORIES[name]()


def _register_builtins() -> None:
    if _FACTORIES:
        return
    from pipeline.perturb import imagenet_c

    for corruption in imagenet_c.corruption_names("all"):
        register(corruption, lambda c=corruption: Perturbation(c, "vision", 5, lambda x, lvl, s, c=c: imagenet_c.corrupt(x, c, lvl, s)))

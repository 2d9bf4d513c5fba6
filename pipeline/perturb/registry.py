"""Registry of perturbation families T_i, keyed by name, one entry per family and modality.

A family maps (input, level, seed) to a perturbed input; level 0 is the identity. A new family is a
`register(...)` call plus a config entry naming it; nothing else changes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from pipeline.registry import Registry

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


def _text_family(name: str) -> Perturbation:
    from pipeline.perturb import text  # nltk and textblob load only when a text family is used

    return Perturbation(name, "text", text.MAX_LEVEL, text.APPLY[name])


def _code_family(name: str) -> Perturbation:
    from pipeline.perturb import code

    return Perturbation(name, "code", code.MAX_LEVEL, code.APPLY[name])


def _builtins(registry: "Registry[Callable[[], Perturbation]]") -> None:
    """ImageNet-C's corruptions (vision), TestNav's text families (synonym, typo, contraction,
    punctuation) and ReCode's code families (butterfingers, char_case, whitespace, newline), §4.1."""
    from pipeline.perturb import imagenet_c

    for corruption in imagenet_c.corruption_names("all"):
        registry.register(corruption, lambda c=corruption: Perturbation(c, "vision", 5, lambda x, lvl, s, c=c: imagenet_c.corrupt(x, c, lvl, s)))
    for name in ("synonym", "typo", "contraction", "punctuation"):
        registry.register(name, lambda n=name: _text_family(n))
    for name in ("butterfingers", "char_case", "whitespace", "newline"):
        registry.register(name, lambda n=name: _code_family(n))


PERTURBATIONS: Registry[Callable[[], Perturbation]] = Registry("perturbation", _builtins)


def register(name: str, factory: Callable[[], Perturbation]) -> None:
    """Add a family: `factory()` builds its `Perturbation`."""
    PERTURBATIONS.register(name, factory)


def available() -> list[str]:
    return sorted(PERTURBATIONS.names())


def get_perturbation(name: str) -> Perturbation:
    """The family called `name`, or a ValueError listing the valid names."""
    return PERTURBATIONS.get(name)()

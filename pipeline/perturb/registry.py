"""Perturbation families T_i by name: the catalog's built-ins (`pipeline.plugins.catalog.PERTURBATIONS`) and
plug-ins named by import path.

A family maps (input, level, seed) to a perturbed input; level 0 is the identity. A user's family is a
class in their own package satisfying `pipeline.plugins.protocols.Perturbation`, named in
`benchmark.perturbations` as `my_pkg.module:Family`; nothing in the library changes. The name a config
gives a family is its key: `get_perturbation` returns it under that name, whatever its own `name` says.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from pipeline.plugins.catalog import PERTURBATIONS
from pipeline.plugins.protocols import ImageInputs
from pipeline.plugins.protocols import Perturbation as PerturbationProtocol

Apply = Callable[[Any, int, int], Any]


@dataclass(frozen=True)
class Perturbation:
    """One perturbation type T_i: `apply(x, level, seed)`, level 0..max_level, level 0 = identity; `inputs`,
    what it needs of the images (None: any input); `label`, what a page calls it (None: its `name`)."""

    name: str
    modality: str
    max_level: int
    _apply: Apply
    inputs: ImageInputs | None = None
    label: str | None = None

    def apply(self, x: Any, level: int, seed: int) -> Any:
        if not 0 <= level <= self.max_level:
            raise ValueError(f"level {level} of {self.name!r} is outside 0..{self.max_level}")
        return x if level == 0 else self._apply(x, level, seed)


def imagenet_c_family(name: str) -> Perturbation:
    """ImageNet-C's corruption `name` (vision), severities 1..5 (§4.1)."""
    from pipeline.perturb import imagenet_c

    return Perturbation(name, "vision", imagenet_c.MAX_SEVERITY, lambda x, lvl, s: imagenet_c.corrupt(x, name, lvl, s),
                        imagenet_c.INPUTS)


def text_family(name: str) -> Perturbation:
    """TestNav's text family `name` (synonym, typo, contraction, punctuation)."""
    from pipeline.perturb import (
        text,  # nltk and textblob load only when a text family is used
    )

    return Perturbation(name, "text", text.MAX_LEVEL, text.APPLY[name])


def code_family(name: str) -> Perturbation:
    """ReCode's code family `name` (butterfingers, char_case, whitespace, newline)."""
    from pipeline.perturb import code

    return Perturbation(name, "code", code.MAX_LEVEL, code.APPLY[name])


def register(name: str, factory: Callable[[], PerturbationProtocol], **facts: Any) -> None:
    """Add a family at run time: `factory()` builds it (`facts`: its modality and max_level, for the config)."""
    PERTURBATIONS.register(name, factory, **facts)


def available() -> list[str]:
    return sorted(PERTURBATIONS.names())


def get_perturbation(name: str) -> PerturbationProtocol:
    """The family called `name` (a catalog name or a plug-in's import path `module:attribute`, a
    `Perturbation` or a factory of one), or a ValueError listing the valid names. A family whose own `name`
    differs is returned under `name`, with the same levels, inputs and `apply`: `name` is its key in Θ, its
    own name its `label`."""
    family = PERTURBATIONS.get(name)
    if isinstance(family, type) or (callable(family) and not isinstance(family, PerturbationProtocol)):
        family = family()
    if not isinstance(family, PerturbationProtocol):
        raise ValueError(f"perturbation {name!r} is {family!r}, not a perturbation: it needs name, modality, max_level "
                         "and apply(x, level, seed) (pipeline.plugins.protocols.Perturbation)")
    if family.name != name:
        family = Perturbation(name, family.modality, family.max_level, family.apply, getattr(family, "inputs", None),
                              family.name)
    return family

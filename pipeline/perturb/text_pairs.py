"""Sequence-pair inputs of the paraphrase-detection benchmark (TestNav §4.1, benchmark (ii): QQP question
pairs): how a text perturbation family edits a pair, and how a text fidelity metric reads a set of pairs.

A pair is a tuple `(first, second)` of two strings (QQP's question1, question2). The paper applies
TextAttack's transformations to QQP and says that level k is k edits, but not how the edits fall on a
pair's two questions. The choice here:

- Perturbation: T^k edits each question of a pair as it edits a single text, k edits in each (fewer where
  that question allows fewer, `pipeline.perturb.text`), with a seed of its own per side derived from the
  pair's step seed, `side_seed(seed, side)`. The two questions are then perturbed independently of each
  other: a question's edits depend only on (its text, k, the pair's seed, its side), so an edit the one
  question cannot take is never moved onto its partner, and a question that allows no edit of a family is
  left as it is while its partner is edited.
- Fidelity: chrF and BERT-F1 are computed over the questions of both sides, each perturbed question against
  its clean original: the set of N pairs is read as the 2N questions (first_0, second_0, first_1, …)
  (`sides`), over which chrF sums its n-gram statistics and BERT-F1 averages its per-text F1.

A plain string goes through both untouched: `on_pairs(family)(text, …)` is `family(text, …)` and
`sides(texts)` is `list(texts)`, so single-text benchmarks give the same bits as without this module.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

TextPair = tuple[str, str]
SIDES = 2


def is_pair(x: Any) -> bool:
    """True for a tuple or list of exactly two strings."""
    return isinstance(x, (tuple, list)) and len(x) == SIDES and all(isinstance(s, str) for s in x)


def side_seed(seed: int, side: int) -> int:
    """The seed of side `side` (0 = first, 1 = second) of a pair perturbed with step seed `seed`."""
    if side not in range(SIDES):
        raise ValueError(f"side must be 0 or 1, got {side!r}")
    return int(np.random.SeedSequence([int(seed), side]).generate_state(1)[0])


def on_pairs(family: Callable[[str, int, int], str]) -> Callable[[Any, int, int], Any]:
    """`family(text, level, seed)` extended to pairs: a pair gets `family` on each side with `side_seed`;
    anything else is passed to `family` as is (its own checks reject what is not a string)."""

    def apply(x: Any, level: int, seed: int) -> Any:
        if isinstance(x, str) or not is_pair(x):
            return family(x, level, seed)
        return tuple(family(text, level, side_seed(seed, side)) for side, text in enumerate(x))

    apply.__name__ = getattr(family, "__name__", "family")
    apply.__doc__ = family.__doc__
    return apply


def sides(inputs: Sequence[Any]) -> list[str]:
    """The texts a fidelity metric compares: `list(inputs)` for a set of strings, the two questions of every
    pair in order (first_0, second_0, first_1, second_1, …) for a set of pairs."""
    inputs = list(inputs)
    if not inputs or not is_pair(inputs[0]):
        return inputs
    bad = next((i for i, x in enumerate(inputs) if not is_pair(x)), None)
    if bad is not None:
        raise TypeError(f"input {bad} is {type(inputs[bad]).__name__}, not a pair of two strings like input 0")
    return [text for pair in inputs for text in pair]

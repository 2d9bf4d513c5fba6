"""Seeded synthetic ground-truth tables, for choosing and testing search methods away from the real tables.

Every family builds raw objectives (δ, ρ) over Θ from levels scaled to g_i = θ_i / (ℓ−1) ∈ [0, 1], then
min-max normalises both and marks P* with `pareto_mask` (both maximised). Its parameters (weights per
dimension w_i = exp(0.5·z_i), z_i standard normal, exponents, noise scales) are drawn from a generator
seeded by (index in `FAMILIES`, seed), so each (family, seed) pair is one fixed table. Below, s_w^a(g) =
Σ w_i g_i^a_i / Σ w_i is a weighted severity in [0, 1] and ε an independent standard normal per
configuration. The |P*| ranges (`FRONT_SIZES`) hold on the default Θ = {0..5}^4 for every seed of both splits.

* `smooth`: δ = s_w^a, a_i ~ U(1, 3); ρ = 1 − s_v^b, b_i ~ U(0.5, 1.2). Additive, smooth, strictly
  monotone along every lattice edge: the idealised table of TestNav §3.1. |P*| 20-60.
* `interacting`: δ = Σ u_i g_i + Σ_{i<j} W_ij g_i g_j with u_i ~ U(0.1, 0.5) and W_ij ~ U(−0.5, 2), so
  pairs matter more than single dimensions and some pairs mask each other; ρ = Π_i (1 − v_i g_i^b_i),
  v_i ~ U(0.3, 0.9), b_i ~ U(0.5, 2), multiplicative like the survival of a signal under composed
  perturbations. Imitates perturbations that compound (noise then blur); a masking pair (W_ij < 0) can
  make δ fall along up to half of the edges. |P*| 15-120.
* `rugged`: accuracy on a small test set of m ~ U{40..399} inputs, acc = Binomial(m, p)/m with
  p = c·(1 − k·s_w^a) + bumps, c ~ U(0.85, 0.98), k ~ U(0.4, 0.8), and δ = c − acc; ρ = 1 − s_v^b +
  σ·ε + bumps, σ ~ U(0.02, 0.06). A bump is ±A·exp(−‖g − g_c‖² / 2h²) around a random configuration, 2-5
  of them per objective, A ~ U(0.03, 0.1), h ~ U(0.15, 0.3). Imitates the real tables' noise, ties
  (δ takes at most m+1 values) and local non-monotonicity: δ is non-decreasing along 60-85% of the
  lattice edges (digits: 76%), ρ non-increasing along 70-95%. |P*| 5-40.
* `crowded`: δ = s_w^a + 0.01·ε; ρ = −d with d = (exp(κ·s_v^b) − 1)·exp(0.3·ε) + τ·ε', b_i ~ U(1.5, 2.5),
  κ ~ U(22, 30): a distance that is tiny for most configurations and explodes for the most severe ones,
  with an additive noise floor τ = U(0.2, 1)·(exp(κ/4) − 1) that scrambles the order of the
  near-identical ones (ρ non-increasing along 70-90% of the edges). After min-max normalisation more than 60% of the
  front lies within 1e-3 of ρ = 1, like KID on digits. |P*| 15-65.
* `long_front`: one shared severity s = s_w^a, a_i ~ U(0.8, 1.5): δ = s^c + η·ε, ρ = −s + η·ε',
  c ~ U(0.7, 1.5), η log-uniform in [0.01, 0.02]. δ and ρ conflict along every direction, so P* is a
  long ragged band whose width the noise sets. |P*| 50-150.

Protocol: method choices (hyper-parameters, which variant to keep) are made on the `dev` split only,
seeds `DEV_SEEDS`; results are reported once on the disjoint `test` split, seeds `TEST_SEEDS`.
`split_tables` lists the (family, seed) pairs of a split.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from pipeline.pareto import pareto_mask
from pipeline.space import Space

DEFAULT_SPACE = Space(("p0", "p1", "p2", "p3"), 6)
DEV_SEEDS = range(100)
TEST_SEEDS = range(1000, 1100)
SPLITS = {"dev": DEV_SEEDS, "test": TEST_SEEDS}

Objectives = tuple[np.ndarray, np.ndarray]


def _severity(g: np.ndarray, rng: np.random.Generator, low: float, high: float) -> np.ndarray:
    """s_w^a(g) = Σ w_i g_i^a_i / Σ w_i with drawn weights w and exponents a_i ~ U(low, high)."""
    w, a = np.exp(0.5 * rng.standard_normal(g.shape[1])), rng.uniform(low, high, g.shape[1])
    return (w * g**a).sum(axis=1) / w.sum()


def _bumps(g: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """2-5 Gaussian bumps of random sign, height and width, each centred on a random configuration."""
    out = np.zeros(len(g))
    for _ in range(int(rng.integers(2, 6))):
        centre, height, width = g[rng.integers(len(g))], rng.uniform(0.03, 0.1), rng.uniform(0.15, 0.3)
        out += rng.choice([-1.0, 1.0]) * height * np.exp(-((g - centre) ** 2).sum(axis=1) / (2 * width**2))
    return out


def _smooth(g: np.ndarray, rng: np.random.Generator) -> Objectives:
    return _severity(g, rng, 1.0, 3.0), 1 - _severity(g, rng, 0.5, 1.2)


def _interacting(g: np.ndarray, rng: np.random.Generator) -> Objectives:
    n = g.shape[1]
    pairs = np.triu(rng.uniform(-0.5, 2.0, (n, n)), 1)
    delta = g @ rng.uniform(0.1, 0.5, n) + np.einsum("ki,ij,kj->k", g, pairs, g)
    rho = np.prod(1 - rng.uniform(0.3, 0.9, n) * g ** rng.uniform(0.5, 2.0, n), axis=1)
    return delta, rho


def _rugged(g: np.ndarray, rng: np.random.Generator) -> Objectives:
    clean, drop, m = rng.uniform(0.85, 0.98), rng.uniform(0.4, 0.8), int(rng.integers(40, 400))
    p = clean * (1 - drop * _severity(g, rng, 1.0, 3.0)) + _bumps(g, rng)
    delta = clean - rng.binomial(m, np.clip(p, 0.0, 1.0)) / m
    rho = 1 - _severity(g, rng, 0.5, 1.2) + rng.uniform(0.02, 0.06) * rng.standard_normal(len(g)) + _bumps(g, rng)
    return delta, rho


def _crowded(g: np.ndarray, rng: np.random.Generator) -> Objectives:
    delta = _severity(g, rng, 1.0, 3.0) + 0.01 * rng.standard_normal(len(g))
    kappa = rng.uniform(22.0, 30.0)
    floor = rng.uniform(0.2, 1.0) * np.expm1(kappa / 4)
    dist = np.expm1(kappa * _severity(g, rng, 1.5, 2.5)) * np.exp(0.3 * rng.standard_normal(len(g)))
    return delta, -(dist + floor * rng.standard_normal(len(g)))


def _long_front(g: np.ndarray, rng: np.random.Generator) -> Objectives:
    s, c, eta = _severity(g, rng, 0.8, 1.5), rng.uniform(0.7, 1.5), np.exp(rng.uniform(np.log(0.01), np.log(0.02)))
    return s**c + eta * rng.standard_normal(len(g)), -s + eta * rng.standard_normal(len(g))


_GENERATORS: dict[str, Callable[[np.ndarray, np.random.Generator], Objectives]] = {
    "smooth": _smooth, "interacting": _interacting, "rugged": _rugged, "crowded": _crowded, "long_front": _long_front,
}
FAMILIES = tuple(_GENERATORS)
FRONT_SIZES = {"smooth": (20, 60), "interacting": (15, 120), "rugged": (5, 40), "crowded": (15, 65), "long_front": (50, 150)}


def _minmax(v: np.ndarray) -> np.ndarray:
    return (v - v.min()) / (v.max() - v.min())


def synthetic_table(family: str, seed: int, space: Space | None = None) -> pd.DataFrame:
    """The table of (family, seed) over `space` (default {0..5}^4 with dimensions p0..p3): the dimension
    columns, `order`, `delta_norm` and `rho_norm` in [0, 1], and `pareto` (P* of the two, both maximised)."""
    if family not in _GENERATORS:
        raise ValueError(f"unknown synthetic family {family!r}; the families are {list(FAMILIES)}")
    space = space or DEFAULT_SPACE
    rng = np.random.default_rng(np.random.SeedSequence([FAMILIES.index(family), int(seed)]))
    grid = space.grid()
    delta, rho = _GENERATORS[family](grid / (space.levels - 1), rng)
    table = pd.DataFrame(grid, columns=list(space.names))
    table["order"] = Space.order(grid)
    table["delta_norm"], table["rho_norm"] = _minmax(delta), _minmax(rho)
    table["pareto"] = pareto_mask(table[["delta_norm", "rho_norm"]].to_numpy())
    return table


def split_tables(split: str, per_family: int) -> list[tuple[str, int]]:
    """The first `per_family` seeds of a split ("dev" or "test") for every family, as (family, seed) pairs."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; the splits are {list(SPLITS)}")
    seeds = SPLITS[split]
    if not 1 <= per_family <= len(seeds):
        raise ValueError(f"per_family must be in 1..{len(seeds)} for the {split!r} split, got {per_family}")
    return [(family, seed) for family in FAMILIES for seed in seeds[:per_family]]

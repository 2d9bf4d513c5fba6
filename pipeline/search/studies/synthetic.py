"""Seeded synthetic ground-truth tables, for choosing and testing search methods away from the real tables.

Every family builds raw objectives (δ, ρ) over Θ from levels scaled to g_i = θ_i / (ℓ−1) ∈ [0, 1], then min-max
normalises both and marks P* with `pareto_mask` (both maximised). Its parameters (weights per dimension
w_i = exp(0.5·z_i), z_i standard normal, exponents, noise scales) are drawn from a generator seeded by (index in
`FAMILIES`, seed), so each (family, seed) pair is one fixed table. Below, s_w^a(g) = Σ w_i g_i^a_i / Σ w_i is a
weighted severity in [0, 1] and ε an independent standard normal per configuration. The |P*| ranges
(`FRONT_SIZES`) hold on the default Θ = {0..5}^4 for every seed of both splits.

* `smooth`: δ = s_w^a, a_i ~ U(1, 3); ρ = 1 − s_v^b, b_i ~ U(0.5, 1.2): additive and monotone, TestNav §3.1's ideal.
* `interacting`: δ = Σ u_i g_i + Σ_{i<j} W_ij g_i g_j (W_ij ~ U(−0.5, 2): pairs that compound or mask each other);
  ρ = Π_i (1 − v_i g_i^b_i), multiplicative like a signal's survival under composed perturbations.
* `rugged`: δ = c − acc, acc = Binomial(m, p)/m on m ~ U{40..399} inputs, p = c·(1 − k·s_w^a) + bumps; ρ = 1 −
  s_v^b + σ·ε + bumps (`_rugged_counts`, `_bumps`): the real tables' noise, ties and local non-monotonicity.
* `crowded`: δ = s_w^a + 0.01·ε; ρ = −d, d = (exp(κ·s_v^b) − 1)·exp(0.3·ε) + τ·ε', a distance tiny for most
  configurations and exploding for the most severe, with a noise floor τ: a front crowded near ρ = 1, like KID.
* `long_front`: δ = s^c + η·ε, ρ = −s + η·ε' for one shared severity s = s_w^a: a long ragged band.

Per-input layer (`synthetic_inputs`, `synthetic_confidence`): beside each table, left as it is, n test inputs
(`N_INPUTS`; rugged: its own m), each with an outcome o_θi ∈ [0, 1] and a fidelity f_θi per θ (stream `_INPUTS`):

* Outcomes. Input i has a latent difficulty d_i ~ N(0, 1), shared by every θ; θ fails its n·δ(θ) inputs of
  largest d_i + σ·ε_θi (σ = `NOISE`; the next one in part), so mean_i (c_i − o_θi) = δ(θ) with clean outcome
  c_i = 1, and two configurations fail mostly the same hard inputs (paired, correlated). rugged's θ fails exactly
  m − k_θ of its m inputs (k_θ its binomial count of correct ones).
* Fidelity. f_θi = 1 − (1 − ρ(θ))·v_θi, v_θi ∝ exp(`FIDELITY_SPREAD`·(b_i + σ·ε'_θi)) of mean 1 over the inputs,
  b_i ~ N(0, 1) shared by every θ: mean_i f_θi = ρ(θ), f ≤ 1. crowded's ρ is a set statistic (`SET_FIDELITY`),
  one value per θ, held fixed by the bootstrap and handed to it as its dense rank.
* Confidence. `pi_syn` and `set_syn` (core: π ≥ 0.95; plausible: π ≥ 0.05) from
  `pipeline.front.membership.bootstrap_membership`, B = 1,000 unstratified resamples (stream `_RESAMPLES`).

Protocol: method choices (hyper-parameters, which variant to keep) are made on the `dev` split only (`DEV_SEEDS`),
results reported once on the disjoint `test` split (`TEST_SEEDS`); `split_tables` lists a split's (family, seed)
pairs. The features each family imitates, the measured cores and the choice of σ: docs/search.md, section
'Synthetic tables in full'.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.front.membership import bootstrap_membership
from pipeline.front.pareto import pareto_mask
from pipeline.search.racing.unit_outcomes import UnitOutcomes
from pipeline.front.space import Space

DEFAULT_SPACE = Space(("p0", "p1", "p2", "p3"), 6)
DEV_SEEDS = range(100)
TEST_SEEDS = range(1000, 1100)
SPLITS = {"dev": DEV_SEEDS, "test": TEST_SEEDS}
N_INPUTS = 200  # n, the test inputs of a generated table (rugged: its own m)
NOISE = 0.5  # σ, the sd of the per-configuration noise on an input's latent (whose sd is 1)
FIDELITY_SPREAD = 0.5  # the sd of log v_θi, how unevenly a configuration's loss of fidelity falls on the inputs
SET_FIDELITY = frozenset({"crowded"})  # families whose ρ is a set statistic (like KID): one value per θ
METRIC = "syn"  # the fidelity metric's name in the confidence columns (`pi_syn`, `set_syn`)
RESAMPLES = 1000  # B of the paired bootstrap
_INPUTS, _RESAMPLES = 1, 2  # the generator streams of the per-input layer and of the bootstrap

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


def _rugged_counts(g: np.ndarray, rng: np.random.Generator) -> tuple[float, int, np.ndarray, np.ndarray]:
    """`rugged`'s draws: the clean accuracy c, the test-set size m, each θ's count of correct inputs and ρ."""
    clean, drop, m = rng.uniform(0.85, 0.98), rng.uniform(0.4, 0.8), int(rng.integers(40, 400))
    p = clean * (1 - drop * _severity(g, rng, 1.0, 3.0)) + _bumps(g, rng)
    correct = rng.binomial(m, np.clip(p, 0.0, 1.0))
    rho = 1 - _severity(g, rng, 0.5, 1.2) + rng.uniform(0.02, 0.06) * rng.standard_normal(len(g)) + _bumps(g, rng)
    return clean, m, correct, rho


def _rugged(g: np.ndarray, rng: np.random.Generator) -> Objectives:
    clean, m, correct, rho = _rugged_counts(g, rng)
    return clean - correct / m, rho


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


def _rng(family: str, seed: int, *stream: int) -> np.random.Generator:
    """The generator of (family, seed): the table's without `stream`, an independent one per stream number."""
    return np.random.default_rng(np.random.SeedSequence([FAMILIES.index(family), int(seed), *stream]))


def _minmax(v: np.ndarray) -> np.ndarray:
    return (v - v.min()) / (v.max() - v.min())


def synthetic_table(family: str, seed: int, space: Space | None = None) -> pd.DataFrame:
    """The table of (family, seed) over `space` (default {0..5}^4 with dimensions p0..p3): the dimension
    columns, `order`, `delta_norm` and `rho_norm` in [0, 1], and `pareto` (P* of the two, both maximised)."""
    if family not in _GENERATORS:
        raise ValueError(f"unknown synthetic family {family!r}; the families are {list(FAMILIES)}")
    space = space or DEFAULT_SPACE
    grid = space.grid()
    delta, rho = _GENERATORS[family](grid / (space.levels - 1), _rng(family, seed))
    table = pd.DataFrame(grid, columns=list(space.names))
    table["order"] = Space.order(grid)
    table["delta_norm"], table["rho_norm"] = _minmax(delta), _minmax(rho)
    table["pareto"] = pareto_mask(table[["delta_norm", "rho_norm"]].to_numpy())
    return table


@dataclass(frozen=True)
class SyntheticInputs:
    """The per-input layer of a generated table, in `pipeline.front.membership`'s terms: outcomes o_θi (|Θ|, n) in
    [0, 1], clean outcomes c_i (n,), and fidelity f_θi (|Θ|, n), or ρ(θ) (|Θ|,) where it is a set statistic."""

    outcomes: np.ndarray
    clean: np.ndarray
    fidelity: np.ndarray


def _failures(failed: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Per-input losses x_θi ∈ [0, 1] (|Θ|, n) with Σ_i x_θi = failed_θ: θ fails outright the ⌊failed_θ⌋ inputs of
    largest score_θi and the next one in part (not at all where failed_θ is a whole number)."""
    rank = np.argsort(np.argsort(-score, axis=1, kind="stable"), axis=1, kind="stable")
    return np.clip(failed[:, None] - rank, 0.0, 1.0)


def _fidelity(rho: np.ndarray, log_loss: np.ndarray) -> np.ndarray:
    """f_θi = 1 − (1 − ρ(θ)) · v_θi with v_θi = exp(log_loss_θi) / mean_i exp(log_loss_θi), so mean_i f_θi = ρ(θ), f ≤ 1."""
    v = np.exp(log_loss)
    return 1.0 - (1.0 - rho)[:, None] * (v / v.mean(axis=1, keepdims=True))


def _per_input(table: pd.DataFrame, family: str, seed: int, space: Space, n: int | None) -> SyntheticInputs:
    """The per-input layer (module docstring) of `table`, the table of (family, seed) over `space`."""
    if family == "rugged":
        if n is not None:
            raise ValueError(f"rugged's δ is an accuracy on its own m test inputs; n must be None, got {n}")
        n, correct = _rugged_counts(space.grid() / (space.levels - 1), _rng(family, seed))[1:3]
        failed = (n - correct).astype(float)
    else:
        n = N_INPUTS if n is None else int(n)
        if n < 1:
            raise ValueError(f"n must be at least 1 test input, got {n}")
        failed = n * table["delta_norm"].to_numpy()
    rng = _rng(family, seed, _INPUTS)
    outcomes = 1.0 - _failures(failed, rng.standard_normal(n) + NOISE * rng.standard_normal((len(table), n)))
    rho = table["rho_norm"].to_numpy()
    if family in SET_FIDELITY:
        return SyntheticInputs(outcomes, np.ones(n), rho)
    log_loss = FIDELITY_SPREAD * (rng.standard_normal(n) + NOISE * rng.standard_normal((len(table), n)))
    return SyntheticInputs(outcomes, np.ones(n), _fidelity(rho, log_loss))


def synthetic_inputs(family: str, seed: int, space: Space | None = None, n: int | None = None) -> SyntheticInputs:
    """Per-input outcomes and fidelity of the table of (family, seed) over `space`, rows in its order, on n test
    inputs (default `N_INPUTS`; rugged: its own m, and n must be None); see the module docstring."""
    space = space or DEFAULT_SPACE
    return _per_input(synthetic_table(family, seed, space), family, seed, space, n)


def _units(table: pd.DataFrame, inputs: SyntheticInputs, seed: int) -> UnitOutcomes:
    """The layer as the bootstrap is given it: a set-level fidelity as its dense rank (held fixed, so only its
    order counts, and a rank cannot tie by rounding), and the slopes from the raw means to the table's objectives."""
    fidelity = inputs.fidelity
    if fidelity.ndim == 1:
        fidelity = np.unique(fidelity, return_inverse=True)[1].astype(float)
    raw = (inputs.clean[None, :] - inputs.outcomes).mean(axis=1)
    scale = float(np.ptp(table["delta_norm"]) / np.ptp(raw)), 1.0  # delta_norm is the min-max of the raw δ
    return UnitOutcomes(inputs.outcomes, inputs.clean, fidelity, None, scale, seed)


def synthetic_units(family: str, seed: int, space: Space | None = None) -> UnitOutcomes:
    """The per-input layer of the table of (family, seed) as a search reads it (`TableOracle(inputs=…)`), in
    `synthetic_confidence`'s terms."""
    space = space or DEFAULT_SPACE
    table = synthetic_table(family, seed, space)
    return _units(table, _per_input(table, family, seed, space, None), resample_seed(family, seed))


def resample_seed(family: str, seed: int) -> int:
    """The bootstrap seed of the confidence columns of (family, seed)."""
    return int(np.random.SeedSequence([FAMILIES.index(family), int(seed), _RESAMPLES]).generate_state(1)[0])


def synthetic_confidence(family: str, seed: int, space: Space | None = None, resamples: int = RESAMPLES) -> pd.DataFrame:
    """`synthetic_table` of (family, seed) with the real ground truth's confidence columns for the metric `METRIC`:
    `pi_syn`, the share of `resamples` seeded paired bootstrap resamples of the inputs in which θ is on the front, and
    `set_syn`: "core" (π ≥ 0.95), "plausible" (π ≥ 0.05) or "out" (`pipeline.front.membership.bootstrap_membership`)."""
    space = space or DEFAULT_SPACE
    table = synthetic_table(family, seed, space)
    units = _units(table, _per_input(table, family, seed, space, None), resample_seed(family, seed))
    frame = bootstrap_membership(units.outcomes, units.clean, units.fidelity, B=resamples, seed=units.seed)
    table[f"pi_{METRIC}"], table[f"set_{METRIC}"] = frame["pi"].to_numpy(), frame["set"].to_numpy()
    return table


def split_tables(split: str, per_family: int) -> list[tuple[str, int]]:
    """The first `per_family` seeds of a split ("dev" or "test") for every family, as (family, seed) pairs."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; the splits are {list(SPLITS)}")
    seeds = SPLITS[split]
    if not 1 <= per_family <= len(seeds):
        raise ValueError(f"per_family must be in 1..{len(seeds)} for the {split!r} split, got {per_family}")
    return [(family, seed) for family in FAMILIES for seed in seeds[:per_family]]

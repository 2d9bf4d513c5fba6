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

Per-input layer (issue 29, item 5: `synthetic_inputs`, `synthetic_confidence`). Beside each table, which it
leaves as it is, n test inputs (`N_INPUTS` = 200; rugged: its own m, 40-399) with an outcome o_θi ∈ [0, 1] and a
fidelity f_θi for every θ, drawn from their own generator (stream `_INPUTS` of (family, seed)):

* Outcomes. Input i has a latent difficulty d_i ~ N(0, 1), shared by every θ; θ adds its own noise σ·ε_θi
  (σ = `NOISE` = 0.5, ε standard normal). θ fails its n·δ(θ) inputs of largest d_i + σ·ε_θi (the next one in part
  where n·δ is not a whole number): loss x_θi ∈ [0, 1], o_θi = 1 − x_θi, clean outcome c_i = 1. So mean_i (c_i − o_θi)
  = δ(θ) = `delta_norm` (up to float rounding), and two configurations fail mostly the same hard inputs: their
  comparison is paired and correlated, as on real data (σ = 0 would nest the failure sets; σ → ∞ make them
  independent). rugged's δ is already an accuracy on m inputs: θ fails exactly m − k_θ of them (k_θ its binomial
  count of correct ones), o_θi ∈ {0, 1}, and mean_i (c_i − o_θi) = 1 − k_θ/m, whose min-max normalisation is
  `delta_norm`. c_i = 1 because ψ(D) shifts δ* of every θ alike in a resample (paired) and so moves no θ across the
  front; with it no δ* reaches the bootstrap's clamp at 0, which the (unclamped) table does not have.
* Fidelity. f_θi = 1 − (1 − ρ(θ))·v_θi with v_θi ∝ exp(0.5·(b_i + σ·ε'_θi)) scaled to mean 1 over the inputs
  (0.5 = `FIDELITY_SPREAD`), b_i ~ N(0, 1) a per-input sensitivity shared by every θ: mean_i f_θi = ρ(θ) =
  `rho_norm`, f ≤ 1, and the θ with ρ = 1 keeps every input intact. crowded's ρ imitates KID, a set statistic: one
  value per θ (`SET_FIDELITY`), held fixed by the bootstrap as KID is in the real ground truth; its front's ρ differ
  by as little as 1e-13, below the bootstrap's rounding (`pipeline.front.membership.TIE_DECIMALS`), so
  `synthetic_confidence` hands the bootstrap its dense rank, which has the same order.
* Confidence. `synthetic_confidence` adds the real ground truth's columns for the one metric `METRIC`: `pi_syn` and
  `set_syn` (core: π ≥ 0.95; plausible: π ≥ 0.05), from `pipeline.front.membership.bootstrap_membership` with B = 1,000
  unstratified resamples seeded by stream `_RESAMPLES` of (family, seed). The bootstrap's front on the layer's
  point estimates is P* (the `pareto` column); the θ of highest fidelity is on the front in every resample (π = 1).
* Measured on dev seeds 0-9 (default Θ), the share of P* in the core, mean (range): smooth 0.26 (0.12-0.36),
  interacting 0.04 (0.02-0.09), rugged 0.16 (0.05-0.29), crowded 0.19 (0.07-0.36), long_front 0.03 (0.02-0.05);
  median |core| 9, 2, 2, 6 and 3. σ was chosen on these so that, as on the real pairs (27 of the 160 members of the
  eight real fronts are in the core, 4-40% per pair), most of P* is fragile; σ = 0.3 and 0.7 (seeds 0-4) give
  smooth 0.39 and 0.22, rugged 0.23 and 0.12, and leave interacting and long_front at 0.03-0.04: their long,
  dense fronts are fragile at n = 200 whatever σ. The share of P* on the front by at most one input
  (`pipeline.front.membership.front_margin`) is 0.16-0.35 per family, below the real pairs' 0.58: a margin scales with
  n, and n = 200 was set between the real n (40-360), not fitted to that share. `synthetic_confidence` takes
  about 0.4-0.5 s per 6^4 table on one shared core (the 100 tables of `split_tables("test", 20)`: 51 s).

Protocol: method choices (hyper-parameters, which variant to keep) are made on the `dev` split only,
seeds `DEV_SEEDS`; results are reported once on the disjoint `test` split, seeds `TEST_SEEDS`.
`split_tables` lists the (family, seed) pairs of a split.
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

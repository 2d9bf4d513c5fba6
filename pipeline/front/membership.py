"""Membership with confidence: a paired bootstrap over the test inputs that gives every
configuration θ its share π of resamples in which it is on the front P*.

Objects (TestNav §3.2). For m configurations and n test inputs: o_θi is the task outcome of θ on input i
(1 correct or passes, 0 not; fractional allowed, e.g. a pass rate over variants), c_i the clean outcome (θ = 0,
inputs unperturbed), f_θi the per-input fidelity (SSIM, sentence chrF, BERT-F1). ψ(D) and ψ(T_θ) are means over
the inputs, δ(θ) = max(ψ(D) − ψ(T_θ), 0) (Eq. 1), ρ(θ) = mean_i f_θi (Eq. 2). P* is the set of configurations
no other configuration dominates, both objectives maximised.

The resample. One resample is a multiset of input indices, written as counts w_i (how often input i is drawn):
n draws with replacement, or, with `strata` (e.g. the class label), n_s draws within each stratum s, so every
stratum keeps its size. The same multiset serves every θ and the clean outcomes (paired: they share inputs),
so δ*(θ) = max(Σ_i w_i (c_i − o_θi) / n, 0) and ρ*(θ) = Σ_i w_i f_θi / n, and P* is recomputed on (δ*, ρ*).
π(θ) is the share of B resamples with θ on that front. The bootstrap unit is the row: a cluster of inputs
(the variants of one code problem) must be reduced to one input (its pass rate) before the call.

A set-level fidelity (KID: one number per θ, an (m,) array) is held fixed in every resample: a set statistic
is not resampled here, and its uncertainty is not counted in π.

What π means. π measures how stable θ's membership of the front is under resampling of the inputs, centred
on the empirical estimates (the resamples are drawn from the observed inputs). It is not the probability that
θ is on the true front P* of the population of inputs.

Ties. Domination is the pipeline's (`pipeline.front.pareto.pareto_mask`): θ' dominates θ when it is ≥ on both
objectives and > on one, so identical points never dominate each other and are on the front together or off
it together; the point-estimate flag `on_front` equals `pareto_mask` on (delta, rho). Two configurations with
the same outcome and fidelity on every input therefore always share their π; two that tie only on the point
estimates but differ on the inputs split: each is on the front in the resamples it wins or ties. Before any
comparison δ and ρ are rounded to `TIE_DECIMALS` decimals, so floating-point round-off in the weighted sums
never makes or breaks a tie (sums of 0/1 outcomes are exact anyway).

Own code, not a library: the front of every resample is found at once by a 2-D sweep vectorised over the
resamples (`pipeline.front.pareto.front_mask`); `pareto_mask` sorts one point set per call, and moocore's `is_nondominated` (which, with
`keep_weakly=True`, follows the same tie rule) works on one point set per call and is not a declared dependency.
At m = 1,296, n = 360, B = 1,000 a call takes about 0.4 s on one core, most of it in the fronts.
"""
from __future__ import annotations

import math
from itertools import combinations_with_replacement

import numpy as np
import pandas as pd

from pipeline.front.pareto import front_mask

TIE_DECIMALS = 12  # δ and ρ are compared after rounding to this many decimals
BLOCK = 1024  # resamples whose fronts are computed together (bounds memory at O(BLOCK · m))


def _inputs(outcomes: np.ndarray, clean: np.ndarray, fidelity: np.ndarray, strata: np.ndarray | None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Checked arrays: the paired differences c_i − o_θi (m, n), the fidelity ((m, n) or (m,)), stratum codes (n,)."""
    outcomes, clean, fidelity = (np.asarray(a, dtype=float) for a in (outcomes, clean, fidelity))
    if outcomes.ndim != 2 or outcomes.size == 0:
        raise ValueError(f"outcomes must be a non-empty (m configurations, n inputs) array, got shape {outcomes.shape}")
    m, n = outcomes.shape
    if clean.shape != (n,):
        raise ValueError(f"clean must hold one outcome per input, shape ({n},), got {clean.shape}")
    if fidelity.shape not in ((m, n), (m,)):
        raise ValueError(f"fidelity must be per input, shape ({m}, {n}), or per configuration (a set statistic), "
                         f"shape ({m},); got {fidelity.shape}")
    for name, a in (("outcomes", outcomes), ("clean", clean), ("fidelity", fidelity)):
        if not np.isfinite(a).all():
            raise ValueError(f"{name} contains NaN or infinite values; every configuration and input needs a finite value")
    if strata is None:
        codes = np.zeros(n, dtype=int)
    else:
        strata = np.asarray(strata)
        if strata.shape != (n,):
            raise ValueError(f"strata must give one label per input, shape ({n},), got {strata.shape}")
        codes = np.unique(strata, return_inverse=True)[1]
    return clean[None, :] - outcomes, fidelity, codes


def _objectives(counts: np.ndarray, diff: np.ndarray, fidelity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """δ* and ρ* (K, m) of K resamples given as counts (K, n), rounded to TIE_DECIMALS."""
    counts, n = counts.astype(float), counts.shape[1]
    delta = np.maximum(counts @ diff.T / n, 0.0)
    rho = counts @ fidelity.T / n if fidelity.ndim == 2 else np.broadcast_to(fidelity, delta.shape)
    return np.round(delta, TIE_DECIMALS), np.round(rho, TIE_DECIMALS)


def _draw_counts(codes: np.ndarray, B: int, rng: np.random.Generator) -> np.ndarray:
    """B stratified resamples as counts (B, n): n_s draws with replacement within each stratum s."""
    counts = np.zeros((B, len(codes)), dtype=np.int64)
    for s in range(codes.max() + 1):
        members = np.flatnonzero(codes == s)
        counts[:, members] = rng.multinomial(len(members), np.full(len(members), 1.0 / len(members)), size=B)
    return counts


def _all_resamples(codes: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """Every distinct stratified resample as counts (K, n) with the number of index tuples that draw it (K,),
    the product over strata of the multinomial coefficients n_s! / Π_i w_i! (integers, so sums are exact)."""
    sizes = np.bincount(codes)
    total = math.prod(math.comb(2 * k - 1, k) for k in sizes)
    if total > limit:
        raise ValueError(f"exact enumeration needs {total:,} resamples (more than {limit:,}); use bootstrap_membership")
    counts, ways = np.zeros((1, len(codes)), dtype=np.int64), np.ones(1)
    for s, k in enumerate(sizes):
        rows = np.array([np.bincount(c, minlength=k) for c in combinations_with_replacement(range(k), k)])
        w = np.array([math.factorial(k) // math.prod(math.factorial(c) for c in row) for row in rows.tolist()], dtype=float)
        counts, ways = np.repeat(counts, len(rows), axis=0), np.repeat(ways, len(rows)) * np.tile(w, len(ways))
        counts[:, codes == s] = np.tile(rows, (len(counts) // len(rows), 1))
    return counts, ways


def _front_share(counts: np.ndarray, ways: np.ndarray, diff: np.ndarray, fidelity: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """π (m,): the ways-weighted share of resamples with θ on their front; and δ* of every resample (K, m)."""
    hits, deltas = np.zeros(diff.shape[0]), np.empty((len(counts), diff.shape[0]))
    for start in range(0, len(counts), BLOCK):
        delta, rho = _objectives(counts[start : start + BLOCK], diff, fidelity)
        hits += ways[start : start + BLOCK] @ front_mask(delta, rho)
        deltas[start : start + BLOCK] = delta
    return hits / ways.sum(), deltas


def resample_counts(strata: np.ndarray | None, n: int, B: int = 1000, seed: int = 0) -> np.ndarray:
    """The B resamples `bootstrap_membership` draws for n units with these strata and seed, as counts (B, n)."""
    codes = np.zeros(n, dtype=int) if strata is None else np.unique(np.asarray(strata), return_inverse=True)[1]
    return _draw_counts(codes, B, np.random.default_rng(seed))


def front_share(counts: np.ndarray, outcomes: np.ndarray, clean: np.ndarray, fidelity: np.ndarray) -> np.ndarray:
    """π (m,) over given resamples (counts (B, n), e.g. `resample_counts`'s): the share with θ on the front."""
    diff, fidelity, _ = _inputs(outcomes, clean, fidelity, None)
    return _front_share(np.asarray(counts), np.ones(len(counts)), diff, fidelity)[0]


def bootstrap_membership(outcomes: np.ndarray, clean: np.ndarray, fidelity: np.ndarray, *, strata: np.ndarray | None = None,
                         B: int = 1000, seed: int = 0, level: float = 0.95, core: float = 0.95, plausible: float = 0.05
                         ) -> pd.DataFrame:
    """π(θ) by the paired (optionally stratified) bootstrap of B resamples, one row per θ (row order of `outcomes`).

    Columns: `delta`, `rho` (point estimates δ(θ), ρ(θ)), `pi` (share of resamples with θ on the front),
    `delta_lo`, `delta_hi` (the percentile interval of δ*(θ) at `level`), `on_front` (θ ∈ P* on the point
    estimates), `set` ("core": π ≥ `core`, "plausible": `plausible` ≤ π < `core`, "out": the rest).
    """
    diff, fidelity, codes = _inputs(outcomes, clean, fidelity, strata)
    if B < 1:
        raise ValueError(f"B must be at least 1 resample, got {B}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    if not 0.0 <= plausible <= core <= 1.0:
        raise ValueError(f"the thresholds must satisfy 0 ≤ plausible ≤ core ≤ 1, got plausible={plausible}, core={core}")
    counts = _draw_counts(codes, B, np.random.default_rng(seed))
    pi, deltas = _front_share(counts, np.ones(B), diff, fidelity)
    delta, rho = _objectives(np.ones((1, diff.shape[1]), dtype=np.int64), diff, fidelity)
    lo, hi = np.quantile(deltas, [(1.0 - level) / 2, (1.0 + level) / 2], axis=0)
    return pd.DataFrame({
        "delta": delta[0], "rho": rho[0], "pi": pi, "delta_lo": lo, "delta_hi": hi, "on_front": front_mask(delta, rho)[0],
        "set": np.select([pi >= core, pi >= plausible], ["core", "plausible"], "out"),
    })


def exact_membership(outcomes: np.ndarray, clean: np.ndarray, fidelity: np.ndarray, *, strata: np.ndarray | None = None,
                     limit: int = 1_000_000) -> np.ndarray:
    """π(θ) (m,) exactly: every distinct resample of the bootstrap, weighted by its multinomial probability.

    For tiny n only (n = 8 unstratified is 6,435 resamples); raises when more than `limit` would be needed.
    """
    diff, fidelity, codes = _inputs(outcomes, clean, fidelity, strata)
    counts, ways = _all_resamples(codes, limit)
    return _front_share(counts, ways, diff, fidelity)[0]


def front_margin(delta: np.ndarray, rho: np.ndarray, n: int) -> np.ndarray:
    """Signed margin of each θ in units of one input (1/n): n · (δ(θ) − max{δ(θ') : θ' ≠ θ, ρ(θ') ≥ ρ(θ)}).

    `delta` is on its raw scale (a share of inputs, not `delta_norm`). For a member of P* it is ≥ 0: after δ
    falls by that many inputs a configuration with at least its fidelity is level with it (and dominates it
    if its fidelity is higher; any further fall dominates it). For a non-member it is ≤ 0 and its negative is
    the rise that brings θ level with the best of them. +inf where no other configuration has at least θ's
    fidelity (θ then stays on the front whatever its δ). Rounded to 9 decimals, so whole inputs count exactly.
    """
    delta = np.round(np.asarray(delta, dtype=float), TIE_DECIMALS)
    rho = np.round(np.asarray(rho, dtype=float), TIE_DECIMALS)
    if delta.ndim != 1 or rho.shape != delta.shape:
        raise ValueError(f"delta and rho must be (m,) arrays of the same shape, got {delta.shape} and {rho.shape}")
    rivals = rho[None, :] >= rho[:, None]
    np.fill_diagonal(rivals, False)
    level = np.where(rivals, delta[None, :], -np.inf).max(axis=1)
    return np.round(n * (delta - level), 9)

"""Where model B is worse than the baseline A, configuration by configuration, with confidence.

For a configuration θ and input i, let a_i(θ), b_i(θ) ∈ {0, 1} say whether A and B answer right on T_θ(x_i), and
a_i, b_i on the clean x_i. B's loss minus A's on that input is d_i(θ) = (b_i − b_i(θ)) − (a_i − a_i(θ)), and

    Δ(θ) = mean_i d_i(θ) = δ_B(θ) − δ_A(θ)        (δ unclamped: ψ(D) − ψ(T_θ), TestNav Eq. 1)

Δ > 0: B loses more accuracy under T_θ than A does. Its uncertainty comes from the inputs: the paired bootstrap
draws B resamples of the n inputs once, and every configuration and both models are read on the same resamples,
Δ*(θ) = mean over the resample of d_i(θ). The resamples are not stratified by label (unlike the front's π): a
class with few inputs, all of them discordant, would otherwise contribute no variance at all.

* `delta_lo`, `delta_hi`: the percentile interval of Δ*(θ) at `level`, one configuration at a time.
* The verdict is decided over all configurations evaluated at once, by the max-statistic over the same bootstrap:
  with se(θ) the bootstrap standard deviation of Δ*(θ) and q the `level` quantile of
  max_θ |Δ*(θ) − Δ(θ)| / se(θ), the bands Δ(θ) ± q·se(θ) cover every configuration's Δ together with probability
  about `level`. B is significantly worse at θ where the band's lower end exceeds the tolerance, significantly
  better where its upper end is below minus the tolerance, and a tie otherwise: the chance of calling any
  configuration wrongly is at most about 1 − `level` (family-wise, which also bounds the false discovery rate).
* `a_only`, `b_only`: the discordant inputs, right for A and wrong for B under T_θ, and the reverse.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from pipeline.front.membership import resample_counts

RESAMPLES = 2000
LEVEL = 0.95
CORRECTION = "max-statistic over the paired bootstrap (simultaneous bands; family-wise error over the configurations evaluated)"


def regression_table(correct_a: np.ndarray, correct_b: np.ndarray, clean_a: np.ndarray, clean_b: np.ndarray, *, level: float = LEVEL, tolerance: float = 0.0,
                     resamples: int = RESAMPLES, seed: int = 0) -> pd.DataFrame:
    """One row per configuration (rows of `correct_a`, `correct_b`: (m, n) correctness under each θ; `clean_a`,
    `clean_b`: (n,) on the clean inputs): δ_A, δ_B, Δ, its interval, the simultaneous band, the verdict
    ("worse", "better", "tie") and the discordant counts (module docstring)."""
    a, b = np.atleast_2d(np.asarray(correct_a, dtype=float)), np.atleast_2d(np.asarray(correct_b, dtype=float))
    ca, cb = np.asarray(clean_a, dtype=float), np.asarray(clean_b, dtype=float)
    if a.shape != b.shape or a.shape[1:] != ca.shape or ca.shape != cb.shape:
        raise ValueError(f"both models need one outcome per configuration and input: A {a.shape}, B {b.shape}, "
                         f"clean A {ca.shape}, clean B {cb.shape}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    if tolerance < 0:
        raise ValueError(f"tolerance must be at least 0, got {tolerance}")
    n = a.shape[1]
    d = (cb[None, :] - b) - (ca[None, :] - a)
    delta = d.mean(axis=1)
    boot = resample_counts(None, n, resamples, seed) @ d.T / n  # (B, m): every θ on the same resamples
    lo, hi = np.quantile(boot, [(1.0 - level) / 2, (1.0 + level) / 2], axis=0)
    se = boot.std(axis=0)
    q = simultaneous_quantile(boot, delta, se, level)
    band_lo, band_hi = delta - q * se, delta + q * se
    return pd.DataFrame({
        "delta_a": ca.mean() - a.mean(axis=1), "delta_b": cb.mean() - b.mean(axis=1), "Delta": delta,
        "Delta_lo": lo, "Delta_hi": hi, "band_lo": band_lo, "band_hi": band_hi, "verdict": judge(band_lo, band_hi, tolerance),
        "a_only": ((a == 1) & (b == 0)).sum(axis=1), "b_only": ((a == 0) & (b == 1)).sum(axis=1)})


def judge(band_lo: np.ndarray, band_hi: np.ndarray, tolerance: float) -> np.ndarray:
    """Each configuration's verdict from its simultaneous band: "worse" above `tolerance`, "better" below −`tolerance`."""
    lo, hi = np.asarray(band_lo, dtype=float), np.asarray(band_hi, dtype=float)
    return np.select([lo > tolerance, hi < -tolerance], ["worse", "better"], "tie")


def simultaneous_quantile(boot: np.ndarray, delta: np.ndarray, se: np.ndarray, level: float) -> float:
    """q: the `level` quantile over resamples of max_θ |Δ*(θ) − Δ(θ)| / se(θ), over the θ whose Δ* varies (a θ with
    se = 0 has Δ* = Δ in every resample: its band is the point)."""
    varies = se > 0
    if not varies.any():
        return 0.0
    t = np.abs(boot[:, varies] - delta[varies]) / se[varies]
    return float(np.quantile(t.max(axis=1), level))


def in_scope(table: pd.DataFrame, floor: float | Mapping[str, float] | None, metrics: Sequence[str]) -> np.ndarray:
    """The configurations the gate judges: ρ ≥ the fidelity floor for every metric (`floor`: one number for
    every metric, a number per metric, or None: every configuration)."""
    keep = np.ones(len(table), dtype=bool)
    if floor is None:
        return keep
    floors = dict(floor) if isinstance(floor, Mapping) else {m: float(floor) for m in metrics}
    for m, value in floors.items():
        if f"rho_{m}" not in table:
            raise ValueError(f"the fidelity floor names {m!r}; the comparison's metrics are {', '.join(metrics)}")
        keep &= table[f"rho_{m}"].to_numpy() >= float(value)
    return keep


def verdict(table: pd.DataFrame, floor: float | Mapping[str, float] | None, metrics: Sequence[str], tolerance: float,
            level: float) -> tuple[bool, str]:
    """(regression?, one line): whether some configuration of `table` (`regressions.csv`, its `theta` column naming the
    active perturbations) with ρ at or above the floor is significantly worse for B (its band's lower end above
    `tolerance`), and the line a CI log shows."""
    scope = table[in_scope(table, floor, metrics)]
    worse = scope[scope["verdict"] == "worse"].sort_values("Delta", ascending=False, kind="stable")
    where = "" if floor is None else f" with fidelity at or above {floor}"
    if len(worse):
        top = worse.iloc[0]
        return True, (f"REGRESSION: B is worse than the baseline at {len(worse)} of {len(scope)} configurations{where} "
                      f"(Δ > {tolerance} at {level:.0%} confidence, simultaneous); worst Δ = {top['Delta']:.3f} "
                      f"[{top['band_lo']:.3f}, {top['band_hi']:.3f}] at {top['theta']}")
    largest = f"; largest Δ = {scope['Delta'].max():.3f}" if len(scope) else ""
    return False, (f"no regression: none of {len(scope)} configurations{where} is significantly worse for B "
                   f"(Δ > {tolerance} at {level:.0%} confidence, simultaneous){largest}")

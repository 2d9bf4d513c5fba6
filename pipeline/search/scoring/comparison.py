"""Paired comparisons of search methods on the cost u of recovering all of P*, with bootstrap intervals.

Conventions:

* Censoring. A run that never reaches recall 1 within its budget (u_full NaN) counts as u = |Θ| + 1,
  worse than enumerating Θ exhaustively, so every run enters the comparison and a method cannot look
  cheap by failing often. Smaller u is better.
* Pairing. Runs of two methods pair up when they share the identifier columns `ids` (e.g. the table and
  the seed) within a key group (e.g. benchmark and metric, or split and family); every run must have its
  partner, and rows are matched by identifier, never by position.
* Intervals. A percentile bootstrap of the mean paired difference. Runs on the same table are not
  independent, so `groups` (`cluster` in `compare_to`) resamples whole groups of pairs instead of single
  pairs (a cluster bootstrap of the ratio estimator Σ d / Σ n over the drawn groups). The verdict reads the
  interval only: "tie" when it covers 0. The paired t statistic is the ordinary one over pairs and ignores
  the grouping.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

_CELLS = 2**20  # bootstrap draws held in memory at once


def censored_u(u_full: np.ndarray, space_size: int | np.ndarray) -> np.ndarray:
    """u where a run reached recall 1, |Θ| + 1 where it did not (NaN); `space_size` is |Θ|, one or one per run."""
    u = np.asarray(u_full, dtype=float)
    size = np.broadcast_to(np.asarray(space_size, dtype=float), u.shape)
    reached = ~np.isnan(u)
    if ((u[reached] < 1) | (u[reached] > size[reached])).any():
        bad = int(np.flatnonzero(reached & ((u < 1) | (u > size)))[0])
        raise ValueError(f"u_full must be NaN (not reached) or in 1..|Θ|; run {bad} has u = {u[bad]} with |Θ| = {size[bad]:.0f}")
    return np.where(reached, u, size + 1)


def _bootstrap_means(d: np.ndarray, codes: np.ndarray, rng: np.random.Generator, n_boot: int) -> np.ndarray:
    """Means of d over n_boot resamples of whole groups (`codes` 0..k−1), with replacement."""
    sums, counts = np.bincount(codes, weights=d), np.bincount(codes).astype(float)
    k = len(sums)
    out = np.empty(n_boot)
    step = max(1, _CELLS // k)
    for start in range(0, n_boot, step):
        draw = rng.integers(0, k, size=(min(step, n_boot - start), k))
        out[start : start + len(draw)] = sums[draw].sum(axis=1) / counts[draw].sum(axis=1)
    return out


def paired_difference(a: np.ndarray, b: np.ndarray, rng: np.random.Generator, n_boot: int = 10_000, level: float = 0.95,
                      groups: np.ndarray | None = None) -> dict[str, float | int | str]:
    """Mean of a − b over pairs, its percentile bootstrap interval at `level`, the paired t statistic,
    mean(a) / mean(b) and a verdict ("tie", "a better" or "b better"; smaller is better).

    Without `groups` the bootstrap resamples pairs; with one label per pair it resamples whole groups.
    t and the ratio are NaN (or ±inf) where their denominators are 0.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"a and b must be 1-D samples of the same length, got shapes {a.shape} and {b.shape}")
    if len(a) < 2:
        raise ValueError(f"a paired comparison needs at least 2 pairs, got {len(a)}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("a and b must be finite; censor runs that never reached recall 1 first (censored_u)")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")
    if groups is None:
        codes = np.arange(len(a))
    else:
        codes = pd.factorize(np.asarray(groups))[0]
        if codes.shape != a.shape or (codes < 0).any():
            raise ValueError(f"groups must give one non-missing label per pair ({len(a)}), got shape {np.shape(groups)}")
        if codes.max() < 1:
            raise ValueError("a cluster bootstrap needs at least 2 groups, got 1")
    d = a - b
    tail = (1 - level) / 2
    lo, hi = np.quantile(_bootstrap_means(d, codes, rng, int(n_boot)), [tail, 1 - tail])
    mean = float(d.mean())
    with np.errstate(divide="ignore", invalid="ignore"):
        t = float(np.divide(mean, d.std(ddof=1) / np.sqrt(len(d))))
        ratio = float(np.divide(a.mean(), b.mean()))
    verdict = "tie" if lo <= 0 <= hi else ("a better" if hi < 0 else "b better")
    return {"pairs": len(d), "groups": int(codes.max()) + 1, "mean_diff": mean, "lo": float(lo), "hi": float(hi), "t": t,
            "ratio": ratio, "verdict": verdict}


def _with_censored(runs: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    missing = [c for c in (*columns, "method", "u_full", "space_size") if c not in runs.columns]
    if missing:
        raise ValueError(f"the run table lacks columns {missing}; it has {list(runs.columns)}")
    return runs.assign(u_cens=censored_u(runs["u_full"].to_numpy(dtype=float), runs["space_size"].to_numpy(dtype=float)))


def recovery_summary(runs: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Per key group and method, in first-seen order: runs, runs that reached recall 1, mean u over those
    (NaN if none), and the median and mean of the censored u over all runs."""
    runs = _with_censored(runs, keys)
    g = runs.groupby([*keys, "method"], sort=False)
    return g.agg(runs=("u_full", "size"), reached=("u_full", "count"), u_mean=("u_full", "mean"),
                 u_cens_median=("u_cens", "median"), u_cens_mean=("u_cens", "mean")).reset_index()


def compare_to(runs: pd.DataFrame, reference: str, keys: Sequence[str], rng: np.random.Generator, ids: Sequence[str] = ("seed",),
               cluster: Sequence[str] = (), n_boot: int = 10_000, level: float = 0.95) -> pd.DataFrame:
    """For each key group and each method other than `reference`: `paired_difference` of censored u,
    method − reference, pairing runs on `ids`; `cluster` (a subset of `ids`, e.g. the table) resamples
    whole clusters. `ratio` is mean censored u of the method over the reference's (above 1: the reference
    needs fewer); `verdict` is "better" or "worse" for the method against the reference, or "tie"."""
    ids, cluster, keys = list(ids), list(cluster), list(keys)
    if not ids:
        raise ValueError("pairing needs at least one identifier column in ids")
    if not set(cluster) <= set(ids):
        raise ValueError(f"cluster columns {cluster} must be among the identifier columns {ids}")
    runs = _with_censored(runs, [*keys, *ids])
    dup = runs.duplicated([*keys, "method", *ids])
    if dup.any():
        row = runs.loc[dup, [*keys, "method", *ids]].iloc[0].to_dict()
        raise ValueError(f"runs must be unique per key, method and identifiers {ids}; {row} appears more than once")
    verdicts = {"tie": "tie", "a better": "better", "b better": "worse"}
    rows = []
    for key, group in (runs.groupby(keys, sort=False) if keys else [((), runs)]):
        where = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        by_method = {m: g.set_index(ids)["u_cens"] for m, g in group.groupby("method", sort=False)}
        if reference not in by_method:
            raise ValueError(f"no runs of the reference {reference!r} at {where}; the methods there are {list(by_method)}")
        ref = by_method[reference]
        for method, other in by_method.items():
            if method == reference:
                continue
            unpaired = {method: ref.index.difference(other.index), reference: other.index.difference(ref.index)}
            lacking = {m: idx[:3].tolist() for m, idx in unpaired.items() if len(idx)}
            if lacking:
                raise ValueError(f"{method!r} and {reference!r} are not paired at {where}: runs lacking, by method "
                                 f"(first 3 identifiers {ids}): {lacking}")
            other = other.loc[ref.index]
            groups = ref.index.to_frame(index=False).groupby(cluster, sort=False).ngroup().to_numpy() if cluster else None
            result = paired_difference(other.to_numpy(), ref.to_numpy(), rng, n_boot, level, groups)
            rows.append({**where, "method": method, "reference": reference, **result, "verdict": verdicts[str(result["verdict"])]})
    columns = [*keys, "method", "reference", "pairs", "groups", "mean_diff", "lo", "hi", "t", "ratio", "verdict"]
    return pd.DataFrame(rows, columns=columns)

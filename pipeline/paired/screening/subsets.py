"""Scores averaged over subsets of a probe list (paired evaluations App. E.1, "Number of synthetic
conditions", Tables 28 and 32): the prefixed subsets, fixed by seed before any outcome is read, and their
coverage, gain over clean confidence and AUROC on mild conditions."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import comb

import numpy as np
import pandas as pd

from pipeline.paired.screening.metrics import evaluate_cells
from pipeline.paired.screening.probes import probe_average
from pipeline.paired.screening.scores import condition_matrix


def prefix_subsets(conditions: Sequence[str], sizes: Sequence[int], n_subsets: int,
                   rng: np.random.Generator) -> list[tuple[str, tuple[int, ...]]]:
    """Table 28's condition subsets, fixed before any outcome is read: for m = 1 every singleton; for
    1 < m < n up to `n_subsets` distinct seeded subsets (all of them when fewer exist); m >= n is the full
    set, reported once as "all" after the severity halves ("severity <s>": the conditions named "<type>-<s>") and "all"."""
    n = len(conditions)
    out: list[tuple[str, tuple[int, ...]]] = []
    for m in sizes:
        if m == 1:
            out += [("m=1", (i,)) for i in range(n)]
            continue
        if m >= n:          # the full set is reported as "all"
            continue
        want, seen = min(n_subsets, comb(n, m)), set()
        while len(seen) < want:
            subset = tuple(sorted(int(i) for i in rng.choice(n, size=m, replace=False)))
            if subset not in seen:
                seen.add(subset)
                out.append((f"m={m}", subset))
    severities = sorted({c.rsplit("-", 1)[-1] for c in conditions if "-" in c})
    for sev in severities:
        out.append((f"severity {sev}", tuple(i for i, c in enumerate(conditions) if c.rsplit("-", 1)[-1] == sev)))
    out.append(("all", tuple(range(n))))
    return out


SUBSET_COLUMNS = ["subsets", "count", "coverage", "coverage min", "coverage max", "gain over S", "gain min", "AUROC",
                  "AUROC min", "AUROC max"]


def subset_table(scores: pd.DataFrame, real: pd.DataFrame, tiers: pd.DataFrame, source: str, q: float,
                 subsets: Sequence[tuple[str, tuple[int, ...]]], members: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """Coverage at q, gain over S and AUROC on mild conditions of the average of each subset of probes
    (minus the mean true-class probability over the subset's members), per subset family: the mean over its
    subsets, then the minimum and maximum (the minimum only for the gain). `members[model]` holds the
    model's per-probe true-class probabilities, (its score rows in `scores` order, probes)."""
    columns = {}
    for model, ids in scores.groupby("model", sort=True).groups.items():
        values = np.asarray(members[model], dtype=float)
        for j, (_, subset) in enumerate(subsets):
            columns.setdefault(f"sub{j}", []).append(pd.Series(-probe_average(values[:, list(subset)]), index=ids))
    extended = pd.concat([scores, pd.DataFrame({k: pd.concat(v) for k, v in columns.items()})], axis=1)
    mild = tiers.loc[tiers["tier"] == "mild", "condition"]
    if mild.empty:
        return pd.DataFrame(columns=SUBSET_COLUMNS)
    cells = evaluate_cells(extended, real[real["condition"].isin(mild)], ["neg_S", *columns], tiers, source, budgets=(q,))
    means = cells.groupby("score")[["auroc", f"coverage_{q:g}"]].mean()
    s_cov = means.loc["neg_S", f"coverage_{q:g}"]
    per = pd.DataFrame({"family": [f for f, _ in subsets], "coverage": means.loc[list(columns), f"coverage_{q:g}"].to_numpy(),
                        "auroc": means.loc[list(columns), "auroc"].to_numpy()})
    per["gain"] = per["coverage"] - s_cov
    rows = [{"subsets": family, "count": len(g), "coverage": g["coverage"].mean(), "coverage min": g["coverage"].min(),
             "coverage max": g["coverage"].max(), "gain over S": g["gain"].mean(), "gain min": g["gain"].min(),
             "AUROC": g["auroc"].mean(), "AUROC min": g["auroc"].min(), "AUROC max": g["auroc"].max()}
            for family, g in per.groupby("family", sort=False)]
    return pd.DataFrame(rows, columns=SUBSET_COLUMNS)


def synthetic_members(synthetic: pd.DataFrame, scores: pd.DataFrame, conditions: Sequence[str]) -> dict[str, np.ndarray]:
    """Per model, the true-class probabilities of its scored images under each synthetic condition
    (`subset_table`'s members), columns in the order of `conditions`."""
    return {model: condition_matrix(syn, conditions=conditions).loc[scores.loc[scores["model"] == model, "image_id"]]
            .to_numpy(float) for model, syn in synthetic.groupby("model", sort=True)}

"""Per-input outcomes of a ground truth and the membership of P* with confidence computed from them.

The exhaustive ground truth keeps, beside its table, what the model answered on every test input under every θ and
the per-input fidelity of every metric that has one, in one columnar file `<benchmark>.inputs.parquet`: one row per
(θ, input), sorted by θ's index in Θ (lexicographic, as the table), then by input:

    theta       int32    θ's index in Θ (`Space.indices`; the table's row of the same index holds its levels)
    input       int32    the row of the clean test set D (code: problem · variants + variant)
    prediction  int64    the model's answer: a class index, or for code 1 where the completion passes its tests
    rho_<m>     float32  the per-input fidelity of metric m, where φ_m is exactly its mean (SSIM, BERT-F1; the values
                         are float32 numbers, so float32 keeps them exactly)

KID is a set statistic and the pipeline's chrF is sacrebleu's corpus score (not a mean of sentence scores): neither
has a column, and the bootstrap holds them fixed (their uncertainty is not counted).

Units of the bootstrap (`pipeline.front.membership`): for accuracy an input (outcome: prediction == label; resampled
within each class); for robust pass (`robust_pass`) a problem (outcome: every variant passes; fidelity: the mean of
its rows' values), resampled as a whole, so a problem's variants stay together. For a comparison of two models
(`paired_accuracy`) an input too, its outcome B's correctness minus A's.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pipeline.front.membership import bootstrap_membership
from pipeline.front.space import Space

PER_INPUT = ("prediction",)  # per-input keys besides the `rho_<metric>_inputs` of each metric
RESAMPLES = 1000


def is_per_input(column: str) -> bool:
    return column in PER_INPUT or column.endswith("_inputs")


def split_per_input(raw: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """The raw table without its per-input columns (lists per row), and each as an (m, n) array in row order."""
    columns = [c for c in raw.columns if is_per_input(c)]
    return raw.drop(columns=columns), {c: np.array(raw[c].tolist()) for c in columns}


def inputs_frame(thetas: np.ndarray, space: Space, per_input: dict[str, np.ndarray]) -> pd.DataFrame:
    """The file's table (module docstring) of the configurations `thetas` (rows of the arrays in `per_input`)."""
    predictions = per_input["prediction"]
    m, n = predictions.shape
    frame = pd.DataFrame({"theta": np.repeat(space.indices(thetas).astype(np.int32), n),
                          "input": np.tile(np.arange(n, dtype=np.int32), m),
                          "prediction": predictions.reshape(-1).astype(np.int64)})
    for column, values in sorted(per_input.items()):
        if column.endswith("_inputs") and values.shape == (m, n):
            frame[column.removesuffix("_inputs")] = values.reshape(-1).astype(np.float32)
    return frame.sort_values(["theta", "input"], kind="stable").reset_index(drop=True)


INPUT_SCORES = {"accuracy": (0.0, 1.0), "paired_accuracy": (-1.0, 1.0)}  # task metrics that are a mean over inputs: score range


def input_scores(predictions: np.ndarray, labels: np.ndarray, task_metric: str) -> np.ndarray:
    """Each input's score, whose mean over the inputs is ψ: for accuracy 1 where the prediction is right; for
    `paired_accuracy` (a comparison of two models, predictions (..., n, 2): the baseline A's, then B's) B's
    correctness minus A's, in {−1, 0, 1}, so ψ = ψ_B − ψ_A and δ = δ_B − δ_A."""
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    if task_metric == "accuracy":
        return (predictions == labels).astype(float)
    if task_metric == "paired_accuracy":
        return (predictions[..., 1] == labels).astype(float) - (predictions[..., 0] == labels).astype(float)
    raise ValueError(f"task metric {task_metric!r} is not a mean of per-input scores; those are {', '.join(INPUT_SCORES)}")


def unit_outcomes(predictions: np.ndarray, labels: np.ndarray, task_metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(outcomes (m, units), each input's unit (n,), each unit's stratum or None) of the bootstrap (module docstring)."""
    labels = np.asarray(labels)
    if task_metric in INPUT_SCORES:
        return input_scores(predictions, labels, task_metric), np.arange(len(labels)), labels
    if task_metric == "robust_pass":
        problems, unit = np.unique(labels, return_inverse=True)
        passed = np.ones((len(predictions), len(problems)))
        np.minimum.at(passed.T, unit, (predictions == 1).T.astype(float))
        return passed, unit, None
    raise ValueError(f"task metric {task_metric!r} has no per-input outcome; the bootstrap knows accuracy, paired_accuracy and robust_pass")


def unit_means(values: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """(m, units): the mean of each unit's inputs' values."""
    sums = np.zeros((len(values), unit.max() + 1))
    np.add.at(sums.T, unit, values.T)
    return sums / np.bincount(unit)


def unit_fidelity(per_input: np.ndarray | None, unit: np.ndarray, set_level: np.ndarray) -> np.ndarray:
    """The fidelity the bootstrap resamples: each unit's mean of the per-input values (m, units) where the metric has
    them (an (m, n) array), else the set-level value of each configuration (m,), held fixed."""
    if per_input is not None and per_input.shape == set_level.shape + unit.shape:
        return unit_means(per_input, unit)
    return set_level


def confidence_columns(table: pd.DataFrame, per_input: dict[str, np.ndarray], labels: np.ndarray, metrics: Sequence[str],
                       task_metric: str, space: Space, seed: int = 0, resamples: int = RESAMPLES) -> pd.DataFrame:
    """For every θ of the table (in its order; θ = 0 first, the clean set): the 95% interval of δ (`delta_lo`,
    `delta_hi`) and per metric m `pi_<m>`, the share of paired bootstrap resamples of the units in which θ is on the
    front of Θ, and `set_<m>`: core (π ≥ 0.95), plausible (π ≥ 0.05) or out (`pipeline.front.membership`)."""
    if not (table[list(space.names)].iloc[0] == 0).all():
        raise ValueError("the table's first row must be θ = 0, the clean set the bootstrap compares with")
    outcomes, unit, strata = unit_outcomes(per_input["prediction"], labels, task_metric)
    out = pd.DataFrame(index=table.index)
    for i, m in enumerate(metrics):
        fidelity = unit_fidelity(per_input.get(f"rho_{m}_inputs"), unit, table[f"rho_{m}"].to_numpy())
        frame = bootstrap_membership(outcomes, outcomes[0], fidelity, strata=strata, B=resamples, seed=seed)
        if i == 0:
            out["delta_lo"], out["delta_hi"] = frame["delta_lo"].to_numpy(), frame["delta_hi"].to_numpy()
        out[f"pi_{m}"], out[f"set_{m}"] = frame["pi"].to_numpy(), frame["set"].to_numpy()
    return out


def confidence_summary(table: pd.DataFrame, metrics: Sequence[str]) -> dict[str, dict[str, int]]:
    """Per metric: |P*|, the core (π ≥ 0.95), the plausible set (π ≥ 0.05) and how many of P* are in the core."""
    return {m: {"pareto": int(table[f"pareto_{m}"].sum()), "core": int((table[f"set_{m}"] == "core").sum()),
                "plausible": int((table[f"set_{m}"] != "out").sum()),
                "pareto_in_core": int((table[f"pareto_{m}"] & (table[f"set_{m}"] == "core")).sum())} for m in metrics}

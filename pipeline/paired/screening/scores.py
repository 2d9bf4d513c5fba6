"""Image-level screening scores fitted on one split and applied to the other (Paired Evaluations, arXiv 2609.35583,
Section 5.1, Appendix E.1), the identity ablation (Table 25) and U from a prefix of the conditions (Table 28).

Data flow, which is what keeps the two splits apart:

1. `image_features(synthetic)`: per image of one model, from that image's own synthetic records only:
   S (clean maximum probability), M (clean true-class probability), U (mean true-class probability over
   the synthetic conditions), ret (share of conditions still correct). No quantity pools images.
2. `fit_screening(features, real, split="dev")`: everything that pools images (class means, logistic
   predictors g) is fitted from `split` rows only and frozen into a `ScreeningFit`; the real-condition
   outcomes of the other split are dropped before anything is read from them.
3. `apply_screening(fit, features, split="eval")`: risk scores of the other split's clean-correct images,
   computed from their own features and the frozen fit. Fitting and scoring on one split raises.

Risk columns (larger = riskier, Appendix E.1): neg_S = -S, neg_U = -U, delta = S - U, neg_ret = -ret,
class_delta (fit-split class mean of M - U over all fit images of the class), neg_class_U_all and
neg_class_U_cc (minus the fit-split class mean of U over all / clean-correct fit images, Table 26), and
g_S, g_SU, g_SU_ret (decision values, i.e. fitted log-odds of failure, of the frozen logistic predictors).

NaN marks a missing value: a class without fit-split images (class means; neg_class_U_cc needs a
clean-correct fit image of the class, so evaluate it apart from the primary scores, on its supported
subset as in Table 26), or a predictor whose fit rows hold a single outcome (reported, not replaced).
Because `evaluate_cells` drops every image with a NaN among the requested scores, compare the primary
scores (`PRIMARY_SCORES`) in one call and the supported-subset controls in another.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from pipeline.paired.records.table import SPLITS
from pipeline.paired.screening.metrics import real_outcomes

PREDICTORS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"g_S": ("S",), "g_SU": ("S", "U"), "g_SU_ret": ("S", "U", "ret")})
SCORES = ("neg_S", "neg_U", "delta", "neg_ret", "class_delta", "neg_class_U_all", "neg_class_U_cc",
          *PREDICTORS)
PRIMARY_SCORES = ("neg_S", "neg_U", "delta", "neg_ret", "class_delta", "g_SU")   # the six of Figure 2


def image_features(synthetic: pd.DataFrame) -> pd.DataFrame:
    """Per image of one model's synthetic-condition records: model, group, image_id, split, y,
    clean_correct, S, M, U, ret and the number of conditions (Section 5.1). Every image must carry every
    condition of the table."""
    models = synthetic["model"].unique()
    if len(models) != 1:
        raise ValueError(f"expected the records of one model, got {len(models)} models")
    n_cond = synthetic["condition"].nunique()
    df = synthetic.assign(_correct=(synthetic["pert_pred"] == synthetic["y"]).astype(float))
    g = df.groupby("image_id", sort=True)
    out = g[["model", "group", "split", "y", "clean_pred", "clean_maxprob", "clean_trueprob"]].first()
    out["U"] = g["pert_trueprob"].mean()
    out["ret"] = g["_correct"].mean()
    out["n_conditions"] = g.size()
    if (out["n_conditions"] != n_cond).any():
        bad = out.index[out["n_conditions"] != n_cond][0]
        raise ValueError(f"image {bad!r} has {out.loc[bad, 'n_conditions']} of the {n_cond} synthetic conditions")
    out = out.reset_index().rename(columns={"clean_maxprob": "S", "clean_trueprob": "M"})
    out["clean_correct"] = out["clean_pred"] == out["y"]
    return out[["model", "group", "image_id", "split", "y", "clean_correct", "S", "M", "U", "ret", "n_conditions"]]


@dataclass(frozen=True)
class LogisticFit:
    """A frozen logistic predictor: features standardised with the fit split's mean and (ddof 0) standard
    deviation (1 for a constant feature), then coef . x + intercept (scikit-learn, L-BFGS, C = 1)."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float

    def decision(self, frame: pd.DataFrame) -> np.ndarray:
        x = (frame[list(self.features)].to_numpy(float) - np.array(self.mean)) / np.array(self.scale)
        return x @ np.array(self.coef) + self.intercept


@dataclass(frozen=True)
class ScreeningFit:
    """Everything a score may learn from the fit split, frozen (Appendix E.1)."""

    model: str
    split: str
    class_delta: Mapping[int, float]
    class_u_all: Mapping[int, float]
    class_u_cc: Mapping[int, float]
    predictors: Mapping[str, LogisticFit | None]   # None: the fit rows hold one outcome only
    n_images: int
    n_rows: int


def _fit_logistic(rows: pd.DataFrame, features: tuple[str, ...]) -> LogisticFit | None:
    y = rows["failed"].to_numpy(bool)
    if len(rows) == 0 or y.all() or not y.any():
        return None
    x = rows[list(features)].to_numpy(float)
    mean, std = x.mean(0), x.std(0)
    scale = np.where(std > 0, std, 1.0)
    model = LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000).fit((x - mean) / scale, y)
    return LogisticFit(features, tuple(mean), tuple(scale), tuple(model.coef_[0]), float(model.intercept_[0]))


def _frozen(series: pd.Series) -> Mapping[int, float]:
    return MappingProxyType({int(k): float(v) for k, v in series.items()})


def fit_screening(features: pd.DataFrame, real: pd.DataFrame, split: str = "dev") -> ScreeningFit:
    """Fit the pooled scores on `split` images only (Appendix E.1): class means of M - U and of U, and
    g(S), g(S,U), g(S,U,ret) on clean-correct `split` images, one row per (image, real condition) of the
    source (pooling the real conditions). `real` holds one model's records of one real source."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; valid splits are {list(SPLITS)}")
    fit = features[features["split"] == split]
    if fit.empty:
        raise ValueError(f"no {split!r} images to fit on")
    model = str(fit["model"].iloc[0])
    if set(real["model"].unique()) - {model}:
        raise ValueError(f"real records hold models other than {model!r}")
    real_split = real.drop_duplicates("image_id").set_index("image_id")["split"]
    shared = features.set_index("image_id")["split"].reindex(real_split.index)
    clash = shared.notna() & (shared != real_split)
    if clash.any():
        raise ValueError(f"image {clash.index[clash][0]!r} lies in different splits of the synthetic and real records")
    outcomes = real_outcomes(real[real["split"] == split])          # the other split is dropped here
    rows = outcomes.merge(fit, on="image_id", how="inner", suffixes=("_real", ""))
    if (rows["clean_correct_real"] != rows["clean_correct"]).any():
        bad = rows.loc[rows["clean_correct_real"] != rows["clean_correct"], "image_id"].iloc[0]
        raise ValueError(f"image {bad!r}: clean correctness differs between the synthetic and real records")
    rows = rows[rows["clean_correct"]]
    cc = fit[fit["clean_correct"]]
    return ScreeningFit(
        model=model, split=split,
        class_delta=_frozen((fit["M"] - fit["U"]).groupby(fit["y"]).mean()),
        class_u_all=_frozen(fit.groupby("y")["U"].mean()),
        class_u_cc=_frozen(cc.groupby("y")["U"].mean()),
        predictors=MappingProxyType({name: _fit_logistic(rows, feats) for name, feats in PREDICTORS.items()}),
        n_images=int(rows["image_id"].nunique()), n_rows=len(rows))


def apply_screening(fit: ScreeningFit, features: pd.DataFrame, split: str = "eval") -> pd.DataFrame:
    """Risk scores (module docstring) of the clean-correct `split` images of `fit.model`; a class with no
    fit value and an unfitted predictor give NaN. `split` must differ from the fit split."""
    if split == fit.split:
        raise ValueError(f"scoring split {split!r} is the split the scores were fitted on")
    out = features[(features["split"] == split) & features["clean_correct"]
                   & (features["model"] == fit.model)].reset_index(drop=True)
    out = out[["model", "group", "image_id", "split", "y", "S", "U", "ret"]].copy()
    out["neg_S"], out["neg_U"] = -out["S"], -out["U"]
    out["delta"], out["neg_ret"] = out["S"] - out["U"], -out["ret"]
    out["class_delta"] = out["y"].map(dict(fit.class_delta)).astype(float)
    out["neg_class_U_all"] = -out["y"].map(dict(fit.class_u_all)).astype(float)
    out["neg_class_U_cc"] = -out["y"].map(dict(fit.class_u_cc)).astype(float)
    for name, predictor in fit.predictors.items():
        out[name] = np.nan if predictor is None else predictor.decision(out)
    return out


def image_scores(synthetic: pd.DataFrame, real: pd.DataFrame, fit_split: str = "dev",
                 score_split: str = "eval") -> pd.DataFrame:
    """Per-image risk scores of one model and real source: fitted on `fit_split`, applied to the
    clean-correct `score_split` images (swap the two for the Table 23 check)."""
    features = image_features(synthetic)
    return apply_screening(fit_screening(features, real, fit_split), features, score_split)


# --------------------------------------------------------------------------------------------------
# identity ablation (Table 25)
# --------------------------------------------------------------------------------------------------
def random_derangement(n: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random permutation of range(n) without fixed points (rejection sampling; n >= 2)."""
    if n < 2:
        raise ValueError(f"a derangement needs at least 2 elements, got {n}")
    while True:
        perm = rng.permutation(n)
        if (perm != np.arange(n)).all():
            return perm


def derange_within_classes(labels, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(source index per position, deranged mask): each position of a class with >= 2 members receives
    another member's value; a singleton class cannot be deranged, keeps its own index and is masked out
    (Appendix E.1: no control value, excluded from the comparison). Classes are visited in sorted order."""
    labels = np.asarray(labels)
    perm, mask = np.arange(len(labels)), np.zeros(len(labels), dtype=bool)
    for y in np.unique(labels):
        idx = np.flatnonzero(labels == y)
        if len(idx) >= 2:
            perm[idx] = idx[random_derangement(len(idx), rng)]
            mask[idx] = True
    return perm, mask


def identity_controls(scores: pd.DataFrame, rng: np.random.Generator, column: str = "neg_U",
                      n_draws: int = 10) -> pd.DataFrame:
    """`scores` with f"{column}_derange{d}" (d < n_draws: within-class derangements among the same
    model's (and source's) scored images) and f"{column}_loo" (leave-one-out class mean); NaN on
    singleton classes, so the common-set rule of `evaluate_cells` restricts every score to the
    non-singleton subset (Table 25). Blocks are visited in sorted order, so a seed fixes the result."""
    out = scores.reset_index(drop=True).copy()
    blocks = [c for c in ("source", "model") if c in out.columns]
    values = out[column].to_numpy(float)
    derange = np.full((n_draws, len(out)), np.nan)
    for _, idx in sorted(out.groupby(blocks, sort=True).indices.items()):
        labels = out["y"].to_numpy()[idx]
        for d in range(n_draws):
            perm, mask = derange_within_classes(labels, rng)
            derange[d, idx[mask]] = values[idx[perm[mask]]]
    for d in range(n_draws):
        out[f"{column}_derange{d}"] = derange[d]
    grouped = out.groupby([*blocks, "y"])[column]
    total, count = grouped.transform("sum"), grouped.transform("count")
    out[f"{column}_loo"] = np.where(count >= 2, (total - out[column]) / (count - 1).clip(lower=1), np.nan)
    return out


def average_draws(cells: pd.DataFrame, prefix: str, name: str | None = None) -> pd.DataFrame:
    """Cell rows of the scores f"{prefix}0", f"{prefix}1", ... averaged per cell into one score `name`
    (Table 25: AUROC averaged over ten seeded derangements); other scores pass through unchanged."""
    draw = cells["score"].str.fullmatch(rf"{prefix}\d+")
    if not draw.any():
        raise ValueError(f"no scores named {prefix}<d>")
    key = ["source", "model", "group", "condition", "tier"]
    avg = cells[draw].groupby(key, sort=True).mean(numeric_only=True).reset_index()
    avg.insert(len(key), "score", name or prefix.rstrip("_"))
    return pd.concat([cells[~draw], avg[cells.columns]], ignore_index=True)


# --------------------------------------------------------------------------------------------------
# U from m of the synthetic conditions (Table 28)
# --------------------------------------------------------------------------------------------------
def condition_matrix(synthetic: pd.DataFrame, value: str = "pert_trueprob",
                     conditions: Sequence[str] | None = None) -> pd.DataFrame:
    """(image x condition) table of one model's `value`, columns in the order of `conditions`."""
    wide = synthetic.pivot(index="image_id", columns="condition", values=value)
    conditions = list(conditions) if conditions is not None else sorted(wide.columns)
    missing = [c for c in conditions if c not in wide.columns]
    if missing:
        raise ValueError(f"conditions {missing} are not in the records")
    return wide[conditions]


def u_prefix(trueprobs, m: int, order: Sequence[int] | None = None) -> np.ndarray:
    """U_m: mean true-class probability over the first m synthetic conditions (columns of `trueprobs`,
    (n, C)), optionally after reordering the columns by `order` (a prefixed subset order, Table 28)."""
    x = np.asarray(trueprobs, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"trueprobs must be (images, conditions), got shape {x.shape}")
    if order is not None:
        order = np.asarray(order)
        if len(np.unique(order)) != len(order) or order.min(initial=0) < 0 or order.max(initial=0) >= x.shape[1]:
            raise ValueError(f"order must list distinct column indices below {x.shape[1]}")
        x = x[:, order]
    if not 1 <= m <= x.shape[1]:
        raise ValueError(f"m must lie in [1, {x.shape[1]}], got {m}")
    return x[:, :m].mean(1)

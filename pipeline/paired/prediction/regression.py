"""Do paired summaries improve model-level prediction? (paired evaluations §6, Appendices H.3-H.4, I)

Per-model synthetic summaries (`summaries`) predict each model's real targets under mild
conditions with nested leave-one-group-out ridge regression (scikit-learn):

* outer folds hold out one model group; within the training groups an inner leave-one-group-out loop
  picks the ridge penalty from the grid by the model-equal MAE on the original target scale; the
  penalty, the median imputation (zero for a wholly missing column) and the standardisation are all
  fitted on training groups only (Cawley and Talbot, 2010);
* targets are rates in [0, 1], clipped to [1e-4, 1 - 1e-4] and fitted on the standard-normal quantile
  scale, predictions mapped back with the normal CDF (App. H.4); errors are reported in percentage points;
* intervals resample model groups of the stored out-of-fold errors (no refitting), the per-model error
  differences averaged with models weighted equally (App. I.1); whole-group deletion refits drop a group
  from training and evaluation and repeat the entire nested fit (App. I.2).

Feature sets (App. I.1, Tables 43 and 46): B0 clean-performance features and the real development
accuracy; B1 adds the unpaired synthetic quantities and the target's synthetic protocol quantity; B_ind
adds the class-conditional independent counterparts of F, A, Q, k, dM_k, ds_s, ds_w, L_k; C1 adds the
paired (F, A, Q) to B_ind; "B_ind + dM_k" adds the paired dM_k alone.

With few models the estimates are coarse: the embedded pool has 8 models in 5 groups, so each outer fit
trains on 3-4 groups and each inner choice of the penalty rests on 3-4 held-out groups.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy.stats import norm
from sklearn.impute import SimpleImputer
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pipeline.runtime.numerics import n_workers
from pipeline.paired.prediction.summaries import PAIRED, model_features, model_targets

ALPHAS = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
CLIP = 1e-4
B0 = ("clean_acc", "clean_S", "clean_M_cc", "clean_logloss", "real_dev_acc")
B1_EXTRA = ("pert_acc", "pert_S", "pert_M_cc", "pert_logloss")
PROTOCOL = {"accuracy": (), "R": ("R",), "E_tau": ("E_tau",), "L_k": ("rejected_correct",)}


def feature_sets(target: str) -> dict[str, tuple[str, ...]]:
    """The feature sets of the module docstring for `target` (its protocol quantity joins B1)."""
    if target not in PROTOCOL:
        raise ValueError(f"unknown target {target!r}; valid targets are {list(PROTOCOL)}")
    b1 = (*B0, *B1_EXTRA, *PROTOCOL[target])
    b_ind = (*b1, *(f"{p}_ind" for p in PAIRED))
    return {"B0": B0, "B1": b1, "B_ind": b_ind, "C1": (*b_ind, "F", "A", "Q"), "B_ind+dM_k": (*b_ind, "dM_k")}


def _regressor(alpha: float):
    return make_pipeline(SimpleImputer(strategy="median", keep_empty_features=True), StandardScaler(), Ridge(alpha=alpha))


def _fit_predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, alpha: float) -> np.ndarray:
    z = norm.ppf(np.clip(y_train, CLIP, 1.0 - CLIP))
    return norm.cdf(_regressor(alpha).fit(x_train, z).predict(x_test))


def choose_alpha(x: np.ndarray, y: np.ndarray, groups: np.ndarray, alphas: Sequence[float] = ALPHAS) -> float:
    """The penalty with the lowest leave-one-group-out MAE (original scale, models weighted equally) on
    these training rows; ties go to the earlier grid value. Needs at least two groups."""
    units = np.unique(groups)
    if len(units) < 2:
        raise ValueError(f"choosing the ridge penalty needs at least 2 training groups, got {len(units)}")
    mae = []
    for alpha in alphas:
        err = np.zeros(len(y))
        for g in units:
            held = groups == g
            err[held] = np.abs(_fit_predict(x[~held], y[~held], x[held], alpha) - y[held])
        mae.append(err.mean())
    return float(alphas[int(np.argmin(mae))])


def nested_logo(x: np.ndarray, y: np.ndarray, groups: np.ndarray, alphas: Sequence[float] = ALPHAS) -> tuple[np.ndarray, dict]:
    """Out-of-fold predictions of every row (its group held out) and the penalty chosen per outer fold
    from the training groups only. Needs at least three groups."""
    x, y, groups = np.asarray(x, float), np.asarray(y, float), np.asarray(groups)
    units = np.unique(groups)
    if len(units) < 3:
        raise ValueError(f"nested leave-one-group-out needs at least 3 groups, got {len(units)}")
    pred, chosen = np.full(len(y), np.nan), {}
    for g in units:
        held = groups == g
        alpha = choose_alpha(x[~held], y[~held], groups[~held], alphas)
        pred[held] = _fit_predict(x[~held], y[~held], x[held], alpha)
        chosen[str(g)] = alpha
    return pred, chosen


def group_interval(diff: np.ndarray, groups: np.ndarray, rng: np.random.Generator, draws: int,
                   level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the model-weighted mean of per-model differences, resampling groups."""
    units, idx = np.unique(groups, return_inverse=True)
    sums, sizes = np.bincount(idx, diff, len(units)), np.bincount(idx, minlength=len(units)).astype(float)
    picks = rng.integers(0, len(units), size=(draws, len(units)))
    counts = np.zeros((draws, len(units)))
    np.add.at(counts, (np.repeat(np.arange(draws), len(units)), picks.ravel()), 1.0)
    means = (counts @ sums) / (counts @ sizes)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def oof_errors(features: pd.DataFrame, targets: pd.DataFrame, alphas: Sequence[float] = ALPHAS,
               drop_group: str | None = None) -> pd.DataFrame:
    """Absolute out-of-fold errors (percentage points) per model, target and feature set; `drop_group`
    removes that group from training and evaluation first (a whole-group deletion refit)."""
    data = features.merge(targets, on=["model", "group"], how="inner", suffixes=("", "_target"))
    if len(data) != len(targets):
        raise ValueError("features and targets cover different models")
    if drop_group is not None:
        data = data[data["group"] != drop_group]
    rows = []
    for target in PROTOCOL:
        y = data[target if target not in features.columns else f"{target}_target"].to_numpy(float)
        for name, cols in feature_sets(target).items():
            pred, chosen = nested_logo(data[list(cols)].to_numpy(float), y, data["group"].to_numpy(), alphas)
            rows.append(pd.DataFrame({"target": target, "features": name, "model": data["model"].to_numpy(),
                                      "group": data["group"].to_numpy(), "truth": 100 * y, "prediction": 100 * pred,
                                      "error": 100 * np.abs(pred - y), "alphas": str(chosen)}))
    return pd.concat(rows, ignore_index=True)


COMPARISONS = {"table43": (("B_ind", "C1"), ("B_ind", "B_ind+dM_k")), "table46": (("B0", "B1"),)}


def comparison_table(errors: pd.DataFrame, pairs: Sequence[tuple[str, str]], rng: np.random.Generator, draws: int,
                     deletions: Mapping[str, pd.DataFrame] | None = None, targets: pd.DataFrame | None = None) -> pd.DataFrame:
    """MAE per feature set and the MAE reduction base - augmented (pp, positive = better) with a
    group-resampling interval of the stored out-of-fold errors; with `deletions` (group -> errors of the
    refit without it), the range of reductions over the deletion refits; with `targets`, the practical
    threshold 0.1 x the target's interquartile range (pp)."""
    rows = []
    for target in PROTOCOL:
        part = errors[errors["target"] == target]
        row = {"target": target}
        for base, aug in pairs:
            a = part[part["features"] == base].set_index("model")
            b = part[part["features"] == aug].set_index("model").loc[a.index]
            diff = (a["error"] - b["error"]).to_numpy()
            lo, hi = group_interval(diff, a["group"].to_numpy(), rng, draws)
            row.update({f"{base} MAE": a["error"].mean(), f"{aug} MAE": b["error"].mean(),
                        f"{aug} reduction [95%]": f"{diff.mean():+.2f} [{lo:+.2f}, {hi:+.2f}]"})
            if deletions:
                red = []
                for errs in deletions.values():
                    p = errs[errs["target"] == target]
                    red.append(p.loc[p["features"] == base, "error"].mean() - p.loc[p["features"] == aug, "error"].mean())
                row[f"{aug} reduction, group deletions"] = f"{min(red):+.2f} to {max(red):+.2f}"
        if targets is not None:
            q75, q25 = np.percentile(100 * targets[target].to_numpy(float), [75, 25])
            row["0.1 IQR"] = 0.1 * (q75 - q25)
        rows.append(row)
    return pd.DataFrame(rows)


def prediction_tables(features: pd.DataFrame, targets: pd.DataFrame, alphas: Sequence[float], draws: int,
                      rng: np.random.Generator, workers: int = 1) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Tables 43 and 46 in shape (one source), from the full-pool fit and the whole-group deletion refits,
    and the stored out-of-fold errors of the full-pool fit. The fits go to `workers` processes (0: every core
    this process may use); each is a pure function of its rows, so the tables do not depend on how many."""
    groups = sorted(targets["group"].unique())
    dropped = [None, *groups] if len(groups) > 3 else [None]
    fits = Parallel(n_jobs=min(n_workers(workers), len(dropped)))(
        delayed(oof_errors)(features, targets, alphas, drop_group=g) for g in dropped)
    errors, deletions = fits[0], dict(zip(groups, fits[1:])) if len(dropped) > 1 else None
    tables = {name: comparison_table(errors, pairs, rng, draws, deletions, targets) for name, pairs in COMPARISONS.items()}
    return tables, errors


def source_prediction(synthetic: pd.DataFrame, real: pd.DataFrame, tiers: pd.DataFrame, spec: Mapping,
                      workers: int = 1) -> tuple[dict[str, pd.DataFrame], pd.DataFrame, pd.DataFrame]:
    """Tables 43 and 46 of one source, the stored out-of-fold errors and the model summaries (features
    joined to targets). They need mild real conditions (the targets of §6) and at least 3 model groups
    (nested leave-one-group-out); otherwise the tables and frames are empty. `spec` is the `paired` config
    node; draws use the generator seeded [paired.screening.seed, 1]; the fits go to `workers` processes
    (`prediction_tables`)."""
    tables = {"table43": pd.DataFrame(), "table46": pd.DataFrame()}
    mild = tiers.loc[tiers["tier"] == "mild", "condition"].tolist()
    if not mild or real["group"].nunique() < 3:
        return tables, pd.DataFrame(), pd.DataFrame()
    pred = spec["screening"]["prediction"]
    features = model_features(synthetic, real, mild, spec["clean_coverage"], pred["coverage"])
    targets = model_targets(real, mild, spec["clean_coverage"], pred["coverage"])
    rng = np.random.default_rng([spec["screening"]["seed"], 1])
    pred_tables, errors = prediction_tables(features, targets, pred["alphas"], pred["draws"], rng, workers)
    tables.update(pred_tables)
    return tables, errors, features.merge(targets, on=["model", "group"], suffixes=("", "_target"))

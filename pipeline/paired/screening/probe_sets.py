"""Probe and capture-condition diagnostics of paired evaluations App. E.3: screening by probe set (Table 36,
Figure 6) and the capture sensitivity of the mild-condition gains.

Probe sets (each scored by the mean true-class probability over its members, negated: the U rule):
every Syn-B corruption alone ("probe", one transformed input), each corruption type's two severities
("type", two), each severity's nine types ("severity", nine), all 18 (U) and the 18 natural transforms
(TTA18); clean confidence S is the clean-only row (it counts the one clean prediction). Every set is
evaluated on the same mild cells and image sets as the primary comparison.

A set's development error rate (App. E.3) is the error of its individual transformed predictions on the
model's clean-correct development images, averaged over the set's probes and then over models.

Capture sensitivity: for each mild condition the paired coverage gains U - S and U - TTA18 at the primary
budget, averaged over models; then their means per level of each capture factor (lighting, and for the
27 camera settings of the ImageNet-ES numbering also ISO, shutter and aperture) and with that level
deleted. Conditions whose names do not follow `<lighting>-param_<k>` (`pipeline.perturb.recapture.parse_condition`)
keep only the overall row.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pipeline.paired.records.probes import probe_arrays
from pipeline.paired.screening.metrics import evaluate_cells
from pipeline.paired.screening.scores import image_features
from pipeline.perturb.recapture import N_PARAMS, camera_setting, parse_condition


def probe_names(probes: pd.DataFrame, model: str, probe: str) -> list[str]:
    """Member names of one model's probe set in the order of `probe_arrays`."""
    part = probes[(probes["model"] == model) & (probes["probe"] == probe)]
    return part.drop_duplicates("index").sort_values("index")["name"].astype(str).tolist()


def probe_sets(names: Sequence[str]) -> list[tuple[str, str, tuple[int, ...]]]:
    """(family, label, member indices) of every probe set of the module docstring built from Syn-B names
    "<type>-<severity>": one per probe, per type, per severity, then "all"."""
    parts = [n.rsplit("-", 1) for n in names]
    if any(len(p) != 2 for p in parts):
        raise ValueError(f"Syn-B probe names must read '<type>-<severity>', got {list(names)}")
    types = list(dict.fromkeys(t for t, _ in parts))
    severities = sorted({s for _, s in parts}, key=lambda s: (len(s), s))
    sets = [("probe", n, (i,)) for i, n in enumerate(names)]
    sets += [("type", t, tuple(i for i, (u, _) in enumerate(parts) if u == t)) for t in types]
    sets += [("severity", f"severity {s}", tuple(i for i, (_, v) in enumerate(parts) if v == s)) for s in severities]
    return [*sets, ("all", "all corruptions", tuple(range(len(names))))]


def probe_set_scores(scores: pd.DataFrame, probes: pd.DataFrame) -> tuple[pd.DataFrame, list[tuple[str, str, tuple[int, ...]]]]:
    """`scores` with one risk column `set<j>` per probe set j of `probe_sets` (minus the mean true-class
    probability over its members), and the sets."""
    columns: dict[str, list[pd.Series]] = {}
    sets = None
    for model, part in scores.groupby("model", sort=True):
        names = probe_names(probes, model, "synb")
        model_sets = probe_sets(names)
        if sets is not None and model_sets != sets:
            raise ValueError(f"model {model!r} has Syn-B probes {names}, unlike the other models")
        sets = model_sets
        synb = probe_arrays(probes, model, "synb", part["image_id"].tolist())
        true = synb[:, np.arange(len(part)), part["y"].to_numpy()]                     # (A, n)
        for j, (_, _, members) in enumerate(sets):
            columns.setdefault(f"set{j}", []).append(pd.Series(-true[list(members)].mean(0), index=part.index))
    extra = pd.DataFrame({k: pd.concat(v) for k, v in columns.items()})
    return pd.concat([scores, extra], axis=1), sets or []


def development_error_rates(synthetic: pd.DataFrame, probes: pd.DataFrame, probe: str) -> np.ndarray:
    """Per member of probe set `probe`, the error rate of its transformed predictions on each model's
    clean-correct development images, averaged over models (equal weight)."""
    rates = []
    for model, syn in synthetic.groupby("model", sort=True):
        f = image_features(syn)
        dev = f[(f["split"] == "dev") & f["clean_correct"]]
        if dev.empty:
            continue
        proba = probe_arrays(probes, model, probe, dev["image_id"].tolist())
        rates.append((proba.argmax(2) != dev["y"].to_numpy()[None, :]).mean(1))
    return np.mean(rates, axis=0) if rates else np.array([])


def probe_set_table(synthetic: pd.DataFrame, scores: pd.DataFrame, real: pd.DataFrame, probes: pd.DataFrame,
                    tiers: pd.DataFrame, source: str, q: float, tier: str = "mild") -> tuple[pd.DataFrame, dict]:
    """Table 36 with Figure 6's rows: coverage at q, AUROC, coverage minus the natural set's, evaluations and
    development error rate of clean confidence, every probe set and TTA18 on `tier` conditions; and the
    counts of App. E.3's text (types and single probes above natural, types that gain from the higher
    severity)."""
    extended, sets = probe_set_scores(scores, probes)
    conditions = tiers.loc[tiers["tier"] == tier, "condition"]
    set_columns = [f"set{j}" for j in range(len(sets))]
    if conditions.empty:
        return pd.DataFrame(), {}
    cells = evaluate_cells(extended, real[real["condition"].isin(conditions)], ["neg_S", "neg_TTA18", *set_columns],
                           tiers, source, budgets=(q,))
    means = cells.groupby("score")[["auroc", f"coverage_{q:g}"]].mean()
    cov = means[f"coverage_{q:g}"]
    synb_err = development_error_rates(synthetic, probes, "synb")
    tta_err = development_error_rates(synthetic, probes, "tta")
    rows = [{"family": "clean", "probe set": "clean only (S)", "evaluations": 1, "score": "neg_S",
             "dev error rate": 0.0}]                    # the clean prediction of a clean-correct image is right
    rows += [{"family": fam, "probe set": label, "evaluations": len(members), "score": f"set{j}",
              "dev error rate": float(synb_err[list(members)].mean())} for j, (fam, label, members) in enumerate(sets)]
    rows.append({"family": "natural", "probe set": "natural (TTA18)", "evaluations": len(tta_err), "score": "neg_TTA18",
                 "dev error rate": float(tta_err.mean())})
    table = pd.DataFrame(rows)
    table[f"coverage q={q:g}"] = cov.loc[table["score"]].to_numpy()
    table["AUROC"] = means.loc[table["score"], "auroc"].to_numpy()
    table["coverage - natural"] = table[f"coverage q={q:g}"] - cov["neg_TTA18"]
    order = {"clean": 0, "severity": 1, "all": 2, "natural": 3, "type": 4, "probe": 5}
    table = table.sort_values("family", key=lambda f: f.map(order), kind="stable").drop(columns="score")
    by = {fam: table[table["family"] == fam] for fam in ("type", "probe")}
    probe_cov = by["probe"].set_index("probe set")[f"coverage q={q:g}"]
    gains = []
    for t in by["type"]["probe set"]:
        members = sorted((n for n in probe_cov.index if n.rsplit("-", 1)[0] == t), key=lambda n: int(n.rsplit("-", 1)[1]))
        gains.append(probe_cov[members[-1]] > probe_cov[members[0]])
    counts = {"types_above_natural": [int((by["type"]["coverage - natural"] > 0).sum()), len(by["type"])],
              "probes_above_natural": [int((by["probe"]["coverage - natural"] > 0).sum()), len(by["probe"])],
              "types_gaining_with_severity": [int(sum(gains)), len(gains)]}
    return table.reset_index(drop=True), counts


def capture_factors(condition: str) -> dict[str, str] | None:
    """The capture factors of a condition named `<lighting>-param_<k>`: lighting and, for k in 1..27, the
    camera setting's ISO, shutter and aperture; None for any other name."""
    parsed = parse_condition(condition)
    if parsed is None:
        return None
    lighting, param = parsed
    out = {"lighting": lighting}
    if 1 <= param <= N_PARAMS:
        shutter, iso, aperture = camera_setting(param)
        out.update({"ISO": str(iso), "shutter": f"1/{round(1 / shutter)} s" if shutter < 1 else f"{shutter:g} s",
                    "aperture": f"f/{aperture:g}"})
    return out


def capture_table(cells: pd.DataFrame, q: float, tier: str = "mild") -> pd.DataFrame:
    """Capture sensitivity (module docstring): per condition the model-averaged coverage gains U - S and
    U - TTA18, summarised overall (with the number of positive conditions) and per factor level, with the
    means after deleting that level."""
    metric = f"coverage_{q:g}"
    part = cells[cells["tier"] == tier]
    wide = part.pivot_table(index=["condition", "model"], columns="score", values=metric)
    gains = pd.DataFrame({"U - S": wide["neg_U"] - wide["neg_S"], "U - TTA18": wide["neg_U"] - wide["neg_TTA18"]})
    per_condition = gains.groupby(level="condition").mean().dropna()
    if per_condition.empty:
        return pd.DataFrame()
    cols = list(gains.columns)
    rows = [{"factor": "all", "level": "", "conditions": len(per_condition),
             **{f"mean {c}": per_condition[c].mean() for c in cols},
             **{f"positive {c}": f"{int((per_condition[c] > 0).sum())}/{len(per_condition)}" for c in cols}}]
    factors = pd.DataFrame({c: capture_factors(c) or {} for c in per_condition.index}).T
    for factor in (f for f in ("lighting", "ISO", "shutter", "aperture") if f in factors.columns):
        levels = factors[factor]
        if levels.isna().any():
            continue
        for level in sorted(levels.unique(), key=lambda v: (len(v), v)):
            inside = per_condition[levels == level]
            outside = per_condition[levels != level]
            rows.append({"factor": factor, "level": level, "conditions": len(inside),
                         **{f"mean {c}": inside[c].mean() for c in cols},
                         **{f"positive {c}": f"{int((inside[c] > 0).sum())}/{len(inside)}" for c in cols},
                         **{f"mean {c} without level": outside[c].mean() for c in cols}})
    out = pd.DataFrame(rows)
    without = [c for c in out.columns if c.endswith("without level")]
    out[without] = out[without].astype(object).where(out[without].notna(), "")       # the overall row deletes nothing
    return out

"""The screening tables of Appendix E (paired evaluations §5.1-5.4) from a source's Syn-B records, its
real-condition records and, optionally, its probe probabilities (TTA18 and the Syn-B probes for A3Rank).

Every table is built from the library of this package: `metrics` (AUROC, coverage, cell tables),
`resampling` (model-group and class intervals), `scores` (scores fitted on development images, identity
controls, U prefixes), `probes` (probe averages, A3Rank) and `layout` (the shared tier-row shape); this
module only assembles them, with the paper's numbers of `pipeline.paired.reference` beside them:

* Table 16: AUROC of every score by tier, with U - S and δ - U model-group intervals (and Fig. 2);
* Table 17 / 20: the same paired differences (AUROC; coverage at every budget) from resampling classes;
* Table 18: coverage at every budget, with one seeded random selection per cell (and Fig. 3);
* Table 19: coverage at the primary budget and paired differences with model-group intervals;
* Table 21: failure share p, ceiling min(1, k / n_fail) and coverage as a fraction of the ceiling;
* Table 25: identity ablation (within-class derangements, leave-one-out class mean) on the non-singleton subset;
* Table 26: development class-mean U baselines on their supported subset;
* Table 27: U within clean-confidence terciles (`strata`);
* Table 28: U from m of the synthetic conditions (seeded prefixed subsets, severity halves), mild tier
  (`subsets`); Tables 29 and 32: the natural-augmentation variants (`natural`);
* Table 33: probe set (corruptions, natural TTA18) x scoring rule (mean, A3Rank) on mild conditions (Fig. 4);
* Tables 34, 35, 37-39: U against A3Rank, natural TTA18 in every tier, the simple controls and per model
  group (`controls`); Table 36 and the capture sensitivity (`probe_sets`).

Scores enter the tables with the risk orientation of Appendix E.1 (larger = riskier). Evaluation uses the
clean-correct evaluation images only (`evaluate_cells`, `eligible_images`); development images reach an
evaluation statistic only through the frozen fits (class means, g) and the tier labels.
"""
from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from pipeline.paired import reference
from pipeline.paired.records.probes import probe_arrays
from pipeline.paired.records.table import SAME_RUN_TOL
from pipeline.paired.records.tiers import condition_tiers
from pipeline.paired.reference import es_diverse
from pipeline.paired.screening.controls import (
    CONTROL_SCORES,
    a3_table,
    baselines_table,
    budget_table,
    clean_controls,
    group_table,
    tier_table,
)
from pipeline.paired.screening.layout import (
    SCORE_LABELS,
    tier_mean,
    tier_summary_table,
    tiers_present,
)
from pipeline.paired.screening.metrics import (
    budget_size,
    cell_metrics,
    coverage_ceiling,
    eligible_images,
    evaluate_cells,
    summarize_cells,
)
from pipeline.paired.screening.natural import natural_prefix_table, untransformed_table
from pipeline.paired.screening.probe_sets import capture_table, probe_set_table
from pipeline.paired.screening.probes import a3rank, probe_average
from pipeline.paired.screening.resampling import (
    class_bootstrap,
    group_bootstrap,
    interval_text,
)
from pipeline.paired.screening.scores import (
    apply_screening,
    average_draws,
    fit_screening,
    identity_controls,
    image_features,
)
from pipeline.paired.screening.strata import strata_table
from pipeline.paired.screening.subsets import (
    prefix_subsets,
    subset_table,
    synthetic_members,
)
from pipeline.perturb.recapture import TIERS

BASE_SCORES = ("neg_S", "neg_U", "delta", "neg_ret", "class_delta", "g_S", "g_SU", "g_SU_ret")
PROBE_SCORES = ("neg_TTA18", "neg_A3_corr", "neg_A3_nat")
IDENTITY_SCORES = ("neg_U", "delta")   # Table 25: U and δ, each against its own controls


def _u_check(features: pd.DataFrame, synb: np.ndarray, ids: Sequence[str]) -> None:
    """The Syn-B probes must reproduce the records' U (same images, same models) to float32 rounding
    (`SAME_RUN_TOL`): else they are stale."""
    f = features.set_index("image_id").loc[list(ids)]
    u = synb[:, np.arange(len(ids)), f["y"].to_numpy()].mean(0)
    gap = np.abs(u - f["U"].to_numpy(float))
    if gap.max(initial=0.0) > SAME_RUN_TOL:
        raise ValueError(f"the Syn-B probe probabilities of model {f['model'].iloc[0]!r} give U off by {gap.max():.3g} "
                         "from the synthetic records: the probes and the records come from different runs")


def model_scores(synthetic: pd.DataFrame, real: pd.DataFrame, probes: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per model, the risk scores of its clean-correct evaluation images (fitted on development images),
    with TTA18, the two A3Rank scores and the simple controls of App. E.4 when `probes` (the recapture
    stage's probe table) is given."""
    parts = []
    for model, syn in synthetic.groupby("model", sort=True):
        features = image_features(syn)
        fit = fit_screening(features, real[real["model"] == model], "dev")
        scores = apply_screening(fit, features, "eval")
        if probes is not None:
            ids = scores["image_id"].tolist()
            clean = probe_arrays(probes, model, "clean", ids)[0]
            tta, synb = (probe_arrays(probes, model, p, ids) for p in ("tta", "synb"))
            _u_check(features, synb, ids)
            y, rows = scores["y"].to_numpy(), np.arange(len(ids))
            scores["neg_TTA18"] = -probe_average(tta[:, rows, y].T)
            scores["neg_A3_corr"] = -a3rank(clean, synb.transpose(1, 0, 2), y)
            scores["neg_A3_nat"] = -a3rank(clean, tta.transpose(1, 0, 2), y)
            for name, value in clean_controls(clean, tta).items():
                scores[name] = value
        parts.append(scores)
    return pd.concat(parts, ignore_index=True)


def random_cells(scores: pd.DataFrame, real: pd.DataFrame, names: Sequence[str], tiers: pd.DataFrame, source: str,
                 budgets: Sequence[float], rng: np.random.Generator) -> pd.DataFrame:
    """Table 18's random selection: one seeded uniform ranking per cell on the cell's common image set."""
    merged = eligible_images(scores, real, list(names))
    merged = merged[np.isfinite(merged[list(names)].to_numpy(float)).all(1)]
    tier = tiers.set_index("condition")["tier"]
    rows = []
    for (model, group, condition), g in merged.groupby(["model", "group", "condition"], sort=True):
        failed = g["failed"].to_numpy()
        m = cell_metrics(rng.random(len(g)), failed, budgets=budgets)
        row = {"source": source, "model": model, "group": group, "condition": condition, "tier": tier[condition],
               "score": "random", "n": len(g), "n_fail": int(failed.sum()), "p": failed.mean(), "auroc": m["auroc"][0]}
        for i, q in enumerate(budgets):
            ceiling = coverage_ceiling(len(g), int(failed.sum()), q)
            row.update({f"coverage_{q:g}": m["coverage"][0, i], f"ceiling_{q:g}": ceiling,
                        f"of_ceiling_{q:g}": m["coverage"][0, i] / ceiling})
        rows.append(row)
    return pd.DataFrame(rows)


def table16(cells: pd.DataFrame, groups: pd.DataFrame, scores: Sequence[str]) -> pd.DataFrame:
    """AUROC per score and tier (cells weighted equally), U - S and δ - U with model-group intervals."""

    def counts(tier: str, summary: pd.DataFrame) -> dict:
        return {"cells": int(tier_mean(summary, tier, "neg_U", "cells")),
                "undefined": int(tier_mean(summary, tier, "neg_U", "undefined")),
                "paper U (ES / Diverse)": es_diverse(reference.AUROC_MILD["neg_U"]) if tier == "mild" else ""}
    return tier_summary_table(cells, scores, "auroc", {"U - S [95%]": (groups, "neg_U-neg_S"),
                                                       "δ - U [95%]": (groups, "delta-neg_U")}, extra=counts)


def class_table(classes: pd.DataFrame) -> pd.DataFrame:
    """Tables 17 and 20: class-resampled intervals of the paired differences, per tier and metric."""
    out = classes.copy()
    out["difference"] = out["stat"].map(lambda s: " - ".join(SCORE_LABELS[p] for p in s.split("-", 1)))
    out["_order"] = out["tier"].map({t: i for i, t in enumerate(TIERS)})
    out = out.sort_values(["_order", "metric", "difference"], kind="stable")
    return out[["tier", "metric", "difference", "estimate", "lo", "hi", "cells"]].reset_index(drop=True)


def table18(cells: pd.DataFrame, scores: Sequence[str], budgets: Sequence[float]) -> pd.DataFrame:
    """Coverage per score at every budget (ties prorated; random: one seeded draw per cell), tier by tier."""

    def paper(q: float) -> Callable[[str, pd.DataFrame], dict]:
        return lambda tier, _: {f"paper {SCORE_LABELS[s]} (ES / Diverse)": es_diverse(reference.COVERAGE_MILD.get((q, s)))
                                for s in ("neg_U", "neg_S")} if tier == "mild" else {}

    parts = [tier_summary_table(cells, [*scores, "random"], f"coverage_{q:g}", lead=lambda _, q=q: {"q": q},
                                extra=paper(q)) for q in budgets]
    out = pd.concat(parts, ignore_index=True)
    if out.empty:
        return out
    order = np.argsort(out["tier"].map(TIERS.index).to_numpy(), kind="stable")     # tier-major, budgets within
    return out.iloc[order].reset_index(drop=True).fillna("")


def table19(cells: pd.DataFrame, groups: pd.DataFrame, scores: Sequence[str], q: float,
            diffs: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """Coverage at budget q and paired differences with model-group intervals."""
    return tier_summary_table(cells, scores, f"coverage_{q:g}",
                              {f"{SCORE_LABELS[a]} - {SCORE_LABELS[b]} [95%]": (groups, f"{a}-{b}") for a, b in diffs})


def table21(cells: pd.DataFrame, budgets: Sequence[float]) -> pd.DataFrame:
    """Failure share p, mean ceiling min(1, k/n_fail) per budget, and U's, S's and random selection's
    (expected: k/n) coverage as a fraction of the ceiling, means of cellwise values."""
    u = cells[cells["score"] == "neg_U"].copy()
    s = cells[cells["score"] == "neg_S"].set_index(["model", "condition"])
    rows = []
    for tier in tiers_present(u):
        part = u[(u["tier"] == tier) & u["n_fail"].gt(0)]
        row = {"tier": tier, "p": part["p"].mean()}
        for q in budgets:
            expected = budget_size(part["n"].to_numpy(), q) / part["n"].to_numpy() / part[f"ceiling_{q:g}"].to_numpy()
            row.update({f"ceiling q={q:g}": part[f"ceiling_{q:g}"].mean(),
                        f"U of ceiling q={q:g}": part[f"of_ceiling_{q:g}"].mean(),
                        f"S of ceiling q={q:g}": s.loc[part.set_index(["model", "condition"]).index, f"of_ceiling_{q:g}"].mean(),
                        f"random of ceiling q={q:g}": float(np.mean(expected))})
        rows.append(row)
    return pd.DataFrame(rows)


def identity_table(scores: pd.DataFrame, real: pd.DataFrame, tiers: pd.DataFrame, source: str, draws: int,
                   group_draws: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 25: the identity ablation of U and, as §5.4 adds, of δ: each against its within-class
    derangement control (mean AUROC over `draws` derangements) and leave-one-out class mean, with S, on the
    same non-singleton subset; gap score - control with a model-group interval and the share of cells where
    the score beats its control. One row per (tier, score). δ is deranged by the same permutations as U (a
    twin of `rng` in the same state), so an image receives both values of one other image and `rng` ends
    where the U-only ablation left it. Returns (table, cells)."""
    twin = copy.deepcopy(rng)
    ctrl = identity_controls(scores, rng, "neg_U", draws)
    ctrl = ctrl.join(identity_controls(scores, twin, "delta", draws).filter(regex=r"^delta_(derange\d+|loo)$"))
    names = ["neg_S", *(f"{c}{suffix}" for c in IDENTITY_SCORES for suffix in ("", "_loo")),
             *(f"{c}_derange{d}" for c in IDENTITY_SCORES for d in range(draws))]
    cells = evaluate_cells(ctrl, real, names, tiers, source)
    for c in IDENTITY_SCORES:
        cells = average_draws(cells, f"{c}_derange", f"{c}_derange")
    gaps = group_bootstrap(cells, "auroc", [(c, f"{c}_derange") for c in IDENTITY_SCORES], rng, group_draws)
    summary = summarize_cells(cells)
    wide = cells.pivot_table(index=["model", "condition", "tier"], columns="score", values="auroc").reset_index()
    rows = []
    for tier in tiers_present(cells):
        images = float(cells[(cells["tier"] == tier) & (cells["score"] == "neg_U")].groupby("model")["n"].first().mean())
        for c in IDENTITY_SCORES:
            w = wide[wide["tier"] == tier].dropna(subset=[c, f"{c}_derange"])
            row = {"tier": tier, "score": SCORE_LABELS[c], "S": tier_mean(summary, tier, "neg_S", "auroc"),
                   "score AUROC": tier_mean(summary, tier, c, "auroc"),
                   "deranged": tier_mean(summary, tier, f"{c}_derange", "auroc"),
                   "leave-one-out": tier_mean(summary, tier, f"{c}_loo", "auroc"),
                   "score - deranged [95%]": interval_text(gaps, f"{c}-{c}_derange", tier),
                   "wins": float((w[c] > w[f"{c}_derange"]).mean()) if len(w) else float("nan"),
                   "images per model": images}
            if tier == "mild" and c == "neg_U":
                row["paper score / deranged (ES; Diverse)"] = "; ".join(
                    f"{u:g} / {d:g}" for u, d in zip(reference.IDENTITY_MILD["neg_U"],
                                                     reference.IDENTITY_MILD["neg_U_derange"]))
            rows.append(row)
    return pd.DataFrame(rows).fillna(""), cells


def class_baseline_table(scores: pd.DataFrame, real: pd.DataFrame, tiers: pd.DataFrame, source: str, q: float,
                         group_draws: int, rng: np.random.Generator) -> pd.DataFrame:
    """Table 26: S, U and the development class mean of U over clean-correct (cc. dev) or all
    development images, on the images whose class has a clean-correct development value."""
    names = ["neg_S", "neg_U", "neg_class_U_cc", "neg_class_U_all"]
    cells = evaluate_cells(scores, real, names, tiers, source)
    stats = [("neg_U", "neg_class_U_cc")]
    auc = group_bootstrap(cells, "auroc", stats, rng, group_draws)
    cov = group_bootstrap(cells, f"coverage_{q:g}", stats, rng, group_draws)

    def paper(tier: str, _: pd.DataFrame) -> dict:
        return {"paper class U / S AUROC (ES; Diverse)": "; ".join(
            f"{c:g} / {s:g}" for c, s in zip(reference.CLASS_MILD["neg_class_U_cc"], reference.CLASS_MILD["neg_S"]))
        } if tier == "mild" else {}
    intervals = {"U - class U (cc.) AUROC [95%]": (auc, "neg_U-neg_class_U_cc"),
                 f"U - class U (cc.) coverage q={q:g} [95%]": (cov, "neg_U-neg_class_U_cc")}
    return tier_summary_table(cells, names, "auroc", intervals, extra=paper).fillna("")


def prefix_table(synthetic: pd.DataFrame, scores: pd.DataFrame, real: pd.DataFrame, tiers: pd.DataFrame, source: str,
                 q: float, subsets: Sequence[tuple[str, tuple[int, ...]]]) -> pd.DataFrame:
    """Table 28: `subset_table` of U_m over `prefix_subsets` of the synthetic conditions (in record order),
    with the paper's coverage beside each family it states."""
    conditions = list(dict.fromkeys(synthetic["condition"]))
    table = subset_table(scores, real, tiers, source, q, subsets, synthetic_members(synthetic, scores, conditions))
    table["paper coverage (ES / Diverse)"] = [es_diverse(reference.PREFIX_MILD.get(f)) for f in table["subsets"]]
    return table


def probe_table(cells: pd.DataFrame, groups_cov: pd.DataFrame, groups_auc: pd.DataFrame, classes: pd.DataFrame, q: float,
                practical: float) -> pd.DataFrame:
    """Table 33 (Fig. 4): corruption and natural probe sets x mean and A3Rank scoring on mild conditions,
    coverage at q and AUROC, the corruption - natural differences with model-group intervals, the class-
    resampled coverage interval of U - TTA18, and whether both lower endpoints exceed the protocol's
    practical-effect threshold (§5.3: 0.03)."""
    mild = cells[cells["tier"] == "mild"]
    if mild.empty:
        return pd.DataFrame()
    means = mild.groupby("score")[["auroc", f"coverage_{q:g}"]].mean()
    rows = []
    for rule, corr, nat in (("mean", "neg_U", "neg_TTA18"), ("A3Rank", "neg_A3_corr", "neg_A3_nat")):
        for probe, score in (("corruptions (Syn-B)", corr), ("natural (TTA18)", nat)):
            rows.append({"scoring rule": rule, "probe set": probe, f"coverage q={q:g}": means.loc[score, f"coverage_{q:g}"],
                         "AUROC": means.loc[score, "auroc"], "corruption - natural coverage [95%]": "",
                         "corruption - natural AUROC [95%]": ""})
        rows[-2]["corruption - natural coverage [95%]"] = interval_text(groups_cov, f"{corr}-{nat}", "mild")
        rows[-2]["corruption - natural AUROC [95%]"] = interval_text(groups_auc, f"{corr}-{nat}", "mild")
    out = pd.DataFrame(rows)
    cls = classes[(classes["tier"] == "mild") & (classes["stat"] == "neg_U-neg_TTA18") & (classes["metric"] == f"coverage_{q:g}")]
    group = groups_cov[(groups_cov["tier"] == "mild") & (groups_cov["stat"] == "neg_U-neg_TTA18")]
    out["class-resampled coverage [95%]"] = ""
    out[f"both lower endpoints > {practical:g}"] = ""
    if len(cls) and len(group):
        c = cls.iloc[0]
        out.loc[0, "class-resampled coverage [95%]"] = interval_text(classes, "neg_U-neg_TTA18", "mild", f"coverage_{q:g}")
        out.loc[0, f"both lower endpoints > {practical:g}"] = str(bool(min(c["lo"], group["lo"].iloc[0]) > practical))
    out["paper corruption - natural (ES / Diverse)"] = ""
    out.loc[0, "paper corruption - natural (ES / Diverse)"] = reference.probes_mild_text()
    return out


def screening_tables(synthetic: pd.DataFrame, real: pd.DataFrame, probes: pd.DataFrame | None, source: str,
                     settings: dict) -> tuple[dict[str, pd.DataFrame], dict]:
    """Every table of this module for one source, and the headline metrics (tier counts, mild AUROC and
    coverage of U and S with the U - S intervals). `settings` is the `paired.screening` config node.

    Draws use one generator seeded with settings["seed"], consumed in a fixed order: random selection,
    group intervals, class intervals, derangements, U-prefix subsets; Tables 27 and 29 draw from generators
    of their own (seeds [seed, 3] and [seed, 4]), so they move no other table's draws."""
    rng = np.random.default_rng(settings["seed"])
    budgets, q = list(settings["budgets"]), float(settings["primary_budget"])
    n_group, n_class = int(settings["group_draws"]), int(settings["class_draws"])
    tiers = condition_tiers(real, split="dev")
    scores = model_scores(synthetic, real, probes)
    names = [*BASE_SCORES, *(PROBE_SCORES if probes is not None else ())]
    controls = list(CONTROL_SCORES) if probes is not None else []     # evaluated on the same cells, shown in Tables 38, 39
    cells = evaluate_cells(scores, real, [*names, *controls], tiers, source, budgets)
    cells = pd.concat([cells, random_cells(scores, real, names, tiers, source, budgets, rng)], ignore_index=True)
    diffs = [("neg_U", "neg_S"), ("delta", "neg_U"), ("neg_U", "neg_ret"), ("neg_U", "class_delta")]
    probe_diffs = [("neg_U", "neg_TTA18"), ("neg_A3_corr", "neg_A3_nat"), ("neg_U", "neg_A3_corr"), ("neg_U", "neg_A3_nat"),
                   *(("neg_U", c) for c in controls)] if probes is not None else []
    # one draw of groups per metric and one of classes per source, shared by every stat (adding a stat moves no draw)
    auc = group_bootstrap(cells, "auroc", [*diffs, *probe_diffs], rng, n_group)
    cov = {b: group_bootstrap(cells, f"coverage_{b:g}", [*diffs, *probe_diffs], rng, n_group) for b in budgets}
    main_class_stats = [("neg_U", "neg_S"), ("delta", "neg_U"), *([("neg_U", "neg_TTA18")] if probes is not None else [])]
    class_stats = [*main_class_stats, *(d for d in probe_diffs if d[0] == "neg_U" and d not in main_class_stats)]
    classes = class_bootstrap(scores, real, class_stats, rng, tiers, source, n_class, budgets)
    shown = classes[classes["stat"].isin([f"{a}-{b}" for a, b in main_class_stats])]
    tables = {
        "table16": table16(cells, auc, names),
        "table17": class_table(shown[shown["metric"] == "auroc"]),
        "table18": table18(cells, names, budgets),
        "table19": table19(cells, cov[q], names, q, [*diffs, *probe_diffs[:1]]),
        "table20": class_table(shown[shown["metric"] != "auroc"]),
        "table21": table21(cells, budgets),
    }
    tables["table25"], _ = identity_table(scores, real, tiers, source, int(settings["derangements"]), n_group, rng)
    tables["table26"] = class_baseline_table(scores, real, tiers, source, q, n_group, rng)
    subsets = prefix_subsets(list(dict.fromkeys(synthetic["condition"])), settings["prefix_sizes"],
                             int(settings["prefix_subsets"]), rng)
    tables["table28"] = prefix_table(synthetic, scores, real, tiers, source, q, subsets)
    tables["table27"] = strata_table(scores, real, source, int(settings["derangements"]), n_group,
                                     np.random.default_rng([settings["seed"], 3]))
    if probes is not None:
        tables["table33"] = probe_table(cells, cov[q], auc, classes, q, float(settings["practical_effect"]))
        groups = {"auroc": auc, **{f"coverage_{b:g}": t for b, t in cov.items()}}
        tables["table29"] = untransformed_table(scores, real, probes, tiers, source, budgets, n_group,
                                                np.random.default_rng([settings["seed"], 4]))
        tables["table32"] = natural_prefix_table(tables["table28"], scores, real, probes, tiers, source, q, subsets)
        tables["table37"] = tier_table(cells, groups, classes, q, tiers_present(cells), reference.probes_mild_text())
        probe_counts, positive = {}, {}
        for name in ("table34", "table35", "table36", "table38", "table39", "capture"):   # mild-condition tables
            tables[name] = pd.DataFrame()
        if "mild" in set(cells["tier"]):
            tables["table34"] = a3_table(cells, groups, classes, q)
            tables["table35"] = budget_table(cells, groups, budgets)
            tables["table36"], probe_counts = probe_set_table(synthetic, scores, real, probes, tiers, source, q)
            tables["table38"] = baselines_table(cells, groups, classes, q)
            tables["table39"], positive = group_table(cells, q, {s: SCORE_LABELS[s] for s in ("neg_S", "neg_TTA18", "neg_margin")})
            tables["capture"] = capture_table(cells, q)
    tables["tiers"] = tiers
    tables["intervals"] = pd.concat([auc.assign(metric="auroc"), *(t.assign(metric=f"coverage_{b:g}") for b, t in cov.items())],
                                    ignore_index=True)
    counts = {t: int((tiers["tier"] == t).sum()) for t in TIERS}
    summary = summarize_cells(cells)
    headline = {}
    for tier in tiers_present(cells):
        entry = {f"auroc_{SCORE_LABELS[s]}": tier_mean(summary, tier, s, "auroc") for s in ("neg_U", "neg_S", "delta")}
        entry.update({f"coverage_{b:g}_{SCORE_LABELS[s]}": tier_mean(summary, tier, s, f"coverage_{b:g}")
                      for b in budgets for s in ("neg_U", "neg_S")})
        for table, metric in ((auc, "auroc"), (cov[q], f"coverage_{q:g}")):
            row = table[(table["stat"] == "neg_U-neg_S") & (table["tier"] == tier)].iloc[0]
            entry[f"{metric}_U-S"] = {k: float(row[k]) for k in ("estimate", "lo", "hi")}
        entry["cells"], entry["undefined_cells"] = int(tier_mean(summary, tier, "neg_U", "cells")), int(tier_mean(summary, tier, "neg_U", "undefined"))
        headline[tier] = entry
    metrics = {"source": source, "tier_counts": counts, "paper_tier_counts_es_diverse": reference.TIER_COUNTS,
               "n_models": int(real["model"].nunique()), "n_groups": int(real["group"].nunique()),
               "n_conditions": int(real["condition"].nunique()), "scored_images": len(scores), "headline": headline}
    if probes is not None:
        metrics["probe_sets_mild"] = probe_counts
        metrics["models_with_positive_mild_gap"] = positive
    tables["cells"] = cells
    return tables, metrics

"""End to end on a tiny configuration: records -> recapture -> screening -> figures_screening through the
stage scripts' task functions (three quick models in three groups, two Syn-B conditions, 120 test images,
6 recapture conditions), with cells checked against brute force and the dev/eval separation checked."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from pipeline.config import ConfigError, validate_config
from pipeline.paired import read_records
from pipeline.paired.records.tiers import condition_tiers
from pipeline.paired.screening.metrics import evaluate_cells
from pipeline.paired.screening.tables import model_scores

ROOT = Path(__file__).resolve().parents[2]
PARAMS = [1, 14, 27]
OVERRIDES = ["paired.records.test_limit=120", f"paired.recapture.params=[{','.join(map(str, PARAMS))}]",
             "paired.screening.group_draws=200", "paired.screening.class_draws=20",
             "paired.screening.prediction.draws=200"]


def _compose(overrides: list[str]):
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        choose = "paired=tiny" if "paired" in compose("config") else "+paired=tiny"
        return compose("config", overrides=[choose, *overrides])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from scripts import plot_screening, recapture, records, screening

    tmp = tmp_path_factory.mktemp("screening")
    cfg = validate_config(_compose([f"paths.outputs={tmp}/outputs", f"paths.data={tmp}/data", *OVERRIDES]))
    for stage in (records, recapture, screening, plot_screening):
        stage.main(cfg)
    out = tmp / "outputs"
    return {"out": out, "syn": read_records(out / "records/digits.parquet"),
            "real": read_records(out / "records/digits-recapture.parquet"),
            "probes": pd.read_parquet(out / "records/digits-recapture.probes.parquet"),
            "cells": pd.read_parquet(out / "paired/digits/screening/cells.parquet"), "dir": out / "paired/digits/screening"}


def test_recapture_records_share_the_clean_side_and_give_tiers(run):
    syn, real = run["syn"], run["real"]
    assert len(real) == 3 * 6 * 120
    assert sorted(real["condition"].unique()) == sorted(f"{lighting}-param_{p}" for lighting in ("l1", "l5") for p in PARAMS)
    clean = ["model", "image_id", "split", "y", "clean_pred", "clean_maxprob", "clean_trueprob"]
    a = syn[clean].drop_duplicates(["model", "image_id"]).sort_values(["model", "image_id"]).reset_index(drop=True)
    b = real[clean].drop_duplicates(["model", "image_id"]).sort_values(["model", "image_id"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)                                   # one deterministic zoo, one clean side
    meta = json.loads((run["out"] / "records/digits-recapture.json").read_text())
    # tiers by hand: per condition, each model's accuracy on dev images, averaged over models; cuts .4 / .2
    for condition, entry in meta["conditions"].items():
        accs = []
        for model in sorted(real["model"].unique()):
            part = real[(real["condition"] == condition) & (real["model"] == model) & (real["split"] == "dev")]
            accs.append(sum(int(p == y) for p, y in zip(part["pert_pred"], part["y"])) / len(part))
        mean = sum(accs) / len(accs)
        assert entry["dev_accuracy"] == pytest.approx(mean)
        assert entry["tier"] == ("mild" if mean >= 0.4 else "severe" if mean >= 0.2 else "extreme")
    assert sum(meta["tier_counts"].values()) == 6


def test_recapture_records_match_a_direct_prediction(run):
    from pipeline.data.digits import load_digits_splits
    from pipeline.models.zoo import build_model
    from pipeline.perturb.recapture import make_condition, recapture

    splits = load_digits_splits(seed=0, size=32)
    model = build_model({"name": "logreg", "family": "linear", "kind": "logreg", "C": 1.0}).fit(*splits["train"])
    images = recapture(splits["test"][0][:120], make_condition("l1", 14), seed=0)
    proba = model.predict_proba(images)
    got = run["real"][(run["real"]["model"] == "logreg") & (run["real"]["condition"] == "l1-param_14")].sort_values("image_id")
    np.testing.assert_array_equal(got["pert_pred"].to_numpy(), proba.argmax(1))
    np.testing.assert_allclose(got["pert_trueprob"].to_numpy(), proba[np.arange(120), splits["test"][1][:120]])
    probes = run["probes"]
    tta = probes[(probes["model"] == "logreg") & (probes["probe"] == "tta") & (probes["name"] == "hflip")].sort_values("image_id")
    from pipeline.perturb.tta import tta_transform
    flipped = model.predict_proba(tta_transform(splits["test"][0][:120], "hflip"))
    np.testing.assert_allclose(tta[[f"p{c}" for c in range(10)]].to_numpy(), flipped)


def _pairs_auroc(risk: np.ndarray, failed: np.ndarray) -> float:
    pos, neg = risk[failed], risk[~failed]
    return float(np.mean([1.0 if a > b else 0.5 if a == b else 0.0 for a in pos for b in neg]))


def _expected_coverage(risk: np.ndarray, failed: np.ndarray, q: float) -> float:
    """Failures among the k = max(1, round(q n)) riskiest images, walking tie groups from the top; the
    group the budget cuts contributes its failure share per remaining slot (random tie-breaking)."""
    slots, found = max(1, int(np.floor(q * len(risk) + 0.5))), 0.0
    for value in sorted(set(risk.tolist()), reverse=True):
        group = risk == value
        take = min(slots, int(group.sum()))
        found += take * failed[group].sum() / group.sum()
        slots -= take
        if slots == 0:
            break
    return found / failed.sum()


def test_cells_against_brute_force(run):
    syn, real, cells = run["syn"], run["real"], run["cells"]
    defined = cells[(cells["score"] == "neg_U") & cells["auroc"].notna()]
    assert len(defined) > 0
    for _, row in defined.head(4).iterrows():
        model, condition = row["model"], row["condition"]
        r = real[(real["model"] == model) & (real["condition"] == condition) & (real["split"] == "eval")]
        r = r[r["clean_pred"] == r["y"]].sort_values("image_id")
        s = syn[syn["model"] == model]
        u = s.groupby("image_id")["pert_trueprob"].mean().loc[r["image_id"]].to_numpy()
        failed = (r["pert_pred"] != r["y"]).to_numpy()
        assert row["n"] == len(r) and row["n_fail"] == failed.sum()
        assert row["auroc"] == pytest.approx(_pairs_auroc(-u, failed), abs=1e-12)
        assert row["coverage_0.2"] == pytest.approx(_expected_coverage(-u, failed, 0.2), abs=1e-12)
        s_row = cells[(cells["model"] == model) & (cells["condition"] == condition) & (cells["score"] == "neg_S")].iloc[0]
        assert s_row["auroc"] == pytest.approx(_pairs_auroc(-r["clean_maxprob"].to_numpy(), failed), abs=1e-12)
    # the table is the equal-weight mean of its cells
    t16 = pd.read_csv(run["dir"] / "table16.csv").set_index("tier")
    for tier in t16.index:
        mean = cells[(cells["tier"] == tier) & (cells["score"] == "neg_U")]["auroc"].mean()
        assert t16.loc[tier, "U"] == pytest.approx(mean)


def test_no_development_image_enters_an_evaluation_statistic(run):
    syn, real, cells = run["syn"], run["real"], run["cells"]
    evals = real[(real["split"] == "eval") & (real["clean_pred"] == real["y"])]
    per_model = evals.drop_duplicates(["model", "image_id"]).groupby("model").size()
    u_cells = cells[cells["score"] == "neg_U"]
    assert (u_cells["n"].to_numpy() == per_model.loc[u_cells["model"]].to_numpy()).all()
    # scramble every development record (synthetic and real): the image-level scores' cells do not move
    tiers = condition_tiers(real)
    names = ["neg_S", "neg_U", "delta", "neg_ret", "neg_TTA18", "neg_A3_corr", "neg_margin", "entropy", "neg_agree"]
    base = evaluate_cells(model_scores(syn, real, run["probes"]), real, names, tiers)
    rng = np.random.default_rng(0)
    syn2, real2 = syn.copy(), real.copy()
    for table in (syn2, real2):
        dev = table["split"] == "dev"
        table.loc[dev, "pert_pred"] = rng.integers(0, 10, dev.sum())
        table.loc[dev, "pert_trueprob"] = table.loc[dev, "pert_trueprob"] * rng.uniform(0.1, 1.0, dev.sum())
    moved = evaluate_cells(model_scores(syn2, real2, run["probes"]), real2, names, tiers)
    pd.testing.assert_frame_equal(base, moved)


def test_tables_metrics_and_figures(run):
    from pipeline.paired.screening import TITLES
    from pipeline.stages.table import SCREENING_TABLES

    for name in SCREENING_TABLES:
        assert (run["dir"] / f"{name}.csv").exists() and (run["dir"] / f"{name}.md").read_text().startswith(TITLES[name])
    assert "0.854 / 0.801" in (run["dir"] / "table16.md").read_text()
    metrics = json.loads((run["dir"] / "metrics.json").read_text())
    meta = json.loads((run["out"] / "records/digits-recapture.json").read_text())
    assert metrics["tier_counts"] == meta["tier_counts"] and metrics["n_groups"] == 3
    t18 = pd.read_csv(run["dir"] / "table18.csv")
    assert ((t18["random"] >= 0) & (t18["random"] <= 1)).all()
    t43 = pd.read_csv(run["dir"] / "table43.csv")
    assert list(t43["target"]) == ["accuracy", "R", "E_tau", "L_k"]
    for name in ("auroc", "coverage", "probes", "single_probes", "recapture"):
        assert (run["out"] / "figures/screening/digits" / f"{name}.png").stat().st_size > 5000


@pytest.mark.parametrize("override, key", [
    ("paired.screening.budgets=[0.1,1.5]", "paired.screening.budgets[1]"),
    ("paired.screening.primary_budget=0.25", "paired.screening.primary_budget"),
    ("paired.screening.group_draws=1", "paired.screening.group_draws"),
    ("paired.screening.prefix_sizes=[2,0]", "paired.screening.prefix_sizes[1]"),
    ("paired.screening.prediction.alphas=[1,-1]", "paired.screening.prediction.alphas[1]"),
    ("paired.recapture.params=[28]", "paired.recapture.params[0]"),
    ("paired.recapture.lightings=[l3]", "paired.recapture.lightings[0]"),
])
def test_schema_rejects_bad_screening_settings(override, key):
    with pytest.raises(ConfigError) as err:
        validate_config(_compose([override]))
    assert str(err.value).startswith(f"{key}:")


def test_stage_exits_2_naming_the_key(monkeypatch, capsys):
    """The stage's entry in this process (`run_stage` with the script's argv; a rejected setting as a process of its
    own: tests/scripts/test_bad_inputs.py::test_as_real_processes)."""
    import importlib

    monkeypatch.setattr(sys, "argv", [str(ROOT / "scripts/screening.py"), "paired.screening.budgets=[0.1,1.5]"])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        importlib.import_module("pipeline.stages.runner").run_stage(importlib.import_module("scripts.screening").main)
    assert exit_.value.code == 2
    assert "paired.screening.budgets[1]: 1.5" in capsys.readouterr().err


def test_the_recapture_stage_reproduces_the_records_stage(run):
    from pipeline.paired.records.zoo import check_clean_agreement, check_same_records

    synb = read_records(run["out"] / "records/digits-recapture.synb.parquet")
    check_same_records(run["syn"], synb)                                   # the zoo and Syn-B reproduced
    rounded = synb.copy()
    rounded.loc[5, "pert_trueprob"] += 5e-7  # float32 rounding of a batch of another size (docs/reproducibility.md)
    check_same_records(run["syn"], rounded)
    moved = synb.copy()
    moved.loc[5, "pert_trueprob"] += 1e-4
    with pytest.raises(ValueError, match="pert_trueprob differs by 0.0001"):
        check_same_records(run["syn"], moved)
    real = run["real"].copy()
    real.loc[real["image_id"] == "test0003", "clean_maxprob"] *= 0.5
    with pytest.raises(ValueError, match="image 'test0003': clean_maxprob differs"):
        check_clean_agreement(run["syn"], real)


def test_swapped_split_cells_fit_on_eval_and_score_dev_images(run):
    """Tables 23/24: relabelled records give the cells of fitting on evaluation images and scoring the
    clean-correct development images; AUROC by pairwise brute force; the tables are equal-weight cell means
    under development- (23) and evaluation-defined (24) tiers."""
    from pipeline.paired.screening.scores import apply_screening, fit_screening, image_features
    from pipeline.paired.screening.swap import swapped_cells

    syn, real = run["syn"], run["real"]
    tiers = condition_tiers(real, "dev")
    cells = swapped_cells(syn, real, tiers, "digits", [0.2])
    devs = real[(real["split"] == "dev") & (real["clean_pred"] == real["y"])]
    per_model = devs.drop_duplicates(["model", "image_id"]).groupby("model").size()
    u_cells = cells[cells["score"] == "neg_U"]
    assert (u_cells["n"].to_numpy() == per_model.loc[u_cells["model"]].to_numpy()).all()   # development images only
    checked = 0
    for _, row in cells[(cells["score"] == "g_SU") & cells["auroc"].notna()].head(3).iterrows():
        model, condition = row["model"], row["condition"]
        features = image_features(syn[syn["model"] == model])
        direct = apply_screening(fit_screening(features, real[real["model"] == model], "eval"), features, "dev")
        r = real[(real["model"] == model) & (real["condition"] == condition) & (real["split"] == "dev")]
        r = r[r["clean_pred"] == r["y"]].merge(direct, on="image_id", suffixes=("", "_score"))
        failed = (r["pert_pred"] != r["y"]).to_numpy()
        assert row["n"] == len(r) and row["n_fail"] == failed.sum()
        assert row["auroc"] == pytest.approx(_pairs_auroc(r["g_SU"].to_numpy(), failed), abs=1e-12)
        u_row = cells[(cells["model"] == model) & (cells["condition"] == condition) & (cells["score"] == "neg_U")].iloc[0]
        assert u_row["auroc"] == pytest.approx(_pairs_auroc(-r["U"].to_numpy(), failed), abs=1e-12)
        checked += 1
    assert checked > 0
    gap = cells.pivot_table(index=["model", "condition"], columns="score", values="auroc")
    gap = (gap["neg_U"] - gap["neg_S"]).dropna().rename("gap").reset_index()
    # Table 24's tiers by hand: per model the accuracy over all evaluation images, equal-weight mean, cuts .4 / .2
    evals = real[real["split"] == "eval"]
    acc = (evals["pert_pred"] == evals["y"]).groupby([evals["condition"], evals["model"]]).mean().groupby(level=0).mean()
    eval_tier = {c: "mild" if a >= 0.4 else "severe" if a >= 0.2 else "extreme" for c, a in acc.items()}
    for name, tier_of in (("table23", dict(zip(tiers["condition"], tiers["tier"]))), ("table24", eval_tier)):
        table = pd.read_csv(run["dir"] / f"{name}.csv").set_index("tier")
        assert (run["dir"] / f"{name}.md").read_text().startswith(f"Table {name[5:]}:")
        tier = gap["condition"].map(tier_of)
        for t in table.index:
            estimate = float(table.loc[t, "U - S AUROC [95%]"].split(" ")[0])
            assert estimate == pytest.approx(gap.loc[tier == t, "gap"].mean(), abs=5e-4)
            assert table.loc[t, "conditions"] == sum(v == t for v in tier_of.values())
    if "mild" in pd.read_csv(run["dir"] / "table23.csv")["tier"].tolist():
        assert "0.078 / 0.128" in (run["dir"] / "table23.md").read_text()   # the paper's mild gaps beside ours


def test_identity_ablation_has_delta_rows(run):
    """Table 25: one row per (tier, score) for U and δ; δ's AUROC on the non-singleton subset (classes with
    at least two clean-correct evaluation images of the model) against pairwise brute force."""
    syn, real = run["syn"], run["real"]
    t25 = pd.read_csv(run["dir"] / "table25.csv")
    assert set(t25["score"]) == {"U", "δ"} and len(t25) == 2 * t25["tier"].nunique()
    evals = real[(real["split"] == "eval") & (real["clean_pred"] == real["y"])]
    counts = evals.drop_duplicates(["model", "image_id"]).groupby(["model", "y"]).size().rename("k").reset_index()
    s = syn.groupby(["model", "image_id"]).agg(S=("clean_maxprob", "first"), U=("pert_trueprob", "mean")).reset_index()
    tiers = condition_tiers(real, "dev").set_index("condition")["tier"]
    sub = evals.merge(counts, on=["model", "y"]).query("k >= 2").merge(s, on=["model", "image_id"])
    per_cell = [(tiers[c], _pairs_auroc((g["S"] - g["U"]).to_numpy(), (g["pert_pred"] != g["y"]).to_numpy()))
                for (_, c), g in sub.groupby(["model", "condition"]) if 0 < (g["pert_pred"] != g["y"]).sum() < len(g)]
    per_cell = pd.DataFrame(per_cell, columns=["tier", "auroc"])
    for _, row in t25[t25["score"] == "δ"].iterrows():
        assert row["score AUROC"] == pytest.approx(per_cell.loc[per_cell["tier"] == row["tier"], "auroc"].mean(), abs=1e-9)


def test_comparison_tables_against_direct_computation(run):
    """Tables 36-39 (App. E.3, E.4): the clean margin, a single Syn-B probe and TTA18 recomputed here from
    the records and the probe table, cell by cell with the brute-force coverage, then averaged over the
    mild cells; Table 39's overall gap from the cell table."""
    syn, real, probes, cells = run["syn"], run["real"], run["probes"], run["cells"]
    tiers = condition_tiers(real, "dev")
    mild = tiers.loc[tiers["tier"] == "mild", "condition"].tolist()
    assert mild, "the tiny source needs a mild condition for App. E.3/E.4"
    cols = [f"p{c}" for c in range(10)]
    clean = probes[probes["probe"] == "clean"].set_index(["model", "image_id"])[cols]
    tta = probes[probes["probe"] == "tta"].set_index(["model", "image_id", "index"])[cols]
    probe = syn[syn["condition"] == "gaussian_noise-4"].set_index(["model", "image_id"])["pert_trueprob"]
    found = {"margin": [], "probe": [], "tta": []}
    for (model, condition), r in real[real["condition"].isin(mild)].groupby(["model", "condition"]):
        r = r[(r["split"] == "eval") & (r["clean_pred"] == r["y"])]
        failed = (r["pert_pred"] != r["y"]).to_numpy()
        if not failed.any():
            continue
        p = np.sort(clean.loc[model].loc[r["image_id"]].to_numpy(), axis=1)
        t = tta.loc[model].loc[r["image_id"]]
        true_tta = np.array([t.loc[i].to_numpy()[:, y].mean() for i, y in zip(r["image_id"], r["y"])])
        found["margin"].append(_expected_coverage(p[:, -2] - p[:, -1], failed, 0.2))
        found["probe"].append(_expected_coverage(-probe.loc[model].loc[r["image_id"]].to_numpy(), failed, 0.2))
        found["tta"].append(_expected_coverage(-true_tta, failed, 0.2))
    t38 = pd.read_csv(run["dir"] / "table38.csv").set_index("baseline")
    assert t38.loc["clean margin", "coverage q=0.2"] == pytest.approx(np.mean(found["margin"]), abs=1e-9)
    t36 = pd.read_csv(run["dir"] / "table36.csv").set_index("probe set")
    assert t36.loc["gaussian_noise-4", "coverage q=0.2"] == pytest.approx(np.mean(found["probe"]), abs=1e-9)
    assert t36.loc["natural (TTA18)", "coverage q=0.2"] == pytest.approx(np.mean(found["tta"]), abs=1e-9)
    t37 = pd.read_csv(run["dir"] / "table37.csv").set_index("tier")
    assert t37.loc["mild", "TTA18 coverage q=0.2"] == pytest.approx(np.mean(found["tta"]), abs=1e-9)
    m = cells[cells["tier"] == "mild"].set_index(["model", "condition", "score"])["coverage_0.2"].unstack("score")
    t39 = pd.read_csv(run["dir"] / "table39.csv").set_index("group")
    assert t39.loc["all models", "U - S"] == pytest.approx((m["neg_U"] - m["neg_S"]).mean(), abs=1e-12)
    for name in ("table23", "table24"):        # the class-resampled intervals share the point estimate of the group ones
        table = pd.read_csv(run["dir"] / f"{name}.csv").dropna(subset=["U - S AUROC class [95%]"])
        assert len(table) and (table["U - S AUROC class [95%]"].str.split(" ").str[0]
                               == table["U - S AUROC [95%]"].str.split(" ").str[0]).all()


def test_strata_and_natural_variants_against_direct_computation(run):
    """Table 27: S and U AUROC inside each S tercile (per model, over its non-singleton clean-correct
    evaluation images) by pairwise brute force over every condition; Table 29: both averages with the clean
    true-class probability added as one more term, by brute-force coverage; Table 32 is empty for the tiny
    source (2 Syn-B conditions against 18 transforms: no subset applies by index to both lists)."""
    syn, real, probes = run["syn"], run["real"], run["probes"]
    evals = real[(real["split"] == "eval") & (real["clean_pred"] == real["y"])]
    images = evals.drop_duplicates(["model", "image_id"])[["model", "image_id", "y"]]
    images = images[images.groupby(["model", "y"])["image_id"].transform("size") >= 2]
    s = syn.groupby(["model", "image_id"]).agg(S=("clean_maxprob", "first"), U=("pert_trueprob", "mean")).reset_index()
    images = images.merge(s, on=["model", "image_id"]).sort_values(["model", "image_id"])
    strata = {}
    for model, part in images.groupby("model"):
        ranks = part["S"].rank(method="first").to_numpy()
        edges = 1 + (len(part) - 1) * np.array([1 / 3, 2 / 3])        # pandas.qcut's edges on the ranks 1..n
        strata.update(zip(zip(part["model"], part["image_id"]), np.array(["low S", "middle S", "high S"])[
            np.searchsorted(edges, ranks, side="left")]))
    rows = evals.merge(images[["model", "image_id", "S", "U"]], on=["model", "image_id"])
    rows["stratum"] = [strata[k] for k in zip(rows["model"], rows["image_id"])]
    t27 = pd.read_csv(run["dir"] / "table27.csv").set_index("stratum")
    for stratum, part in rows.groupby("stratum"):
        aucs = {"S": [], "U": []}
        for _, cell in part.groupby(["model", "condition"]):
            failed = (cell["pert_pred"] != cell["y"]).to_numpy()
            if 0 < failed.sum() < len(cell):
                aucs["S"].append(_pairs_auroc(-cell["S"].to_numpy(), failed))
                aucs["U"].append(_pairs_auroc(-cell["U"].to_numpy(), failed))
        assert t27.loc[stratum, "S AUROC"] == pytest.approx(np.mean(aucs["S"]), abs=1e-9)
        assert t27.loc[stratum, "U AUROC"] == pytest.approx(np.mean(aucs["U"]), abs=1e-9)
        assert t27.loc[stratum, "cells"] == len(aucs["U"])
    tiers = condition_tiers(real, "dev")
    mild = tiers.loc[tiers["tier"] == "mild", "condition"]
    wide = probes.set_index(["model", "probe", "index", "image_id"])

    def summed_true(model, r, probe, members):     # true-class probability summed over a probe set's members
        return np.array([sum(wide.loc[(model, probe, a, i), f"p{y}"] for a in range(members))
                         for i, y in zip(r["image_id"], r["y"])])

    found = {"corruptions": [], "natural": []}     # both averages with the clean image added as one more term
    for (model, condition), r in evals[evals["condition"].isin(mild)].groupby(["model", "condition"]):
        failed = (r["pert_pred"] != r["y"]).to_numpy()
        if not failed.any():
            continue
        clean = summed_true(model, r, "clean", 1)
        found["corruptions"].append(_expected_coverage(-(summed_true(model, r, "synb", 2) + clean) / 3, failed, 0.2))
        found["natural"].append(_expected_coverage(-(summed_true(model, r, "tta", 18) + clean) / 19, failed, 0.2))
    t29 = pd.read_csv(run["dir"] / "table29.csv")
    row = t29[(t29["q"] == 0.2) & t29["variant"].str.startswith("untransformed")].iloc[0]
    assert row["corruption average"] == pytest.approx(np.mean(found["corruptions"]), abs=1e-9)
    assert row["natural average"] == pytest.approx(np.mean(found["natural"]), abs=1e-9)
    assert (run["dir"] / "table32.csv").read_text().strip() == ""


def test_one_process_writes_the_same_tables_as_the_worker_process(run, tmp_path):
    """The stage makes the App. E tables on a worker process beside the §6 fits (workers > 1) or all in one process
    (workers=1): the same bytes in every file."""
    import shutil

    from scripts import screening

    shutil.copytree(run["out"] / "records", tmp_path / "outputs" / "records")
    cfg = validate_config(_compose([f"paths.outputs={tmp_path}/outputs", f"paths.data={tmp_path}/data", "workers=1", *OVERRIDES]))
    screening.main(cfg)
    one = tmp_path / "outputs/paired/digits/screening"
    names = sorted(p.name for p in run["dir"].iterdir())
    assert names == sorted(p.name for p in one.iterdir()) and "table16.csv" in names and "table43.csv" in names
    for name in names:
        assert (one / name).read_bytes() == (run["dir"] / name).read_bytes(), name

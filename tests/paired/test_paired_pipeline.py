"""End to end on the tiny paired configuration (three quick models, two conditions, 200 test images):
records -> bounds -> policies -> figures through the stage scripts' task functions."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from pipeline.paired import cell_bounds, certified_summary, read_records, width_summary
from pipeline.paired.records.table import cells

ROOT = Path(__file__).resolve().parents[2]


def tiny_cfg(tmp_path):
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        choose = "paired=tiny" if "paired" in compose("config") else "+paired=tiny"   # whether conf/config.yaml lists the group
        return compose("config", overrides=[choose, f"paths.outputs={tmp_path}/outputs"])


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    from scripts import bounds, plot_paired, policies, records

    tmp_path = tmp_path_factory.mktemp("paired")
    cfg = tiny_cfg(tmp_path)
    for stage in (records, bounds, policies, plot_paired):
        stage.main(cfg)
    return tmp_path / "outputs"


def test_records_table(tiny_run):
    rec = read_records(tiny_run / "records/digits.parquet")               # validated on load
    assert len(rec) == 3 * 2 * 200
    assert set(rec["condition"]) == {"gaussian_noise-4", "contrast-4"}
    assert rec.groupby("model")["group"].first().to_dict() == {"forest": "forest", "knn5": "neighbours", "logreg": "linear"}
    one = rec[(rec.model == "logreg") & (rec.condition == "contrast-4")]
    dev = one.groupby("y")["split"].apply(lambda s: (s == "dev").sum())
    sizes = one.groupby("y").size()
    assert (dev == np.floor(sizes / 2 + 0.5)).all()                       # within-class dev/eval split
    meta = json.loads((tiny_run / "records/digits.json").read_text())
    assert meta["n_records"] == len(rec) and meta["models"]["logreg"]["clean_accuracy"] > 0.8


def test_bounds_tables(tiny_run):
    rec = read_records(tiny_run / "records/digits.parquet")
    out = tiny_run / "paired/digits"
    table = pd.read_parquet(out / "bounds.parquet")
    thresholds = pd.read_parquet(out / "thresholds.parquet")
    assert len(table) == 6 * 9 and set(table["level"]) == {"I0", "Ik", "I5"}
    # the clean threshold is the 80%-coverage policy threshold
    t80 = thresholds[thresholds.coverage == 0.8].set_index("model")
    np.testing.assert_array_equal(t80["threshold"], t80["clean_threshold"])
    defined = table.dropna(subset=["lower"])
    assert (defined["lower"] <= defined["observed"] + 1e-12).all() and (defined["observed"] <= defined["upper"] + 1e-12).all()
    wide = table.pivot_table(index=["model", "condition", "target"], columns="level", values=["lower", "upper"])
    for target in ("L", "dM_k"):                                        # Theorem 1
        part = wide.xs(target, level="target").dropna()
        np.testing.assert_allclose(part[("lower", "Ik")], part[("lower", "I5")])
        np.testing.assert_allclose(part[("upper", "Ik")], part[("upper", "I5")])
    # the stage table is the library's answer on every cell
    tau0 = t80["clean_threshold"].to_dict()
    for (model, _, condition), cell in cells(rec):
        got = table[(table.model == model) & (table.condition == condition)].reset_index(drop=True)
        want = cell_bounds(cell, tau0[model])
        pd.testing.assert_frame_equal(got[want.columns], want)
    widths = pd.read_csv(out / "widths.csv")
    pd.testing.assert_frame_equal(widths, width_summary(table), check_dtype=False)
    summary = pd.read_parquet(out / "cells.parquet")
    assert (summary["K_lower_classwise"] <= summary["K"]).all() and (summary["K"] <= summary["K_upper_classwise"]).all()


def test_policy_tables(tiny_run):
    out = tiny_run / "paired/digits"
    comps = pd.read_parquet(out / "policy_comparisons.parquet")
    costs = pd.read_parquet(out / "policy_costs.parquet")
    selection = pd.read_parquet(out / "policy_selection.parquet")
    assert len(comps) == 6 * 3 * 11 * 20 and len(costs) == 6 * 3 * 11 * 5 and len(selection) == 6 * 3 * 11
    assert (costs["lower"] <= costs["observed"] + 1e-12).all() and (costs["observed"] <= costs["upper"] + 1e-12).all()
    # a shared-correspondence certificate is never weaker than the separate-interval one
    assert (comps["d_shared"] <= comps["d_separate"] + 1e-12).all()
    assert not (comps["certified_separate"] & ~comps["certified_shared"]).any()
    assert (selection[["minimax_regret", "mean_regret", "fixed_regret"]] >= -1e-12).all().all()
    certified = pd.read_csv(out / "certified.csv")
    pd.testing.assert_frame_equal(certified[certified.cost == "transition"].reset_index(drop=True),
                                  certified_summary(comps, "transition"), check_dtype=False)
    assert (certified.loc[certified.cost == "natural", "plus_5_cells"] == 0).all()     # Corollary 1
    sel = pd.read_csv(out / "selection.csv")
    assert (sel[["better", "worse", "tied"]].sum(axis=1) == 6).all()
    assert (out / "table4.md").read_text().startswith("Policy comparisons")
    assert json.loads((out / "policies.json").read_text())["n_cells"] == 6


def test_figures(tiny_run):
    for name in ("widths.png", "certified.png"):
        assert (tiny_run / "figures/paired/digits" / name).stat().st_size > 5000
    text = (tiny_run / "paired/digits/illustration.md").read_text()
    assert text.startswith("# Worked single-cell illustration")

"""End to end on the tiny configuration (2 perturbations x 3 levels, 40 images): prepare, ground truth,
figures, through the stage scripts' task functions (the bad-input contract: tests/scripts/test_bad_inputs.py)."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

ROOT = Path(__file__).resolve().parents[2]


def tiny_cfg(tmp_path, *overrides):
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose("config", overrides=["benchmark=tiny", f"paths.data={tmp_path}/data", f"paths.outputs={tmp_path}/outputs",
                                            "workers=1", "model.epochs=1", "benchmark.features.epochs=1",  # how well they learn: not checked
                                            *overrides])


def test_tiny_pipeline_end_to_end(tmp_path):
    from scripts import groundtruth, merge_groundtruth, plot_groundtruth, prepare

    cfg = tiny_cfg(tmp_path)
    prepare.main(cfg)
    assert {p.name for p in (tmp_path / "data" / "tiny").iterdir()} >= {"splits.npz", "model.pt", "features.pt"}
    groundtruth.main(cfg)
    table = pd.read_parquet(tmp_path / "outputs/groundtruth/tiny.parquet")
    assert len(table) == 9 and table[["brightness", "pixelate"]].drop_duplicates().shape[0] == 9
    identity = table[(table.brightness == 0) & (table.pixelate == 0)].iloc[0]
    assert identity["delta"] == 0.0 and identity["rho_ssim"] == pytest.approx(1.0)
    assert identity["rho_kid_norm"] == 1.0  # the clean set is the closest to itself
    assert (table["delta"] >= 0).all() and table["accuracy"].between(0, 1).all()
    for m in ("ssim", "kid"):
        assert table[f"rho_{m}_norm"].between(0, 1).all() and table[f"pareto_{m}"].any()
        assert table.loc[table[f"pareto_{m}"], "order"].isin([0, 1, 2]).all()
    summary = json.loads((tmp_path / "outputs/groundtruth/tiny.summary.json").read_text())
    assert summary["pareto"]["ssim"]["size"] == int(table["pareto_ssim"].sum())
    with np.load(tmp_path / "outputs/groundtruth/tiny.gallery.npz") as z:
        assert len(z["thetas"]) == int((table["pareto_ssim"] | table["pareto_kid"]).sum())
        assert z["images"].shape[1:] == (32, 32, 3)
    plot_groundtruth.main(cfg)
    for name in ("pareto.png", "gallery_ssim.png", "gallery_kid.png"):
        assert (tmp_path / "outputs/figures/groundtruth/tiny" / name).stat().st_size > 5000

    # sharded evaluation + merge reproduces the unsharded table byte for byte
    first = (tmp_path / "outputs/groundtruth/tiny.parquet").read_bytes()
    for shard in range(2):
        groundtruth.main(tiny_cfg(tmp_path, f"shard={shard}", "num_shards=2", f"paths.data={tmp_path}/data"))
    merge_groundtruth.main(tiny_cfg(tmp_path, "num_shards=2", f"paths.data={tmp_path}/data"))
    assert (tmp_path / "outputs/groundtruth/tiny.parquet").read_bytes() == first
    assert not [c for c in table if "seconds" in c] and (tmp_path / "outputs/timings/groundtruth/tiny.parquet").is_file()

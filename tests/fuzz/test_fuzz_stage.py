"""The `fuzz` and `plot_fuzz` stage scripts end to end on small budgets."""
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hydra import compose, initialize_config_dir

from pipeline.fuzz import StructuralFuzzReport
from pipeline.fuzz.adapters import build
from pipeline.models.cnn import save_cnn
from scripts import fuzz as fuzz_stage
from scripts import plot_fuzz as plot_stage

ROOT = Path(__file__).resolve().parents[2]

SMALL = {
    "geometric": ["candidate_values=[0.5,1.0]", "n_mri_perturbations=30", "n_adversarial_steps=8", "frontier=pareto",
                  "n_frontier_perturbations=10", "directional=false"],
    "weights": ["max_subset_dims=2", "n_mri_perturbations=8", "n_adversarial_steps=5", "n_frontier_perturbations=4"],
    "severity": ["n_per_class=2", "max_subset_dims=2", "n_mri_perturbations=4", "n_adversarial_steps=5", "n_coarse=3",
                 "n_frontier_perturbations=2"],
}


def _cfg(tmp_path, adapter, extra=()):
    overrides = ["+fuzz=default", f"fuzz.adapter={adapter}", "fuzz.progress=false", f"paths.outputs={tmp_path / 'out'}",
                 f"paths.data={tmp_path / 'data'}"]
    overrides += [f"fuzz.adapters.{adapter}.{o}" for o in SMALL.get(adapter, [])] + list(extra)
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose("config", overrides=overrides)


@pytest.fixture(scope="module")
def digits_assets(tmp_path_factory, tiny_cnn, digits):
    data = tmp_path_factory.mktemp("fuzzstage")
    folder = data / "data" / "digits"
    folder.mkdir(parents=True)
    save_cnn(tiny_cnn, folder / "model.pt")
    np.savez_compressed(folder / "splits.npz", **{f"{k}_{xy}": v for k, (x, y) in digits.items() for xy, v in (("x", x), ("y", y))})
    return data


def test_geometric_stage_writes_report_summary_metrics_and_figures(tmp_path, monkeypatch):
    cfg = _cfg(tmp_path, "geometric")
    fuzz_stage.main(cfg)
    out = tmp_path / "out" / "fuzz" / "geometric"
    report = StructuralFuzzReport.from_json((out / "report.json").read_text())
    assert report.dim_names == ["demographics", "bmi", "blood_pressure", "cholesterol", "glucose_triglycerides"]
    assert (out / "summary.txt").read_text() == report.summary()
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["mri"] == pytest.approx(report.mri_result.mri) and metrics["adapter"] == "geometric"
    assert not list(out.glob(".*tmp"))  # atomic writes leave no temporary files behind
    assert "seconds" not in metrics and json.loads((out / "timings.json").read_text())["seconds"] >= 0
    first = (out / "report.json").read_bytes()
    (out / "report.json").unlink()
    monkeypatch.setattr(build, "build_adapter", None)  # resumed from the store: the campaign does not run again
    fuzz_stage.main(cfg)
    monkeypatch.undo()
    assert (out / "report.json").read_bytes() == first
    plot_stage.main(cfg)
    figures = tmp_path / "out" / "figures" / "fuzz" / "geometric"
    assert {p.name for p in figures.iterdir()} == {"omega.png", "sensitivity.png", "frontier.png", "thresholds.md"}
    assert "| demographics | increase |" in (figures / "thresholds.md").read_text()


@pytest.mark.parametrize("adapter", ["weights", "severity"])
def test_digits_stages_run_on_prepared_assets(digits_assets, adapter):
    cfg = _cfg(digits_assets, adapter)
    fuzz_stage.main(cfg)
    report = StructuralFuzzReport.from_json((digits_assets / "out" / "fuzz" / adapter / "report.json").read_text())
    assert report.error_name == "error rate" and report.settings["operating_point_given"]
    assert report.operating_point == [1.0] * len(report.dim_names)  # trained weights / the mildest severities
    d = len(report.dim_names)
    assert len(report.subset_results) == math.comb(d, 1) + math.comb(d, 2)  # max_subset_dims=2


def test_unknown_adapter_lists_the_valid_ones(tmp_path):
    cfg = _cfg(tmp_path, "geometric", ["fuzz.adapter=tabular"])
    with pytest.raises(ValueError, match="unknown fuzz adapter 'tabular'; valid choices: geometric, weights, severity"):
        fuzz_stage.main(cfg)


def test_unknown_setting_and_missing_assets_are_named(tmp_path):
    with pytest.raises(ValueError, match="unknown fuzz settings \\['n_perturbation'\\]"):
        fuzz_stage.main(_cfg(tmp_path, "geometric", ["+fuzz.adapters.geometric.n_perturbation=3"]))
    with pytest.raises(ValueError, match="run the prepare stage first"):
        fuzz_stage.main(_cfg(tmp_path, "weights"))
    with pytest.raises(ValueError, match="no fuzz report"):
        plot_stage.main(_cfg(tmp_path, "severity"))


@pytest.mark.parametrize("adapter", ["weights", "severity"])
def test_digits_adapters_say_plainly_that_they_do_not_apply_to_text(tmp_path, adapter):
    cfg = _cfg(tmp_path, adapter, ["benchmark=bbc_news"])
    fuzz_stage.main(cfg)
    out = tmp_path / "out" / "fuzz" / adapter
    report = json.loads((out / "report.json").read_text())
    assert report["applicable"] is False and "benchmark 'bbc_news' (text) has a text_head model" in report["reason"]
    assert (out / "summary.txt").read_text().startswith("not applicable: ")
    plot_stage.main(cfg)
    figures = tmp_path / "out" / "figures" / "fuzz" / adapter
    assert [p.name for p in figures.iterdir()] == ["not_applicable.md"]

"""The choices the design names, one override each: `model=<name>`, `benchmark=<name>`, `modality=<name>`,
`fidelity=[...]`, `search.budget=<n>`, in Hydra mode, in DVC's own composition (`dvc exp run -S`) and in a
multirun sweep over models."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from omegaconf import OmegaConf

from pipeline.config import ConfigError, validate_config
from pipeline.stages.runner import check_sweep, compose_job, hydra_jobs, load_params

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "conf"


def test_model_is_a_group_of_its_own():
    cfg = compose_job(["model=digits_cnn_wide"])
    assert cfg.model.name == "digits_cnn_wide" and cfg.model.width == 32
    assert cfg.benchmark.name == "digits" and "model" not in cfg.benchmark


def test_each_benchmark_names_its_model_and_the_command_line_wins():
    assert compose_job([]).model.name == "digits_cnn"
    assert compose_job(["benchmark=tiny"]).model.name == "digits_cnn_small"
    assert compose_job(["benchmark=tiny_imagenet"]).model.name == "vit_b_16"
    assert compose_job(["benchmark=tiny", "model=digits_cnn"]).model.width == 16


def test_modality_picks_its_benchmark():
    cfg = compose_job(["modality=vision"])
    assert cfg.modality == "vision" and cfg.benchmark.name == "digits" and cfg.model.name == "digits_cnn"


def test_a_modality_that_contradicts_the_benchmark_is_rejected():
    data = OmegaConf.to_container(OmegaConf.load(ROOT / "params.yaml"))
    data["modality"] = "text"
    with pytest.raises(ConfigError, match=r"^modality: 'text' — the modality of benchmark 'digits', 'vision'"):
        validate_config(data)


def test_a_model_that_does_not_fit_the_benchmark_is_rejected():
    with pytest.raises(ConfigError, match=r"^model\.kind: 'digits_cnn' — a kind that fits dataset 'tiny_imagenet': torchvision"):
        compose_job(["benchmark=tiny_imagenet", "model=digits_cnn"])


def test_fidelity_and_budget_are_one_override_each():
    from pipeline.stages.search_inputs import budget, metrics_of

    cfg = compose_job(["fidelity=[kid]", "search.budget=300"])
    assert metrics_of(cfg) == ["kid"] and budget(cfg, 6**4) == 300


def test_dvc_composition_of_a_model_override_validates(tmp_path):
    """`dvc exp run -S model=…` writes params.yaml through DVC's own Hydra composition."""
    from dvc.utils.hydra import compose_and_dump

    out = tmp_path / "params.yaml"
    compose_and_dump(out, str(CONF), None, "config", str(tmp_path), ["model=digits_cnn_wide", "fidelity=[ssim]"])
    cfg = validate_config(OmegaConf.load(out))
    assert cfg.model.width == 32 and list(cfg.fidelity) == ["ssim"] and cfg.benchmark.name == "digits"


def test_a_sweep_over_models_needs_a_name_per_model():
    sweep = ["-m", "benchmark=tiny", "model=digits_cnn_small,digits_cnn_wide"]
    jobs = [compose_job(job) for job in hydra_jobs(sweep)]
    with pytest.raises(ValueError, match=r"^benchmark\.name: 'tiny' — a name of its own for each model and benchmark of the sweep"):
        check_sweep(jobs)
    named = [compose_job(job) for job in hydra_jobs([*sweep, "benchmark.name=tiny-${model.name}"])]
    check_sweep(named)
    assert [c.benchmark.name for c in named] == ["tiny-digits_cnn_small", "tiny-digits_cnn_wide"]
    check_sweep([compose_job(job) for job in hydra_jobs(["-m", "benchmark=tiny", "shard=0,1,2", "num_shards=3"])])


def test_a_multirun_over_two_models_prepares_and_evaluates_each(tmp_path, monkeypatch):
    """The real thing: Hydra's multirun launches prepare and ground truth once per model, each under its own name
    (prepare as its own process, the ground truth's sweep in this process: `run_stage` with the script's argv)."""
    import importlib

    common = ["-m", "benchmark=tiny", "model=digits_cnn_small,digits_cnn_wide", "model.epochs=1", "benchmark.features.epochs=1",
              "benchmark.levels=2", "fidelity=[ssim]", "benchmark.name=tiny-${model.name}",
              f"paths.data={tmp_path}/data", f"paths.outputs={tmp_path}/outputs", f"hydra.sweep.dir={tmp_path}/multirun", "workers=1"]
    done = subprocess.run([sys.executable, "scripts/prepare.py", *common], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    monkeypatch.setattr(sys, "argv", [str(ROOT / "scripts" / "groundtruth.py"), *common])
    importlib.import_module("pipeline.stages.runner").run_stage(importlib.import_module("scripts.groundtruth").main)
    widths = {}
    for name in ("digits_cnn_small", "digits_cnn_wide"):
        state = torch.load(tmp_path / f"data/tiny-{name}/model.pt", map_location="cpu", weights_only=True)
        widths[name] = state["width"]
        summary = json.loads((tmp_path / f"outputs/groundtruth/tiny-{name}.summary.json").read_text())
        assert summary["benchmark"] == f"tiny-{name}" and summary["space_size"] == 4
    assert widths == {"digits_cnn_small": 8, "digits_cnn_wide": 32}


def test_params_mode_switches_a_benchmark_with_its_model_and_fidelity():
    """How a `<stage>_suite@<name>` DVC stage runs: params.yaml, with one benchmark's keys from conf/."""
    cfg = load_params(["benchmark=bbc_news", "search.seeds=3"])
    assert cfg.benchmark.name == "bbc_news" and cfg.model.name == "minilm_head" and list(cfg.fidelity) == ["chrf", "bert_f1"]
    assert cfg.search.seeds == 3 and cfg.benchmark.features is None
    cfg = load_params(["model=digits_cnn_wide"])
    assert cfg.benchmark.name == "digits" and cfg.model.width == 32 and list(cfg.fidelity) == ["ssim", "kid"]
    assert load_params(["modality=text"]).modality == "text"

"""Benchmark specs for the speed measurements, built the way the stages build theirs.

`compose_config` is Hydra's composition of conf/ with overrides, validated by the schema
(`pipeline.config.validate_config`), as `pipeline.stages.runner.compose_job` does; `benchmark_spec` turns it into
the dict the library takes (`pipeline.benchmark.build`), exactly as `pipeline.stages.runner.benchmark_spec` does. The
benchmarks depend on the library and conf/ only, never on the stage entry points;
`tests/perf/test_perf_scripts.py` checks that both build the same specs.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

ROOT = Path(__file__).resolve().parents[1]
CONF_DIR = ROOT / "conf"
DIGITS_DATA = ROOT / "data" / "digits"
QUICK_TRAINING = ["model.epochs=1", "benchmark.features.epochs=1"]  # what tests/conftest.py's `tiny` prepares with
SHARED_DIGITS = "BENCH_DIGITS_DATA"  # a folder `digits_data` prepared earlier (tests/benchmarks: one for every --quick run)


def compose_config(overrides: list[str] | tuple[str, ...] = ()) -> DictConfig:
    """Hydra's composition of conf/ with `overrides`, validated against the schema."""
    from hydra import compose, initialize_config_dir

    from pipeline.config import validate_config

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return validate_config(compose("config", overrides=list(overrides)))


def spec_of(cfg: DictConfig) -> dict[str, Any]:
    """The benchmark as the library takes it: the `benchmark` node with the model under test (`model`, its
    `device` added), the fidelity metrics (`fidelity`) and `device` at the top (fidelity metrics read it there)."""
    device = str(cfg.device)
    return {**OmegaConf.to_container(cfg.benchmark, resolve=True),
            "model": {**OmegaConf.to_container(cfg.model, resolve=True), "device": device},
            "fidelity": list(cfg.fidelity), "device": device}


def benchmark_spec(overrides: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """The spec of the benchmark that conf/ composed with `overrides` describes."""
    return spec_of(compose_config(overrides))


def digits_data(stack: contextlib.ExitStack, quick: bool = False) -> Path:
    """The prepare stage's data/digits/ when it is there; else the digits benchmark prepared into a temporary
    folder that `stack` removes (both networks trained for one epoch when `quick`: how well they are trained
    hardly changes what the benchmarks time). With `quick`, the folder $BENCH_DIGITS_DATA names, where set: one
    this function prepared earlier (the tests' --quick runs share one)."""
    if (DIGITS_DATA / "features.pt").is_file() and (DIGITS_DATA / "adequacy_profile.npz").is_file():
        return DIGITS_DATA
    if quick and os.environ.get(SHARED_DIGITS):
        return Path(os.environ[SHARED_DIGITS])
    from pipeline.benchmark.preparation import prepare

    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-digits-")))
    print(f"no prepared data/digits/: preparing the digits benchmark into {folder}" + (" (one epoch per network)" if quick else ""),
          flush=True)
    prepare(benchmark_spec(["benchmark=digits", *(QUICK_TRAINING if quick else [])]), folder, progress=False)
    return folder

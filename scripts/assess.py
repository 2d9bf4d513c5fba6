"""A user's run: from a model and a data set to a page of what breaks it (`pipeline.assess`).

    python scripts/assess.py run=<name> model=... benchmark=...        # any override a stage takes
    python scripts/assess.py run=mine benchmark=digits search.live.batch_size=8 assess.exhaustive=true
    python scripts/assess.py run=cmp benchmark=tiny model@baseline=digits_cnn model=digits_cnn_small assess.fail_on=regression

It prepares the data (the clean score printed), searches live with `assess.method` (`search.recommended` unless set) and its stopping rule
(`search.live`: q a round, the executor, resumable), then writes the run's files and page under
outputs/runs/<name>/ (its prepared data under data/runs/<name>/, its evaluations in
data/cache/store/assess/<name>.sqlite), relative to the current directory: where the user is, never the tool's own
tree or the committed results of the embedded benchmarks. With `model@baseline=<conf/model file>` it compares the
model with that baseline on the same perturbed inputs instead (`pipeline.assess.compare`), and with
`assess.fail_on=regression` exits 1 when the new model regresses.
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from pipeline.config.errors import ConfigError
from pipeline.stages.layout import asset_digest
from pipeline.stages.runner import benchmark_spec, run_stage


def settings_of_config(node: DictConfig) -> Any:
    """`pipeline.assess.Settings` built by `hydra.utils.instantiate` from the `assess` node; a setting it refuses is
    that setting's ConfigError, not Hydra's wrapper around it."""
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    try:
        return instantiate(node, _convert_="all")
    except InstantiationException as err:
        if isinstance(err.__cause__, ConfigError):
            raise err.__cause__ from None
        raise


def main(cfg: DictConfig) -> None:
    from pipeline.assess import execute, execute_comparison, run_from_spec
    from pipeline.assess.run import folders, pair_run_from_spec
    from pipeline.benchmark.plugin_code import check_plugins
    from pipeline.benchmark.preparation import prepare

    if cfg.run is None:
        raise ConfigError("run", None, "a name for the run's folders (outputs/runs/<name>/), e.g. run=my-model")
    outputs, data = Path.cwd() / cfg.paths.outputs, Path.cwd() / cfg.paths.data  # where the user is, not the tool's tree
    spec = {**benchmark_spec(cfg), "name": str(cfg.run)}
    check_plugins(spec)
    data_dir = folders(str(cfg.run), outputs, data)["data_dir"]
    print(f"preparing {spec['dataset'].get('_target_') or spec['dataset']['kind']} into {data_dir}")
    prepared = prepare(spec, data_dir)
    print("prepared: " + ", ".join(f"{k} {round(v, 4)}" for k, v in prepared.items()))
    settings = settings_of_config(cfg.assess)
    baseline = cfg.get("baseline")
    if baseline is None:
        run = run_from_spec(spec, str(cfg.run), outputs, data, asset_digest(data_dir))
        execute(run, run.factory(), settings)  # the benchmark built here once: the clean score, the first checks, the gallery
        return
    baseline = {**OmegaConf.to_container(baseline, resolve=True), "device": str(cfg.device)}
    baseline_dir = data_dir / "baseline"
    print(f"preparing the baseline {baseline.get('_target_') or baseline.get('name')} into {baseline_dir}")
    prepare({**spec, "model": baseline}, baseline_dir)
    run = pair_run_from_spec(spec, baseline, str(cfg.run), outputs, data, asset_digest(data_dir), baseline_dir,
                             asset_digest(baseline_dir))
    result = execute_comparison(run, run.factory(), settings)
    if settings.fail_on == "regression" and result.regression:
        raise SystemExit(1)  # the verdict's line is the summary's last


if __name__ == "__main__":
    run_stage(main)

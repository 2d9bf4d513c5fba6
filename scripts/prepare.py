"""Stage `prepare`: clean inputs, labels, splits and the embedded models of the configured benchmark."""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

from pipeline.runtime.io import write_json
from pipeline.benchmark.plugin_code import check_plugins
from pipeline.benchmark.preparation import prepare
from pipeline.stages.runner import benchmark_spec, run_stage
from pipeline.stages.layout import data_dir, prepare_metrics


def main(cfg) -> None:
    spec = benchmark_spec(cfg)
    check_plugins(spec)
    metrics = prepare(spec, data_dir(cfg))
    write_json(metrics, prepare_metrics(cfg))
    print({k: round(v, 4) for k, v in metrics.items()})


if __name__ == "__main__":
    run_stage(main)

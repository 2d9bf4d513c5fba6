"""Stage `prepare`: clean inputs, labels, splits and the embedded models of the configured benchmark."""
from __future__ import annotations


from _entry import benchmark_spec, run_stage
from paths import data_dir, prepare_metrics

from pipeline.preparation import prepare
from pipeline.io import write_json


def main(cfg) -> None:
    spec = benchmark_spec(cfg)
    metrics = prepare(spec, data_dir(cfg))
    write_json(metrics, prepare_metrics(cfg))
    print({k: round(v, 4) for k, v in metrics.items()})


if __name__ == "__main__":
    run_stage(main)

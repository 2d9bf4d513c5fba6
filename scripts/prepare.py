"""Stage `prepare`: clean inputs, labels, splits and the embedded models of the configured benchmark."""
from __future__ import annotations


from _entry import ROOT, plain, run_stage

from pipeline.builders import prepare
from pipeline.io import write_json


def main(cfg) -> None:
    spec = plain(cfg.benchmark)
    data_dir = ROOT / cfg.paths.data / spec["name"]
    metrics = prepare(spec, data_dir)
    write_json(metrics, ROOT / cfg.paths.outputs / "prepare" / f"{spec['name']}.json")
    print({k: round(v, 4) for k, v in metrics.items()})


if __name__ == "__main__":
    run_stage(main)

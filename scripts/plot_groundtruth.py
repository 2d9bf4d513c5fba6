"""Render the ground-truth figures from the tables (`make figures`): Pareto fronts and P* galleries."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
from _entry import run_stage
from paths import groundtruth_figures, sibling, table_path

from pipeline.figures.groundtruth import plot_gallery, plot_pareto_fronts
from pipeline.io import atomic_path


def save(fig, path) -> None:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=130, format="png")


def main(cfg) -> None:
    name, metrics = cfg.benchmark.name, list(cfg.fidelity)
    dims = list(cfg.benchmark.perturbations)
    table = pd.read_parquet(table_path(cfg))
    out = groundtruth_figures(cfg)
    save(plot_pareto_fronts(table, metrics, len(dims), name), out / "pareto.png")
    with np.load(sibling(table_path(cfg), ".gallery.npz")) as z:
        for m in metrics:
            save(plot_gallery(z["thetas"], z["images"], z["clean"], table, dims, m), out / f"gallery_{m}.png")
    print(json.dumps({"figures": sorted(p.name for p in out.glob("*.png"))}))


if __name__ == "__main__":
    run_stage(main)

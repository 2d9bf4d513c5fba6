"""Render the ground-truth figures from the tables (`make figures`): Pareto fronts (Fig. 1), P* galleries
(Figs. 5-6) and where P* lies in Θ (Figs. 7-8)."""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

import json

import numpy as np
import pandas as pd

from pipeline.figures.ground_truth import METRIC_LABELS, plot_gallery, plot_pareto_fronts, plot_text_gallery
from pipeline.figures.save import save_png
from pipeline.figures.voxels import plot_front_voxels
from pipeline.stages.runner import run_stage
from pipeline.stages.layout import groundtruth_figures, sibling, table_path


def save(fig, path) -> None:
    save_png(fig, path, dpi=130)


def main(cfg) -> None:
    name, metrics = cfg.benchmark.name, list(cfg.fidelity)
    dims = list(cfg.benchmark.perturbations)
    table = pd.read_parquet(table_path(cfg))
    out = groundtruth_figures(cfg)
    save(plot_pareto_fronts(table, metrics, len(dims), name, bool(cfg.report.count_identity)), out / "pareto.png")
    with np.load(sibling(table_path(cfg), ".gallery.npz")) as z:
        for m in metrics:
            plot = plot_text_gallery if z["images"].dtype.kind == "U" else plot_gallery  # texts or images
            save(plot(z["thetas"], z["images"], z["clean"], table, dims, m), out / f"gallery_{m}.png")
    for m in metrics:
        title = f"{name}: P* under (δ, ρ_{METRIC_LABELS.get(m, m)}) in Θ, by order"
        save(plot_front_voxels(table, dims, int(cfg.benchmark.levels), m, title), out / f"voxels_{m}.png")
    print(json.dumps({"figures": sorted(p.name for p in out.glob("*.png"))}))


if __name__ == "__main__":
    run_stage(main)

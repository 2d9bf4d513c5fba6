"""Figures 2 and 3 of TestNav from the search traces: Recall@P* against unique configurations (top)
and budget (bottom), one column per benchmark–metric pair.

    python scripts/plot_recall.py      # outputs/figures/search_recall.png, search_single_objective.png
"""
from __future__ import annotations

from _entry import run_stage
from search_paths import figures_dir, problems_with_traces

from pipeline.figures.recall import plot_recall, recall_panel
from pipeline.io import atomic_path
from pipeline.search import METHODS

FIGURES = {"search_recall.png": "table2_methods", "search_single_objective.png": "fig3_methods"}


def main(cfg) -> None:
    panels = {key: [] for key in FIGURES.values()}
    for name, metric, problem, methods in problems_with_traces(cfg):
        for key in FIGURES.values():
            chosen = [m for m in cfg.search[key] if m in methods]
            if chosen:
                runs = {m: [t for _, t in methods[m]] for m in chosen}
                panels[key].append((chosen, recall_panel(f"{name} · {metric}", runs, problem.pareto, problem.space)))
    labels = {m: cls.label for m, cls in METHODS.items()}
    for filename, key in FIGURES.items():
        if not panels[key]:
            print(f"{filename}: no traces of {list(cfg.search[key])}, skipped")
            continue
        methods = [m for m in cfg.search[key] if all(m in chosen for chosen, _ in panels[key])]
        fig = plot_recall([p for _, p in panels[key]], methods, labels)
        with atomic_path(figures_dir(cfg) / filename) as tmp:
            fig.savefig(tmp, format="png", dpi=150)
        print(f"wrote {figures_dir(cfg) / filename}")


if __name__ == "__main__":
    run_stage(main)

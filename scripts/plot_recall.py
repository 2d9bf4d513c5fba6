"""Figures 2, 3 and 4 of TestNav from the search traces: Recall@P* against unique configurations (top)
and budget (bottom), one column per benchmark–metric pair that has traces of the figure's methods; and
Figure 2's methods against the core of the front (Recall@core, where the tables have one).

    python scripts/plot_recall.py      # outputs/figures/search_{recall,single_objective,adequacy,recall_core}.png
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

from pipeline.figures.recall import plot_recall, recall_panel
from pipeline.figures.save import save_png
from pipeline.search import METHODS
from pipeline.stages.runner import run_stage
from pipeline.stages.layout import figures_dir
from pipeline.stages.search_inputs import problems

FIGURES = {"search_recall.png": "table2_methods", "search_single_objective.png": "fig3_methods", "search_adequacy.png": "fig4_methods"}


def main(cfg) -> None:
    pairs = list(problems(cfg))
    labels = {m: cls.label for m, cls in METHODS.items()}
    for filename, key in FIGURES.items():
        # the figure's methods that any pair has traces of; a pair lacking some of them (Fig. 4's adequacy
        # baselines exist only where the model's layers are read) is left out of that figure
        methods = [m for m in cfg.search[key] if any(m in traces for *_, traces in pairs)]
        panels = [recall_panel(f"{name} · {metric}", {m: [t for _, t in traces[m]] for m in methods}, problem.pareto, problem.space)
                  for name, metric, problem, traces in pairs if methods and all(m in traces for m in methods)]
        if not panels:
            print(f"{filename}: no traces of {list(cfg.search[key])}, skipped")
            continue
        fig = plot_recall(panels, methods, labels)
        print(f"wrote {save_png(fig, figures_dir(cfg) / filename)}")
    methods = [m for m in cfg.search.table2_methods if any(m in traces for *_, traces in pairs)]
    panels = [recall_panel(f"{name} · {metric} (|core| = {problem.core.sum()})", {m: [t for _, t in traces[m]] for m in methods},
                           problem.core, problem.space)
              for name, metric, problem, traces in pairs
              if problem.core is not None and problem.core.any() and all(m in traces for m in methods)]
    if panels:
        print(f"wrote {save_png(plot_recall(panels, methods, labels, target='core'), figures_dir(cfg) / 'search_recall_core.png')}")


if __name__ == "__main__":
    run_stage(main)

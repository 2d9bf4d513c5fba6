"""Figures of the paired-evaluation analysis from its tables: Fig. 1 (identified widths), Fig. 5
(certified orderings across the weight grid) and the Appendix D.1 single-cell illustration (Markdown).

    python scripts/plot_paired.py  # outputs/figures/paired/<source>_{widths,certified}.png, outputs/paired/<source>/illustration.md
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

import pandas as pd

from pipeline.figures.paired import illustration_markdown, plot_certified, plot_widths
from pipeline.figures.save import save_png
from pipeline.runtime.io import write_text
from pipeline.paired.identification.panel import CELL_KEYS, illustration_case
from pipeline.stages.runner import plain, run_stage
from pipeline.stages.layout import paired_dir, paired_figures


def _save(fig, path) -> None:
    print(f"wrote {save_png(fig, path)}")


def main(cfg) -> None:
    spec = plain(cfg.paired)
    source = spec["source"]
    tables = paired_dir(cfg)
    figures = paired_figures(cfg)
    _save(plot_widths(pd.read_csv(tables / "widths.csv").assign(source=source)), figures / "widths.png")
    certified = pd.read_csv(tables / "certified.csv").assign(source=source)
    _save(plot_certified(certified, spec["primary_lambda"]), figures / "certified.png")
    bounds = pd.read_parquet(tables / "bounds.parquet")
    comparisons = pd.read_parquet(tables / "policy_comparisons.parquet")
    case = illustration_case(bounds, comparisons, spec["primary_lambda"])
    if case is None:
        text = illustration_markdown(None, bounds, bounds, comparisons)
    else:
        costs = pd.read_parquet(tables / "policy_costs.parquet")
        pick = lambda df: df[(df[list(CELL_KEYS)] == pd.Series({k: case[k] for k in CELL_KEYS})).all(axis=1)]  # noqa: E731
        text = illustration_markdown(case, pick(bounds), pick(costs), pick(comparisons))
    write_text(text, tables / "illustration.md")
    print(text)


if __name__ == "__main__":
    run_stage(main)

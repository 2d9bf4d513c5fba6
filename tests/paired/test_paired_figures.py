"""Figure and illustration rendering from tables (Fig. 1, Fig. 5, Appendix D.1)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.figures.paired import illustration_markdown, plot_certified, plot_widths
from pipeline.paired import cell_bounds, policy_analysis
from pipeline.paired.identification.panel import CELL_KEYS, illustration_case

# A cell (found by random search, checked by the brute-force tests' oracle) whose policies 2 and 4 at
# lambda = 0.5 are ordered by one shared correspondence while their separate I5 intervals overlap.
CERTIFIED = pd.DataFrame({
    "y": [2, 0, 0, 0, 2, 2, 2, 1], "clean_pred": [0, 2, 2, 2, 2, 2, 2, 0],
    "clean_maxprob": [0.9, 0.4, 0.6, 1.0, 0.6, 0.9, 1.0, 0.8], "clean_trueprob": [0.0, 0.0, 0.0, 0.0, 0.6, 0.9, 1.0, 0.0],
    "pert_pred": [2, 0, 2, 0, 1, 2, 0, 2], "pert_maxprob": [0.2, 1.0, 0.4, 0.3, 0.3, 0.8, 0.3, 0.7],
    "pert_trueprob": [0.2, 1.0, 0.0, 0.3, 0.0, 0.8, 0.0, 0.6],
})
TAU0, TAUS = 0.9, [1.0, 0.9, 0.6, 0.4, 0.3]


def _tables(cells: dict):
    bounds, costs, comps = [], [], []
    for key, df in cells.items():
        b = cell_bounds(df, TAU0)
        b["width"] = b["upper"] - b["lower"]
        res = policy_analysis(df, TAU0, TAUS, lams=[0.0, 0.5, 1.0])
        for part, out in ((b, bounds), (res["costs"], costs), (res["comparisons"], comps)):
            out.append(part.assign(**dict(zip(CELL_KEYS, key))))
    return (pd.concat(x, ignore_index=True) for x in (bounds, costs, comps))


def test_illustration_picks_certified_cell_and_first_pair():
    other = CERTIFIED.assign(pert_pred=CERTIFIED["y"], pert_trueprob=CERTIFIED["pert_maxprob"])  # nothing to certify
    bounds, costs, comps = _tables({("m1", "g1", "c1"): CERTIFIED, ("m2", "g2", "c1"): other})
    case = illustration_case(bounds, comps, 0.5)
    assert (case["model"], case["condition"], case["policy"], case["other"]) == ("m1", "c1", 2, 4)
    pick = lambda df: df[df["model"] == "m1"]  # noqa: E731
    text = illustration_markdown(case, pick(bounds), pick(costs), pick(comps))
    row = comps[(comps.model == "m1") & (comps.level == "I5") & (comps.lam == 0.5) & (comps.policy == 2) & (comps.other == 4)].iloc[0]
    assert row["d_shared"] == pytest.approx(-0.0625) and row["d_separate"] >= 0
    assert f"D+ = {100 * row['d_shared']:+.2f} pp" in text and "| H (pp) |" in text
    assert illustration_case(*list(_tables({("m2", "g2", "c1"): other}))[::2], 0.5) is None


def test_figures_render():
    widths = pd.DataFrame({"target": ["H", "L", "dM_k"], "W0": [0.05, 0.04, 0.1], "W1": [0.04, 0.03, 0.05],
                           "W2": [0.03, 0.03, 0.05], "source": "digits"})
    fig = plot_widths(widths)
    assert len(fig.axes) == 3
    lam = np.round(np.linspace(0, 1, 11), 10)
    certified = pd.DataFrame({"lam": lam, "cost": "transition", "shared_share": lam / 2, "plus_k_share": lam / 3,
                              "plus_5_share": lam / 4})
    fig = plot_certified(certified)
    assert len(fig.axes[0].lines) == 4          # three shares and the primary-weight marker

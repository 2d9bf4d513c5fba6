"""The text gallery of Figs. 5-6 for text and code: one figure line per line of each P* member's text."""
from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.figures.ground_truth import plot_text_gallery


def test_code_prompts_keep_their_line_breaks():
    table = pd.DataFrame({"a": [0, 1, 2], "order": [0, 1, 1], "delta": [0.0, 0.2, 0.1], "rho_chrf": [100.0, 80.0, 50.0],
                          "rho_chrf_norm": [1.0, 0.6, 0.0], "pareto_chrf": [True, True, False]})
    clean = "def f(x):\n    return x"
    fig = plot_text_gallery(np.array([[0], [1]]), np.array([clean, "def  f(x):\n\n    return x"]), clean, table, ["a"], "chrf")
    texts = [t.get_text() for t in fig.texts if t is not fig._suptitle]
    # clean (2 lines); order 0: label + 2 lines; order 1: label + 3 lines (a blank one kept)
    assert texts == ["def f(x):", "    return x", "order 0", "θ=(0,)  δ=0.000  ρ=100", "def f(x):", "    return x",
                     "order 1", "θ=(1,)  δ=0.200  ρ=80", "def  f(x):", "", "    return x"]

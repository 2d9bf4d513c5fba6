"""Recovery statistics (TestNav §4.2) on hand-made traces with known answers."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.search.scoring.recovery import recovery_markdown, recovery_runs, recovery_table
from pipeline.front.space import Space

SPACE = Space(("p", "q"), 3)  # |Θ| = 9; index = 3·p + q
PARETO = np.zeros(9, dtype=bool)
PARETO[[0, 4, 8]] = True  # P* = {(0,0), (1,1), (2,2)}


def hand_trace(thetas: list[tuple[int, int]]) -> pd.DataFrame:
    """A trace as the ledger writes it for a proposal sequence (objectives irrelevant here)."""
    seen, rows = set(), []
    for b, theta in enumerate(thetas, start=1):
        new = theta not in seen
        seen.add(theta)
        rows.append({"b": b, "p": theta[0], "q": theta[1], "is_new": new, "u": len(seen), "delta": 0.0, "rho": 0.0})
    return pd.DataFrame(rows)


# full recall at proposal 7 with u = 5: (0,0) (0,1) (0,1)* (1,1) (0,0)* (1,0) (2,2)   (* cache hits)
SEVEN_FIVE = [(0, 0), (0, 1), (0, 1), (1, 1), (0, 0), (1, 0), (2, 2), (2, 0)]
# full recall at proposal 9 with u = 7
NINE_SEVEN = [(0, 1), (0, 2), (1, 0), (0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 2)]
# never reaches full recall: (2, 2) is never proposed; final recall 2/3
NEVER = [(0, 0), (1, 1), (0, 0), (1, 2), (2, 1)]
# Random-like: every proposal new, full recall at u = b = 8
RANDOM_8 = [(0, 1), (0, 2), (1, 0), (0, 0), (1, 2), (2, 0), (1, 1), (2, 2), (2, 1)]
RANDOM_6 = [(2, 2), (0, 1), (1, 1), (1, 0), (2, 1), (0, 0), (0, 2), (1, 2), (2, 0)]


def runs() -> pd.DataFrame:
    traces = [("testnav", 0, hand_trace(SEVEN_FIVE)), ("testnav", 1, hand_trace(NINE_SEVEN)),
              ("random", 0, hand_trace(RANDOM_8)), ("random", 1, hand_trace(RANDOM_6)),
              ("greedy", 0, hand_trace(SEVEN_FIVE)), ("greedy", 1, hand_trace(NEVER))]
    return recovery_runs(traces, PARETO, SPACE, "toy", "ssim")


def test_recovery_runs_by_hand():
    r = runs().set_index(["method", "seed"])
    assert (r.loc[("testnav", 0), ["u_full", "b_full", "final_recall"]].tolist()) == [5, 7, 1.0]
    assert (r.loc[("testnav", 1), ["u_full", "b_full"]].tolist()) == [7, 9]
    assert np.isnan(r.loc[("greedy", 1), "u_full"]) and np.isnan(r.loc[("greedy", 1), "b_full"])
    assert r.loc[("greedy", 1), "final_recall"] == pytest.approx(2 / 3)
    assert (r.loc[("random", 0), ["u_full", "b_full"]].tolist()) == [8, 8]
    assert (r["space_size"] == 9).all()


def test_recovery_table_by_hand():
    t = recovery_table(runs()).set_index("method")
    tn, rnd, gr = t.loc["testnav"], t.loc["random"], t.loc["greedy"]
    assert (tn.seeds, tn.reached) == (2, 2)
    assert tn.u_full_mean == 6 and tn.u_full_sd == pytest.approx(np.sqrt(2))  # u = 5, 7
    assert tn.b_full_mean == 8 and tn.b_full_sd == pytest.approx(np.sqrt(2))  # b = 7, 9
    assert tn.u_full_pct == pytest.approx(100 * 6 / 9)
    assert tn.final_recall_mean == 1.0
    assert rnd.u_full_mean == rnd.b_full_mean == 7  # u = b = 8, 6
    # speed-up of TestNav over Random: ratio of means, on each axis; < 1 on b (TestNav re-proposes)
    assert rnd.speedup_u == pytest.approx(7 / 6) and rnd.speedup_b == pytest.approx(7 / 8)
    assert np.isnan(tn.speedup_u) and np.isnan(tn.speedup_b)  # the reference itself
    # Greedy reaches full recall in one seed of two: its mean is over that seed, no speed-up
    assert (gr.reached, gr.u_full_mean, gr.b_full_mean) == (1, 5, 7) and np.isnan(gr.u_full_sd)
    assert gr.u_cens_median == 7.5 and tn.u_cens_median == 6  # the seed that never reaches recall 1 counts as |Θ| + 1 = 10
    assert gr.final_recall_mean == pytest.approx((1 + 2 / 3) / 2) and gr.final_recall_min == pytest.approx(2 / 3)
    assert np.isnan(gr.speedup_u) and np.isnan(gr.speedup_b)


def test_no_speedup_when_the_reference_misses_a_seed():
    r = runs()
    r.loc[(r["method"] == "testnav") & (r["seed"] == 1), ["u_full", "b_full"]] = np.nan
    t = recovery_table(r)
    assert t["speedup_u"].isna().all() and t["speedup_b"].isna().all()


def test_space_size_argument_and_errors():
    r = runs().drop(columns="space_size")
    assert recovery_table(r, space_size={"toy": 18})["u_full_pct"].iloc[0] == pytest.approx(100 * 6 / 18)
    assert recovery_table(r, space_size=9)["u_full_pct"].iloc[0] == pytest.approx(100 * 6 / 9)
    with pytest.raises(ValueError, match="space_size"):
        recovery_table(r)
    with pytest.raises(ValueError, match=r"\['toy'\]"):
        recovery_table(r, space_size={"other": 9})
    with pytest.raises(ValueError, match="u_full"):
        recovery_table(r.drop(columns="u_full"), space_size=9)


def test_recovery_table_keys_by_pair_and_reference():
    a, b = runs(), runs()
    b["metric"] = "kid"
    b.loc[b["method"] == "random", ["u_full", "b_full"]] = [[3.0, 3.0], [3.0, 3.0]]
    t = recovery_table(pd.concat([a, b]), reference="random")
    assert list(zip(t["metric"], t["method"]))[:3] == [("ssim", "testnav"), ("ssim", "random"), ("ssim", "greedy")]
    kid_tn = t[(t["metric"] == "kid") & (t["method"] == "testnav")].iloc[0]
    assert kid_tn.speedup_u == pytest.approx(6 / 3) and kid_tn.speedup_b == pytest.approx(8 / 3)


def test_recovery_markdown():
    md = recovery_markdown(recovery_table(runs()), {"testnav": "TestNav", "random": "Random Search"})
    lines = md.splitlines()
    assert len(lines) == 2 + 3 and "Speed-up of TestNav (u)" in lines[0]
    tn = next(line for line in lines if "| TestNav |" in line)
    assert "| 2/2 |" in tn and "6.0 ± 1.4" in tn and "| 66.7 |" in tn and "8.0 ± 1.4" in tn
    rnd = next(line for line in lines if "Random Search" in line)
    assert "1.17×" in rnd and "0.88×" in rnd
    gr = next(line for line in lines if "| greedy |" in line)
    assert "| 1/2 |" in gr and "| 5.0 |" in gr and gr.rstrip().endswith("| – | – |")


def test_recovery_of_the_core_by_hand():
    """Core = {(1, 1)}: first evaluated at u = 3 and 6 (TestNav), 3 and 2 (Greedy), 7 and 3 (Random)."""
    core = np.zeros(9, dtype=bool)
    core[4] = True
    traces = [("testnav", 0, hand_trace(SEVEN_FIVE)), ("testnav", 1, hand_trace(NINE_SEVEN)),
              ("random", 0, hand_trace(RANDOM_8)), ("random", 1, hand_trace(RANDOM_6)),
              ("greedy", 0, hand_trace(SEVEN_FIVE)), ("greedy", 1, hand_trace(NEVER)), ("late", 0, hand_trace([(0, 0), (0, 1)]))]
    r = recovery_runs(traces, PARETO, SPACE, "toy", "ssim", core)
    assert r["u_core"].tolist()[:6] == [3, 6, 7, 3, 3, 2] and np.isnan(r["u_core"].iloc[6])
    t = recovery_table(r).set_index("method")
    assert t.loc["testnav", ["core_reached", "u_core_mean", "u_core_cens_median"]].tolist() == [2, 4.5, 4.5]
    assert t.loc["greedy", ["core_reached", "u_core_mean", "u_core_cens_median"]].tolist() == [2, 2.5, 2.5]
    assert t.loc["late", "core_reached"] == 0 and t.loc["late", "u_core_cens_median"] == 10  # never: |Θ| + 1
    markdown = recovery_markdown(t.reset_index())
    assert "Median u to the core, all seeds" in markdown
    assert "| toy | ssim | testnav | 2/2 |" in markdown and markdown.split("\n")[2].endswith("| 2/2 | 4 |")  # 4.5, to no decimals
    assert "| 0/1 | > \\|Θ\\| (never) |" in markdown


def test_a_table_without_core_keeps_the_paper_columns():
    t = recovery_table(runs())
    assert "u_core_mean" not in t.columns and "core" not in recovery_markdown(t)

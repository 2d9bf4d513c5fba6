"""Hyperparameter selection (TestNav §3.3), the Table 2 summary and the recall figures."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.figures.recall import plot_recall, recall_panel
from pipeline.search import recall_by_budget, recall_by_unique, run_search
from pipeline.search.ground_truth import GroundTruth, table_metrics, table_space
from pipeline.search.scoring.summary import metrics_tree, summarise_runs, table2, table2_markdown
from pipeline.search.studies.tuning import grid, grid_cells, select_setting, setting_scores, tie_report
from pipeline.front.space import Space
from tests.search.search_fixtures import NAMES4, synthetic_table


def runs_table(spec: dict) -> pd.DataFrame:
    """spec: {(eta_c, eta_m, mu): {pair: [final recalls per seed]}}, AUC = final recall / 2."""
    rows = []
    for (ec, em, mu), pairs in spec.items():
        for pair, recalls in pairs.items():
            for seed, r in enumerate(recalls):
                rows.append(dict(eta_c=ec, eta_m=em, mu=mu, benchmark=pair[0], metric=pair[1], seed=seed, final_recall=r, auc=r / 2))
    return pd.DataFrame(rows)


def test_grid_order():
    g = grid([1, 5], [1], [20, 110])
    assert g == [dict(eta_c=1, eta_m=1, mu=20), dict(eta_c=1, eta_m=1, mu=110), dict(eta_c=5, eta_m=1, mu=20), dict(eta_c=5, eta_m=1, mu=110)]


def test_selection_counts_pairs_reaching_the_front_then_worst_case():
    A, B = ("img", "ssim"), ("img", "kid")
    runs = runs_table({
        (1, 5, 110): {A: [1.0, 1.0], B: [1.0, 0.99]},   # 1 pair reached, worst 0.995
        (5, 5, 110): {A: [1.0, 1.0], B: [0.9, 0.9]},    # 1 pair reached, worst 0.9
        (1, 1, 20): {A: [1.0, 0.998], B: [0.5, 0.5]},   # mean 0.999 counts as reached; worst 0.5
        (15, 15, 50): {A: [0.99, 0.99], B: [0.99, 0.99]},  # none reached
    })
    scores = setting_scores(runs)
    assert scores["pairs_reached"].tolist() == [1, 1, 1, 0]
    assert select_setting(runs)["eta_c"] == 1 and select_setting(runs)["mu"] == 110
    assert [tuple(r) for r in scores[["eta_c", "eta_m", "mu"]].to_numpy()] == [(1, 5, 110), (5, 5, 110), (1, 1, 20), (15, 15, 50)]
    assert scores["selected"].tolist() == [True, False, False, False]


def test_selection_ties_fall_back_to_auc_then_grid_order():
    A = ("code", "chrf")
    tie = runs_table({(5, 5, 50): {A: [1.0]}, (1, 5, 50): {A: [1.0]}})
    assert select_setting(tie)["eta_c"] == 1  # same recall and AUC: grid order
    runs = tie.copy()
    runs.loc[runs["eta_c"] == 5, "auc"] = 0.9
    assert select_setting(runs)["eta_c"] == 5


def test_grid_cells_run_every_setting_pair_and_seed():
    space = Space(NAMES4[:2], 3)
    table = synthetic_table(space)
    problems = [GroundTruth.from_table(table, "syn", m) for m in table_metrics(table)]
    settings = grid([1, 15], [5], [4])
    cells = list(grid_cells(problems, settings, seeds=[0, 1], budget=lambda size: 2 * size, workers=1, progress=False))
    assert [s for s, _ in cells] == settings
    for setting, cell in cells:
        assert len(cell) == 4 and set(cell["metric"]) == {"ssim", "kid"} and (cell["eta_c"] == setting["eta_c"]).all()
        assert (cell["proposals"] == 18).all() and cell["final_recall"].between(0, 1).all()
    # the fixed hyperparameters reach every run: without duplicate elimination TestNav re-proposes
    # configurations it has seen, so it visits fewer distinct ones within the same budget
    setting = {"eta_c": 1, "eta_m": 5, "mu": 4}
    kept, plain = (pd.concat([c for _, c in grid_cells(problems, [setting], [0, 1, 2], lambda size: 3 * size, {"eliminate_duplicates": e},
                                                       workers=1, progress=False)]) for e in (True, False))
    assert (kept["proposals"] == 27).all() and (plain["proposals"] == 27).all()
    assert not kept["unique"].equals(plain["unique"])


def test_tie_report_counts_the_settings_tied_under_the_papers_rule():
    rows = [dict(eta_c=c, eta_m=5, mu=4, benchmark="b", metric="m", seed=0, final_recall=r, auc=a)
            for c, r, a in ((1, 1.0, 0.6), (5, 1.0, 0.7), (10, 1.0, 0.7), (15, 0.9, 0.9))]
    scores = setting_scores(pd.DataFrame(rows))
    report = tie_report(scores, {"eta_c": 15, "eta_m": 5, "mu": 4})
    assert report["tied_under_paper_rule"] == 3 and report["decided_by"] == "tie-break on the grid order"
    assert report["reference_rank"] == 4 and scores.iloc[0]["eta_c"] == 5
    assert tie_report(scores, {"eta_c": 2, "eta_m": 5, "mu": 4})["reference_rank"] is None
    alone = setting_scores(pd.DataFrame(rows[:1] + rows[3:]))
    assert tie_report(alone, {"eta_c": 1, "eta_m": 5, "mu": 4}) | {"reference": None} == {
        "tied_under_paper_rule": 1, "settings": 2, "decided_by": "the paper's rule (pairs reaching P*)", "reference": None,
        "reference_rank": 1}


def test_table_space_and_metrics_of_a_groundtruth_table():
    space = Space(NAMES4[:3], 4)
    table = synthetic_table(space, metrics=("chrf", "bertf1"))
    assert table_space(table) == space and table_metrics(table) == ["chrf", "bertf1"]
    with pytest.raises(ValueError, match="order"):
        table_space(table.drop(columns="order"))


def test_table2_marks_best_and_second_best_per_column():
    runs = pd.DataFrame([
        dict(benchmark="img", metric="ssim", method=m, seed=s, auc=a + 0.01 * s, final_recall=1.0, u_full=10.0 if m != "random" else np.nan, b_full=20.0)
        for m, a in (("testnav", 0.70), ("greedy", 0.55), ("ga", 0.54), ("random", 0.51)) for s in (0, 1)
    ] + [dict(benchmark="img", metric="kid", method=m, seed=0, auc=a, final_recall=0.5, u_full=np.nan, b_full=np.nan)
         for m, a in (("testnav", 0.6), ("greedy", 0.6), ("ga", 0.4), ("random", 0.5))])
    summary = summarise_runs(runs)
    row = summary[(summary.metric == "ssim") & (summary.method == "testnav")].iloc[0]
    assert row["auc_mean"] == pytest.approx(0.705) and row["seeds"] == 2 and row["full_rate"] == 1.0
    assert summary[(summary.metric == "ssim") & (summary.method == "random")]["full_rate"].item() == 0.0
    t = table2(summary, ["testnav", "greedy", "ga", "random"])
    marks = {(r.metric, r.method): r.mark for r in t.itertuples()}
    assert marks[("ssim", "testnav")] == "best" and marks[("ssim", "greedy")] == "second" and marks[("ssim", "ga")] == ""
    assert marks[("kid", "testnav")] == marks[("kid", "greedy")] == "best" and marks[("kid", "random")] == "second"
    md = table2_markdown(t, {"testnav": "TestNav"})
    assert "| TestNav | **0.705** | **0.600** |" in md and "<u>0.555</u>" in md
    tree = metrics_tree(summary)
    assert tree["img"]["kid"]["ga"]["u_full_mean"] is None and tree["img"]["ssim"]["testnav"]["auc_mean"] == pytest.approx(0.705)
    with pytest.raises(ValueError, match="coverage"):
        table2(summary, ["testnav", "coverage"])


def test_recall_figure_from_traces(tmp_path):
    space = Space(NAMES4[:3], 4)
    p = GroundTruth.from_table(synthetic_table(space), "syn", "ssim")
    traces = {m: [run_search(m, p.oracle, space, 200, seed=s, **({"mu": 20} if m == "testnav" else {})) for s in (0, 1, 2)]
              for m in ("testnav", "random")}
    panel = recall_panel("syn · ssim", traces, p.pareto, space)
    assert panel.by_unique["testnav"].shape == (3, space.size) and panel.by_budget["random"].shape == (3, 64)
    np.testing.assert_allclose(panel.by_budget["testnav"][1], recall_by_budget(traces["testnav"][1], p.pareto, space))
    np.testing.assert_allclose(panel.by_unique["random"][2], recall_by_unique(traces["random"][2], p.pareto, space))
    assert np.isfinite(panel.u_full["random"]).all()  # random visits all of Θ
    fig = plot_recall([panel, panel], ["testnav", "random"], {"testnav": "TestNav"})
    assert len(fig.axes) == 4
    fig.savefig(tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 10_000
    with pytest.raises(ValueError, match="greedy"):
        plot_recall([panel], ["testnav", "greedy"])

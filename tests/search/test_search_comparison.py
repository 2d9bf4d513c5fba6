"""Paired comparisons of recovery cost: censoring, bootstrap intervals, cluster bootstrap and pairing by identifier."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.search.scoring.comparison import censored_u, compare_to, paired_difference, recovery_summary

SIZE = 1296


def test_censored_u() -> None:
    np.testing.assert_array_equal(censored_u(np.array([3.0, np.nan, 1296.0]), SIZE), [3.0, 1297.0, 1296.0])
    np.testing.assert_array_equal(censored_u(np.array([np.nan, np.nan]), np.array([9, 64])), [10.0, 65.0])
    for bad in (0.0, 1297.0):
        with pytest.raises(ValueError, match="u_full must be NaN"):
            censored_u(np.array([5.0, bad]), SIZE)


def test_interval_matches_the_normal_closed_form() -> None:
    data = np.random.default_rng(0)
    b = data.normal(500, 100, 4000)
    a = b + data.normal(-5, 20, 4000)  # the pairs share b: only the difference's spread matters
    d = a - b
    half = 1.96 * d.std(ddof=1) / np.sqrt(len(d))
    out = paired_difference(a, b, np.random.default_rng(1))
    assert out["mean_diff"] == pytest.approx(d.mean())
    assert out["lo"] == pytest.approx(d.mean() - half, abs=0.05 * half)
    assert out["hi"] == pytest.approx(d.mean() + half, abs=0.05 * half)
    assert out["t"] == pytest.approx(d.mean() / (d.std(ddof=1) / np.sqrt(len(d))))
    assert out["ratio"] == pytest.approx(a.mean() / b.mean())
    assert out["pairs"] == out["groups"] == 4000 and out["verdict"] == "a better"


def test_tie_when_identical_in_distribution() -> None:
    data = np.random.default_rng(2)
    a, b = data.normal(300, 50, 200), data.normal(300, 50, 200)
    out = paired_difference(a, b, np.random.default_rng(3))
    assert out["lo"] < 0 < out["hi"] and out["verdict"] == "tie"
    same = paired_difference(a, a, np.random.default_rng(3))
    assert same["lo"] == same["hi"] == 0.0 and same["verdict"] == "tie"


def test_clear_winner() -> None:
    data = np.random.default_rng(4)
    b = data.normal(600, 80, 30)
    a = b - 200 + data.normal(0, 30, 30)
    assert paired_difference(a, b, np.random.default_rng(5))["verdict"] == "a better"
    swapped = paired_difference(b, a, np.random.default_rng(5))
    assert swapped["verdict"] == "b better" and swapped["lo"] > 0 and swapped["ratio"] > 1


def test_cluster_bootstrap_widens_with_correlated_groups() -> None:
    data = np.random.default_rng(6)
    groups = np.repeat(np.arange(10), 20)  # 10 tables, 20 seeds each
    d = data.normal(0, 10, 10)[groups] + data.normal(0, 1, len(groups))  # a shared effect per table
    b = np.full(len(d), 500.0)
    plain = paired_difference(b + d, b, np.random.default_rng(7))
    clustered = paired_difference(b + d, b, np.random.default_rng(7), groups=groups)
    assert clustered["groups"] == 10
    assert clustered["hi"] - clustered["lo"] > 2 * (plain["hi"] - plain["lo"])


def test_bad_inputs() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="same length"):
        paired_difference(np.ones(3), np.ones(4), rng)
    with pytest.raises(ValueError, match="censor"):
        paired_difference(np.array([1.0, np.nan]), np.ones(2), rng)
    with pytest.raises(ValueError, match="at least 2 groups"):
        paired_difference(np.ones(3), np.ones(3), rng, groups=np.zeros(3))


def runs_table() -> pd.DataFrame:
    """Two benchmarks × 3 tables × 4 seeds × 3 methods; "fast" needs ~100 fewer u than "ref", "same" matches it,
    and "ref" fails (NaN) on one run of each benchmark."""
    data = np.random.default_rng(8)
    rows = []
    for bench in ("b1", "b2"):
        for table in range(3):
            for seed in range(4):
                base = 700 + 60 * table + data.normal(0, 20)
                for method, u in (("ref", base), ("fast", base - 100 + data.normal(0, 10)), ("same", base + data.normal(0, 10))):
                    rows.append({"benchmark": bench, "method": method, "table": table, "seed": seed, "u_full": u, "space_size": SIZE})
    out = pd.DataFrame(rows)
    out.loc[(out["method"] == "ref") & (out["table"] == 2) & (out["seed"] == 3), "u_full"] = np.nan
    return out


def test_recovery_summary() -> None:
    out = recovery_summary(runs_table(), ["benchmark"])
    assert list(out.columns) == ["benchmark", "method", "runs", "reached", "u_mean", "u_cens_median", "u_cens_mean"]
    ref = out[(out["benchmark"] == "b1") & (out["method"] == "ref")].iloc[0]
    runs = runs_table()
    u = runs.loc[(runs["benchmark"] == "b1") & (runs["method"] == "ref"), "u_full"]
    assert (ref["runs"], ref["reached"]) == (12, 11)
    assert ref["u_mean"] == pytest.approx(u.mean())
    assert ref["u_cens_mean"] == pytest.approx((u.sum() + SIZE + 1) / 12)
    assert ref["u_cens_median"] == pytest.approx(np.median(u.fillna(SIZE + 1)))


def test_compare_to_verdicts_and_censoring() -> None:
    out = compare_to(runs_table(), "ref", ["benchmark"], np.random.default_rng(9), ids=["table", "seed"], n_boot=2000)
    assert list(out["method"]) == ["fast", "same", "fast", "same"]
    assert set(out.loc[out["method"] == "fast", "verdict"]) == {"better"}
    assert (out["pairs"] == 12).all() and (out["reference"] == "ref").all()
    runs = runs_table()
    b1 = runs[runs["benchmark"] == "b1"].set_index(["table", "seed"])
    diff = b1.loc[b1["method"] == "same", "u_full"] - b1.loc[b1["method"] == "ref", "u_full"].fillna(SIZE + 1)
    assert out.iloc[1]["mean_diff"] == pytest.approx(diff.mean())


def test_pairing_is_by_identifier_not_row_order() -> None:
    runs = runs_table()
    fast = runs[runs["method"] == "fast"].sample(frac=1, random_state=0)
    shuffled = pd.concat([runs[runs["method"] != "fast"], fast], ignore_index=True)
    shuffled = shuffled.sort_values("method", key=lambda m: m.map({"ref": 0, "fast": 1, "same": 2}), kind="stable")
    kwargs = {"ids": ["table", "seed"], "cluster": ["table"], "n_boot": 2000}
    a = compare_to(runs, "ref", ["benchmark"], np.random.default_rng(10), **kwargs)
    b = compare_to(shuffled, "ref", ["benchmark"], np.random.default_rng(10), **kwargs)
    pd.testing.assert_frame_equal(a, b)
    assert (a["groups"] == 3).all()


def test_missing_pair_and_bad_tables() -> None:
    runs = runs_table()
    gone = runs.drop(runs.index[(runs["method"] == "same") & (runs["table"] == 1) & (runs["seed"] == 2) & (runs["benchmark"] == "b2")])
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"'same' and 'ref' are not paired at \{'benchmark': 'b2'\}.*\(1, 2\)"):
        compare_to(gone, "ref", ["benchmark"], rng, ids=["table", "seed"], n_boot=100)
    with pytest.raises(ValueError, match="more than once"):
        compare_to(runs, "ref", ["benchmark"], rng, ids=["seed"], n_boot=100)
    with pytest.raises(ValueError, match="no runs of the reference 'nope'"):
        compare_to(runs, "nope", ["benchmark"], rng, ids=["table", "seed"], n_boot=100)
    with pytest.raises(ValueError, match="cluster columns"):
        compare_to(runs, "ref", ["benchmark"], rng, ids=["seed"], cluster=["table"])
    with pytest.raises(ValueError, match=r"lacks columns \['table'\]"):
        compare_to(runs.drop(columns="table"), "ref", ["benchmark"], rng, ids=["table", "seed"])

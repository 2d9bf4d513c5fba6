"""Synthetic ground-truth families: determinism, splits, front sizes and the features each family imitates."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.search.studies.monotonicity import edge_monotonicity
from pipeline.search.studies.synthetic import DEFAULT_SPACE, DEV_SEEDS, FAMILIES, FRONT_SIZES, TEST_SEEDS, split_tables, synthetic_table
from pipeline.front.space import Space

SEEDS = list(DEV_SEEDS[:8])


def brute_force_front(points: np.ndarray) -> np.ndarray:
    """Non-dominated points (both maximised), one point at a time against all others."""
    keep = np.ones(len(points), dtype=bool)
    for i, p in enumerate(points):
        keep[i] = not np.any(np.all(points >= p, axis=1) & np.any(points > p, axis=1))
    return keep


def overall(table: pd.DataFrame) -> pd.Series:
    return edge_monotonicity(table[["delta_norm", "rho_norm"]].to_numpy(), DEFAULT_SPACE).iloc[-1]


@pytest.mark.parametrize("family", FAMILIES)
def test_deterministic_and_seed_dependent(family: str) -> None:
    a, b = synthetic_table(family, 3), synthetic_table(family, 3)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["delta_norm"], synthetic_table(family, 4)["delta_norm"])


@pytest.mark.parametrize("family", FAMILIES)
def test_format(family: str) -> None:
    table = synthetic_table(family, 0)
    assert list(table.columns) == [*DEFAULT_SPACE.names, "order", "delta_norm", "rho_norm", "pareto"]
    assert len(table) == DEFAULT_SPACE.size
    np.testing.assert_array_equal(DEFAULT_SPACE.indices(table[list(DEFAULT_SPACE.names)].to_numpy()), np.arange(DEFAULT_SPACE.size))
    for column in ("delta_norm", "rho_norm"):
        assert table[column].min() == 0.0 and table[column].max() == 1.0
    assert table["pareto"].dtype == bool


def test_families_differ_at_the_same_seed() -> None:
    deltas = [synthetic_table(family, 0)["delta_norm"].to_numpy() for family in FAMILIES]
    assert all(not np.allclose(deltas[i], deltas[j]) for i in range(len(deltas)) for j in range(i))


def test_other_space() -> None:
    space = Space(("a", "b", "c"), 4)
    table = synthetic_table("rugged", 1, space)
    assert len(table) == 64 and list(table.columns[:3]) == ["a", "b", "c"]
    assert table["pareto"].any()


@pytest.mark.parametrize("family", FAMILIES)
def test_front_size_in_documented_range(family: str) -> None:
    low, high = FRONT_SIZES[family]
    for seed in SEEDS:
        table = synthetic_table(family, seed)
        np.testing.assert_array_equal(table["pareto"].to_numpy(), brute_force_front(table[["delta_norm", "rho_norm"]].to_numpy()))
        assert low <= table["pareto"].sum() <= high, (family, seed)


def test_crowded_front_sits_near_one() -> None:
    for seed in SEEDS:
        table = synthetic_table("crowded", seed)
        rho = table.loc[table["pareto"], "rho_norm"]
        assert (rho > 1 - 1e-3).mean() > 0.6, seed
        assert rho.min() < 0.9, seed  # a real trade-off, not a front that sits at ρ = 1 only


def test_rugged_is_not_monotone() -> None:
    for seed in SEEDS:
        row = overall(synthetic_table("rugged", seed))
        assert row["delta_monotone"] < 0.9 and row["both_monotone"] < 0.8, seed


def test_smooth_is_monotone() -> None:
    for seed in SEEDS:
        row = overall(synthetic_table("smooth", seed))
        assert row["delta_monotone"] == 1.0 and row["rho_monotone"] == 1.0, seed


def test_splits_are_disjoint() -> None:
    assert not set(DEV_SEEDS) & set(TEST_SEEDS)
    dev, test = split_tables("dev", 5), split_tables("test", 5)
    assert len(dev) == len(test) == 5 * len(FAMILIES)
    assert {family for family, _ in dev} == set(FAMILIES)
    assert not set(dev) & set(test)
    assert {seed for _, seed in test} <= set(TEST_SEEDS)


def test_bad_names() -> None:
    with pytest.raises(ValueError, match=r"'wavy'.*smooth.*long_front"):
        synthetic_table("wavy", 0)
    with pytest.raises(ValueError, match=r"'train'.*dev.*test"):
        split_tables("train", 3)
    with pytest.raises(ValueError, match="per_family"):
        split_tables("dev", 0)

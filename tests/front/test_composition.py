"""Table 3 and Fig. 1's counts under both conventions, against the paper's worked numbers and brute force."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from pipeline.front.composition import composition_label, front_composition, table3, table3_markdown
from pipeline.front.pareto import pareto_mask


def test_the_papers_caption_under_its_convention():
    # Fig. 1, Tiny-ImageNet SSIM: |P*| = 27 (9, 12, 4, 2), plus the identity the paper leaves out
    orders = [0] + [1] * 9 + [2] * 12 + [3] * 4 + [4] * 2
    row = front_composition(orders, 4, count_identity=False)
    assert row == {"size": 27, "order_1": 9, "order_2": 12, "order_3": 4, "order_4": 2}
    assert composition_label(row, 4, False) == "|P*| = 27 (9,12,4,2)"
    with_identity = front_composition(orders, 4, count_identity=True)
    assert with_identity["size"] == 28 and with_identity["order_0"] == 1
    assert composition_label(with_identity, 4, True) == "|P*| = 28 (1,9,12,4,2)"


def test_counts_match_brute_force_on_a_random_lattice():
    rng = np.random.default_rng(3)
    thetas = np.array(list(itertools.product(range(3), repeat=3)))
    delta = np.where(thetas.sum(1) == 0, 0.0, rng.random(len(thetas)))
    rho = np.where(thetas.sum(1) == 0, 1.0, rng.random(len(thetas)))
    front = pareto_mask(np.c_[delta, rho])
    assert front[0], "the identity is never dominated"
    orders = (thetas[front] > 0).sum(1)
    for count_identity in (False, True):
        row = front_composition(orders, 3, count_identity)
        assert row["size"] == int(front.sum()) - (0 if count_identity else 1)
        for k in range(0 if count_identity else 1, 4):
            assert row[f"order_{k}"] == sum(1 for t in thetas[front] if sum(v > 0 for v in t) == k)


def test_table3_rows_and_markdown():
    t = table3({("digits", "ssim"): ([0, 1, 1, 2], 2), ("text", "chrf"): ([0, 3, 1], 3)}, count_identity=False)
    assert list(t.columns) == ["benchmark", "metric", "size", "order_1", "order_2", "order_3"]
    assert t.iloc[0].tolist()[:5] == ["digits", "ssim", 3, 2, 1] and t["order_3"].isna().iloc[0]
    md = table3_markdown(t)
    assert "| digits | ssim | 3 | 2 | 1 | – |" in md and "| text | chrf | 2 | 1 | 0 | 1 |" in md


def test_table3_gives_the_core_and_plausible_sizes_under_the_identity_convention():
    import pandas as pd

    from pipeline.front.composition import confidence_sets

    table = pd.DataFrame({"a": [0, 1, 0, 2, 1], "b": [0, 0, 1, 1, 2], "set_ssim": ["core", "core", "plausible", "out", "plausible"]})
    sets = confidence_sets(table, "digits", "ssim", ["a", "b"])
    assert [list(x) for x in sets[("digits", "ssim")]] == [[0, 1], [0, 1, 1, 2]]
    assert confidence_sets(table, "digits", "kid", ["a", "b"]) == {}
    fronts = {("digits", "ssim"): ([0, 1, 1, 2], 2), ("text", "chrf"): ([0, 1], 2)}
    left_out = table3(fronts, count_identity=False, confidence=sets)
    assert list(left_out.columns[:5]) == ["benchmark", "metric", "size", "core", "plausible"]
    assert left_out.iloc[0][["size", "core", "plausible"]].tolist() == [3, 1, 3] and left_out["core"].isna().iloc[1]
    counted = table3(fronts, count_identity=True, confidence=sets)
    assert counted.iloc[0][["size", "core", "plausible"]].tolist() == [4, 2, 4]
    assert "| digits | ssim | 3 | 1 | 3 | 2 | 1 |" in table3_markdown(left_out)


def test_an_order_outside_the_space_is_an_error():
    with pytest.raises(ValueError, match="orders must lie in 0..2"):
        front_composition([0, 3], 2, False)

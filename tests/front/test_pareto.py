import numpy as np

from pipeline.front.pareto import pareto_mask


def brute_force_front(points):
    n = len(points)
    keep = []
    for i in range(n):
        dominated = any(
            all(points[j][k] >= points[i][k] for k in range(points.shape[1])) and any(points[j][k] > points[i][k] for k in range(points.shape[1]))
            for j in range(n) if j != i
        )
        keep.append(not dominated)
    return np.array(keep)


def test_matches_brute_force_on_random_points_with_ties():
    rng = np.random.default_rng(0)
    for trial in range(60):
        n = int(rng.integers(1, 60))
        pts = rng.integers(0, 6, size=(n, 2)).astype(float)  # coarse grid: many exact ties
        if trial % 3 == 0:
            pts = np.vstack([pts, pts[: n // 2]])  # duplicated points
        np.testing.assert_array_equal(pareto_mask(pts), brute_force_front(pts))


def test_identical_points_kept_or_dropped_together():
    pts = np.array([[1.0, 1.0], [1.0, 1.0], [0.5, 0.5], [0.5, 0.5], [0.0, 2.0]])
    np.testing.assert_array_equal(pareto_mask(pts), [True, True, False, False, True])


def test_three_objectives_and_blocking():
    rng = np.random.default_rng(1)
    pts = rng.random((300, 3)).round(1)
    from pipeline.front.pareto import dominated_mask

    np.testing.assert_array_equal(~dominated_mask(pts, block=7), brute_force_front(pts))


def test_the_two_objective_sort_equals_the_blocked_comparison_bit_for_bit():
    """The O(n log n) path of two objectives against the O(n²) comparison it replaced (three objectives' path, fed
    the same two columns and a constant third), on ties, duplicates, signed zeros and infinities."""
    from pipeline.front.pareto import dominated_mask, front_mask

    rng = np.random.default_rng(2)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, 1.0, -1.0])
    for trial in range(200):
        n = int(rng.integers(1, 400))
        pts = rng.integers(-3, 4, size=(n, 2)).astype(float) if trial % 2 else rng.random((n, 2)).round(2)
        if trial % 5 == 0:
            pts[rng.random(pts.shape) < 0.2] = rng.choice(specials, size=1)
        blocked = dominated_mask(np.column_stack([pts, np.zeros(n)]), block=64)  # a constant third objective changes nothing
        np.testing.assert_array_equal(~front_mask(pts[:, 0], pts[:, 1])[0], blocked)
    assert dominated_mask(np.zeros((0, 2))).shape == (0,)


def test_the_query_and_incremental_forms_agree_with_the_blocked_comparison():
    """`dominated_by` (query form) and `add_to_front` (incremental form) against the O(n²) comparison on the union."""
    from pipeline.front.pareto import add_to_front, dominated_by, dominated_mask

    rng = np.random.default_rng(3)
    for _ in range(200):
        pts = rng.integers(0, 5, size=(int(rng.integers(1, 40)), 2)).astype(float)
        front = np.zeros((0, 2))
        for i, p in enumerate(pts):
            front = add_to_front(front, p)
            seen = pts[: i + 1]
            expected = seen[~dominated_mask(seen)]
            assert sorted(map(tuple, front)) == sorted(map(tuple, expected))
        queries = rng.integers(0, 5, size=(10, 2)).astype(float)
        brute = [bool(((pts >= q).all(axis=1) & (pts > q).any(axis=1)).any()) for q in queries]
        assert dominated_by(pts, queries).tolist() == brute

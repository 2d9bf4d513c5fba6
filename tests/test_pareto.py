import numpy as np

from pipeline.pareto import pareto_mask


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
    from pipeline.pareto import dominated_mask

    np.testing.assert_array_equal(~dominated_mask(pts, block=7), brute_force_front(pts))

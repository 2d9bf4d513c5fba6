import itertools

import numpy as np
import pytest

from pipeline.front.space import Space


def test_grid_is_lexicographic_and_index_roundtrips():
    space = Space(("a", "b", "c"), 4)
    grid = space.grid()
    assert grid.shape == (64, 3)
    assert [tuple(r) for r in grid] == list(itertools.product(range(4), repeat=3))
    for i, theta in enumerate(grid):
        assert space.index(theta) == i
        assert space.theta(i) == tuple(theta)
    np.testing.assert_array_equal(space.indices(grid), np.arange(64))


def test_size_order_and_neighbours():
    space = Space(("a", "b", "c", "d"), 6)
    assert space.size == 1296
    assert Space.order((0, 5, 0, 0)) == 1 and Space.order((1, 5, 1, 1)) == 4
    np.testing.assert_array_equal(Space.order(np.array([[0, 0, 0, 0], [0, 2, 3, 0]])), [0, 2])
    assert space.neighbours((0, 5, 2, 0)) == [(1, 5, 2, 0), (0, 4, 2, 0), (0, 5, 1, 0), (0, 5, 3, 0), (0, 5, 2, 1)]
    # every neighbour differs by exactly 1 in exactly one dimension; corner has n neighbours, interior 2n
    for theta in [tuple(t) for t in space.grid()[::37]]:
        for nb in space.neighbours(theta):
            diff = np.abs(np.subtract(nb, theta))
            assert diff.sum() == 1
    assert len(space.neighbours((0, 0, 0, 0))) == 4 and len(space.neighbours((2, 2, 2, 2))) == 8


@pytest.mark.parametrize("bad, match", [((0, 6, 0, 0), "level 6 of 'b'.*0..5"), ((0, 0, 0), "needs 4"), ((-1, 0, 0, 0), "level -1")])
def test_invalid_configuration_names_the_value(bad, match):
    with pytest.raises(ValueError, match=match):
        Space(("a", "b", "c", "d"), 6).index(bad)


def test_space_needs_two_levels():
    with pytest.raises(ValueError, match="at least 2"):
        Space(("a",), 1)

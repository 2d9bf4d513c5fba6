"""Figs. 7-8: the voxel grid holds exactly P*, each member at its θ, valued by its order."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from pipeline.figures.voxels import front_voxels, plot_front_voxels
from pipeline.front.space import Space
from tests.search.search_fixtures import NAMES4, synthetic_table


@pytest.mark.parametrize("dims", [4, 3, 2])
def test_the_grid_is_the_front(dims):
    space = Space(NAMES4[:dims], 3)
    table = synthetic_table(space)
    grid = front_voxels(table, space.names, 3, "ssim")
    front = table[table["pareto_ssim"]]
    assert (grid > 0).sum() == len(front)
    for theta in itertools.product(range(3), repeat=dims):
        row = table[(table[list(space.names)].to_numpy() == np.array(theta)).all(axis=1)].iloc[0]
        value = grid[tuple(theta) + (0,) * (4 - dims)]
        assert value == (sum(t > 0 for t in theta) + 1 if row["pareto_ssim"] else 0)


def test_the_figure_has_one_cube_per_level_of_the_fourth_dimension(tmp_path):
    space = Space(NAMES4, 3)
    fig = plot_front_voxels(synthetic_table(space), space.names, 3, "kid", "syn / KID")
    assert len(fig.axes) == 3
    fig.savefig(tmp_path / "v.png")


def test_more_than_four_dimensions_is_an_error():
    with pytest.raises(ValueError, match="1 to 4 dimensions"):
        front_voxels(pd.DataFrame(), ["a", "b", "c", "d", "e"], 2, "ssim")
    assert np.array_equal(front_voxels(pd.DataFrame({"a": [1], "pareto_m": [True]}), ["a"], 2, "m")[:, 0, 0, 0], [0, 2])

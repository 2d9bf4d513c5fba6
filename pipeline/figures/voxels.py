"""Where P* lies in Θ (TestNav Figs. 7-8, "4D voxel plots"): one 3-D voxel cube over (θ_1, θ_2, θ_3)
per level of θ_4, a voxel filled for every P* member and coloured by its perturbation order (the number
of active perturbations); the rest of Θ is left empty. Spaces of three dimensions give one cube; of two
or one, the missing axes have one level."""
from __future__ import annotations

from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ORDER_COLOURS = ("#bdbdbd", "#1b9e77", "#7570b3", "#d95f02", "#e7298a")  # order 0 (identity) .. 4


def front_voxels(table: pd.DataFrame, dims: Sequence[str], levels: int, metric: str) -> np.ndarray:
    """The P* members of `metric` as an int array of shape (ℓ, ℓ, ℓ, ℓ') indexed by θ_1..θ_4 (ℓ' = ℓ
    with four dimensions, else 1): the member's order + 1, 0 where θ is not in P*."""
    if not 1 <= len(dims) <= 4:
        raise ValueError(f"voxel plots show spaces of 1 to 4 dimensions; this one has {len(dims)}: {list(dims)}")
    shape = tuple(levels if i < len(dims) else 1 for i in range(4))
    grid = np.zeros(shape, dtype=np.int64)
    front = table[table[f"pareto_{metric}"]]
    for theta in front[list(dims)].to_numpy(dtype=np.int64):
        index = tuple(theta) + (0,) * (4 - len(dims))
        grid[index] = int((theta > 0).sum()) + 1
    return grid


def plot_front_voxels(table: pd.DataFrame, dims: Sequence[str], levels: int, metric: str, title: str) -> plt.Figure:
    """One voxel cube per level of the fourth dimension; P* filled and coloured by order."""
    grid = front_voxels(table, dims, levels, metric)
    cubes = grid.shape[3]
    fig = plt.figure(figsize=(2.6 * cubes, 3.0))
    names = list(dims) + [""] * (4 - len(dims))
    for k in range(cubes):
        ax = fig.add_subplot(1, cubes, k + 1, projection="3d")
        cube = grid[:, :, :, k]
        colours = np.empty(cube.shape, dtype=object)
        for order, colour in enumerate(ORDER_COLOURS, start=1):
            colours[cube == order] = colour
        ax.voxels(cube > 0, facecolors=colours, edgecolor="0.3", linewidth=0.2)
        for axis, n in zip((ax.xaxis, ax.yaxis, ax.zaxis), grid.shape[:3]):
            axis.set_ticks(np.arange(n) + 0.5, labels=[str(v) for v in range(n)])  # a level at its voxel's centre
        ax.set_xlim(0, grid.shape[0]), ax.set_ylim(0, grid.shape[1]), ax.set_zlim(0, grid.shape[2])
        ax.set_xlabel(names[0], fontsize=6, labelpad=-8)
        ax.set_ylabel(names[1], fontsize=6, labelpad=-8)
        ax.set_zlabel(names[2], fontsize=6, labelpad=-8)
        ax.tick_params(labelsize=5, pad=-3)
        ax.set_title(f"{names[3]} = {k}" if names[3] else "", fontsize=7)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in ORDER_COLOURS[: len(dims) + 1]]
    fig.legend(handles, [f"order {i}" for i in range(len(dims) + 1)], loc="lower center", ncol=len(dims) + 1, fontsize=7, frameon=False)
    fig.suptitle(title, fontsize=9)
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.12, top=0.85, wspace=0.05)
    return fig

"""One image under a sample of simulated recapture conditions (the embedded analogue of App. F's Fig. 7, row 4)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from pipeline.perturb.recapture import RecaptureCondition, recapture


def plot_recapture_grid(image: np.ndarray, conditions: Sequence[RecaptureCondition], seed: int,
                        index: int = 0, columns: int = 6) -> Figure:
    """The clean (H, W, 3) uint8 `image` followed by its recaptures under `conditions` (as source image
    `index` with `seed`), `columns` panels a row, each titled with its condition and camera setting."""
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[-1] != 3:
        raise ValueError(f"expected an (H, W, 3) uint8 image, got {image.dtype} {image.shape}")
    panels = [("clean", image)]
    for condition in conditions:
        shot = recapture(image[None], condition, seed, indices=[index])[0]
        panels.append((f"{condition.name}\n{condition.label}", shot))
    columns = max(1, min(columns, len(panels)))
    rows = -(-len(panels) // columns)
    fig = Figure(figsize=(1.9 * columns, 2.1 * rows))
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    for ax, (title, picture) in zip(axes, panels):
        ax.imshow(picture, interpolation="nearest")
        ax.set_title(title, fontsize=6)
    for ax in axes:
        ax.set_axis_off()
    fig.tight_layout()
    return fig

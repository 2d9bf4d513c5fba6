"""SSIM fidelity (TestNav §4.1): SSIM of each perturbed image against its clean original, averaged."""
from __future__ import annotations

import numpy as np
import torch
from torchmetrics.functional.image import structural_similarity_index_measure

from pipeline.models.cnn import to_tensor


def mean_ssim(clean: np.ndarray, perturbed: np.ndarray, batch_size: int = 512) -> float:
    """Mean per-image SSIM (Gaussian window 11, σ 1.5, data range 1) over paired uint8 image stacks."""
    if clean.shape != perturbed.shape:
        raise ValueError(f"clean {clean.shape} and perturbed {perturbed.shape} image stacks differ in shape")
    total = 0.0
    for s in range(0, len(clean), batch_size):
        values = structural_similarity_index_measure(
            to_tensor(perturbed[s : s + batch_size]).double(), to_tensor(clean[s : s + batch_size]).double(),
            data_range=1.0, reduction="none",
        )
        total += float(values.sum())
    return total / len(clean)


class SSIMFidelity:
    """φ_SSIM(T_θ, D) for a fixed clean set D."""

    def __init__(self, clean: np.ndarray) -> None:
        self.clean = clean

    @torch.no_grad()
    def __call__(self, perturbed: np.ndarray) -> float:
        return mean_ssim(self.clean, perturbed)

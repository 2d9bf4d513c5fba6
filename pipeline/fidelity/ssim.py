"""SSIM fidelity (TestNav §4.1): SSIM of each perturbed image against its clean original, averaged.

The definition is torchmetrics' `structural_similarity_index_measure` (Gaussian window 11, σ = 1.5,
k1 = 0.01, k2 = 0.03, reflection padding, mean over every pixel and channel), computed with the
Gaussian window applied separably, as two small matrix products that fold in the reflection padding.
torchmetrics convolves with the dense 11x11 window, which made SSIM the largest cost of the exhaustive
ground truth (1,296 configurations x the whole test set); the separable form is the same filter, and a
test checks it against torchmetrics. On a `device` (`pipeline.runtime.device`) each batch pair and the two window
matrices are moved there, and the per-image values come back to the CPU for the float64 mean.

Per input: `SSIMFidelity.per_input` is the per-image SSIM (float32 values held as float64), and
φ_SSIM is exactly its mean, `float(per_input(x).mean())`. Before the per-input values were kept, the mean
was summed batch by batch; both orders give the same bits whenever every partial sum of the float32 values
is exact in float64, which holds when no image's |SSIM| is nonzero and below n·2^-29 (6.7e-7 for the 360
digits; their smallest is above 0.1): the same bits on every configuration of the digits benchmark.
"""
from __future__ import annotations

import numpy as np
import torch

from pipeline.models.cnn import to_tensor


def gaussian_window(size: int = 11, sigma: float = 1.5) -> torch.Tensor:
    dist = torch.arange((1 - size) / 2, (1 + size) / 2, 1.0)
    g = torch.exp(-((dist / sigma) ** 2) / 2)
    return g / g.sum()


def blur_matrix(n: int, size: int = 11, sigma: float = 1.5, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The (n, n) matrix B such that B @ v is v reflection-padded by (size - 1) / 2 and filtered with the
    1-D Gaussian window ('valid' convolution), i.e. torchmetrics' padding and window along one axis."""
    pad = (size - 1) // 2
    if n <= pad:
        raise ValueError(f"images must be larger than {pad} pixels per side for an SSIM window of {size}, got {n}")
    src = torch.tensor([abs(j - pad) if j < pad else (2 * (n - 1) - (j - pad) if j - pad >= n else j - pad) for j in range(n + 2 * pad)])
    padding = torch.zeros(n + 2 * pad, n, dtype=torch.float64)
    padding[torch.arange(n + 2 * pad), src] = 1.0
    window = torch.zeros(n, n + 2 * pad, dtype=torch.float64)
    g = gaussian_window(size, sigma).double()
    for i in range(n):
        window[i, i : i + size] = g
    return (window @ padding).to(dtype)


def ssim_per_image(preds: torch.Tensor, target: torch.Tensor, data_range: float = 1.0, k1: float = 0.01,
                   k2: float = 0.03, size: int = 11, sigma: float = 1.5) -> torch.Tensor:
    """SSIM of each image pair of two (N, C, H, W) float tensors, as an (N,) tensor."""
    n, c, h, w = preds.shape
    stack = torch.cat((preds, target, preds * preds, target * target, preds * target))  # (5N, C, H, W)
    # the separable window as two small matrix products: rows (B_h @ X) and columns (X @ B_w^T)
    rows, cols = (blur_matrix(k, size, sigma, preds.dtype).to(preds.device) for k in (h, w))
    blurred = (rows @ stack @ cols.T).reshape(5, n, c, h, w)
    mu_x, mu_y, xx, yy, xy = blurred
    c1, c2 = (k1 * data_range) ** 2, (k2 * data_range) ** 2
    var_x = torch.clamp(xx - mu_x**2, min=0.0)
    var_y = torch.clamp(yy - mu_y**2, min=0.0)
    cov = xy - mu_x * mu_y
    index = ((2 * mu_x * mu_y + c1) * (2 * cov + c2)) / ((mu_x**2 + mu_y**2 + c1) * (var_x + var_y + c2))
    return index.reshape(n, -1).mean(-1)


@torch.no_grad()
def ssim_values(clean: np.ndarray, perturbed: np.ndarray, batch_size: int = 512, device: str | torch.device = "cpu") -> np.ndarray:
    """Per-image SSIM (n,) float64 of paired uint8 image stacks (data range [0, 1]), computed on `device`."""
    if clean.shape != perturbed.shape:
        raise ValueError(f"clean {clean.shape} and perturbed {perturbed.shape} image stacks differ in shape")
    parts = []
    for s in range(0, len(clean), batch_size):
        pair = (to_tensor(x[s : s + batch_size]).to(device) for x in (perturbed, clean))
        parts.append(ssim_per_image(*pair).cpu().double().numpy())
    return np.concatenate(parts)


def mean_ssim(clean: np.ndarray, perturbed: np.ndarray, batch_size: int = 512, device: str | torch.device = "cpu") -> float:
    """Mean per-image SSIM over paired uint8 image stacks (data range [0, 1]), computed on `device`."""
    return float(ssim_values(clean, perturbed, batch_size, device).mean())


class SSIMFidelity:
    """φ_SSIM(T_θ, D) for a fixed clean set D, in batches of `batch_size` image pairs on `device`.

    Per input: `per_input(x)` is the SSIM of each image against its clean original, and φ_SSIM is exactly
    its mean (`aggregate = "mean"`): take the mean of `per_input` to have both from one pass."""

    aggregate = "mean"

    def __init__(self, clean: np.ndarray, batch_size: int = 512, device: str | torch.device = "cpu") -> None:
        self.clean, self.batch_size, self.device = clean, int(batch_size), device

    def per_input(self, perturbed: np.ndarray) -> np.ndarray:
        """SSIM of each perturbed image against its clean original, shape (n,), float64."""
        return ssim_values(self.clean, perturbed, self.batch_size, self.device)

    def __call__(self, perturbed: np.ndarray) -> float:
        return mean_ssim(self.clean, perturbed, self.batch_size, self.device)

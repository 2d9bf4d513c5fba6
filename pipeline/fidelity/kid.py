"""KID fidelity (TestNav §4.1): Kernel Inception Distance between the clean and perturbed feature sets,
computed once per configuration with torchmetrics and negated so that higher means closer to D.

The feature extractor is any module mapping (N, 3, H, W) float images in [0, 1] to (N, d) features:
the embedded default uses a separately trained digits CNN; real images use Inception features.
On a `device` (`pipeline.runtime.device`) the metric, with its feature network and feature states, lives there and
each batch is moved there; the subsets are drawn on the CPU generator as before, so the same subsets
are scored on every device.
"""
from __future__ import annotations

import warnings

import numpy as np
import torch
from torch import nn

from pipeline.models.cnn import to_tensor


class KIDFidelity:
    """φ_KID(T_θ, D) = −KID(features(D), features(T_θ)); clean features are extracted once.

    torchmetrics draws its subsets with the global torch RNG; it is seeded with `seed` before every
    compute so that a configuration's value does not depend on evaluation order. When the subset size
    covers the whole clean set, every subset is a permutation of the full set and the unbiased MMD
    estimate is the same for each, so one subset is computed instead of `subsets` identical ones.

    A set statistic (`aggregate = "set"`): the unbiased MMD² sums kernel values over pairs of images of
    the two sets, so no per-input value adds up to it and there is no `per_input`. A paired
    bootstrap over the inputs holds each configuration's KID fixed (`pipeline.front.membership`)."""

    aggregate = "set"

    def __init__(self, clean: np.ndarray, feature: nn.Module, subset_size: int = 1000, subsets: int = 100,
                 seed: int = 0, batch_size: int = 512, device: str | torch.device = "cpu") -> None:
        from torchmetrics.image.kid import KernelInceptionDistance  # here: torchmetrics takes 1.5 s to import, text needs none

        self.subset_size = min(int(subset_size), len(clean))
        self.seed, self.batch_size, self.device = seed, batch_size, device
        subsets = 1 if self.subset_size == len(clean) else int(subsets)
        with warnings.catch_warnings():  # its warning that features are kept in memory is what we want here
            warnings.filterwarnings("ignore", message=".*will save all extracted features", category=UserWarning)
            self.metric = KernelInceptionDistance(feature=feature.eval(), subsets=subsets, subset_size=self.subset_size,
                                                  reset_real_features=False).to(device)
        self._update(clean, real=True)

    @torch.no_grad()
    def _update(self, images: np.ndarray, real: bool) -> None:
        for s in range(0, len(images), self.batch_size):
            self.metric.update(to_tensor(images[s : s + self.batch_size]).to(self.device), real=real)

    @torch.no_grad()
    def __call__(self, perturbed: np.ndarray) -> float:
        self.metric.reset()
        self._update(perturbed, real=False)
        state = torch.random.get_rng_state()
        torch.manual_seed(self.seed)
        try:
            kid_mean, _ = self.metric.compute()
        finally:
            torch.random.set_rng_state(state)
        return -float(kid_mean)


class EmbeddingFeatures(nn.Module):
    """Adapter exposing a model's `embed` method as the forward pass torchmetrics calls."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model.embed(x)

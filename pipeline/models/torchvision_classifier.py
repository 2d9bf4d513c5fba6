"""Adapter for torchvision classifiers (real-world vision configs): a named architecture, weights from a
local file (never downloaded), ImageNet normalisation, batched class probabilities."""
from __future__ import annotations

from pathlib import Path

import torch
import torchvision
from torch import nn

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


class TorchvisionClassifier(nn.Module):
    """`arch` from torchvision.models with `num_classes` outputs; inputs are [0, 1] images at any size,
    resized to `input_size` and normalised with ImageNet statistics."""

    def __init__(self, arch: str, num_classes: int, weights_path: str | Path | None = None, input_size: int = 224) -> None:
        super().__init__()
        valid = torchvision.models.list_models(module=torchvision.models)
        if arch not in valid:
            raise ValueError(f"unknown torchvision architecture {arch!r}; valid choices include: {', '.join(sorted(valid)[:20])}, …")
        self.net = torchvision.models.get_model(arch, weights=None, num_classes=num_classes)
        if weights_path is not None:
            self.net.load_state_dict(torch.load(Path(weights_path), map_location="cpu", weights_only=True))
        self.input_size = input_size
        self.register_buffer("mean", torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor(IMAGENET_STD).view(1, 3, 1, 1))
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.interpolate(x, size=(self.input_size, self.input_size), mode="bilinear", align_corners=False)
        return self.net((x - self.mean) / self.std)

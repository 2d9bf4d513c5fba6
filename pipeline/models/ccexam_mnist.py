"""A trained MNIST classifier that is not ours: `ccexam` 1.0.0's `MNISTNet` (two 3x3 convolutions with max
pooling, then 3136-128-10; MIT licence) with the weights the package ships (`ccexam/weights/mnist.pth`).

It reads (N, 1, 28, 28) float32 normalised as it was trained, (x / 255 - 0.1307) / 0.3081 (MNIST's mean and
standard deviation). `CCExamMNIST` takes the benchmark's (N, H, W, 3) uint8 images: the grey level is the mean of
the three channels (the clean digits have equal channels; a perturbation may not keep them equal), and images
larger than 28 x 28 (the 32 x 32 that `benchmark.adapt_inputs=pad` makes for ImageNet-C) are cropped back to
their centre 28 x 28, which is the clean digit exactly."""
from __future__ import annotations

from importlib.resources import files

import numpy as np
import torch
from torch import nn

from pipeline.models.cnn import predict_proba
from pipeline.runtime.device import resolve_device

SIDE = 28
MEAN, STD = 0.1307, 0.3081


class _GreyCentre(nn.Module):
    """(N, 3, H, W) in [0, 1] → the wrapped network's logits on the centre 28 x 28 of the channel mean."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        top, left = (x.shape[2] - SIDE) // 2, (x.shape[3] - SIDE) // 2
        grey = x[:, :, top:top + SIDE, left:left + SIDE].mean(dim=1, keepdim=True)
        return self.net((grey - MEAN) / STD)


def mnist_net() -> nn.Module:
    """ccexam's MNISTNet with its shipped weights, in eval mode."""
    from ccexam.models import MNISTNet

    net = MNISTNet(input_size=SIDE)
    with files("ccexam").joinpath("weights/mnist.pth").open("rb") as f:
        net.load_state_dict(torch.load(f, map_location="cpu", weights_only=True))
    return net.eval()


class CCExamMNIST:
    """The model under test of `benchmark=mnist`: `predict_proba` of ccexam's MNISTNet on (N, H, W, 3) uint8
    images with H, W ≥ 28."""

    def __init__(self, device: str = "cpu", batch_size: int = 512) -> None:
        self.batch_size = int(batch_size)
        self.net = _GreyCentre(mnist_net()).to(resolve_device(device, "model.device"))

    def predict_proba(self, images: np.ndarray) -> np.ndarray:
        if images.ndim != 4 or min(images.shape[1:3]) < SIDE:
            raise ValueError(f"ccexam's MNISTNet needs (N, H, W, 3) images of at least {SIDE}x{SIDE}, got {images.shape}")
        return predict_proba(self.net, images, self.batch_size)

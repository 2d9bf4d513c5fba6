"""The embedded digits classifier (the model under test) and the KID feature network.

Both are small CNNs trained on CPU in seconds. The feature network is a separately trained model
with its own seed and width (never the model under test), whose penultimate activations are the
feature space for KID on the embedded benchmark (the Inception features of the paper are the config
for real images).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn
from tqdm import trange


class SmallCNN(nn.Module):
    """conv(3→w)-pool-conv(w→2w)-pool-fc(64)-fc(n_classes) over 32x32 RGB inputs in [0, 1]."""

    def __init__(self, width: int = 32, n_classes: int = 10, image_size: int = 32) -> None:
        super().__init__()
        self.width, self.n_classes, self.image_size = width, n_classes, image_size
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(2 * width * (image_size // 4) ** 2, 64), nn.ReLU(),
        )
        self.head = nn.Linear(64, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """Penultimate activations (64 features), used as the KID feature space."""
        return self.features(x)


def to_tensor(images: np.ndarray) -> torch.Tensor:
    """(N, H, W, 3) uint8 → (N, 3, H, W) float32 in [0, 1]."""
    if images.dtype != np.uint8 or images.ndim != 4 or images.shape[-1] != 3:
        raise ValueError(f"expected (N, H, W, 3) uint8 images, got {images.dtype} {images.shape}")
    return torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float().div_(255.0)


def train_cnn(
    images: np.ndarray, labels: np.ndarray, *, seed: int, width: int = 16, epochs: int = 15,
    batch_size: int = 64, lr: float = 2e-3, progress: bool = False,
) -> SmallCNN:
    """Train a SmallCNN with Adam; deterministic for a given seed on a given machine."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = SmallCNN(width=width, n_classes=int(labels.max()) + 1, image_size=images.shape[1])
    x, y = to_tensor(images), torch.from_numpy(labels.astype(np.int64))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    for _ in trange(epochs, desc=f"train cnn w={width} seed={seed}", disable=not progress):
        order = torch.randperm(len(y), generator=gen)
        for start in range(0, len(y), batch_size):
            batch = order[start : start + batch_size]
            opt.zero_grad()
            loss_fn(model(x[batch]), y[batch]).backward()
            opt.step()
    model.eval()
    return model


def module_device(model: nn.Module) -> torch.device:
    """The device a module's parameters live on (the CPU for a module without parameters)."""
    return next((p.device for p in model.parameters()), torch.device("cpu"))


@torch.no_grad()
def predict_proba(model: nn.Module, images: np.ndarray, batch_size: int = 512) -> np.ndarray:
    """Class probabilities (N, n_classes) as float64, batched, on the device the model lives on: each batch
    goes there and its logits come back to the CPU for the softmax (`pipeline.runtime.device`)."""
    model.eval()
    device = module_device(model)
    out = [torch.softmax(model(to_tensor(images[s : s + batch_size]).to(device)).cpu(), dim=1) for s in range(0, len(images), batch_size)]
    return torch.cat(out).double().numpy() if out else np.zeros((0, getattr(model, "n_classes", 0)))


def save_cnn(model: SmallCNN, path: str | Path) -> None:
    """Save architecture arguments and weights atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save({"width": model.width, "n_classes": model.n_classes, "image_size": model.image_size,
                "state_dict": model.state_dict()}, tmp)
    tmp.replace(path)


def load_cnn(path: str | Path) -> SmallCNN:
    blob = torch.load(Path(path), map_location="cpu", weights_only=True)
    model = SmallCNN(width=blob["width"], n_classes=blob["n_classes"], image_size=blob["image_size"])
    model.load_state_dict(blob["state_dict"])
    return model.eval()

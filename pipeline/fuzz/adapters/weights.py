"""The digits CNN seen through its weights: one multiplicative scale per parameter tensor.

Parameter i scales tensor i of the trained network (θ_i = 1 is the trained model): the chapter's
log-normal perturbation is then a per-layer multiplicative drift of size σ, the kind quantisation or
fine-tuning drift produces, and the threshold search asks how far one tensor may be rescaled before
some digit's error rate moves by more than the tolerance.

Inactive = scale 0: the tensor is removed. What that means depends on the layer:
- a convolution's or linear layer's weight at 0 removes the layer's map: the layer outputs its bias
  whatever its input, so nothing about the image reaches the layers after it and the network predicts
  one class for every image (for the last layer, the class of its largest bias);
- a bias at 0 removes the layer's offset: the layer becomes purely linear;
- (a normalisation layer's weight at 0 would leave its shift β only; this CNN has none).
Removing a layer in the sense of skipping it is not possible here: no layer of this CNN maps a shape to
itself. The scales act on copies: the model's own tensors are never modified.

Error = test error rate; targets = error rate within each true class (`digit_0` … `digit_9`).
Dimension names are `<kind><k>.<tensor>`, e.g. `conv1.weight`, `linear2.bias`, numbered per layer kind
in the order the network applies them.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import torch
from torch import nn
from torch.func import functional_call

from pipeline.fuzz.adapters import (
    Adapter,
    check_images,
    class_names,
    per_class_error_rates,
)
from pipeline.models.cnn import SmallCNN, to_tensor

INACTIVE = 0.0
_KINDS = ((nn.Conv2d, "conv"), (nn.Linear, "linear"), (nn.BatchNorm2d, "bn"), (nn.BatchNorm1d, "bn"), (nn.LayerNorm, "ln"))


def tensor_names(model: nn.Module) -> list[tuple[str, str]]:
    """(readable name, parameter name) of every parameter tensor, in registration order."""
    counts: dict[str, int] = {}
    readable: dict[str, str] = {}
    for module_name, module in model.named_modules():
        kind = next((k for cls, k in _KINDS if isinstance(module, cls)), None)
        if kind is None or not list(module.parameters(recurse=False)):
            continue
        counts[kind] = counts.get(kind, 0) + 1
        readable[module_name] = f"{kind}{counts[kind]}"
    out = []
    for name, _ in model.named_parameters():
        module_name, _, tensor = name.rpartition(".")
        out.append((f"{readable.get(module_name, module_name or 'model')}.{tensor}", name))
    return out


class ScaledSequential:
    """Forward passes of a chain of layers with per-tensor scales, reusing what the scales leave unchanged.

    An affine layer (convolution or linear) with scales (s_w, s_b) computes s_w·(W ⋆ h) + s_b·b, where
    the product W ⋆ h depends only on the scales of the layers before it. It is cached under those
    scales (a small LRU per layer, about `cache_mb` each), and a pass starts at the deepest layer whose
    product is cached: a threshold scan of the last layer costs one small matrix
    product, and a subset enumeration (scales 0 or 1) computes each convolution a handful of times.
    Results never depend on what is cached.
    """

    def __init__(self, layers: list[nn.Module], x: torch.Tensor, cache_mb: float = 64.0) -> None:
        self.layers, self.x = layers, x
        self.affine = [i for i, layer in enumerate(layers) if _affine(layer)]
        self.cache_bytes = cache_mb * 2**20
        self._cache: dict[int, OrderedDict] = {i: OrderedDict() for i in self.affine}

    def tensors(self) -> list[tuple[int, str]]:
        """(layer index, 'weight' | 'bias') of every parameter tensor, in forward order."""
        return [(i, t) for i in self.affine for t in ("weight", "bias") if getattr(self.layers[i], t) is not None]

    def _store(self, i: int, key: tuple, z: torch.Tensor) -> None:
        cache = self._cache[i]
        cache[key] = z
        room = max(2, int(self.cache_bytes // max(1, z.nelement() * z.element_size())))
        while len(cache) > room:
            cache.popitem(last=False)

    @torch.no_grad()
    def logits(self, scales: dict[tuple[int, str], float]) -> torch.Tensor:
        keys, key = {}, ()
        for i in self.affine:  # the scales upstream of each affine layer
            keys[i] = key
            key = key + tuple(scales[(i, t)] for t in ("weight", "bias") if getattr(self.layers[i], t) is not None)
        start = next((i for i in reversed(self.affine) if keys[i] in self._cache[i]), None)
        h = self.x
        for i in range(start if start is not None else 0, len(self.layers)):
            layer = self.layers[i]
            if not _affine(layer):
                h = layer(h)
                continue
            cache = self._cache[i]
            if keys[i] in cache:
                cache.move_to_end(keys[i])
                z = cache[keys[i]]
            else:
                z = layer._conv_forward(h, layer.weight, None) if isinstance(layer, nn.Conv2d) else nn.functional.linear(h, layer.weight)
                self._store(i, keys[i], z)
            h = z * scales[(i, "weight")]
            if layer.bias is not None:
                h = h + (layer.bias * scales[(i, "bias")]).view((1, -1) + (1,) * (h.dim() - 2))
        return h


def _affine(layer: nn.Module) -> bool:
    return isinstance(layer, (nn.Conv2d, nn.Linear))


def chain_of(model: nn.Module) -> list[nn.Module] | None:
    """The model as a chain of layers when its forward is one (the digits CNN, any nn.Sequential), else None."""
    if isinstance(model, SmallCNN):
        layers = list(model.features) + [model.head]
    elif isinstance(model, nn.Sequential):
        layers = list(model)
    else:
        return None
    parametrised = [m for m in layers if list(m.parameters(recurse=True))]
    return layers if all(_affine(m) for m in parametrised) else None


def weights_adapter(
    model: nn.Module, images: np.ndarray, labels: np.ndarray, batch_size: int = 512, reuse: bool = True
) -> Adapter:
    """The CNN on (images, labels) as an Adapter whose parameters are per-tensor scales.

    A chain of convolutions and linear layers (the digits CNN) is evaluated by `ScaledSequential`
    (when `reuse`); any other module, or `reuse=False`, by `torch.func.functional_call` with scaled
    copies of its tensors (a full forward pass per evaluation: the reference the benchmark compares).
    """
    images, labels = check_images(images, labels)
    model = model.eval()
    names = tensor_names(model)
    n_classes = int(getattr(model, "n_classes", int(labels.max()) + 1))
    x = to_tensor(images)
    chain = chain_of(model) if reuse else None
    if chain is not None:
        runner = ScaledSequential(chain, x)
        slots = runner.tensors()

        def logits(scales: np.ndarray) -> torch.Tensor:
            return runner.logits({slot: float(s) for slot, s in zip(slots, scales)})
    else:
        trained = {p: t.detach().clone() for p, t in model.named_parameters()}

        @torch.no_grad()
        def logits(scales: np.ndarray) -> torch.Tensor:
            params = {p: trained[p] * float(s) for (_, p), s in zip(names, scales)}
            return torch.cat([functional_call(model, params, (x[s : s + batch_size],)) for s in range(0, len(x), batch_size)])

    def evaluate(scales: np.ndarray) -> tuple[float, dict[str, float]]:
        scales = np.asarray(scales, dtype=float)
        if scales.shape != (len(names),):
            raise ValueError(f"expected {len(names)} scales ({[n for n, _ in names]}), got shape {scales.shape}")
        return per_class_error_rates(logits(scales).argmax(1).numpy(), labels, n_classes)

    return Adapter(
        name="weights", dim_names=tuple(n for n, _ in names), evaluate_fn=evaluate, evaluate_batch_fn=None,
        inactive_value=INACTIVE, candidate_values=(1.0,), operating_point=tuple(1.0 for _ in names),
        target_names=class_names(n_classes), error_name="error rate",
    )

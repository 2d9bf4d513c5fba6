"""One forward pass, two products: the model's logits (for the task metric ψ) and the activations of
named layers (for the adequacy metrics), captured with torch forward hooks, so measuring adequacy
never costs a second inference.

A layer is a module name from `model.named_modules()` (for the digits CNN: `features.1`, `features.4`,
`features.8`). Its output of shape (N, C, *spatial) — a conv feature map — is reduced to the mean over
the spatial positions, one value per channel (N, C): a channel is one neuron, as in the usual DeepGauge
and Kim et al. implementations for conv layers, and the per-channel mean keeps the profile and the
traces small whatever the image size. Outputs of shape (N, F) are kept as they are. The reduction runs
inside the hook, so full feature maps are never stored.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import torch
from torch import nn


def _reduce(output: torch.Tensor) -> torch.Tensor:
    out = output.detach()
    if out.ndim > 2:
        return out.flatten(2).mean(dim=2)
    return out[:, None] if out.ndim == 1 else out


@torch.no_grad()
def capture(model: nn.Module, layers: Sequence[str], inputs: Any, batch_size: int = 512,
            transform: Callable[[Any], torch.Tensor] | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(logits (N, n_classes), {layer: (N, n_neurons)}) from one forward pass per batch of `inputs`.

    `inputs` is anything sliceable with a length (a numpy array, a tensor); `transform` maps a slice to
    the model's input tensor (for the digits CNN, `pipeline.models.cnn.to_tensor` on uint8 images;
    default `torch.as_tensor`). The model runs in eval mode without gradients and gets its previous mode
    back afterwards. A layer that runs other than exactly once per forward pass (unused, or a module
    reused inside the model) is refused: its activations would be ambiguous."""
    names = list(layers)
    modules = dict(model.named_modules())
    unknown = [name for name in names if name not in modules]
    if unknown or len(set(names)) != len(names):
        raise ValueError(f"layers {names} must be distinct module names of the model; unknown: {unknown}")
    if len(inputs) == 0:
        raise ValueError("no inputs to run")
    if int(batch_size) != batch_size or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size}")
    transform = transform or torch.as_tensor
    device = next((p.device for p in model.parameters()), torch.device("cpu"))
    seen: dict[str, list[torch.Tensor]] = {name: [] for name in names}

    def hook_for(name: str):
        def hook(module: nn.Module, args: Any, output: Any) -> None:
            if not isinstance(output, torch.Tensor):
                raise TypeError(f"layer {name!r} returns {type(output).__name__}, not a tensor")
            seen[name].append(_reduce(output))
        return hook

    handles = [modules[name].register_forward_hook(hook_for(name)) for name in names]
    was_training = model.training
    model.eval()
    logits: list[torch.Tensor] = []
    acts: dict[str, list[torch.Tensor]] = {name: [] for name in names}
    try:
        for start in range(0, len(inputs), int(batch_size)):
            for name in names:
                seen[name].clear()
            logits.append(model(transform(inputs[start : start + int(batch_size)]).to(device)).detach())
            for name in names:
                if len(seen[name]) != 1:
                    raise ValueError(f"layer {name!r} ran {len(seen[name])} times in one forward pass, expected once")
                acts[name].append(seen[name][0])
    finally:
        for handle in handles:
            handle.remove()
        model.train(was_training)
    return (torch.cat(logits).cpu().numpy(),
            {name: torch.cat(parts).cpu().numpy() for name, parts in acts.items()})

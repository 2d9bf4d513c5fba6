"""Inference on one vendor-independent matrix-product path: a model's `Linear` layers computed by numpy's
OpenBLAS, whose kernel set `OPENBLAS_CORETYPE=Haswell` fixes on every x86-64 CPU with AVX2.

torch's own CPU products go to MKL, which gives the same bits on Intel and AMD CPUs only in its slow
`COMPATIBLE` mode (the pinned one, `pipeline.runtime.numerics`), and to oneDNN, which gives none. OpenBLAS's Haswell
kernels are the same code on every such CPU and run 2-4 times faster than MKL's `COMPATIBLE` path
(docs/reproducibility.md), so the text encoder's forward pass, the bulk of the replication's work, takes this
path. Convolutions gain nothing from it (numpy's im2col and product cost what MKL's `COMPATIBLE` path costs)
and stay on torch's, as does training.

A row's product depends on its position modulo `ROW_BLOCK` in the operand (OpenBLAS's Haswell kernel
computes blocks of rows together), so each item's rows are padded to a multiple of `ROW_BLOCK`: the rows of
one sequence (a text's tokens, an image's pixels) then get the same bits whatever else is in the batch.
"""
from __future__ import annotations

import copy

import numpy as np
import torch
from torch import nn

ROW_BLOCK = 12  # rows OpenBLAS's Haswell SGEMM computes together (measured: tests/models/test_portable_blas.py)


def aligned_product(x: np.ndarray, wt: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """x (..., T, K) @ wt (K, N) + bias, float32, each item's T rows padded to a multiple of `ROW_BLOCK`."""
    *lead, rows, k = x.shape
    padded = -(-rows // ROW_BLOCK) * ROW_BLOCK
    items = int(np.prod(lead)) if lead else 1
    if padded == rows:
        a = np.ascontiguousarray(x, dtype=np.float32).reshape(items * rows, k)
    else:
        a = np.zeros((items, padded, k), dtype=np.float32)
        a[:, :rows] = x.reshape(items, rows, k)
        a = a.reshape(items * padded, k)
    out = a @ wt
    if bias is not None:
        out += bias
    return out.reshape(items, padded, -1)[:, :rows].reshape(*lead, rows, -1)


class PortableLinear(nn.Module):
    """`nn.Linear` for inference on the OpenBLAS path (module docstring)."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        self.wt = np.ascontiguousarray(linear.weight.detach().cpu().numpy().T, dtype=np.float32)
        self.bias = None if linear.bias is None else linear.bias.detach().cpu().numpy().astype(np.float32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x if x.dim() >= 2 else x[None]
        out = torch.from_numpy(aligned_product(x2.detach().contiguous().numpy(), self.wt, self.bias))
        return out if x.dim() >= 2 else out[0]


def portable(module: nn.Module) -> nn.Module:
    """A copy of `module` for CPU inference whose `Linear` layers take the OpenBLAS path; the original keeps
    torch's layers (for training, or another device)."""
    twin = copy.deepcopy(module).eval()
    for parent in list(twin.modules()):
        for name, child in list(parent.named_children()):
            if type(child) is nn.Linear:
                setattr(parent, name, PortableLinear(child))
    return twin

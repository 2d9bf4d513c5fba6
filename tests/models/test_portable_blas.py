"""The OpenBLAS inference path: torch's numbers to float32 rounding, and one item's rows with the same bits
whatever else is in the product."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from pipeline.models.portable_blas import ROW_BLOCK, PortableLinear, aligned_product, portable


def test_rows_are_computed_in_blocks_of_row_block() -> None:
    """The premise of the padding: OpenBLAS's pinned kernel gives a row the same bits as in a larger product when
    the product's rows are a multiple of ROW_BLOCK, and not for every other count."""
    rng = np.random.default_rng(0)
    x, wt = rng.standard_normal((96, 384), dtype=np.float32), rng.standard_normal((384, 384), dtype=np.float32)
    full = x @ wt
    same = [m for m in range(1, 96) if np.array_equal(x[:m] @ wt, full[:m])]
    assert same and all(m % ROW_BLOCK == 0 for m in same)
    assert any(not np.array_equal(x[:m] @ wt, full[:m]) for m in range(1, ROW_BLOCK))


def test_an_items_rows_get_the_same_bits_alone_and_in_any_batch() -> None:
    rng = np.random.default_rng(1)
    wt, bias = rng.standard_normal((64, 48), dtype=np.float32), rng.standard_normal(48, dtype=np.float32)
    for rows in (1, 5, 12, 13, 30):
        batch = rng.standard_normal((7, rows, 64), dtype=np.float32)
        together = aligned_product(batch, wt, bias)
        assert together.shape == (7, rows, 48)
        for i in range(7):
            assert np.array_equal(aligned_product(batch[i], wt, bias), together[i])
            assert np.array_equal(aligned_product(batch[i : i + 3], wt, bias)[0], together[i])
        np.testing.assert_allclose(together, batch @ wt + bias, rtol=1e-5, atol=1e-5)


def test_portable_copy_matches_torch_and_leaves_the_original() -> None:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(20, 30), nn.GELU(), nn.Linear(30, 4, bias=False)).eval()
    twin = portable(net)
    assert all(type(m) is nn.Linear for m in net if isinstance(m, nn.Linear | PortableLinear))
    assert sum(isinstance(m, PortableLinear) for m in twin) == 2
    x = torch.randn(3, 9, 20)
    with torch.inference_mode():
        torch.testing.assert_close(twin(x), net(x), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(twin(x[0, 0]), net(x[0, 0]), rtol=1e-5, atol=1e-6)  # a 1-D input too

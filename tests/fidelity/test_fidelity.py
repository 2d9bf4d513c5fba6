import numpy as np
import torch
from torchmetrics.functional.image import structural_similarity_index_measure
from torchmetrics.image.kid import poly_mmd

from pipeline.fidelity.kid import KIDFidelity
from pipeline.fidelity.ssim import mean_ssim, ssim_per_image
from pipeline.models.cnn import to_tensor


def test_ssim_matches_torchmetrics_on_odd_shapes():
    gen = torch.Generator().manual_seed(0)
    for shape in [(4, 3, 32, 32), (2, 1, 17, 29), (3, 3, 12, 12)]:
        a, b = torch.rand(shape, generator=gen), torch.rand(shape, generator=gen)
        b = 0.7 * a + 0.3 * b  # related images: SSIM well away from 0
        ref = structural_similarity_index_measure(a, b, data_range=1.0, reduction="none")
        torch.testing.assert_close(ssim_per_image(a, b), ref, atol=1e-5, rtol=0)


def test_mean_ssim_identity_and_average():
    rng = np.random.default_rng(0)
    clean = rng.integers(0, 256, (6, 32, 32, 3), dtype=np.uint8)
    assert mean_ssim(clean, clean) == 1.0
    noisy = np.clip(clean.astype(int) + rng.integers(-40, 40, clean.shape), 0, 255).astype(np.uint8)
    per = structural_similarity_index_measure(to_tensor(noisy), to_tensor(clean), data_range=1.0, reduction="none")
    assert abs(mean_ssim(clean, noisy, batch_size=4) - float(per.mean())) < 1e-5


class Flatten(torch.nn.Module):
    def forward(self, x):
        return x.flatten(1)[:, :16] * 10


def test_kid_is_negated_unbiased_mmd_of_features():
    rng = np.random.default_rng(1)
    clean = rng.integers(0, 256, (40, 8, 8, 3), dtype=np.uint8)
    shifted = np.clip(clean.astype(int) + 60, 0, 255).astype(np.uint8)
    phi = KIDFidelity(clean, Flatten(), subset_size=1000, subsets=100)
    f_real, f_fake = Flatten()(to_tensor(clean)), Flatten()(to_tensor(shifted))
    expected = -float(poly_mmd(f_real, f_fake))
    assert abs(phi(shifted) - expected) < 1e-4 * max(1.0, abs(expected))
    assert phi(shifted) < phi(clean)  # closer to D means higher fidelity
    assert phi(shifted) == phi(shifted)  # no state carried between configurations


def test_kid_with_subsets_is_seeded():
    rng = np.random.default_rng(2)
    clean = rng.integers(0, 256, (30, 8, 8, 3), dtype=np.uint8)
    other = rng.integers(0, 256, (30, 8, 8, 3), dtype=np.uint8)
    a = KIDFidelity(clean, Flatten(), subset_size=10, subsets=20, seed=5)
    b = KIDFidelity(clean, Flatten(), subset_size=10, subsets=20, seed=5)
    torch.manual_seed(123)
    first = a(other)
    torch.manual_seed(999)
    assert b(other) == first

from pipeline.numerics import configure_torch, pinned

assert pinned(), "pytest runs with `-p pipeline.pin` (pyproject.toml): tests see the numbers the stages produce"
configure_torch()

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import pytest  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """benchmark=tiny prepared into a temporary folder (digits CNN, KID features, adequacy profile), once
    per test module: (spec, folder)."""
    from pipeline.preparation import prepare
    from pipeline.stages.runner import benchmark_spec, compose_job

    folder = tmp_path_factory.mktemp("tiny")
    spec = benchmark_spec(compose_job(["benchmark=tiny", "model.epochs=1", "benchmark.features.epochs=1"]))
    prepare(spec, folder, progress=False)
    return spec, folder


def _gemm_rows_batch_independent() -> bool:
    """Whether the pinned MKL GEMM gives every row of a product the same bits whatever the number of rows beside it
    (docs/reproducibility.md: false on an AMD CPU, whose AVX2 path gives products of 1-3 rows other bits even in
    MKL's STRICT mode)."""
    import torch

    g = torch.Generator().manual_seed(0)
    w, x = torch.randn(384, 384, generator=g), torch.randn(64, 384, generator=g)
    full = torch.nn.functional.linear(x, w)
    return all(torch.equal(torch.nn.functional.linear(x[:k], w), full[:k]) for k in range(1, 64))


@pytest.fixture(scope="session")
def batch_invariant_blas() -> None:
    """Skips a test of the text encoder's batch invariance on a host where the pinned GEMM itself is not (there the
    committed md5s do not reproduce either: docs/reproducibility.md); everywhere else the test runs."""
    if not _gemm_rows_batch_independent():
        pytest.skip("this host's pinned MKL GEMM gives a row other bits in a batch of another size even under "
                    "MKL_CBWR=AVX2,STRICT, as on AMD CPUs for 1-3 rows: outside what docs/reproducibility.md covers")

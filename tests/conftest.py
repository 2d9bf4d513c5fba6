from pipeline.runtime.numerics import configure_torch, pinned

assert pinned(), "pytest runs with `-p pipeline.runtime.pin` (pyproject.toml): tests see the numbers the stages produce"
configure_torch()

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import pytest  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """benchmark=tiny prepared into a temporary folder (digits CNN, KID features, adequacy profile), once
    per test module: (spec, folder)."""
    from pipeline.benchmark.preparation import prepare
    from pipeline.stages.runner import benchmark_spec, compose_job

    folder = tmp_path_factory.mktemp("tiny")
    spec = benchmark_spec(compose_job(["benchmark=tiny", "model.epochs=1", "benchmark.features.epochs=1"]))
    prepare(spec, folder, progress=False)
    return spec, folder

"""The adequacy metrics in the ground truth: prepare writes the training profile, and every configuration's
row gets `adequacy_<metric>` from the forward pass that gives ψ, with ψ unchanged."""
from __future__ import annotations

import dataclasses

import numpy as np

from pipeline.adequacy import ActivationProfile
from pipeline.benchmark.build import build_benchmark


def test_prepare_writes_the_training_profile(tiny):
    spec, folder = tiny
    profile = ActivationProfile.load(folder / "adequacy_profile.npz")
    assert set(profile.layers) == {"features.1", "features.4", "features.8"}


def test_rows_carry_every_adequacy_metric_and_the_same_psi(tiny):
    spec, folder = tiny
    bench = build_benchmark(spec, folder)
    plain = dataclasses.replace(bench, observe=None)
    names = list(spec["adequacy"]["metrics"])
    for theta in [(0, 0), (2, 1), (1, 2)]:
        row, reference = bench.evaluate(theta), plain.evaluate(theta)
        assert row["psi"] == reference["psi"] and row["delta"] == reference["delta"]
        assert sorted(k for k in row if k.startswith("adequacy_")) == sorted(f"adequacy_{n}" for n in names)
        assert all(np.isfinite(row[f"adequacy_{n}"]) for n in names)
        assert not [k for k in reference if k.startswith("adequacy_")]
    assert bench.evaluate((2, 2))["adequacy_deepgini"] != bench.evaluate((0, 0))["adequacy_deepgini"]

"""Structural fuzzing throughput (evaluations per second per adapter) and the evaluations the two-phase
threshold search saves. Ratios are measured in this one process run; nothing here is a timed test.

    python perf/bench_fuzz.py            # uses data/digits/model.pt when prepared, else trains a small CNN
    python perf/bench_fuzz.py --quick    # fewer samples, scan steps and images (seconds)
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.data.digits import load_digits_splits  # noqa: E402
from pipeline.fuzz import (  # noqa: E402
    Evaluator,
    compute_mri,
    enumerate_subsets,
    find_adversarial_threshold,
    find_adversarial_threshold_two_phase,
)
from pipeline.fuzz.adapters import stratified_subset  # noqa: E402
from pipeline.fuzz.adapters.geometric import geometric_adapter  # noqa: E402
from pipeline.fuzz.adapters.severity import severity_adapter  # noqa: E402
from pipeline.fuzz.adapters.weights import weights_adapter  # noqa: E402
from pipeline.models.cnn import load_cnn, train_cnn  # noqa: E402


@dataclass(frozen=True)
class Sizes:
    """How many samples, scan steps and images each measurement uses."""

    geometric_mri: int = 300     # MRI perturbations of the geometric adapter
    weights_mri: int = 20        # MRI perturbations of the weights adapter
    weights_scan: int = 30       # steps of the last-layer threshold scan
    per_class: int = 15          # test images per class of the severity adapter
    severity_mri: int = 8
    severity_scan: int = 20
    two_phase_steps: int = 50    # uniform scan steps of the two-phase comparison
    weights_images: int | None = None  # first test images of the weights adapter (None: all 360)
    cnn_epochs: int = 4          # of the CNN trained when data/digits/model.pt is not prepared


QUICK = Sizes(geometric_mri=50, weights_mri=4, weights_scan=10, per_class=2, severity_mri=2, severity_scan=6, two_phase_steps=20,
              weights_images=20, cnn_epochs=1)


def rate(fn, evaluator: Evaluator) -> float:
    """Evaluations per second of `fn`, counting what `evaluator` was asked."""
    before, start = evaluator.n_evaluations, time.perf_counter()
    fn()
    return (evaluator.n_evaluations - before) / (time.perf_counter() - start)


def geometric(sizes: Sizes) -> None:
    """MRI throughput of the geometric adapter, one evaluation at a time against batched."""
    a = geometric_adapter()
    a.evaluate_batch_fn(np.ones((2, 5)))
    a.evaluate_batch_fn(np.ones((32, 5)))  # compile both kernels (serial, parallel) outside the timing
    params, n = np.ones(5), sizes.geometric_mri
    single, batched = Evaluator(a.evaluate_fn), Evaluator(a.evaluate_fn, a.evaluate_batch_fn)
    r_single = rate(lambda: compute_mri(params, single, n), single)
    r_batched = rate(lambda: compute_mri(params, batched, n), batched)
    same = compute_mri(params, a.evaluate_fn, n) == compute_mri(params, a.evaluate_fn, n, evaluate_batch_fn=a.evaluate_batch_fn)
    print(f"geometric  MRI (N={n}): single {r_single:8.0f} eval/s | batched {r_batched:8.0f} eval/s | "
          f"ratio {r_batched / r_single:5.2f} | identical results: {same}")


def cnn_and_data(epochs: int):
    """The digits CNN (prepared, else trained for `epochs`), the digits splits and where the CNN came from."""
    splits = load_digits_splits()
    path = ROOT / "data" / "digits" / "model.pt"
    if path.exists():
        return load_cnn(path), splits, "prepared data/digits/model.pt"
    return (train_cnn(*splits["train"], seed=0, width=16, epochs=epochs), splits,
            f"a width-16 CNN trained here for {epochs} epoch(s) (no prepared model)")


def weights(model, splits, sizes: Sizes) -> None:
    """Weights adapter: full forward passes (reference) against the cached layer chain."""
    x, y = (v[: sizes.weights_images] for v in splits["test"])
    cached, plain = weights_adapter(model, x, y), weights_adapter(model, x, y, reuse=False)
    names = cached.dim_names
    head = names.index("linear2.weight")
    print(f"(weights adapter on {len(y)} test images)")
    for label, adapter in (("reference (full passes)", plain), ("cached chain", cached)):
        ev = Evaluator(adapter.evaluate_fn)
        mri = rate(lambda: compute_mri(np.ones(len(names)), ev, sizes.weights_mri, 0.2), ev)
        scan = rate(lambda: find_adversarial_threshold(np.ones(len(names)), head, names, ev, 0.1, sizes.weights_scan), ev)
        print(f"weights    {label:<28} MRI {mri:7.1f} eval/s | last-layer threshold scan {scan:8.1f} eval/s")


def severity(model, splits, sizes: Sizes) -> None:
    """Severity adapter: MRI and a threshold scan of its last family (upstream families cached)."""
    x, y = splits["test"]
    keep = stratified_subset(y, sizes.per_class)
    a = severity_adapter(model, x[keep], y[keep])
    ev = Evaluator(a.evaluate_fn)
    base = np.ones(4)
    mri = rate(lambda: compute_mri(base, ev, sizes.severity_mri, 0.5), ev)
    scan = rate(lambda: find_adversarial_threshold(base, 3, a.dim_names, ev, 0.15, sizes.severity_scan), ev)
    print(f"severity   ({len(keep)} images)              MRI {mri:7.2f} eval/s | pixelate threshold scan {scan:6.2f} eval/s "
          "(upstream families cached)")


def two_phase_savings(label: str, params, names, evaluate_fn, tolerance: float, n_steps: int) -> None:
    """Evaluations of the uniform threshold scan against the two-phase search, and whether they agree."""
    uniform, two = Evaluator(evaluate_fn), Evaluator(evaluate_fn)
    found_u, found_t = [], []
    for dim in range(len(names)):
        found_u += find_adversarial_threshold(params, dim, names, uniform, tolerance, n_steps)
        found_t += find_adversarial_threshold_two_phase(params, dim, names, two, tolerance, n_steps, 10)
    same = [(r.dim, r.direction, r.threshold_value) for r in found_u] == [(r.dim, r.direction, r.threshold_value) for r in found_t]
    print(f"two-phase  {label:<28} uniform {uniform.n_evaluations:5d} evals | two-phase {two.n_evaluations:5d} evals | "
          f"saved {uniform.n_evaluations - two.n_evaluations:5d} ({1 - two.n_evaluations / uniform.n_evaluations:4.0%}) | "
          f"same thresholds: {same}")


def main(sizes: Sizes) -> None:
    """Every measurement, at `sizes`."""
    torch.set_num_threads(2)
    geometric(sizes)
    model, splits, source = cnn_and_data(sizes.cnn_epochs)
    print(f"(digits CNN: {source})")
    weights(model, splits, sizes)
    severity(model, splits, sizes)
    a = geometric_adapter()
    fitted = enumerate_subsets(a.dim_names, a.evaluate_fn, None, a.inactive_value, a.candidate_values, evaluate_batch_fn=a.evaluate_batch_fn)
    best = np.array(fitted[0].param_values)  # the campaign's operating point
    two_phase_savings("geometric (tol 5 MAE)", best, a.dim_names, a.evaluate_fn, 5.0, sizes.two_phase_steps)
    x, y = (v[: sizes.weights_images] for v in splits["test"])
    w = weights_adapter(model, x, y)
    two_phase_savings("weights (tol 0.1)", np.ones(8), w.dim_names, w.evaluate_fn, 0.1, sizes.two_phase_steps)
    x, y = splits["test"]
    keep = stratified_subset(y, sizes.per_class)
    s = severity_adapter(model, x[keep], y[keep])
    two_phase_savings("severity (tol 0.15)", np.ones(4), s.dim_names, s.evaluate_fn, 0.15, sizes.two_phase_steps)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"smaller sizes: {QUICK}")
    main(QUICK if parser.parse_args().quick else Sizes())

"""Structural fuzzing throughput (evaluations per second per adapter) and the evaluations the two-phase
threshold search saves. Ratios are measured in this one process run; nothing here is a timed test.

    python benchmarks/bench_fuzz.py            # uses data/digits/model.pt when prepared, else trains a small CNN
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.data.digits import load_digits_splits  # noqa: E402
from pipeline.fuzz import (  # noqa: E402
    Evaluator, compute_mri, enumerate_subsets, find_adversarial_threshold, find_adversarial_threshold_two_phase,
)
from pipeline.fuzz.adapters import stratified_subset  # noqa: E402
from pipeline.fuzz.adapters.geometric import geometric_adapter  # noqa: E402
from pipeline.fuzz.adapters.severity import severity_adapter  # noqa: E402
from pipeline.fuzz.adapters.weights import weights_adapter  # noqa: E402
from pipeline.models.cnn import load_cnn, train_cnn  # noqa: E402


def rate(fn, evaluator: Evaluator) -> float:
    """Evaluations per second of `fn`, counting what `evaluator` was asked."""
    before, start = evaluator.n_evaluations, time.perf_counter()
    fn()
    return (evaluator.n_evaluations - before) / (time.perf_counter() - start)


def geometric() -> None:
    a = geometric_adapter()
    a.evaluate_batch_fn(np.ones((2, 5)))
    a.evaluate_batch_fn(np.ones((32, 5)))  # compile both kernels (serial, parallel) outside the timing
    params, n = np.ones(5), 300
    single, batched = Evaluator(a.evaluate_fn), Evaluator(a.evaluate_fn, a.evaluate_batch_fn)
    r_single = rate(lambda: compute_mri(params, single, n), single)
    r_batched = rate(lambda: compute_mri(params, batched, n), batched)
    same = compute_mri(params, a.evaluate_fn, n) == compute_mri(params, a.evaluate_fn, n, evaluate_batch_fn=a.evaluate_batch_fn)
    print(f"geometric  MRI (N={n}): single {r_single:8.0f} eval/s | batched {r_batched:8.0f} eval/s | "
          f"ratio {r_batched / r_single:5.2f} | identical results: {same}")


def cnn_and_data():
    splits = load_digits_splits()
    path = ROOT / "data" / "digits" / "model.pt"
    if path.exists():
        return load_cnn(path), splits, "prepared data/digits/model.pt"
    return train_cnn(*splits["train"], seed=0, width=16, epochs=4), splits, "a width-16 CNN trained here (no prepared model)"


def weights(model, splits) -> None:
    x, y = splits["test"]
    cached, plain = weights_adapter(model, x, y), weights_adapter(model, x, y, reuse=False)
    names = cached.dim_names
    head = names.index("linear2.weight")
    for label, adapter in (("reference (full passes)", plain), ("cached chain", cached)):
        ev = Evaluator(adapter.evaluate_fn)
        mri = rate(lambda: compute_mri(np.ones(len(names)), ev, 20, 0.2), ev)
        scan = rate(lambda: find_adversarial_threshold(np.ones(len(names)), head, names, ev, 0.1, 30), ev)
        print(f"weights    {label:<28} MRI {mri:7.1f} eval/s | last-layer threshold scan {scan:8.1f} eval/s")


def severity(model, splits) -> None:
    x, y = splits["test"]
    keep = stratified_subset(y, 15)
    a = severity_adapter(model, x[keep], y[keep])
    ev = Evaluator(a.evaluate_fn)
    base = np.ones(4)
    mri = rate(lambda: compute_mri(base, ev, 8, 0.5), ev)
    scan = rate(lambda: find_adversarial_threshold(base, 3, a.dim_names, ev, 0.15, 20), ev)
    print(f"severity   ({len(keep)} images)              MRI {mri:7.2f} eval/s | pixelate threshold scan {scan:6.2f} eval/s "
          "(upstream families cached)")


def two_phase_savings(label: str, params, names, evaluate_fn, tolerance: float, n_steps: int = 50) -> None:
    uniform, two = Evaluator(evaluate_fn), Evaluator(evaluate_fn)
    found_u, found_t = [], []
    for dim in range(len(names)):
        found_u += find_adversarial_threshold(params, dim, names, uniform, tolerance, n_steps)
        found_t += find_adversarial_threshold_two_phase(params, dim, names, two, tolerance, n_steps, 10)
    same = [(r.dim, r.direction, r.threshold_value) for r in found_u] == [(r.dim, r.direction, r.threshold_value) for r in found_t]
    print(f"two-phase  {label:<28} uniform {uniform.n_evaluations:5d} evals | two-phase {two.n_evaluations:5d} evals | "
          f"saved {uniform.n_evaluations - two.n_evaluations:5d} ({1 - two.n_evaluations / uniform.n_evaluations:4.0%}) | "
          f"same thresholds: {same}")


def main() -> None:
    torch.set_num_threads(2)
    geometric()
    model, splits, source = cnn_and_data()
    print(f"(digits CNN: {source})")
    weights(model, splits)
    severity(model, splits)
    a = geometric_adapter()
    fitted = enumerate_subsets(a.dim_names, a.evaluate_fn, None, a.inactive_value, a.candidate_values, evaluate_batch_fn=a.evaluate_batch_fn)
    best = np.array(fitted[0].param_values)  # the campaign's operating point
    two_phase_savings("geometric (tol 5 MAE)", best, a.dim_names, a.evaluate_fn, 5.0)
    x, y = splits["test"]
    w = weights_adapter(model, x, y)
    two_phase_savings("weights (tol 0.1)", np.ones(8), w.dim_names, w.evaluate_fn, 0.1)
    keep = stratified_subset(y, 15)
    s = severity_adapter(model, x[keep], y[keep])
    two_phase_savings("severity (tol 0.15)", np.ones(4), s.dim_names, s.evaluate_fn, 0.15)


if __name__ == "__main__":
    main()

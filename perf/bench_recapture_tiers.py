"""Tiers of the embedded recapture source (paired evaluations §3.3) on the digits benchmark.

Trains three small zoo models (logistic regression, an MLP and a SmallCNN with a few epochs) on the
digits train split, recaptures the development images under the 54 conditions of
`pipeline.perturb.recapture`, and prints each condition's accuracy per model, the mean across models,
its tier (mild >= 40%, severe 20% to < 40%, extreme < 20%) and the tier counts, with the time taken.

    python perf/bench_recapture_tiers.py              # all development images
    python perf/bench_recapture_tiers.py --limit 100  # a quick look
    python perf/bench_recapture_tiers.py --quick      # --limit 10 (seconds)
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.runtime.numerics import configure_torch, ensure_pinned

MODELS = (
    {"name": "logreg", "family": "linear", "kind": "logreg"},
    {"name": "mlp_h64", "family": "mlp", "kind": "mlp", "hidden": 64, "seed": 0},
    {"name": "cnn_w8", "family": "cnn", "kind": "cnn", "width": 8, "seed": 0, "epochs": 4},
)


QUICK_LIMIT = 10


def main(seed: int = 0, limit: int | None = None) -> None:
    """Train the three models, recapture the development images (the first `limit`) under every condition, print."""
    from pipeline.data.digits import load_digits_splits
    from pipeline.models.zoo import build_model
    from pipeline.perturb.recapture import recapture, recapture_conditions, tier_of

    splits = load_digits_splits(seed=seed, size=32)
    train_x, train_y = splits["train"]
    dev_x, dev_y = splits["dev"]
    if limit is not None:
        dev_x, dev_y = dev_x[:limit], dev_y[:limit]
    start = time.perf_counter()
    models = {spec["name"]: build_model(spec).fit(train_x, train_y) for spec in MODELS}
    train_s = time.perf_counter() - start
    clean = {name: float((m.predict_proba(dev_x).argmax(1) == dev_y).mean()) for name, m in models.items()}
    print(f"{len(dev_y)} development images; clean accuracy " + ", ".join(f"{k} {v:.3f}" for k, v in clean.items()))
    print(f"{'condition':<14} {'camera setting':<26} " + " ".join(f"{k:>8}" for k in models) + f" {'mean':>6}  tier")
    tiers, recapture_s = Counter(), 0.0
    for condition in recapture_conditions():
        t0 = time.perf_counter()
        images = recapture(dev_x, condition, seed)
        recapture_s += time.perf_counter() - t0
        acc = {name: float((m.predict_proba(images).argmax(1) == dev_y).mean()) for name, m in models.items()}
        mean = float(np.mean(list(acc.values())))
        tier = tier_of(mean)
        tiers[tier] += 1
        print(f"{condition.name:<14} {condition.label:<26} " + " ".join(f"{a:8.3f}" for a in acc.values())
              + f" {mean:6.3f}  {tier}")
    print("tier counts: " + ", ".join(f"{t} {tiers[t]}" for t in ("mild", "severe", "extreme")))
    per_image_ms = 1000 * recapture_s / (len(dev_y) * len(recapture_conditions()))
    print(f"training {train_s:.1f} s; recapture {recapture_s:.1f} s ({per_image_ms:.2f} ms per image and condition)")


if __name__ == "__main__":
    ensure_pinned()
    configure_torch()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None, help="use the first N development images")
    parser.add_argument("--quick", action="store_true", help=f"--limit {QUICK_LIMIT}")
    args = parser.parse_args()
    main(args.seed, QUICK_LIMIT if args.quick else args.limit)

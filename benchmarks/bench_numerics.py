"""What pinning the numerical environment costs (`pipeline.numerics`), measured in one run.

The pinned variables are read when the libraries load, so the two arms run the same workload in two
child processes started by this one: pinned (AVX2 code paths, one intra-op thread) against the
machine's defaults (widest instruction set, one thread per core). The workload is the pipeline's own:
training the digits CNN (3 epochs) and evaluating 12 ground-truth configurations of the digits benchmark
(perturbation, inference, adequacy, SSIM, KID) on the prepare stage's data/digits/, or on the digits
benchmark prepared into a temporary folder when data/digits/ is not there.
Prints each arm's time, the ratio, and whether the arms computed the same bits.

    python benchmarks/bench_numerics.py
    python benchmarks/bench_numerics.py --quick   # 1 epoch, 3 configurations on 40 test images (seconds)
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUICK_IMAGES = 40


def workload(data: Path, quick: bool) -> dict:
    """Seconds of the training and the ground-truth part, and a digest of what both computed."""
    sys.path.insert(0, str(ROOT))
    import numpy as np
    from _spec import benchmark_spec

    from pipeline.builders import build_benchmark
    from pipeline.data.digits import load_digits_splits
    from pipeline.models.cnn import train_cnn

    splits = load_digits_splits(seed=0, size=32)
    t0 = time.perf_counter()
    net = train_cnn(*splits["train"], seed=0, width=16, epochs=1 if quick else 3, progress=False)
    t1 = time.perf_counter()
    digest = hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in net.parameters()))
    out = {"train_s": t1 - t0}
    bench = build_benchmark(benchmark_spec(["benchmark=digits", *([f"benchmark.dataset.test_limit={QUICK_IMAGES}"] if quick else [])]),
                            data)
    thetas = [tuple(int(v) for v in t) for t in bench.space.grid()[::432 if quick else 108]]
    t2 = time.perf_counter()
    for _, values in bench.evaluate_many(thetas):
        digest.update(np.array([values["psi"], values["rho_ssim"], values["rho_kid"]]).tobytes())
    out["groundtruth_s"] = time.perf_counter() - t2
    out["digest"] = digest.hexdigest()[:16]
    return out


def arm(pinned: bool, data: Path, quick: bool) -> dict:
    """Run the workload in a child process, pinned or with the machine's defaults; its result."""
    from pipeline.numerics import PINNED

    env = {k: v for k, v in os.environ.items() if k not in PINNED and k != "ROBUSTNESS_PINNED"}
    child = [sys.executable, __file__, "--child", "pinned" if pinned else "default", "--data", str(data), *(["--quick"] if quick else [])]
    result = subprocess.run(child, env=env, cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(quick: bool) -> None:
    """Both arms on the same prepared digits assets; their times, ratios and whether the bits agree."""
    sys.path.insert(0, str(ROOT))
    from _spec import digits_data

    with contextlib.ExitStack() as stack:
        data = digits_data(stack, quick)
        default, pinned = arm(False, data, quick), arm(True, data, quick)
    for key in ("train_s", "groundtruth_s"):
        print(f"{key[:-2]:>12}: pinned {pinned[key]:6.2f} s, default {default[key]:6.2f} s, "
              f"pinned/default = {pinned[key] / default[key]:.2f}")
    print(f"same bits: {pinned['digest'] == default['digest']} (pinned {pinned['digest']}, default {default['digest']})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"1 training epoch, 3 configurations on {QUICK_IMAGES} test images; "
                        "networks prepared with one epoch when data/digits/ is not there")
    parser.add_argument("--child", choices=("pinned", "default"), help=argparse.SUPPRESS)  # one arm (started by `arm`)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is None:
        main(args.quick)
    else:
        if args.child == "pinned":
            sys.path.insert(0, str(ROOT))
            from pipeline.numerics import configure_torch, ensure_pinned

            ensure_pinned()
            configure_torch()
        print(json.dumps(workload(args.data, args.quick)))

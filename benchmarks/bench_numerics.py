"""What pinning the numerical environment costs (`pipeline.numerics`), measured in one run.

The pinned variables are read when the libraries load, so the two arms run the same workload in two
child processes started by this one: pinned (AVX2 code paths, one intra-op thread) against the
machine's defaults (widest instruction set, one thread per core). The workload is the pipeline's own:
training the digits CNN (3 epochs) and evaluating 12 ground-truth configurations of the digits benchmark
(perturbation, inference, SSIM, KID; needs data/digits/ from the prepare stage, else training only).
Prints each arm's time, the ratio, and whether the arms computed the same bits.
    python benchmarks/bench_numerics.py
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def workload() -> dict:
    sys.path.insert(0, str(ROOT))
    import numpy as np
    from omegaconf import OmegaConf

    from pipeline.data.digits import load_digits_splits
    from pipeline.models.cnn import train_cnn

    splits = load_digits_splits(seed=0, size=32)
    t0 = time.perf_counter()
    net = train_cnn(*splits["train"], seed=0, width=16, epochs=3, progress=False)
    t1 = time.perf_counter()
    digest = hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in net.parameters()))
    out = {"train_s": t1 - t0}
    data = ROOT / "data" / "digits"
    if (data / "model.pt").exists():
        from pipeline.builders import build_benchmark

        spec = OmegaConf.to_container(OmegaConf.load(ROOT / "conf/benchmark/digits.yaml"), resolve=True)
        bench = build_benchmark(spec, data)
        thetas = [tuple(int(v) for v in t) for t in bench.space.grid()[::108]]
        t2 = time.perf_counter()
        for _, values in bench.evaluate_many(thetas):
            digest.update(np.array([values["psi"], values["rho_ssim"], values["rho_kid"]]).tobytes())
        out["groundtruth_s"] = time.perf_counter() - t2
    out["digest"] = digest.hexdigest()[:16]
    return out


def arm(pinned: bool) -> dict:
    from pipeline.numerics import PINNED

    env = {k: v for k, v in os.environ.items() if k not in PINNED and k != "ROBUSTNESS_PINNED"}
    child = [sys.executable, __file__, "--child", "pinned" if pinned else "default"]
    result = subprocess.run(child, env=env, cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    sys.path.insert(0, str(ROOT))
    default, pinned = arm(False), arm(True)
    for key in ("train_s", "groundtruth_s"):
        if key in pinned:
            print(f"{key[:-2]:>12}: pinned {pinned[key]:6.2f} s, default {default[key]:6.2f} s, "
                  f"pinned/default = {pinned[key] / default[key]:.2f}")
    print(f"same bits: {pinned['digest'] == default['digest']} (pinned {pinned['digest']}, default {default['digest']})")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        if sys.argv[2] == "pinned":
            sys.path.insert(0, str(ROOT))
            from pipeline.numerics import configure_torch, ensure_pinned

            ensure_pinned()
            configure_torch()
        print(json.dumps(workload()))
    else:
        main()

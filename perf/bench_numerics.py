"""What pinning the numerical environment costs (`pipeline.runtime.numerics`), measured in one run.

The pinned variables are read when the libraries load, so the two arms run the same workload in two
child processes started by this one: pinned (AVX2 code paths, one intra-op thread) against the
machine's defaults (widest instruction set, one thread per core). The workload is the pipeline's own:
training the digits CNN (3 epochs) and evaluating 12 ground-truth configurations of the digits benchmark
(perturbation, inference, adequacy, SSIM, KID) on the prepare stage's data/digits/, or on the digits
benchmark prepared into a temporary folder when data/digits/ is not there.
Prints each arm's time, the ratio, and whether the arms computed the same bits.

Then the matrix-product paths the pinned numerics choose between (docs/reproducibility.md), in two child
processes (MKL reads its branch when it loads): GFLOP/s of MiniLM's three product shapes through torch on MKL's AVX2 branch (the lock
before issue 44: Intel only), on MKL's `COMPATIBLE` branch (Intel and AMD alike; the pinned one) and through
numpy on OpenBLAS's Haswell kernels (the pinned text encoder's); and the text encoder's texts a second with its
linear layers on OpenBLAS against torch's on MKL `COMPATIBLE`, in one process.

    python perf/bench_numerics.py
    python perf/bench_numerics.py --quick   # 1 epoch, 3 configurations on 40 test images (seconds)
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

    from pipeline.benchmark.build import build_benchmark
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
    from pipeline.runtime.numerics import PINNED

    env = {k: v for k, v in os.environ.items() if k not in PINNED and k != "ROBUSTNESS_PINNED"}
    child = [sys.executable, __file__, "--child", "pinned" if pinned else "default", "--data", str(data), *(["--quick"] if quick else [])]
    result = subprocess.run(child, env=env, cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


SHAPES = ((640, 384, 384), (640, 384, 1536), (640, 1536, 384))  # MiniLM's products: rows x in x out
GEMM_SECONDS = {False: 1.0, True: 0.2}  # time per product shape, by --quick


def gemm_rates(library: str, seconds: float) -> list[float]:
    """GFLOP/s of each of SHAPES through torch (MKL) or numpy (OpenBLAS), one thread."""
    import numpy as np
    import torch

    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    rates = []
    for m, k, n in SHAPES:
        x, w = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((n, k), dtype=np.float32)
        xt, wt, wnp = torch.from_numpy(x), torch.from_numpy(w), np.ascontiguousarray(w.T)
        product = (lambda: torch.nn.functional.linear(xt, wt)) if library == "mkl" else (lambda: x @ wnp)
        product()
        runs, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            product()
            runs += 1
        rates.append(2 * m * k * n * runs / (time.perf_counter() - start) / 1e9)
    return rates


def encoder_rates(quick: bool) -> dict:
    """The pinned text encoder's texts a second, its linear layers on OpenBLAS (as loaded) and on torch's MKL."""
    import numpy as np

    from pipeline.models.text_encoder import TextEncoder, minilm_path

    rng = np.random.default_rng(0)
    ids = [[101, *rng.integers(2000, 20000, size=length - 2).tolist(), 102] for length in rng.integers(20, 90, size=64 if quick else 320)]
    by_length: dict[int, list] = {}
    for row in ids:
        by_length.setdefault(len(row), []).append(row)
    batches = [group[i : i + 16] for group in by_length.values() for i in range(0, len(group), 16)]
    encoder = TextEncoder()
    out = {}
    for arm in ("openblas", "mkl"):
        if arm == "mkl":  # torch's own layers: the model as transformers loads it
            from transformers import AutoModel

            encoder.model = AutoModel.from_pretrained(str(minilm_path()), local_files_only=True).eval()
        encoder._forward(batches[0])
        start = time.perf_counter()
        for batch in batches:
            encoder._forward(batch)
        out[arm] = len(ids) / (time.perf_counter() - start)
    return out


def paths(quick: bool) -> None:
    """The GEMM paths and the encoder: MKL's AVX2 branch in a child process of its own, the pinned branch (MKL
    `COMPATIBLE`, OpenBLAS, the encoder) in another; MKL reads its branch when it loads."""
    from pipeline.runtime.numerics import PINNED

    def child(*args: str, cbwr: str = PINNED["MKL_CBWR"]) -> dict:
        env = {**os.environ, **PINNED, "MKL_CBWR": cbwr, "ROBUSTNESS_PINNED": "1"}
        run = subprocess.run([sys.executable, __file__, *args, *(["--quick"] if quick else [])], env=env, cwd=ROOT,
                             check=True, capture_output=True, text=True)
        return json.loads(run.stdout.strip().splitlines()[-1])

    avx2, pinned = child("--child", "gemm-mkl", cbwr="AVX2,STRICT"), child("--child", "paths")
    compatible, openblas, texts = pinned["mkl"], pinned["openblas"], pinned["encoder"]
    for (m, k, n), a, c, o in zip(SHAPES, avx2["mkl"], compatible, openblas):
        print(f"gemm {m}x{k}x{n}: MKL AVX2 {a:5.1f}, MKL COMPATIBLE {c:5.1f}, OpenBLAS Haswell {o:5.1f} GFLOP/s; "
              f"OpenBLAS/COMPATIBLE = {o / c:.2f}")
    print(f"text encoder: OpenBLAS {texts['openblas']:.1f} texts/s, MKL COMPATIBLE {texts['mkl']:.1f} texts/s; "
          f"OpenBLAS/COMPATIBLE = {texts['openblas'] / texts['mkl']:.2f}")


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
    paths(quick)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"1 training epoch, 3 configurations on {QUICK_IMAGES} test images; "
                        "networks prepared with one epoch when data/digits/ is not there")
    parser.add_argument("--child", choices=("pinned", "default", "gemm-mkl", "paths"),
                        help=argparse.SUPPRESS)  # one arm (started by `arm` or `paths`)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is None:
        main(args.quick)
    elif args.child == "gemm-mkl":
        print(json.dumps({"mkl": gemm_rates("mkl", GEMM_SECONDS[args.quick])}))
    elif args.child == "paths":  # the pinned branch: MKL COMPATIBLE and OpenBLAS products, then the encoder
        sys.path.insert(0, str(ROOT))
        from pipeline.runtime.numerics import configure_torch

        configure_torch()
        seconds = GEMM_SECONDS[args.quick]
        print(json.dumps({"mkl": gemm_rates("mkl", seconds), "openblas": gemm_rates("openblas", seconds),
                          "encoder": encoder_rates(args.quick)}))
    else:
        if args.child == "pinned":
            sys.path.insert(0, str(ROOT))
            from pipeline.runtime.numerics import configure_torch, ensure_pinned

            ensure_pinned()
            configure_torch()
        print(json.dumps(workload(args.data, args.quick)))

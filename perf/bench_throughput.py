"""Ground-truth throughput on whatever device is present (CUDA if available, else the CPU), against the
batch size, measured in one process: configurations per second and images per second, split into perturb /
infer / fidelity, with ratios against the reference batch size (the config's own) run in the same process.

1. Ground truth of the embedded digits benchmark (conf/benchmark/digits.yaml: digits CNN with its
   adequacy observer, SSIM, KID) over a fixed random subset of Θ, once per batch size (`batch_size` sets
   the model's and KID's batches; D has 360 images, so batches above 360 run as one).
2. Ground truth of a ViT-sized model: torchvision `vit_b_16` with random weights (nothing is loaded) on
   224×224 inputs (the digits test images upsampled), three cheap ImageNet-C perturbations and SSIM, over a
   few θ: the cost of the paper's CaiT/ViT-scale vision runs per input.
3. Inference alone (`predict_proba`) against the batch size on a stack of inputs large enough for the
   biggest batch, for both models: where the GPU stops getting busier.
4. The text encoders' forward pass against the batch size, on sequences of one length (random token ids, random
   weights of each architecture; the cost does not depend on the weights): all-MiniLM-L6-v2's architecture (the
   embedded text and code benchmarks' model and BERT-F1 encoder) and RoBERTa-base's with a two-class head (the
   paper's QQP model). The pipeline's encoder batches texts of equal length 16 at a time (no padding), hence the
   reference batch 16.

On CUDA it also reports the peak memory torch allocated per batch size and, when `nvidia-smi` exists, the
mean GPU utilisation it sampled during each run (every 100 ms). Device results agree with the CPU within
`pipeline.runtime.device.CUDA_TOLERANCE`, not bitwise.

    .venv/bin/python perf/bench_throughput.py --quick        # seconds (on a CPU without the vit_b_16 parts)
    .venv/bin/python perf/bench_throughput.py                # the full sweep (meant for a GPU)
    .venv/bin/python perf/bench_throughput.py --device cpu   # force the CPU
    .venv/bin/python perf/bench_throughput.py --text-only    # only the text encoders (part 4)

Needs the prepare stage's data/digits/ (or it prepares the digits benchmark into a temporary folder).
`--quick` shrinks every size; on a CPU it also leaves out the vit_b_16 parts (one 224×224 forward pass of
its 86M parameters takes a good part of a second per image on one core) and RoBERTa-base, and says so.
"""
from __future__ import annotations

import argparse
import contextlib
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _spec import benchmark_spec, digits_data  # noqa: E402

from pipeline.runtime.numerics import configure_torch, ensure_pinned  # noqa: E402

VIT_PERTURBATIONS = ("speckle_noise", "brightness", "pixelate")  # glass blur at 224 px is a CPU cost of its own
TEXT_ENCODERS = {  # each architecture in transformers: (model class, config class, the config's arguments)
    "all-MiniLM-L6-v2": ("BertModel", "BertConfig", {"hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12,
                                                     "intermediate_size": 1536}),
    "RoBERTa-base, 2 classes": ("RobertaForSequenceClassification", "RobertaConfig", {"num_labels": 2}),
}
TEXT_REFERENCE_BATCH = 16  # pipeline.models.text_encoder.TextEncoder's batch_size


class GpuMonitor:
    """Mean GPU utilisation (nvidia-smi, sampled every 100 ms) and torch's peak allocated memory over a block."""

    def __init__(self, device) -> None:
        self.device, self.samples, self.peak_gib = device, [], 0.0

    def __enter__(self) -> GpuMonitor:
        import torch

        self.proc = None
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            if shutil.which("nvidia-smi"):
                self.proc = subprocess.Popen(["nvidia-smi", "-i", str(self.device.index or 0), "--query-gpu=utilization.gpu",
                                              "--format=csv,noheader,nounits", "-lms", "100"], stdout=subprocess.PIPE, text=True)
        return self

    def __exit__(self, *exc) -> None:
        import torch

        if self.device.type != "cuda":
            return
        torch.cuda.synchronize(self.device)
        self.peak_gib = torch.cuda.max_memory_allocated(self.device) / 2**30
        if self.proc is not None:
            self.proc.terminate()
            out, _ = self.proc.communicate()
            self.samples = [float(v) for v in out.split() if v.strip().replace(".", "", 1).isdigit()]

    def describe(self) -> str:
        if self.device.type != "cuda":
            return ""
        util = f", GPU busy {sum(self.samples) / len(self.samples):.0f}%" if self.samples else ", GPU busy n/a (no nvidia-smi)"
        return f", peak {self.peak_gib:.2f} GiB{util}"


def run_groundtruth(bench, thetas, device) -> tuple[dict[str, float], str]:
    """Evaluate `thetas` (prefix reuse, as the stage does); seconds in total and per part, and the monitor line."""
    with GpuMonitor(device) as monitor:
        t0 = time.perf_counter()
        rows = [row for _, row in bench.evaluate_many(thetas)]
        total = time.perf_counter() - t0
    parts = {k: sum(r[f"seconds_{k}"] for r in rows) for k in ("perturb", "infer", "fidelity")}
    return {"total": total, **parts}, monitor.describe()


def report(label: str, batches: list[int], reference: int, seconds: dict[int, dict[str, float]], notes: dict[int, str],
           n_configs: int, n_inputs: int) -> None:
    print(f"\n{label}: {n_configs} configurations × {n_inputs} inputs; ratios against batch {reference} (measured above)")
    ref = seconds[reference]["total"]
    for b in batches:
        s = seconds[b]
        split = ", ".join(f"{k} {s[k] / n_configs * 1e3:.1f} ms" for k in ("perturb", "infer", "fidelity"))
        print(f"  batch {b:5d}: {n_configs / s['total']:8.3f} configs/s, {n_configs * n_inputs / s['total']:9.1f} images/s "
              f"({ref / s['total']:.2f}x batch {reference}); per configuration {split}{notes[b]}")


def digits_groundtruth(data_dir: Path, device, batches: list[int], n_configs: int, seed: int) -> None:
    import numpy as np

    from pipeline.benchmark.build import build_benchmark

    seconds, notes, reference = {}, {}, 512
    for b in sorted(set(batches) | {reference}):
        spec = benchmark_spec(["benchmark=digits", f"device={device}", f"benchmark.batch_size={b}"])
        bench = build_benchmark(spec, data_dir)
        rng = np.random.default_rng(seed)
        thetas = sorted({tuple(int(v) for v in rng.integers(0, bench.space.levels, bench.space.n_dims)) for _ in range(n_configs)})
        seconds[b], notes[b] = run_groundtruth(bench, thetas, device)
    report(f"digits ground truth on {device} (CNN + adequacy observer, SSIM, KID)", sorted(seconds), reference, seconds, notes,
           len(thetas), len(bench.labels))


def vit_benchmark(data_dir: Path, device, batch: int, n_images: int):
    """A Benchmark of vit_b_16 (random weights) on `n_images` digits test images upsampled to 224×224."""
    import numpy as np
    import torch

    from pipeline.benchmark.problem import Benchmark, accuracy
    from pipeline.fidelity.ssim import SSIMFidelity
    from pipeline.models.under_test import Torchvision
    from pipeline.perturb.registry import get_perturbation
    from pipeline.benchmark.plugin_code import predictions_of
    from pipeline.front.space import Space

    with np.load(data_dir / "splits.npz") as z:
        x, y = z["test_x"][:n_images], z["test_y"][:n_images]
    clean = np.ascontiguousarray(x.repeat(7, axis=1).repeat(7, axis=2))  # 32 → 224 px
    torch.manual_seed(0)  # the random weights
    predict = predictions_of(Torchvision("vit_b_16", 10, None, 224, device=str(device), batch_size=batch))
    space = Space(VIT_PERTURBATIONS, 6)
    return Benchmark(name="vit_b_16", space=space, perturbations=[get_perturbation(n) for n in space.names], clean=clean,
                     labels=y, predict=predict, task_metric=accuracy, fidelity={"ssim": SSIMFidelity(clean, device=device)})


def vit_groundtruth(data_dir: Path, device, batches: list[int], n_images: int, thetas: list[tuple[int, ...]]) -> None:
    seconds, notes, reference = {}, {}, 64  # conf/benchmark/tiny_imagenet.yaml's batch
    for b in sorted(set(batches) | {reference}):
        seconds[b], notes[b] = run_groundtruth(vit_benchmark(data_dir, device, b, n_images), thetas, device)
    report(f"vit_b_16 ground truth on {device} (random weights, 224×224, {'/'.join(VIT_PERTURBATIONS)}, SSIM)", sorted(seconds),
           reference, seconds, notes, len(thetas), n_images)


def inference(label: str, net, images, device, batches: list[int], reference: int) -> None:
    from pipeline.models.cnn import predict_proba

    net = net.to(device)
    predict_proba(net, images[: min(batches)], min(batches))  # warm-up (CUDA context, kernels)
    rates, notes = {}, {}
    for b in batches:
        with GpuMonitor(device) as monitor:
            t0 = time.perf_counter()
            predict_proba(net, images, b)
            rates[b] = len(images) / (time.perf_counter() - t0)
        notes[b] = monitor.describe()
    print(f"\n{label} inference on {device}, {len(images)} inputs; ratios against batch {reference}")
    for b in batches:
        print(f"  batch {b:5d}: {rates[b]:9.1f} images/s ({rates[b] / rates[reference]:.2f}x){notes[b]}")


def text_inference(device, batches: list[int], n_sequences: int, length: int, names: list[str]) -> None:
    """Forward passes of each named architecture of TEXT_ENCODERS (random weights, seed 0) over `n_sequences`
    random token sequences of `length` tokens, one line per batch size, ratios against batch TEXT_REFERENCE_BATCH."""
    import torch
    import transformers

    for name in names:
        cls, config, kwargs = TEXT_ENCODERS[name]
        torch.manual_seed(0)
        model = getattr(transformers, cls)(getattr(transformers, config)(**kwargs)).eval().to(device)
        ids = torch.randint(5, model.config.vocab_size, (n_sequences, length), generator=torch.Generator().manual_seed(0))
        rates, notes, batches = {}, {}, sorted(set(batches) | {TEXT_REFERENCE_BATCH})
        with torch.inference_mode():
            model(input_ids=ids[: min(batches)].to(device))  # warm-up (CUDA context, kernels)
            for b in batches:
                with GpuMonitor(device) as monitor:
                    t0 = time.perf_counter()
                    for start in range(0, n_sequences, b):
                        out = model(input_ids=ids[start : start + b].to(device))
                        (out.logits if hasattr(out, "logits") else out.last_hidden_state).cpu()
                    rates[b] = n_sequences / (time.perf_counter() - t0)
                notes[b] = monitor.describe()
        print(f"\n{name} ({cls}, random weights) on {device}, {n_sequences} sequences of {length} tokens; "
              f"ratios against batch {TEXT_REFERENCE_BATCH}")
        for b in batches:
            print(f"  batch {b:5d}: {rates[b]:9.1f} sequences/s, {rates[b] * length:10.0f} tokens/s "
                  f"({rates[b] / rates[TEXT_REFERENCE_BATCH]:.2f}x){notes[b]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes that finish in seconds; on a CPU without vit_b_16")
    parser.add_argument("--device", default=None, help="cpu, cuda or cuda:<n> (default: cuda if available, else cpu)")
    parser.add_argument("--text-only", action="store_true", help="only the text encoders' forward passes (part 4)")
    args = parser.parse_args()
    ensure_pinned()
    configure_torch()
    import numpy as np
    import torch

    from pipeline.runtime.device import resolve_device
    from pipeline.models.cnn import load_cnn
    from pipeline.models.torchvision_classifier import TorchvisionClassifier

    device = resolve_device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {torch.get_num_threads()} torch thread(s)"
    print(f"device: {device} ({name}); torch {torch.__version__}; {'--quick' if args.quick else 'full'} sizes")
    if args.quick:
        digits_batches, n_configs, vit_batches, vit_images, vit_thetas = [32, 512], 2, [8, 16], 16, [(0, 0, 1), (0, 2, 3)]
        cnn_batches, cnn_stack, vit_inf_batches, vit_stack = [32, 512, 1024], 1024, [4, 8, 16], 16
        text_batches, text_sequences, text_length = [1, 16], 32, 64
    else:
        digits_batches, n_configs, vit_batches, vit_images, vit_thetas = [32, 64, 128, 256, 512], 24, [32, 64, 128, 256], 256, \
            [(0, 0, 1), (0, 2, 3), (1, 0, 0), (3, 3, 3), (5, 1, 2)]
        cnn_batches, cnn_stack, vit_inf_batches, vit_stack = [32, 64, 128, 256, 512, 1024], 16384, [32, 64, 128, 256, 512, 1024], 2048
        text_batches, text_sequences, text_length = [1, 4, 16, 64, 256, 1024], 4096, 128
    heavy = not (args.quick and device.type == "cpu")  # vit_b_16 and RoBERTa-base: left out of a quick CPU run
    text_names = list(TEXT_ENCODERS) if heavy else ["all-MiniLM-L6-v2"]
    if args.text_only:
        text_inference(device, text_batches, text_sequences, text_length, text_names)
        return
    with contextlib.ExitStack() as stack:
        data_dir = digits_data(stack, args.quick)
        digits_groundtruth(data_dir, device, digits_batches, n_configs, seed=0)
        if heavy:
            vit_groundtruth(data_dir, device, vit_batches, vit_images, vit_thetas)
        with np.load(data_dir / "splits.npz") as z:
            x = z["test_x"]
        cnn_images = np.resize(x, (cnn_stack,) + x.shape[1:])
        inference("digits CNN", load_cnn(data_dir / "model.pt"), cnn_images, device, cnn_batches, 512)
        text_inference(device, text_batches, text_sequences, text_length, text_names)
        if not heavy:
            print("\nvit_b_16 ground truth and inference, and RoBERTa-base, left out: --quick on a CPU "
                  "(run without --quick, or on a GPU)")
            return
        torch.manual_seed(0)
        vit_images_224 = np.resize(x, (vit_stack,) + x.shape[1:]).repeat(7, axis=1).repeat(7, axis=2)
        inference("vit_b_16 (224×224)", TorchvisionClassifier("vit_b_16", 10, None, 224), vit_images_224, device, vit_inf_batches,
                  vit_inf_batches[len(vit_inf_batches) // 2])


if __name__ == "__main__":
    main()

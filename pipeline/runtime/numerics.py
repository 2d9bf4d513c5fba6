"""The pinned numerical environment: the same bits from every x86-64 CPU with AVX2, Intel or AMD.

Numerical libraries choose code paths by CPU vendor, model and thread count, and each choice changes
rounding: torch's own kernels (ATen) by CPU capability, its convolutions (oneDNN) by instruction set and cache
sizes, its BLAS (MKL) by vendor and model, numpy's loops by SIMD extension, numpy's and scipy's BLAS
(OpenBLAS) by core type, numba by target CPU. `PINNED` fixes each of them to one path that every x86-64 CPU
with AVX2 (x86-64-v3) runs alike, with one intra-op thread (parallelism comes from processes):

- MKL in its `COMPATIBLE` mode, the only one it honours on AMD CPUs (it takes any other as `AUTO` there);
- oneDNN not at all: `configure_torch` turns `torch.backends.mkldnn` off, so convolutions are ATen's im2col and
  MKL's product;
- OpenBLAS on its Haswell kernels, numpy without its AVX-512 loops, ATen's AVX2 kernels, numba for Haswell;
- torch's square root on the CPU correctly rounded (`exact_sqrt`): its own goes through MKL's vector math, whose
  last bit depends on the CPU even in `COMPATIBLE` mode (Adam's steps, so every trained network, inherit it).

MKL's `COMPATIBLE` path is 3x slower than its AVX2 one, so the text encoder's products, the bulk of the
replication, take OpenBLAS's instead (`pipeline.models.portable_blas`); docs/reproducibility.md has the
measurements and `tests/cross_vendor/` the contract.

These variables are read when each library loads, so they must be set before the interpreter imports
numpy or torch: `ensure_pinned()` re-executes the running program with them when they are not already
in force (what every stage script does first), and worker processes inherit them. `configure_torch()`
sets the runtime switches that are not environment variables.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
from typing import Any

PINNED: dict[str, str] = {
    # one intra-op thread: thread counts change how reductions are split
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    # torch: ATen's vectorised kernels; oneDNN capped too, for a plug-in that turns it back on
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "DNNL_MAX_CPU_ISA": "AVX2",
    # MKL's conditional numerical reproducibility: COMPATIBLE is its one code path that Intel and AMD CPUs both
    # take (an AVX2 branch becomes AUTO on AMD: the CPU's own kernels)
    "MKL_CBWR": "COMPATIBLE",
    # numpy / scipy: OpenBLAS kernels and numpy's runtime-dispatched loops above x86-64-v3
    "OPENBLAS_CORETYPE": "Haswell",
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
    # numba: code generated for one CPU model (kernels are compiled without fastmath)
    "NUMBA_CPU_NAME": "haswell",
    # hashing and CUDA's deterministic cuBLAS workspace (GPU runs)
    "PYTHONHASHSEED": "0",
    "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
}
_MARK = "ROBUSTNESS_PINNED"  # set by the re-exec, so a library that edits the environment cannot cause a loop


def pinned() -> bool:
    """Whether this process runs with every variable of `PINNED`."""
    return all(os.environ.get(key) == value for key, value in PINNED.items())


def ensure_pinned() -> None:
    """Re-execute this program under the pinned environment unless it already runs under it.

    Call it first thing in an entry point; whatever was imported before is loaded again, pinned."""
    if pinned():
        return
    if os.environ.get(_MARK) == "1":  # re-executed already: set what some library changed, do not loop
        os.environ.update(PINNED)
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], {**os.environ, **PINNED, _MARK: "1"})


class _ConfigureTorchOnImport(importlib.abc.MetaPathFinder):
    """Finds `torch` as the other finders do, and has its loader call `configure_torch` once torch has loaded."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "torch":
            return None
        sys.meta_path.remove(self)  # once: the search below, and every later import, go to the regular finders
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            load(module)
            configure_torch()

        spec.loader.exec_module = exec_module
        return spec


def configure_torch_when_imported() -> None:
    """`configure_torch` now if torch is loaded, else the moment something imports it. Half of the stages never
    load torch, and importing it only to configure it took 1.4 s in each of them."""
    if "torch" in sys.modules:
        configure_torch()
    elif not any(isinstance(f, _ConfigureTorchOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _ConfigureTorchOnImport())


_SQRT_LIBRARY: list[Any] = []  # the torch.library that holds the override (alive while registered)


def exact_sqrt(x: Any) -> Any:
    """The correctly rounded square root of a CPU tensor (IEEE 754's, by numpy), in torch's result dtype."""
    import numpy as np
    import torch

    dtype = x.dtype if x.is_floating_point() or x.is_complex() else torch.get_default_dtype()
    work = x.detach().to(torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype).contiguous()
    return torch.from_numpy(np.sqrt(work.numpy())).to(dtype)


def _register_exact_sqrt() -> None:
    """`aten::sqrt` (and its in-place and out forms, which `torch._foreach_sqrt` calls) on the CPU: `exact_sqrt`.
    torch's kernel calls MKL's vector-math square root in its high-accuracy mode (within an ulp, not correctly
    rounded), whose last bit differs between this host and an emulated Haswell or EPYC CPU
    (docs/reproducibility.md); autograd keeps torch's own derivative."""
    import warnings

    import torch

    if _SQRT_LIBRARY:
        return

    def sqrt_(x: Any) -> Any:
        return x.copy_(exact_sqrt(x))

    def sqrt_out(x: Any, *, out: Any) -> Any:
        return out.resize_(x.shape).copy_(exact_sqrt(x))

    library = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():  # "Overriding a previously registered kernel": the point
        warnings.simplefilter("ignore")
        library.impl("sqrt", exact_sqrt, "CPU")
        library.impl("sqrt_", sqrt_, "CPU")
        library.impl("sqrt.out", sqrt_out, "CPU")
    _SQRT_LIBRARY.append(library)


def configure_torch() -> None:
    """torch's runtime switches: one intra-op thread, deterministic algorithms, no oneDNN (its kernels' blocking
    follows the host's cache sizes), and a correctly rounded square root on the CPU (`exact_sqrt`).

    `torch.use_deterministic_algorithms(True)` sets ATen's switch and, to set TorchInductor's flag too, imports
    `torch._inductor.config`, which takes 1.1 s: a second in each of the 41 stages and their worker processes,
    for a compiler nothing here runs. So ATen's switch is set directly, and Inductor's only where a plug-in has
    loaded Inductor already (`tests/runtime/test_numerics.py` checks both against the public call)."""
    import torch

    torch.set_num_threads(1)
    torch.backends.mkldnn.enabled = False
    _register_exact_sqrt()
    torch._C._set_deterministic_algorithms(True)
    inductor = sys.modules.get("torch._inductor.config")
    if inductor is not None:
        inductor.deterministic = True


def n_workers(workers: int) -> int:
    """Worker processes for a `workers` setting (parallelism comes from processes): 0 means every core this process
    may use (a SLURM job's, not the node's)."""
    if int(workers) < 0:
        raise ValueError(f"workers must be >= 0 (0 = all cores), got {workers}")
    return int(workers) or len(os.sched_getaffinity(0)) or 1

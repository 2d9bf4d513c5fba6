"""The pinned numerical environment: the same bits from every host of the kind that made `dvc.lock`.

Numerical libraries choose code paths by CPU and thread count, and each choice changes rounding:
torch's own kernels (ATen) by CPU capability, its convolutions (oneDNN) by instruction set, its BLAS
(MKL) by CPU and threads, numpy's loops by SIMD extension, numpy's and scipy's BLAS (OpenBLAS) by core
type, numba by target CPU. A digits CNN trained for three epochs gets another weight hash when any one of
them changes. `PINNED` fixes every one of them to the AVX2 path (x86-64-v3: every x86 server CPU since
2013), with one intra-op thread (parallelism comes from processes).

These variables are read when each library loads, so they must be set before the interpreter imports
numpy or torch: `ensure_pinned()` re-executes the running program with them when they are not already
in force (what every stage script does first), and worker processes inherit them. `configure_torch()`
sets the runtime switches that are not environment variables.

Not covered: CPUs without AVX2 (the libraries then fall back to other code paths), non-x86 CPUs, and AMD CPUs,
where MKL computes products of one to three rows with other kernels even in its STRICT mode
(docs/reproducibility.md: which CPUs get the lock's bits).
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
    # torch: ATen's vectorised kernels, oneDNN's convolutions, MKL's BLAS (conditional reproducibility)
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "DNNL_MAX_CPU_ISA": "AVX2",
    # STRICT: a row's product has the same bits whatever the number of rows beside it; without it MKL's AVX2 path
    # computes a batch's last n mod 6 rows with another kernel on Intel CPUs (docs/reproducibility.md), so a text
    # would encode to other bits in a batch of another size. Same speed on MiniLM's shapes.
    "MKL_CBWR": "AVX2,STRICT",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
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
    load torch, and importing it only to configure it took 1.4 s in each of them (issue 31)."""
    if "torch" in sys.modules:
        configure_torch()
    elif not any(isinstance(f, _ConfigureTorchOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _ConfigureTorchOnImport())


def configure_torch() -> None:
    """torch's runtime switches: one intra-op thread and deterministic algorithms.

    `torch.use_deterministic_algorithms(True)` sets ATen's switch and, to set TorchInductor's flag too, imports
    `torch._inductor.config`, which takes 1.1 s: a second in each of the 41 stages and their worker processes,
    for a compiler nothing here runs. So ATen's switch is set directly, and Inductor's only where a plug-in has
    loaded Inductor already (`tests/test_numerics.py` checks both against the public call)."""
    import torch

    torch.set_num_threads(1)
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

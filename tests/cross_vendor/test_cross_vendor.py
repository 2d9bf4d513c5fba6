"""The cross-vendor contract (pipeline.runtime.numerics): a slice of every numerical path the committed outputs take gives
the committed digests, on this host's CPU and, where QEMU's user-mode emulator is installed, on an emulated Intel
Haswell and an emulated AMD EPYC-Rome; MKL runs only its COMPATIBLE branch and oneDNN never runs."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.runtime.numerics import PINNED

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DIGESTS = json.loads((HERE / "digests.json").read_text())


def pinned_env(**extra: str) -> dict[str, str]:
    """This environment under the pinned variables, set beforehand: under an emulator, a program that re-executes
    itself to pin them would leave the emulator."""
    return {**os.environ, **PINNED, "ROBUSTNESS_PINNED": "1", "HF_HUB_OFFLINE": "1", **extra}


def run_slice(*prefix: str, parts: tuple[str, ...] = (), extra_env: dict[str, str] | None = None,
              timeout: int = 600) -> subprocess.CompletedProcess:
    """slice.py (its `parts`, or all) under `pinned_env`, behind `prefix` (an emulator) if any."""
    result = subprocess.run([*prefix, sys.executable, str(HERE / "slice.py"), *parts], cwd=ROOT,
                            env=pinned_env(**(extra_env or {})),
                            capture_output=True, text=True, timeout=timeout, check=False)
    assert result.returncode == 0, f"slice.py exited with {result.returncode}\n{result.stderr[-3000:]}"
    return result


def digests(result: subprocess.CompletedProcess) -> dict[str, str]:
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_slice_gives_the_committed_digests_on_the_vendor_independent_paths() -> None:
    result = run_slice(extra_env={"MKL_VERBOSE": "1", "ONEDNN_VERBOSE": "1"})
    assert digests(result) == DIGESTS
    log = result.stdout + result.stderr
    calls = [line for line in log.splitlines() if re.match(r"MKL_VERBOSE [SDCZ]\w+\(", line)]
    assert len(calls) > 100  # the CNN's products, the attention's, the float64 ones
    assert all("CNR:COMPATIBLE" in line for line in calls), next(line for line in calls if "CNR:COMPATIBLE" not in line)
    assert not [line for line in log.splitlines() if line.startswith("onednn_verbose") and ",exec," in line]


def emulator() -> str:
    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        pytest.skip("QEMU's user-mode emulator is not installed (optional: Debian's qemu-user); the native check ran")
    return qemu


def test_an_emulated_amd_cpu_trains_the_digits_networks_with_the_same_bits() -> None:
    """QEMU's user mode emulates the CPU model it is given (its vendor string, features and cache sizes, which MKL,
    NNPACK and OpenBLAS read), computing each instruction in software: the digits networks and the BLAS products
    on an AMD EPYC-Rome, about a minute (the GP fit and the text part, several more, are in the slow tier)."""
    found = digests(run_slice(emulator(), "-cpu", "EPYC-Rome", parts=("digits", "blas"), timeout=1200))
    assert found == {key: DIGESTS[key] for key in found} and len(found) == 6


@pytest.mark.slow
@pytest.mark.parametrize("cpu", ["Haswell", "EPYC-Rome"])
def test_an_emulated_intel_and_amd_cpu_give_every_digest(cpu: str) -> None:
    """The whole slice, text encoder included, on an emulated Intel Haswell and AMD EPYC-Rome (5-10 minutes each)."""
    assert digests(run_slice(emulator(), "-cpu", cpu, timeout=1800)) == DIGESTS


# argsorts of 32 arrays of 9 to 40 small integers: how many come out unsorted
ARGSORT_PROBE = ("import numpy as np; rng = np.random.default_rng(0); "
                 "print(sum(not (np.diff(a[a.argsort()]) >= 0).all() "
                 "for a in (rng.integers(0, 50, n) for n in range(9, 41))))")


def test_numpys_baseline_argsort_sorts_under_the_emulator() -> None:
    """What `ground_truth_task.py --numpy-baseline` relies on: with numpy's AVX2 kernels off, its argsort sorts under
    QEMU (QEMU 7.2 gets its AVX2 argsort wrong: 12 of these 32 arrays, natively none; docs/reproducibility.md)."""
    qemu = emulator()
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": "X86_V3 " + PINNED["NPY_DISABLE_CPU_FEATURES"]}
    result = subprocess.run([qemu, "-cpu", "EPYC-Rome", sys.executable, "-c", ARGSORT_PROBE], env=env,
                            capture_output=True, text=True, timeout=300, check=True)
    assert result.stdout.strip() == "0"


@pytest.mark.slow
def test_an_emulated_amd_cpu_recomputes_a_ground_truth_task_with_the_committed_values() -> None:
    """One task of the digits ground truth (36 configurations, the perturbations included) from the assets `make repro`
    prepared: natively and on an emulated AMD EPYC-Rome, every value equals the committed table's, and the per-input
    values agree too (40 minutes emulated). Emulated, numpy's own kernels run at its baseline: QEMU computes its
    AVX2 argsort wrong (`test_numpys_baseline_argsort_sorts_under_the_emulator`)."""
    if not (ROOT / "data" / "digits" / "model.pt").is_file():
        pytest.skip("needs the digits assets that `make repro` prepares (data/digits/)")
    qemu = emulator()
    script = [sys.executable, str(HERE / "ground_truth_task.py"), "digits", "2,3"]
    runs = (((), ()), ((qemu, "-cpu", "EPYC-Rome"), ("--numpy-baseline",)))  # (emulator, option): native, emulated
    results = [subprocess.run([*prefix, *script, *option], cwd=ROOT, env=pinned_env(), capture_output=True,
                              text=True, timeout=3600, check=False) for prefix, option in runs]
    native, emulated = (json.loads(r.stdout.strip().splitlines()[-1]) for r in results)
    assert [r.returncode for r in results] == [0, 0], (native, emulated)
    assert native["values_compared"] == emulated["values_compared"] == 396
    assert emulated["digest"] == native["digest"]

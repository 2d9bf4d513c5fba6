"""`configure_torch` sets what `torch.use_deterministic_algorithms(True)` sets, without importing TorchInductor
(a second of every stage's start-up), and Inductor's flag too where Inductor is loaded already."""
from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
{before}
import torch
{call}
inductor = sys.modules.get("torch._inductor.config")
print(json.dumps({{"deterministic": torch.are_deterministic_algorithms_enabled(),
                  "warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
                  "threads": torch.get_num_threads(),
                  "inductor_loaded": inductor is not None,
                  "inductor_deterministic": getattr(inductor, "deterministic", None)}}))
"""


def _state(call: str, before: str = "") -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE.format(before=before, call=call)], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_configure_torch_sets_what_the_public_call_sets_without_loading_inductor():
    ours = _state("from pipeline.runtime.numerics import configure_torch; configure_torch()")
    public = _state("torch.set_num_threads(1); torch.use_deterministic_algorithms(True)")
    assert public["inductor_loaded"] and public["inductor_deterministic"] is True
    assert ours == dict(public, inductor_loaded=False, inductor_deterministic=None)
    assert ours["deterministic"] is True and ours["warn_only"] is False and ours["threads"] == 1


def test_configure_torch_sets_inductors_flag_where_inductor_is_loaded():
    ours = _state("from pipeline.runtime.numerics import configure_torch; configure_torch()", before="import torch._inductor.config")
    assert ours["inductor_loaded"] and ours["inductor_deterministic"] is True and ours["deterministic"] is True


def test_configure_torch_when_imported_waits_for_torch_then_configures_it():
    """Called before torch loads, it loads nothing; the first `import torch` (here as a dependency of another
    module's import) leaves torch configured. Called after, it configures at once."""
    probe = ("import sys; from pipeline.runtime.numerics import configure_torch_when_imported; configure_torch_when_imported(); "
             "assert 'torch' not in sys.modules; configure_torch_when_imported(); import torch.nn.functional")
    public = _state("torch.set_num_threads(1); torch.use_deterministic_algorithms(True)")
    expected = dict(public, inductor_loaded=False, inductor_deterministic=None)
    assert _state("", before=probe) == expected
    assert _state("from pipeline.runtime.numerics import configure_torch_when_imported; configure_torch_when_imported()") == expected


def test_torch_sqrt_is_correctly_rounded_on_the_cpu() -> None:
    """configure_torch (conftest) replaces torch's CPU square root, MKL's vector math within an ulp, by IEEE 754's:
    numpy's, the oracle, in every form torch offers, with torch's dtypes and derivative."""
    import numpy as np
    import torch

    g = torch.Generator().manual_seed(0)
    for dtype in (torch.float32, torch.float64):
        x = torch.rand(200, 150, generator=g, dtype=dtype) * 7 + 1e-3
        exact = np.sqrt(x.numpy())
        assert np.array_equal(torch.sqrt(x).numpy(), exact) and np.array_equal(x.sqrt().numpy(), exact)
        assert np.array_equal(x.clone().sqrt_().numpy(), exact)
        assert np.array_equal(torch._foreach_sqrt([x])[0].numpy(), exact)  # what Adam's step calls
        out = torch.empty(0, dtype=dtype)
        assert np.array_equal(torch.sqrt(x, out=out).numpy(), exact)
    assert torch.sqrt(torch.tensor([4, 9])).dtype == torch.get_default_dtype()
    assert torch.sqrt(torch.tensor([-1.0])).isnan().all()
    leaf = torch.tensor([4.0, 0.25], requires_grad=True)
    leaf.sqrt().sum().backward()
    assert leaf.grad.tolist() == [0.25, 1.0]

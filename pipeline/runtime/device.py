"""The device a benchmark's models and fidelity metrics run on (`device: cpu | cuda | cuda:<n>`).

Every torch model adapter and fidelity metric takes a device: the digits CNN and its adequacy observer, torchvision
classifiers, the MiniLM text encoder (text head and BERT-F1, plain and code), SSIM, KID and its feature networks.
Modules are moved with `.to(device)`, each batch of inputs is converted on the CPU exactly as before
(`pipeline.models.cnn.to_tensor`) and then moved, and results come back with `.cpu()` before any further arithmetic
(softmax, argmax, means, the BERT-F1 token matching). chrF (SacreBLEU, pure Python string statistics) and code execution
(a sandboxed interpreter) are CPU computations by nature and ignore the device. Training (`prepare`) stays on the CPU:
the embedded models are trained in seconds, and a trained model is the same file whichever device later runs it.

CPU. On `device=cpu` every value is bit-identical to the code before devices existed: `.to(cpu)` and `.cpu()` return the
same tensor, and no operation changes order or dtype (`pipeline.runtime.numerics` pins the CPU numerics as before).

CUDA: same results within a tolerance, not the same bits. cuDNN convolutions, cuBLAS matrix products and CUDA reductions
(softmax, means, SSIM's sums, attention) add float32 numbers in another order than oneDNN/MKL/ATen on the CPU, and
float32 addition is not associative, so values differ in the last bits; cuBLAS and cuDNN may also pick another kernel
for another batch shape. `configure_cuda` (called whenever a CUDA device is resolved) keeps those differences at float32
rounding size:

* TF32 off: `torch.backends.cuda.matmul.allow_tf32 = False` and `torch.backends.cudnn.allow_tf32 = False` (cuDNN's
  default is True, which would round convolution inputs to a 10-bit mantissa, about 1e-3 relative), and
  `torch.set_float32_matmul_precision("highest")`. The legacy flags are used because torch 2.14 refuses to read them
  once the newer `fp32_precision` settings have been mixed in.
* `torch.backends.cudnn.benchmark = False` (no timing-based algorithm choice), and deterministic algorithms
  (`pipeline.runtime.numerics.configure_torch`, with `CUBLAS_WORKSPACE_CONFIG` pinned), so one machine repeats its own
  bits run after run.

`CUDA_TOLERANCE` states the bound per quantity, as an absolute difference on the quantity's own scale: class
probabilities 2e-5; SSIM 2e-6; sentence embeddings and BERT-F1 2e-6; KID 4e-6·K, where K is the largest of KID's three
mean polynomial kernel values (x·y/d + 1)³ (clean-clean, perturbed-perturbed, clean-perturbed feature pairs): KID is a
difference of these means, so its float32 rounding scales with them, not with |KID|. A predicted class can change only
for an input whose top two probabilities lie within the probability tolerance, so δ can differ by such near-ties, which
a CPU/CUDA comparison counts. Each bound is about fifteen times the float32 rounding error of its computation (measured
as docs/real-models.md, section 'How the CUDA tolerances were set', says).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pipeline.config.errors import ConfigError
from pipeline.config.rules import DEVICE_CHOICES, is_device_name

if TYPE_CHECKING:
    import torch


# absolute tolerances of CPU vs CUDA results (see the module docstring); KID's is kid_per_kernel · K
CUDA_TOLERANCE: dict[str, float] = {"probability": 2e-5, "ssim": 2e-6, "embedding": 2e-6, "bert_f1": 2e-6,
                                    "kid_per_kernel": 4e-6}


def resolve_device(name: Any, key: str = "device") -> torch.device:
    """The torch device `name` names, after checking that this machine has it; a CUDA device also gets
    `configure_cuda`. Raises `ConfigError` (a ValueError naming `key`, the value and the choices)."""
    import torch

    if not is_device_name(name):
        raise ConfigError(key, name, f"one of {DEVICE_CHOICES}")
    if name == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise ConfigError(key, name, f"cpu: CUDA is not available on this machine (torch {torch.__version__}, "
                                     f"built for CUDA {torch.version.cuda}, torch.cuda.is_available() is False)")
    index = int(name.partition(":")[2] or 0)
    count = torch.cuda.device_count()
    if index >= count:
        raise ConfigError(key, name, f"cpu or cuda:<n> with n in 0..{count - 1} (this machine has {count} CUDA device(s))")
    configure_cuda()
    return torch.device("cuda", index)


def configure_cuda() -> None:
    """CUDA's numerical switches for results within `CUDA_TOLERANCE` of the CPU's: TF32 off for matrix
    products and convolutions, full float32 matmul precision, no cuDNN autotuning."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.benchmark = False

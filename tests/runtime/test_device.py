"""The device setting (`pipeline.runtime.device`): the config accepts cpu, cuda and cuda:<n> only; `cuda` on a
machine without CUDA stops a stage at its start with one line; `device="cpu"` gives every model adapter
and fidelity metric the same bits as the path without a device; the stated CPU/CUDA tolerances are well
above float32 rounding (float64 as the oracle); and, where CUDA exists, CPU and CUDA agree within them."""
from __future__ import annotations

import copy
import sys

import numpy as np
import pytest
import torch

from pipeline.adequacy.hooks import capture
from pipeline.benchmark.build import build_benchmark, digits_features
from pipeline.plugins.catalog import FIDELITY
from pipeline.config import ConfigError, validate_config
from pipeline.runtime.device import CUDA_TOLERANCE, configure_cuda, is_device_name, resolve_device
from pipeline.fidelity.kid import EmbeddingFeatures, KIDFidelity
from pipeline.fidelity.ssim import SSIMFidelity, mean_ssim, ssim_per_image
from pipeline.fidelity.text import bert_f1_pair
from pipeline.models.cnn import load_cnn, predict_proba, to_tensor
from pipeline.models.text_encoder import TextEncoder, default_encoder
from pipeline.models.torchvision_classifier import TorchvisionClassifier
from pipeline.models.under_test import DigitsCNN, TextHead, Torchvision
from pipeline.perturb.compose import compose
from pipeline.stages.runner import benchmark_spec, compose_conf, compose_job
from pipeline.stages.layout import ROOT

CUDA = torch.cuda.is_available()
THETAS = [(0, 0), (2, 1), (1, 2), (2, 2)]
TEXTS = ["Shares in the bank rose sharply after the results.", "The minister said talks would resume on Monday.",
         "A late goal gave the champions a narrow win.", "def add(a, b):\n    return a + b\n"]
EDITED = ["Shres in teh bank rose sharply after results.", "The MINISTER said talks would resume on monday!",
          "A late goal gave champions a win.", "def add(a,b):\n\n    return a+b\n"]


def without_device(spec: dict) -> dict:
    """The spec as the library was called before devices existed: no `device` key anywhere."""
    out = {k: v for k, v in spec.items() if k != "device"}
    out["model"] = {k: v for k, v in spec["model"].items() if k != "device"}
    return out


@pytest.fixture(scope="module")
def perturbed(tiny):
    spec, folder = tiny
    bench = build_benchmark(spec, folder)
    return bench.clean, [compose(bench.perturbations, bench.clean, t, bench.seed) for t in THETAS]


# ---- the setting ----------------------------------------------------------------------------------

def test_device_is_cpu_by_default_and_reaches_the_model_and_fidelity_specs():
    cfg = compose_job([])
    assert cfg.device == "cpu"
    spec = benchmark_spec(compose_job(["device=cuda:1"]))  # valid syntax; availability is a stage-start check
    assert spec["device"] == "cuda:1" and spec["model"]["device"] == "cuda:1"


@pytest.mark.parametrize("good", ["cpu", "cuda", "cuda:0", "cuda:12"])
def test_device_names_the_config_accepts(good):
    assert is_device_name(good)
    cfg = compose_conf([])
    cfg.device = good
    assert validate_config(cfg).device == good


@pytest.mark.parametrize("bad", ["gpu", "CUDA", "cuda:", "cuda:x", "cuda:-1", "cpu:0", " cpu", "mps", 0])
def test_bad_device_is_rejected_naming_the_key_and_the_choices(bad):
    cfg = compose_conf([])
    cfg.device = bad
    with pytest.raises(ConfigError) as err:
        validate_config(cfg)
    assert str(err.value).startswith("device: ")
    assert "one of cpu, cuda, cuda:<n>" in str(err.value)
    with pytest.raises(ConfigError, match="^device: .* one of cpu, cuda, cuda:<n>"):
        resolve_device(bad)


@pytest.mark.skipif(CUDA, reason="this machine has CUDA")
def test_cuda_without_cuda_is_a_clear_error():
    with pytest.raises(ConfigError, match=r"^device: 'cuda' — cpu: CUDA is not available on this machine"):
        resolve_device("cuda")
    with pytest.raises(ConfigError, match=r"^model\.device: 'cuda:0' — cpu: CUDA is not available"):
        resolve_device("cuda:0", "model.device")


@pytest.mark.skipif(CUDA, reason="this machine has CUDA")
def test_groundtruth_stage_with_cuda_and_no_cuda_stops_at_start(tmp_path, monkeypatch, capsys):
    """The stage's entry (`run_stage` with the script's argv, in this process; a rejected setting as a process of its
    own: tests/scripts/test_bad_inputs.py::test_as_real_processes)."""
    import importlib

    (tmp_path / "data" / "tiny").mkdir(parents=True)  # the stage's input folder exists: the device is what fails
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", [str(ROOT / "scripts" / "groundtruth.py"), "benchmark=tiny", "device=cuda",
                                      f"paths.data={tmp_path / 'data'}", f"paths.outputs={out}"])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        importlib.import_module("pipeline.stages.runner").run_stage(importlib.import_module("scripts.groundtruth").main)
    err = capsys.readouterr().err
    assert exit_.value.code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: device: 'cuda' — cpu: CUDA is not available"), err
    assert not out.exists() and not any((tmp_path / "data").rglob("*.*"))


def test_cuda_index_beyond_the_machine_and_cuda_numerics(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    with pytest.raises(ConfigError, match=r"^device: 'cuda:2' — cpu or cuda:<n> with n in 0..1"):
        resolve_device("cuda:2")
    flags = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32, torch.get_float32_matmul_precision(),
             torch.backends.cudnn.benchmark)
    try:
        torch.backends.cudnn.allow_tf32 = True  # torch's default, which configure_cuda must turn off
        assert resolve_device("cuda") == torch.device("cuda", 0)
        assert resolve_device("cuda:1") == torch.device("cuda", 1)
        assert not torch.backends.cuda.matmul.allow_tf32 and not torch.backends.cudnn.allow_tf32
        assert torch.get_float32_matmul_precision() == "highest" and not torch.backends.cudnn.benchmark
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = flags[:2]
        torch.set_float32_matmul_precision(flags[2])
        torch.backends.cudnn.benchmark = flags[3]


# ---- device="cpu": the same bits as the path without a device ---------------------------------------

def test_benchmark_on_cpu_is_the_default_path_bit_for_bit(tiny):
    """digits CNN, its adequacy observer, SSIM and KID with its feature network, through build_benchmark."""
    spec, folder = tiny
    assert spec["device"] == "cpu" and spec["fidelity"] == ["ssim", "kid"] and spec["adequacy"]
    on_cpu, default = build_benchmark(spec, folder), build_benchmark(without_device(spec), folder)
    assert on_cpu.clean_score == default.clean_score
    for theta in THETAS:
        a, b = on_cpu.evaluate(theta), default.evaluate(theta)
        values = [k for k in a if not k.startswith("seconds_")]
        assert values == [k for k in b if not k.startswith("seconds_")] and len(values) > 4
        assert all(a[k] == b[k] for k in values), theta


def test_adapters_on_cpu_equal_the_computation_without_devices(tiny, perturbed):
    """Oracles: the forward passes written out as they were before devices (no .to, no .cpu)."""
    spec, folder = tiny
    clean, sets = perturbed
    net = load_cnn(folder / "model.pt")
    model = DigitsCNN(folder, width=8, epochs=1, seed=0, device=spec["model"]["device"], batch_size=16)
    predict = lambda x: model.predict_proba(x).argmax(1)  # noqa: E731  (what `pipeline.benchmark.plugin_code.predictions_of` gives)
    observe = model.observer(spec["adequacy"])
    with torch.no_grad():
        for x in sets:
            proba = torch.cat([torch.softmax(net(to_tensor(x[s : s + 16])), dim=1) for s in range(0, len(x), 16)]).double().numpy()
            assert np.array_equal(predict_proba(net, x, 16), proba)
            assert np.array_equal(predict(x), proba.argmax(1))
            predictions, _ = observe(x)
            assert np.array_equal(predictions, proba.argmax(1))
            ssim = float(ssim_per_image(to_tensor(x), to_tensor(clean)).double().sum()) / len(clean)
            assert mean_ssim(clean, x, device="cpu") == ssim == SSIMFidelity(clean, device=torch.device("cpu"))(x)
    features = digits_features(spec["features"], folder)
    kid = dict(subset_size=1000, subsets=10, seed=0, batch_size=16)
    on_cpu, default = KIDFidelity(clean, features, device="cpu", **kid), KIDFidelity(clean, copy.deepcopy(features), **kid)
    assert [on_cpu(x) for x in sets] == [default(x) for x in sets]


def test_torchvision_adapter_on_cpu_is_the_default_path(tmp_path, tiny, perturbed):
    torch.manual_seed(0)
    net = TorchvisionClassifier("resnet18", 10, None, 32)
    torch.save(net.net.state_dict(), tmp_path / "w.pt")
    spec = {"arch": "resnet18", "num_classes": 10, "weights_path": str(tmp_path / "w.pt"), "input_size": 32, "batch_size": 8}
    on_cpu, on_default = Torchvision(**spec, device="cpu"), Torchvision(**spec)
    with_cpu, default = (lambda x: on_cpu.predict_proba(x).argmax(1)), (lambda x: on_default.predict_proba(x).argmax(1))
    with torch.no_grad():
        for x in perturbed[1][:2]:
            expected = torch.cat([torch.softmax(net(to_tensor(x[s : s + 8])), 1) for s in range(0, len(x), 8)]).double().numpy().argmax(1)
            assert np.array_equal(with_cpu(x), expected) and np.array_equal(default(x), expected)


def test_text_adapters_on_cpu_are_the_default_path(tmp_path):
    """text_head (MiniLM encoder + head), BERT-F1 and its code variant: device="cpu" shares the default encoder."""
    assert default_encoder("cpu") is default_encoder()
    encoder = default_encoder()
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "model.npz", coef=rng.normal(size=(3, encoder.dim)), intercept=rng.normal(size=3),
             classes=np.array([0, 1, 2]))
    head = TextHead(tmp_path, C=1.0, max_iter=1, device="cpu").predict
    default_head = TextHead(tmp_path, C=1.0, max_iter=1).predict
    with np.load(tmp_path / "model.npz") as z:
        logits = encoder.embed(EDITED).astype(np.float64) @ z["coef"].T + z["intercept"]
    assert np.array_equal(head(EDITED), logits.argmax(1)) and np.array_equal(default_head(EDITED), logits.argmax(1))
    for name, spec in (("bert_f1", {}), ("bert_f1_code", {"dataset": {"variants": 1, "fidelity_variants": None}})):
        on_cpu = FIDELITY.get(name)(TEXTS, {**spec, "device": "cpu"}, tmp_path)
        default = FIDELITY.get(name)(TEXTS, spec, tmp_path)
        expected = np.mean([bert_f1_pair(c, r) for c, r in zip(encoder.encode(EDITED), encoder.encode(TEXTS))])
        assert on_cpu(EDITED) == default(EDITED) == float(expected)
    fresh = TextEncoder(device="cpu")  # not the shared one: nothing cached, the same model and bits
    assert all(np.array_equal(a.sentence, b.sentence) and torch.equal(a.tokens, b.tokens)
               for a, b in zip(fresh.encode(EDITED), encoder.encode(EDITED)))


# ---- the tolerances against float32 rounding (float64 as the oracle) -------------------------------

MARGIN = 5  # each tolerance is at least this many times the float32 error measured here


def kernel_scale(feature: torch.nn.Module, clean: np.ndarray, perturbed: np.ndarray) -> float:
    """K: the largest of KID's three mean polynomial kernel values (x·y/d + 1)³ over clean-clean,
    perturbed-perturbed and clean-perturbed feature pairs (the scale of KID's float32 rounding)."""
    with torch.no_grad():
        f, g = (feature.embed(to_tensor(x)).double() for x in (clean, perturbed))
    return max(float(((a @ b.T / f.shape[1] + 1) ** 3).mean()) for a, b in ((f, f), (g, g), (f, g)))


class Float64Embedding(torch.nn.Module):
    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = copy.deepcopy(model).double()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model.embed(x.double())


def test_tolerances_are_well_above_float32_rounding_of_vision_metrics(tiny, perturbed):
    spec, folder = tiny
    clean, sets = perturbed
    net = load_cnn(folder / "model.pt")
    net64 = copy.deepcopy(net).double()
    feature = load_cnn(folder / "features.pt")
    k32, k64 = KIDFidelity(clean, EmbeddingFeatures(feature)), KIDFidelity(clean, Float64Embedding(feature))
    with torch.no_grad():
        for x in sets:
            p32 = predict_proba(net, x)
            p64 = torch.softmax(net64(to_tensor(x).double()), 1).numpy()
            assert MARGIN * np.abs(p32 - p64).max() <= CUDA_TOLERANCE["probability"]
            s64 = float(ssim_per_image(to_tensor(x).double(), to_tensor(clean).double()).mean())
            assert MARGIN * abs(mean_ssim(clean, x) - s64) <= CUDA_TOLERANCE["ssim"]
            assert MARGIN * abs(k32(x) - k64(x)) <= CUDA_TOLERANCE["kid_per_kernel"] * kernel_scale(feature, clean, x)


def test_tolerances_are_well_above_float32_rounding_of_the_text_encoder():
    encoder = TextEncoder(cache_tokens=0)
    encoder64 = TextEncoder(cache_tokens=0)
    encoder64.model = copy.deepcopy(encoder.model).double()
    a, b = encoder.encode(TEXTS + EDITED), encoder64.encode(TEXTS + EDITED)
    assert b[0].sentence.dtype == np.float64  # the oracle really ran in float64
    for x, y in zip(a, b):
        assert MARGIN * np.abs(x.sentence - y.sentence).max() <= CUDA_TOLERANCE["embedding"]
    n = len(TEXTS)
    for i in range(n):
        assert MARGIN * abs(bert_f1_pair(a[n + i], a[i]) - bert_f1_pair(b[n + i], b[i])) <= CUDA_TOLERANCE["bert_f1"]


# ---- CPU vs CUDA (run where CUDA exists) -------------------------------------------------------------

@pytest.mark.skipif(not CUDA, reason="needs CUDA")
def test_cuda_agrees_with_cpu_within_the_stated_tolerance(tiny, perturbed, tmp_path):
    configure_cuda()
    spec, folder = tiny
    clean, sets = perturbed
    net = load_cnn(folder / "model.pt")
    gpu = copy.deepcopy(net).to("cuda")
    feature = load_cnn(folder / "features.pt")
    kid_cpu = KIDFidelity(clean, EmbeddingFeatures(copy.deepcopy(feature)), subsets=10)
    kid_gpu = KIDFidelity(clean, EmbeddingFeatures(copy.deepcopy(feature)), subsets=10, device="cuda")
    layers = ["features.1", "features.4", "features.8"]
    for x in sets:
        p, q = predict_proba(net, x), predict_proba(gpu, x)
        assert np.abs(p - q).max() <= CUDA_TOLERANCE["probability"]
        top2 = np.sort(p, axis=1)[:, -2:]
        clear = (top2[:, 1] - top2[:, 0]) > 2 * CUDA_TOLERANCE["probability"]
        assert np.array_equal(p.argmax(1)[clear], q.argmax(1)[clear])
        (l_cpu, a_cpu), (l_gpu, a_gpu) = capture(net, layers, x, transform=to_tensor), capture(gpu, layers, x, transform=to_tensor)
        assert np.allclose(l_cpu, l_gpu, rtol=1e-4, atol=1e-4) and all(np.allclose(a_cpu[k], a_gpu[k], rtol=1e-4, atol=1e-4) for k in layers)
        assert abs(mean_ssim(clean, x) - mean_ssim(clean, x, device="cuda")) <= CUDA_TOLERANCE["ssim"]
        assert abs(kid_cpu(x) - kid_gpu(x)) <= CUDA_TOLERANCE["kid_per_kernel"] * kernel_scale(feature, clean, x)
    torch.manual_seed(0)
    vit = TorchvisionClassifier("vit_b_16", 10, None, 224)
    x = sets[1][:8]
    assert np.abs(predict_proba(vit, x, 4) - predict_proba(copy.deepcopy(vit).to("cuda"), x, 4)).max() <= CUDA_TOLERANCE["probability"]
    cpu_text, gpu_text = TextEncoder(cache_tokens=0), TextEncoder(cache_tokens=0, device="cuda")
    a, b = cpu_text.encode(TEXTS + EDITED), gpu_text.encode(TEXTS + EDITED)
    assert all(np.abs(x.sentence - y.sentence).max() <= CUDA_TOLERANCE["embedding"] for x, y in zip(a, b))
    assert all(y.tokens.device.type == "cpu" for y in b)
    n = len(TEXTS)
    assert all(abs(bert_f1_pair(a[n + i], a[i]) - bert_f1_pair(b[n + i], b[i])) <= CUDA_TOLERANCE["bert_f1"] for i in range(n))
    on_cpu, on_gpu = build_benchmark(spec, folder), build_benchmark({**spec, "device": "cuda", "model": {**spec["model"], "device": "cuda"}}, folder)
    for theta, x in zip(THETAS, sets):
        r, g = on_cpu.evaluate(theta), on_gpu.evaluate(theta)
        assert abs(r["rho_ssim"] - g["rho_ssim"]) <= CUDA_TOLERANCE["ssim"]
        assert abs(r["rho_kid"] - g["rho_kid"]) <= CUDA_TOLERANCE["kid_per_kernel"] * kernel_scale(feature, clean, x)
        assert abs(r["psi"] - g["psi"]) <= 1 / len(clean) + 1e-12  # at most one near-tie among 40 inputs

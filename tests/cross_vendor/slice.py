"""A slice of every numerical path the committed outputs take, hashed: prints one JSON object {part: md5}.

Run under the pinned numerics (it pins itself, or inherits them), natively or under an emulated CPU
(`tests/cross_vendor/test_cross_vendor.py`): the digits CNN's training steps and inference, SSIM and the KID
feature network, the text encoder's encodings and BERT-F1, code chrF and code BERT-F1, numpy's and scipy's
OpenBLAS, torch's float64 products and Cholesky factor, and GP-PND's Gaussian-process fit."""
import pipeline.runtime.pin  # noqa: F401  (first: pins the numerical environment)

import hashlib
import json
import sys

import numpy as np
import scipy.linalg
import torch

from pipeline.runtime.numerics import configure_torch


def md5(*arrays) -> str:
    h = hashlib.md5()
    for a in arrays:
        h.update(np.ascontiguousarray(a.detach().numpy() if isinstance(a, torch.Tensor) else a).tobytes())
    return h.hexdigest()


def digits() -> dict[str, str]:
    from pipeline.fidelity.ssim import ssim_values
    from pipeline.models.cnn import predict_proba, train_cnn

    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(80, 32, 32, 3), dtype=np.uint8)
    labels = rng.integers(0, 10, size=80)
    net = train_cnn(images, labels, seed=0, width=8, epochs=1)
    shifted = np.clip(images.astype(np.int16) + rng.integers(-20, 21, size=images.shape), 0, 255).astype(np.uint8)
    with torch.no_grad():
        features = net.embed(torch.from_numpy(images[:32]).permute(0, 3, 1, 2).float() / 255)
    return {"cnn_training": md5(*net.parameters()), "cnn_inference": md5(predict_proba(net, images)),
            "ssim": md5(ssim_values(images, shifted)), "kid_features": md5(features)}


def text() -> dict[str, str]:
    from pipeline.fidelity.code import code_chrf
    from pipeline.fidelity.text import bert_f1_scores
    from pipeline.models.text_encoder import default_encoder

    clean = ["The central bank raised interest rates by a quarter point on Tuesday.",
             "Shares in the carmaker fell after it cut its profit forecast.",
             "def add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    return a + b\n",
             "A short one.", "Ministers said the talks would resume next week in Brussels, officials confirmed."]
    perturbed = ["The central bank raised intrest rates by a quater point on Tuesday.",
                 "Shares in the car maker fell after it cut its profit forecast!",
                 "def  add(a, b):\n\n    \"\"\"Return the SUM of a and b.\"\"\"\n    return a + b\n",
                 "A shrt one.", "Ministers said talks would resume next week in Brussels, officials confirmed."]
    encoder = default_encoder()
    encodings = encoder.encode(clean + perturbed)
    return {"text_encodings": md5(*[e.sentence for e in encodings], *[e.tokens for e in encodings]),
            "bert_f1": md5(bert_f1_scores(encoder, clean, perturbed)),
            "code_chrf": md5(np.array(code_chrf(clean).per_input(perturbed), dtype=np.float64))}


def search() -> dict[str, str]:
    from pipeline.search.surrogate.gp_surrogate import fit_gp

    rng = np.random.default_rng(2)
    Z = rng.integers(0, 6, size=(40, 4)) / 5.0
    y = np.sin(3 * Z[:, 0]) + Z[:, 1] * Z[:, 2] + 0.05 * rng.standard_normal(40)
    _, params, log_likelihood = fit_gp(Z, y)
    return {"gp_fit": md5(np.array([params["amplitude"], params["noise"], log_likelihood]), params["length_scale"])}


def blas() -> dict[str, str]:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((96, 96))
    spd = a @ a.T + 96 * np.eye(96)
    g = torch.from_numpy(spd)
    return {"openblas": md5(a.astype(np.float32) @ a[:, :40].astype(np.float32), np.linalg.solve(spd, a[:, 0]),
                            scipy.linalg.cho_factor(spd)[0]),
            "torch_float64": md5(g @ g, torch.linalg.cholesky(g))}


if __name__ == "__main__":
    configure_torch()
    parts = sys.argv[1:] or ["digits", "text", "search", "blas"]
    out = {}
    for part in parts:
        out.update({"digits": digits, "text": text, "search": search, "blas": blas}[part]())
    print(json.dumps(out, sort_keys=True))

"""The adequacy metrics on the text benchmark (`pipeline.adequacy.text_model`): the block outputs come from
the encoder's one forward pass and equal transformers' hidden states averaged over tokens; the projection
of the surprise layer is PCA; and every configuration's row gets `adequacy_<metric>` equal to the
brute-force oracles on activations recomputed independently, with ψ unchanged."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from pipeline.adequacy import ActivationProfile
from pipeline.adequacy.text_model import PCA_COMPONENTS, SURPRISE_LAYER, Projection, coverage_layers, fit_projection
from pipeline.benchmark.build import build_benchmark
from pipeline.models.text_encoder import default_encoder, load_local_model, minilm_path
from pipeline.perturb.compose import compose
from pipeline.benchmark.preparation import prepare
from pipeline.stages.runner import benchmark_spec, compose_job
from tests.adequacy import adequacy_oracles as oracle

TEXTS = ["Shares in the bank fell sharply after it reported a loss.", "The striker scored twice in the final."]


def _hidden_means(text: str) -> np.ndarray:
    """(L, d) transformers' hidden states of blocks 1..L averaged over the text's tokens: the oracle."""
    tokenizer, model = load_local_model(minilm_path(), "cpu")
    ids = tokenizer([text], truncation=True, max_length=256, return_tensors="pt")
    with torch.inference_mode():
        hidden = model(**ids, output_hidden_states=True).hidden_states
    return torch.stack([h[0].mean(dim=0) for h in hidden[1:]]).numpy()


def test_block_outputs_are_the_token_averaged_hidden_states():
    for text, encoding in zip(TEXTS, default_encoder().encode(TEXTS)):
        assert encoding.layers.shape == (6, 384)
        np.testing.assert_allclose(encoding.layers, _hidden_means(text), rtol=0, atol=1e-5)


def test_projection_is_the_principal_axes():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 6)) @ np.diag([5.0, 3.0, 1.0, 0.5, 0.1, 0.01])
    proj = fit_projection(x, 2)
    u, s, vt = np.linalg.svd(x - x.mean(axis=0), full_matrices=False)
    expected = (x - x.mean(axis=0)) @ vt[:2].T
    np.testing.assert_allclose(np.abs(proj(x)), np.abs(expected), atol=1e-9)        # up to the sign of each axis
    with pytest.raises(ValueError, match="n_components must be in 1..6"):
        fit_projection(x, 7)


@pytest.fixture(scope="module")
def bbc(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bbc")
    spec = benchmark_spec(compose_job(["benchmark=bbc_news", "benchmark.dataset.test_size=10"]))
    prepare(spec, folder, progress=False)
    return spec, folder


def test_prepare_writes_the_text_profile(bbc):
    spec, folder = bbc
    profile = ActivationProfile.load(folder / "adequacy_profile.npz")
    assert profile.layers == [*coverage_layers(6), SURPRISE_LAYER] and list(profile.traces) == [SURPRISE_LAYER]
    assert profile.traces[SURPRISE_LAYER].shape[1] == PCA_COMPONENTS
    assert Projection.load(folder / "adequacy_projection.npz").components.shape == (PCA_COMPONENTS, 384)


def _oracle_activations(texts: list[str], projection: Projection) -> dict[str, list[list[float]]]:
    layers = np.stack([_hidden_means(t) for t in texts])
    acts = {name: layers[:, i].astype(np.float64).tolist() for i, name in enumerate(coverage_layers(6))}
    sentences = np.stack([e.sentence for e in default_encoder().encode(texts)])
    acts[SURPRISE_LAYER] = projection(sentences).tolist()
    return acts


def test_rows_carry_the_oracles_adequacy_and_the_same_psi(bbc):
    spec, folder = bbc
    bench = build_benchmark(spec, folder)
    plain = dataclasses.replace(bench, observe=None)
    profile = ActivationProfile.load(folder / "adequacy_profile.npz")
    projection = Projection.load(folder / "adequacy_projection.npz")
    low = {k: v.tolist() for k, v in profile.low.items() if k != SURPRISE_LAYER}
    high = {k: v.tolist() for k, v in profile.high.items() if k != SURPRISE_LAYER}
    for theta in [(0, 0, 0, 0), (3, 2, 0, 1)]:
        row, reference = bench.evaluate(theta), plain.evaluate(theta)
        assert row["psi"] == reference["psi"]
        texts = compose(bench.perturbations, bench.clean, theta, bench.seed)
        acts = _oracle_activations(list(texts), projection)
        coverage = {k: v for k, v in acts.items() if k != SURPRISE_LAYER}
        assert math.isclose(row["adequacy_nac"], oracle.nac(coverage, 0.5), abs_tol=1e-9)
        assert math.isclose(row["adequacy_snac"], oracle.snac(coverage, high), abs_tol=1e-9)
        assert math.isclose(row["adequacy_kmnc"], oracle.kmnc(coverage, low, high, 10), abs_tol=1e-9)
        assert math.isclose(row["adequacy_tknc"], oracle.tknc(coverage, 2), abs_tol=1e-9)
        predictions = bench.predict(texts)
        train = profile.traces[SURPRISE_LAYER].tolist()
        dsa = np.mean([oracle.dsa(x, int(p), train, profile.classes.tolist()) for x, p in zip(acts[SURPRISE_LAYER], predictions)])
        assert math.isclose(row["adequacy_dsa"], dsa, rel_tol=1e-6)
        assert np.isfinite(row["adequacy_lsa"]) and 0 < row["adequacy_deepgini"] < 1

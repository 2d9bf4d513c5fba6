"""ADEQUACY: seven names, one signature, wired to the settings; settings validation; the whole path on a
tiny digits CNN."""
import dataclasses

import numpy as np
import pytest
import torch

from pipeline.adequacy import ADEQUACY, AdequacySettings, adequacy_scores, build_profile, coverage, gini, surprise
from pipeline.adequacy.hooks import capture
from pipeline.models.cnn import SmallCNN, to_tensor

NAMES = ["nac", "snac", "kmnc", "tknc", "deepgini", "lsa", "dsa"]


def test_the_seven_names():
    assert ADEQUACY.names() == NAMES
    with pytest.raises(ValueError, match="valid choices: nac, snac"):
        ADEQUACY.get("nc")


def test_settings_defaults_and_refusals():
    s = AdequacySettings()
    assert (s.nac_threshold, s.kmnc_sections, s.tknc_k, s.lsa_variance_threshold) == (0.5, 10, 2, 1e-5)
    assert s.coverage_layers == ("features.1", "features.4", "features.8") and s.surprise_layers == ("features.8",)
    assert AdequacySettings(surprise_layers=("head", "features.8")).layers == ("features.1", "features.4", "features.8", "head")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.tknc_k = 3
    for bad in ({"nac_threshold": 1.0}, {"kmnc_sections": 0}, {"tknc_k": 1.5}, {"lsa_variance_threshold": -1.0},
                {"coverage_layers": ()}, {"surprise_layers": ("a", "a")}):
        with pytest.raises(ValueError):
            AdequacySettings(**bad)
    with pytest.raises(TypeError):
        AdequacySettings(coverage_layers="features.1")


def _digits_run():
    torch.manual_seed(0)
    model = SmallCNN(width=4, n_classes=2, image_size=16).eval()
    rng = np.random.default_rng(0)
    train = rng.integers(0, 256, size=(200, 16, 16, 3), dtype=np.uint8)
    test = rng.integers(0, 256, size=(20, 16, 16, 3), dtype=np.uint8)
    settings = AdequacySettings()
    _, train_acts = capture(model, settings.layers, train, transform=to_tensor)
    # classes assigned rather than predicted (an untrained model may predict one class only): 100 each
    profile = build_profile(train_acts, np.arange(200) % 2, trace_layers=settings.layers)
    logits, acts = capture(model, settings.layers, test, transform=to_tensor)
    return settings, profile, logits, acts


def test_registry_entries_are_wired_to_their_settings():
    _, profile, logits, acts = _digits_run()
    s = AdequacySettings(coverage_layers=("features.4", "features.8"), surprise_layers=("features.4",),
                         nac_threshold=0.25, kmnc_sections=3, tknc_k=1, lsa_variance_threshold=1e-6)
    p = gini.softmax(logits)
    pred = p.argmax(axis=1)
    cov = {k: acts[k] for k in s.coverage_layers}
    want = {"nac": coverage.nac(cov, 0.25), "snac": coverage.snac(cov, profile), "kmnc": coverage.kmnc(cov, profile, 3),
            "tknc": coverage.tknc(cov, 1), "deepgini": gini.deepgini(p),
            "lsa": surprise.lsa(acts, pred, profile, ["features.4"], 1e-6),
            "dsa": surprise.dsa(acts, pred, profile, ["features.4"])}
    got = {name: ADEQUACY.get(name)(acts, p, pred, profile, s) for name in NAMES}
    assert got == want
    assert adequacy_scores(NAMES, logits, acts, profile, s) == want
    default = adequacy_scores(NAMES, logits, acts, profile, AdequacySettings())
    assert all(default[n] != want[n] for n in ("nac", "kmnc", "tknc", "lsa", "dsa"))  # the settings are read
    with pytest.raises(ValueError, match="lack layers"):
        ADEQUACY.get("kmnc")({"features.8": acts["features.8"]}, p, pred, profile, s)


def test_all_seven_on_the_digits_cnn():
    settings, profile, logits, acts = _digits_run()
    values = adequacy_scores(NAMES, logits, acts, profile, settings)
    assert list(values) == NAMES and all(isinstance(v, float) and np.isfinite(v) for v in values.values())
    assert all(0.0 <= values[n] <= 1.0 for n in ("nac", "snac", "kmnc", "tknc")) and 0.0 <= values["deepgini"] <= 0.5
    assert values["nac"] > 0.0 and values["kmnc"] > 0.0 and values["tknc"] > 0.0 and values["dsa"] > 0.0

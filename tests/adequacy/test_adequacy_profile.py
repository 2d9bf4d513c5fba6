"""The training activation profile: bounds, traces, .npz round trip, refusals."""
import numpy as np
import pytest

from pipeline.adequacy.profile import ActivationProfile, build_profile


def _acts():
    rng = np.random.default_rng(0)
    return {"features.1": rng.normal(size=(9, 4)), "features.8": rng.normal(size=(9, 6)).astype(np.float32)}


def test_bounds_and_traces():
    acts, classes = _acts(), np.arange(9) % 3
    p = build_profile(acts, classes, trace_layers=["features.8"])
    assert p.layers == ["features.1", "features.8"] and list(p.traces) == ["features.8"]
    for layer, a in acts.items():
        np.testing.assert_array_equal(p.low[layer], a.min(axis=0))
        np.testing.assert_array_equal(p.high[layer], a.max(axis=0))
    np.testing.assert_array_equal(p.trace(["features.8"]), acts["features.8"])
    np.testing.assert_array_equal(p.classes, classes)
    with pytest.raises(ValueError, match="read-only"):
        p.low["features.1"][0] = 1.0
    with pytest.raises(ValueError, match="no training traces"):
        p.trace(["features.1"])


def test_save_load_round_trip(tmp_path):
    acts = _acts()
    p = build_profile(acts, np.arange(9) % 2)
    p.save(tmp_path / "sub" / "profile.npz")
    assert sorted(f.name for f in (tmp_path / "sub").iterdir()) == ["profile.npz"]
    q = ActivationProfile.load(tmp_path / "sub" / "profile.npz")
    assert q.layers == p.layers and list(q.traces) == list(p.traces)
    for layer in p.layers:
        np.testing.assert_array_equal(q.low[layer], p.low[layer])
        np.testing.assert_array_equal(q.high[layer], p.high[layer])
        np.testing.assert_array_equal(q.traces[layer], p.traces[layer])
    np.testing.assert_array_equal(q.classes, p.classes)
    assert q.classes.dtype == np.int64 and not q.low["features.8"].flags.writeable


def test_bad_profiles_are_refused():
    acts = _acts()
    with pytest.raises(ValueError, match="classes"):
        build_profile(acts, np.zeros(8, dtype=int))
    with pytest.raises(ValueError, match="classes"):
        build_profile(acts, np.zeros(9))
    with pytest.raises(ValueError, match="trace layer 'head'"):
        build_profile(acts, np.zeros(9, dtype=int), trace_layers=["head"])
    with pytest.raises(ValueError, match="empty"):
        build_profile({"a": np.zeros((0, 3))}, np.zeros(0, dtype=int))
    with pytest.raises(ValueError, match="low <= high"):
        ActivationProfile(low={"a": np.ones(2)}, high={"a": np.zeros(2)}, traces={}, classes=np.zeros(0, dtype=int))

"""NAC, SNAC, KMNC, TKNC against hand-worked values and brute-force loops, and their set monotonicity."""
import numpy as np
import pytest

from pipeline.adequacy import coverage
from pipeline.adequacy.profile import build_profile
from tests.adequacy import adequacy_oracles as oracle


def _lists(acts):
    return {layer: np.asarray(a, dtype=float).tolist() for layer, a in acts.items()}


def _random_acts(rng, n_inputs, widths=(3, 5, 1)):
    # ReLU-like: many exact zeros and some ties, the cases that break naive implementations
    return {f"l{i}": np.maximum(rng.normal(size=(n_inputs, w)), 0.0).round(1) for i, w in enumerate(widths)}


def _profile(rng, widths=(3, 5, 1), n_train=12):
    acts = _random_acts(rng, n_train, widths)
    acts["l0"][:, 0] = 0.7  # a constant (zero-range) neuron
    return build_profile(acts, np.arange(n_train) % 2)


def test_nac_by_hand():
    acts = {"a": [[0.0, 1.0, 2.0], [3.0, 0.0, 0.0]], "b": [[5.0, 5.0], [1.0, 2.0]]}
    # scaled per input and layer: a -> [0, .5, 1], [1, 0, 0]; b -> [0, 0] (constant), [0, 1]
    assert coverage.nac(acts, 0.5) == pytest.approx(3 / 5)  # a: neurons 0, 2; b: neuron 1 (0.5 is not > 0.5)
    assert coverage.nac(acts, 0.0) == pytest.approx(4 / 5)  # a: all three; b: neuron 1
    assert coverage.nac({"a": acts["a"]}, 0.99) == pytest.approx(2 / 3)


def test_snac_by_hand():
    profile = build_profile({"a": np.array([[0.0, 0.0], [1.0, 2.0]])}, np.array([0, 1]))
    assert coverage.snac({"a": [[1.0, 3.0], [0.5, 2.0]]}, profile) == 0.5  # 3 > 2; 1 is not > 1
    assert coverage.snac({"a": [[1.0, 2.0]]}, profile) == 0.0


def test_kmnc_by_hand():
    train = np.array([[0.0, 0.0, 5.0], [1.0, 2.0, 5.0]])  # ranges [0, 1], [0, 2], [5, 5] (no sections)
    profile = build_profile({"a": train}, np.array([0, 1]))
    acts = {"a": [[0.0, 0.9, 5.0], [0.25, 2.0, 7.0], [1.0, 2.5, 5.0], [1.5, 1.0, 5.0], [-0.1, 0.49, 5.0]]}
    # neuron 0, k=4: 0 -> s0, .25 -> s1, 1.0 -> s3 (last section closed), 1.5 and -.1 outside: 3 sections
    # neuron 1: .9 -> s1, 2.0 -> s3, 2.5 outside, 1.0 -> s2, .49 -> s0: 4 sections
    assert coverage.kmnc(acts, profile, 4) == pytest.approx(7 / 8)
    table = coverage.kmnc_covered(acts, profile, 4)["a"]
    assert table.tolist() == [[True, True, False, True], [True, True, True, True], [False] * 4]


def test_kmnc_values_on_section_edges_go_to_the_section_that_starts_there():
    profile = build_profile({"a": np.array([[-1.5], [0.7]])}, np.array([0, 1]))
    # edges -1.5 + i·0.22: the plain division puts -1.28 in section 0 (0.999…) and -0.4 in section 5 (5.000…),
    # the edges as computed put them in sections 1 and 4
    table = coverage.kmnc_covered({"a": [[-1.28], [-0.4]]}, profile, 10)["a"]
    assert np.flatnonzero(table[0]).tolist() == [1, 4]
    assert oracle.kmnc({"a": [[-1.28], [-0.4]]}, {"a": [-1.5]}, {"a": [0.7]}, 10) == 0.2


def test_tknc_by_hand():
    acts = {"a": [[4.0, 3.0, 2.0, 1.0], [0.0, 5.0, 5.0, 0.0], [1.0, 1.0, 1.0, 1.0]]}
    assert coverage.tknc(acts, 2) == pytest.approx(3 / 4)  # {0,1} ∪ {1,2} ∪ {0,1} (ties: lower index)
    assert coverage.tknc(acts, 1) == pytest.approx(2 / 4)
    assert coverage.tknc(acts, 9) == 1.0
    assert np.flatnonzero(coverage.tknc_covered({"b": [[0.0, 0.0, 1.0, 1.0, 2.0]]}, 2)["b"]).tolist() == [2, 4]


@pytest.mark.parametrize("seed", range(6))
def test_coverage_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    profile = _profile(rng)
    acts = _random_acts(rng, 7)
    acts["l1"][0, :] = 1.3  # an input whose layer is constant
    ref = _lists(acts)
    low = {k: v.tolist() for k, v in profile.low.items()}
    high = {k: v.tolist() for k, v in profile.high.items()}
    for t in (0.0, 0.25, 0.5, 0.75):
        assert coverage.nac(acts, t) == pytest.approx(oracle.nac(ref, t), abs=1e-12)
    assert coverage.snac(acts, profile) == pytest.approx(oracle.snac(ref, high), abs=1e-12)
    for k in (1, 3, 10):
        assert coverage.kmnc(acts, profile, k) == pytest.approx(oracle.kmnc(ref, low, high, k), abs=1e-12)
    for k in (1, 2, 4):
        assert coverage.tknc(acts, k) == pytest.approx(oracle.tknc(ref, k), abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_adding_inputs_never_lowers_coverage(seed):
    rng = np.random.default_rng(100 + seed)
    profile = _profile(rng, n_train=8)
    acts = {k: v * 1.5 - 0.2 for k, v in _random_acts(rng, 20).items()}  # some values beyond the training range
    metrics = {"nac": lambda a: coverage.nac(a, 0.5), "snac": lambda a: coverage.snac(a, profile),
               "kmnc": lambda a: coverage.kmnc(a, profile, 10), "tknc": lambda a: coverage.tknc(a, 2)}
    order = rng.permutation(20)
    for name, metric in metrics.items():
        values = [metric({k: v[order[:n]] for k, v in acts.items()}) for n in range(21)]
        assert values[0] == 0.0, name
        assert all(b >= a for a, b in zip(values, values[1:])), (name, values)
        assert values[-1] > 0.0, name


@pytest.mark.parametrize("covered", ["nac", "snac", "kmnc", "tknc"])
def test_coverage_of_a_union_is_the_union_of_coverage(covered):
    rng = np.random.default_rng(7)
    profile = _profile(rng)
    a, b = _random_acts(rng, 5), _random_acts(rng, 6)
    f = {"nac": lambda x: coverage.nac_covered(x, 0.5), "snac": lambda x: coverage.snac_covered(x, profile),
         "kmnc": lambda x: coverage.kmnc_covered(x, profile, 10), "tknc": lambda x: coverage.tknc_covered(x, 2)}[covered]
    both = f({k: np.concatenate([a[k], b[k]]) for k in a})
    ca, cb = f(a), f(b)
    for layer in both:
        np.testing.assert_array_equal(both[layer], ca[layer] | cb[layer])


def test_constant_neurons_are_left_out_of_kmnc():
    profile = build_profile({"a": np.array([[0.0, 3.0], [1.0, 3.0]])}, np.array([0, 1]))
    assert coverage.kmnc({"a": [[0.5, 3.0]]}, profile, 2) == 0.5  # one of neuron 0's two sections; neuron 1 has none
    dead = build_profile({"a": np.zeros((2, 2))}, np.array([0, 1]))
    assert coverage.kmnc({"a": [[0.0, 0.0]]}, dead, 2) == 0.0


def test_bad_activations_are_refused():
    profile = build_profile({"a": np.zeros((2, 2))}, np.array([0, 1]))
    with pytest.raises(ValueError, match="neurons"):
        coverage.snac({"a": np.zeros((1, 3))}, profile)
    with pytest.raises(ValueError, match="no layer 'b'"):
        coverage.kmnc({"b": np.zeros((1, 2))}, profile, 2)
    with pytest.raises(ValueError, match="non-finite"):
        coverage.nac({"a": [[np.nan, 1.0]]}, 0.5)
    with pytest.raises(ValueError, match="inputs"):
        coverage.tknc({"a": np.zeros((2, 2)), "b": np.zeros((3, 2))}, 1)
    with pytest.raises(ValueError, match="n_neurons"):
        coverage.nac({"a": np.zeros((2, 2, 2))}, 0.5)
    with pytest.raises(ValueError, match="positive integer"):
        coverage.kmnc({"a": np.zeros((1, 2))}, profile, 0)

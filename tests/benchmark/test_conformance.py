"""Run-time conformance of plug-ins (`pipeline.benchmark.conformance`, issue 28 item 4): a model's output is checked
against its protocol on the clean test set before any configuration is evaluated; a perturbation plug-in is
keyed by its config string whatever its `name`; what the perturbations need of the images is checked before
any work, and `benchmark.adapt_inputs` pads or resizes images below the ImageNet-C corruptions' 32 pixels."""
from __future__ import annotations

import functools
import sys

import numpy as np
import pytest

from pipeline.benchmark.build import build_benchmark, build_space
from pipeline.config.errors import ConfigError
from pipeline.benchmark.conformance import PROBABILITY_TOLERANCE, check_model_output, conform_inputs, pad, resize
from pipeline.benchmark.ground_truth import evaluate_shard
from pipeline.perturb.compose import compose, step_seed
from pipeline.perturb.materialize import PerturbationStore, perturbation_fingerprint
from pipeline.perturb.registry import Perturbation, get_perturbation
from pipeline.plugins.protocols import ImageInputs
from pipeline.stages.runner import compose_job

PLUGINS = '''"""Plug-ins of a user's own package, for tests/benchmark/test_conformance.py."""
import numpy as np


class Blur:
    """A perturbation whose `name` is not its import path: each image averaged with a shifted copy of itself."""

    name, modality, max_level = "blur", "vision", 5

    def apply(self, x, level, seed):
        shift = int(np.random.default_rng(seed).integers(1, 4)) * level
        return ((x.astype(np.int32) + np.roll(x, shift, axis=0)) // 2).astype(np.uint8)


class Small:
    """An MNIST-like test set: n random `side` x `side` images (RGB, or gray with `shape` 'gray' / 'gray1'), 3 classes."""

    def __init__(self, n=9, side=28, shape="rgb"):
        self.n, self.side, self.shape = n, side, shape

    def test_set(self):
        images = np.random.default_rng(0).integers(0, 256, (self.n, self.side, self.side, 3), dtype=np.uint8)
        images = {"rgb": images, "gray": images[..., 0], "gray1": images[..., :1]}[self.shape]
        return images, np.arange(self.n) % 3


class RandomModel:
    """A random linear softmax classifier over `num_classes` classes, of images of any size."""

    def __init__(self, num_classes=3):
        self.num_classes = num_classes

    def predict_proba(self, images):
        x = images.reshape(len(images), -1).astype(np.float64) / 255.0
        w = np.random.default_rng(1).standard_normal((x.shape[1], self.num_classes)) / np.sqrt(x.shape[1])
        z = 10 * x @ w
        p = np.exp(z - z.max(1, keepdims=True))
        return p / p.sum(1, keepdims=True)


class Flat:
    """A model whose predict_proba returns one score per input, shape (n,)."""

    def predict_proba(self, images):
        return np.full(len(images), 0.5)
'''


@pytest.fixture(scope="module")
def plugins(tmp_path_factory):
    """The module `conformance_plugins` importable from a temporary folder."""
    folder = tmp_path_factory.mktemp("plugins")
    (folder / "conformance_plugins.py").write_text(PLUGINS)
    sys.path.insert(0, str(folder))
    yield folder / "conformance_plugins.py"
    sys.path.remove(str(folder))
    sys.modules.pop("conformance_plugins", None)


def external(spec: dict, **model) -> dict:
    """`spec` with a user's model of `model`'s keys (a black box: no adequacy metrics)."""
    return {**spec, "model": {"name": "mine", "kind": "external", "device": "cpu", **model}, "adequacy": None}


# ---- a model's output -------------------------------------------------------------------------------

LABELS = np.array([0, 1, 2, 1])
WHO = ("model._target_", "my_pkg.M")


def refusal(output, method: str = "predict_proba", labels: np.ndarray = LABELS) -> str:
    with pytest.raises(ConfigError) as err:
        check_model_output(output, len(labels), labels, *WHO, method)
    return str(err.value)


def test_a_conforming_output_is_returned_as_is():
    proba = np.array([[0.7, 0.2, 0.1], [0.0, 1.0, 0.0], [0.1, 0.1, 0.8], [0.25, 0.5, 0.25 + PROBABILITY_TOLERANCE / 2]])
    assert check_model_output(proba, 4, LABELS, *WHO, "predict_proba") is not None
    np.testing.assert_array_equal(check_model_output(proba.tolist(), 4, LABELS, *WHO, "predict_proba"), proba)
    wider = np.full((4, 5), 0.2, dtype=np.float32)  # more classes than the labels use
    assert check_model_output(wider, 4, LABELS, *WHO, "predict_proba").shape == (4, 5)
    np.testing.assert_array_equal(check_model_output([1, 0, 1, 1], 4, LABELS, *WHO, "predict"), [1, 0, 1, 1])


def test_a_one_dimensional_predict_proba_is_refused_in_one_line_naming_both_shapes():
    line = refusal(np.full(4, 0.5))
    assert line.startswith("model._target_: 'my_pkg.M' — a model whose predict_proba(inputs) returns class probabilities, "
                           "shape (4, classes) for 4 inputs with classes ≥ 3 (the labels go up to 2)"), line
    assert line.endswith("(pipeline.plugins.protocols.Classifier); it returned shape (4,)") and "\n" not in line


def test_too_few_classes_and_the_wrong_number_of_rows_are_refused():
    assert refusal(np.full((4, 2), 0.5)).endswith("it returned shape (4, 2)")
    assert refusal(np.full((3, 3), 1 / 3)).endswith("it returned shape (3, 3)")
    assert refusal(np.array([["a", "b", "c"]] * 4)).endswith("it returned a <U1 array of shape (4, 3)")
    assert refusal([[0.5, 0.5], [1.0]]).endswith("it returned an object array of shape ()")  # ragged


@pytest.mark.parametrize("row, says", [
    ([np.nan, 0.5, 0.5], "non-finite values (row 2: [nan, 0.5, 0.5])"),
    ([np.inf, 0.0, 0.0], "non-finite values (row 2: [inf, 0.0, 0.0])"),
    ([-0.2, 0.6, 0.6], "row 2 with minimum -0.2 and sum 1 (scores or logits? apply a softmax)"),
    ([2.0, -1.0, 0.5], "row 2 with minimum -1 and sum 1.5 (scores or logits? apply a softmax)"),
    ([0.5, 0.5, 0.5], "row 2 with minimum 0.5 and sum 1.5 (scores or logits? apply a softmax)"),
    ([0.3, 0.3, 0.3], "row 2 with minimum 0.3 and sum 0.9 (scores or logits? apply a softmax)"),
])
def test_probabilities_that_are_not_a_distribution_are_refused(row, says):
    proba = np.full((4, 3), 1 / 3)
    proba[2] = row
    assert refusal(proba).endswith("each row summing to 1 ± 0.001 (pipeline.plugins.protocols.Classifier); it returned " + says)


def test_a_predict_of_another_shape_is_refused():
    line = refusal(np.zeros((4, 1)), "predict")
    assert line == ("model._target_: 'my_pkg.M' — a model whose predict(inputs) returns one prediction per input, shape (4,) "
                    "for 4 inputs (pipeline.plugins.protocols.Predictor); it returned shape (4, 1)")
    assert refusal([1, 0], "predict").endswith("it returned shape (2,)")


def test_a_bad_model_is_refused_by_build_benchmark_before_any_configuration(tiny, plugins):
    spec, folder = tiny
    with pytest.raises(ConfigError) as err:
        build_benchmark(external(spec, _target_="conformance_plugins.Flat"), folder)
    assert str(err.value).startswith("model._target_: 'conformance_plugins.Flat' — a model whose predict_proba(inputs) returns "
                                     "class probabilities, shape (40, classes) for 40 inputs with classes ≥ 10")
    assert str(err.value).endswith("it returned shape (40,)")
    bench = build_benchmark(external(spec, _target_="conformance_plugins.RandomModel", num_classes=10), folder)
    assert 0 <= bench.clean_score <= 1 and set(bench.evaluate((1, 1))) >= {"psi", "delta", "rho_ssim", "rho_kid"}


# ---- a perturbation plug-in is keyed by its config string ---------------------------------------------

def test_a_perturbation_plug_in_works_whatever_its_name(tiny, plugins):
    from conformance_plugins import Blur

    spec, folder = tiny
    spec = {**spec, "perturbations": ["brightness", "conformance_plugins:Blur"]}
    bench = build_benchmark(spec, folder)
    assert [p.name for p in bench.perturbations] == list(bench.space.names) == ["brightness", "conformance_plugins:Blur"]
    brightness = get_perturbation("brightness")
    for theta in [(0, 1), (1, 2), (2, 2)]:
        direct = np.stack([Blur().apply(brightness.apply(x, theta[0], step_seed(bench.seed, i, theta[:1])), theta[1],
                                        step_seed(bench.seed, i, theta)) for i, x in enumerate(bench.clean)])
        np.testing.assert_array_equal(compose(bench.perturbations, bench.clean, theta, bench.seed), direct)
        assert {k: v for k, v in bench.evaluate(theta).items() if not k.startswith("seconds")} == \
            {k: v for k, v in bench.score(direct).items() if not k.startswith("seconds")}
    store = PerturbationStore(folder / "store", bench.perturbations, bench.clean, bench.space, bench.seed)
    np.testing.assert_array_equal(store.get((1, 2)), compose(bench.perturbations, bench.clean, (1, 2), bench.seed))


def test_the_keyed_plug_in_keeps_its_source_in_the_store_key(plugins):
    keyed = get_perturbation("conformance_plugins:Blur")
    assert (keyed.name, keyed.label, keyed.modality, keyed.max_level) == ("conformance_plugins:Blur", "blur", "vision", 5)
    assert get_perturbation("brightness").label is None  # a built-in's key is its own name
    before = perturbation_fingerprint([keyed])
    plugins.write_text(plugins.read_text() + "\n# an edit\n")
    assert perturbation_fingerprint([keyed]) != before


# ---- what the perturbations need of the images --------------------------------------------------------

IMAGES = np.random.default_rng(0).integers(0, 256, (5, 28, 28, 3), dtype=np.uint8)
FAMILIES = [get_perturbation("glass_blur"), get_perturbation("brightness")]


def test_images_below_32_pixels_are_refused_naming_the_perturbation_and_the_option():
    with pytest.raises(ConfigError) as err:
        conform_inputs(IMAGES, FAMILIES)
    assert str(err.value) == (
        "benchmark.perturbations[0]: 'glass_blur' — images as a uint8 array of shape (N, H, W, 3) with H, W ≥ 32: the clean "
        "test set's images are 28 x 28 (shape (5, 28, 28, 3)); set benchmark.adapt_inputs=pad or benchmark.adapt_inputs=resize "
        "to bring them to at least 32 pixels a side first (pad: pad each image with its edge pixels, centred; resize: resize "
        "each image, bilinear, keeping its aspect)")
    identity = Perturbation("identity", "vision", 5, lambda x, level, seed: x)  # declares nothing: takes any input
    with pytest.raises(ConfigError, match=r"^perturbations\[1\]: 'glass_blur' — .* set adapt_inputs=pad or adapt_inputs=resize"):
        conform_inputs(IMAGES, [identity, *FAMILIES], key="perturbations", option="adapt_inputs")
    assert conform_inputs(IMAGES, [identity]) is IMAGES


def test_pad_centres_each_image_among_its_edge_pixels():
    padded = conform_inputs(IMAGES, FAMILIES, "pad")
    assert padded.shape == (5, 32, 32, 3) and padded.dtype == np.uint8
    np.testing.assert_array_equal(padded[:, 2:30, 2:30], IMAGES)
    np.testing.assert_array_equal(padded[:, :2, 2:30], np.repeat(IMAGES[:, :1], 2, axis=1))
    np.testing.assert_array_equal(padded[:, 2:30, 30:], np.repeat(IMAGES[:, :, -1:], 2, axis=2))
    wide = np.random.default_rng(2).integers(0, 256, (2, 27, 40, 3), dtype=np.uint8)  # only the short side is padded
    assert pad(wide, 32).shape == (2, 32, 40, 3)
    np.testing.assert_array_equal(pad(wide, 32)[:, 2:29], wide)


def test_resize_scales_the_shorter_side_to_32_pixels():
    resized = conform_inputs(IMAGES, FAMILIES, "resize")
    assert resized.shape == (5, 32, 32, 3) and resized.dtype == np.uint8
    flat = np.full((2, 28, 14, 3), 77, dtype=np.uint8)
    assert resize(flat, 32).shape == (2, 64, 32, 3) and (resize(flat, 32) == 77).all()
    # the corruptions take what the adaptation gives
    assert compose(FAMILIES, resized, (3, 2), 0).shape == resized.shape


def test_images_that_fit_are_left_as_they_are_whatever_the_option():
    images = np.random.default_rng(1).integers(0, 256, (3, 32, 40, 3), dtype=np.uint8)
    for adapt in (None, "pad", "resize"):
        assert conform_inputs(images, FAMILIES, adapt) is images


@pytest.mark.parametrize("images, shown", [
    (IMAGES[..., 0], "a uint8 array of shape (5, 28, 28)"),
    (IMAGES[..., :1], "a uint8 array of shape (5, 28, 28, 1)"),
    (IMAGES.astype(np.float32) / 255, "a float32 array of shape (5, 28, 28, 3)"),
    (list(IMAGES), "a list"),
    (IMAGES.astype(np.int64), "an int64 array of shape (5, 28, 28, 3)"),
])
def test_gray_float_or_unstacked_images_are_refused_whatever_the_option(images, shown):
    for adapt in (None, "pad", "resize"):
        with pytest.raises(ConfigError) as err:
            conform_inputs(images, FAMILIES, adapt)
        assert str(err.value) == (
            f"benchmark.perturbations[0]: 'glass_blur' — images as a uint8 array of shape (N, H, W, 3) with H, W ≥ 32: the clean "
            f"test set is {shown} (the data set must return them; a gray stack g as RGB: numpy.repeat(g[..., None], 3, axis=-1); "
            "benchmark.adapt_inputs adapts only the size)")


def test_a_plug_in_declares_what_it_needs_and_is_adapted_to_the_largest_need():
    big = Perturbation("big", "vision", 5, lambda x, level, seed: x, ImageInputs(min_side=40, channels=None, dtype=None))
    images = IMAGES[:, :, :, :2]
    with pytest.raises(ConfigError, match=r"^benchmark.perturbations\[0\]: 'big' — images as an array of shape \(N, H, W, C\) "
                       r"with H, W ≥ 40: the clean test set's images are 28 x 28"):
        conform_inputs(images, [big])
    assert conform_inputs(images, [big], "pad").shape == (5, 40, 40, 2)
    assert conform_inputs(IMAGES, [*FAMILIES, big], "resize").shape == (5, 40, 40, 3)


def test_the_option_is_validated_by_the_config():
    assert compose_job(["benchmark=tiny"]).benchmark.adapt_inputs is None
    assert compose_job(["benchmark=tiny", "benchmark.adapt_inputs=resize"]).benchmark.adapt_inputs == "resize"
    with pytest.raises(ConfigError) as err:
        compose_job(["benchmark=tiny", "benchmark.adapt_inputs=crop"])
    assert str(err.value) == ("benchmark.adapt_inputs: 'crop' — null (refuse images smaller than a perturbation needs) or one "
                              "of: pad (pad each image with its edge pixels, centred); resize (resize each image, bilinear, "
                              "keeping its aspect)")
    with pytest.raises(ConfigError, match=r"^benchmark.adapt_inputs: 'pad' — null \(benchmark 'bbc_news' is 'text'"):
        compose_job(["benchmark=bbc_news", "+benchmark.adapt_inputs=pad"])


@pytest.fixture(scope="module")
def small28(plugins):
    """benchmark=tiny on 28x28 images of a user's data set with a random model of the user's: the spec, per option."""
    spec = compose_job(["benchmark=tiny", "model=external", "model._target_=conformance_plugins.RandomModel", "fidelity=[ssim]",
                        "benchmark.perturbations=[glass_blur,pixelate]"])
    from pipeline.stages.runner import benchmark_spec

    spec = {**benchmark_spec(spec), "dataset": {"kind": "external", "_target_": "conformance_plugins.Small"}}
    return lambda adapt: {**spec, "adapt_inputs": adapt}


def test_28_pixel_images_are_refused_before_the_model_runs(small28, tmp_path):
    refused = r"^benchmark.perturbations\[0\]: 'glass_blur' — .* are 28 x 28 .* set benchmark.adapt_inputs=pad"
    with pytest.raises(ConfigError, match=refused):
        build_benchmark(small28(None), tmp_path)


@pytest.mark.parametrize("adapt", ["pad", "resize"])
def test_the_ground_truth_of_28_pixel_images_runs_once_adapted(small28, tmp_path, adapt):
    spec = small28(adapt)
    bench = build_benchmark(spec, tmp_path)
    assert bench.clean.shape == (9, 32, 32, 3)
    factory = functools.partial(build_benchmark, spec, str(tmp_path))
    raw, _, stats = evaluate_shard(factory, build_space(spec), tmp_path / "store.sqlite", "fp", progress=False)
    assert stats["evaluated"] == 9 and len(raw) == 9
    assert np.isfinite(raw[["psi", "delta", "rho_ssim"]].to_numpy()).all() and raw["rho_ssim"].min() < 1

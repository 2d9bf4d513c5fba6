"""Per-input outcomes of the ground truth (issue 29): the file beside the table, its round trip to the table's
values, resume and shard merge, and the bootstrap's units (an input for accuracy, a problem for robust pass)."""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

from pipeline.benchmark.build import build_benchmark, build_space
from pipeline.benchmark.ground_truth import evaluate_shard, merge_shards, read_shard, write_final
from pipeline.front.per_input import unit_means, unit_outcomes
from pipeline.front.membership import bootstrap_membership
from pipeline.perturb.compose import compose
from pipeline.perturb.materialize import open_store


def final(raw, spec, folder, tiny_dir):
    paths = {k: folder / f"tiny{s}" for k, s in (("table", ".parquet"), ("summary", ".summary.json"),
                                                    ("gallery", ".gallery.npz"), ("inputs", ".inputs.parquet"))}
    folder.mkdir(parents=True, exist_ok=True)
    info = write_final(raw, build_benchmark(spec, tiny_dir, per_input=True), spec, **paths)
    return info, pd.read_parquet(paths["table"]), paths["inputs"]


@pytest.fixture(scope="module")
def full(tiny, tmp_path_factory):
    spec, tiny_dir = tiny
    folder = tmp_path_factory.mktemp("full")
    factory = functools.partial(build_benchmark, spec, tiny_dir, per_input=True)
    raw, _, _ = evaluate_shard(factory, build_space(spec), folder / "store.sqlite", "fp", progress=False)
    return (*final(raw, spec, folder / "out", tiny_dir), factory, raw)


def test_the_file_holds_every_input_of_every_theta_and_gives_back_the_table(tiny, full):
    spec, tiny_dir = tiny
    info, table, inputs_path = full[:3]
    inputs = pd.read_parquet(inputs_path)
    labels = build_benchmark(spec, tiny_dir).labels
    n = len(labels)
    assert list(inputs.columns) == ["theta", "input", "prediction", "rho_ssim"]  # KID: a set statistic, no column
    assert len(inputs) == len(table) * n and inputs["rho_ssim"].dtype == np.float32
    for t, rows in inputs.groupby("theta"):
        row = table.iloc[t]
        assert np.mean(rows["prediction"].to_numpy() == labels) == row["accuracy"]
        assert rows["rho_ssim"].to_numpy(dtype=np.float64).mean() == row["rho_ssim"]  # exact: φ_SSIM is their mean
    assert info["confidence"]["ssim"]["pareto"] == int(table["pareto_ssim"].sum())
    assert ((table["pi_ssim"] >= 0.95) == (table["set_ssim"] == "core")).all()


def test_a_resumed_run_and_merged_shards_write_the_same_bytes(tiny, full, tmp_path):
    spec, tiny_dir = tiny
    _, table, inputs_path, factory = full[:4]
    space = build_space(spec)
    # a run killed after part of Θ (shard 0 of 2 in the store), then resumed over all of it
    evaluate_shard(factory, space, tmp_path / "resumed.sqlite", "fp", shard=0, num_shards=2, progress=False)
    raw, _, stats = evaluate_shard(factory, space, tmp_path / "resumed.sqlite", "fp", progress=False)
    assert 0 < stats["resumed"] < stats["configurations"]
    _, resumed, resumed_inputs = final(raw, spec, tmp_path / "resumed", tiny_dir)
    assert resumed_inputs.read_bytes() == inputs_path.read_bytes()
    pd.testing.assert_frame_equal(resumed, table)
    for i in range(2):
        evaluate_shard(factory, space, tmp_path / f"s{i}.sqlite", "fp", shard=i, num_shards=2, progress=False)
    merged = merge_shards(space, [read_shard(space, tmp_path / f"s{i}.sqlite", "fp", i, 2) for i in range(2)])
    _, _, merged_inputs = final(merged, spec, tmp_path / "merged", tiny_dir)
    assert merged_inputs.read_bytes() == inputs_path.read_bytes()


def test_units_are_inputs_for_accuracy_and_problems_for_robust_pass():
    rng = np.random.default_rng(3)
    labels = np.repeat(np.arange(4), 3)  # code: 4 problems, 3 variants each
    passes = rng.integers(0, 2, (5, 12))
    outcomes, unit, strata = unit_outcomes(passes, labels, "robust_pass")
    by_pandas = pd.DataFrame(passes.T).groupby(labels).min().T.to_numpy()  # a problem passes if every variant does
    np.testing.assert_array_equal(outcomes, by_pandas)
    assert strata is None and (unit == labels).all()
    values = rng.random((5, 12))
    np.testing.assert_allclose(unit_means(values, unit), pd.DataFrame(values.T).groupby(labels).mean().T.to_numpy())
    classes = rng.integers(0, 3, 12)
    predictions = rng.integers(0, 3, (5, 12))
    acc, unit, strata = unit_outcomes(predictions, classes, "accuracy")
    np.testing.assert_array_equal(acc, predictions == classes)
    assert (strata == classes).all() and (unit == np.arange(12)).all()
    frame = bootstrap_membership(outcomes, outcomes[0], unit_means(values, np.arange(4).repeat(3)), B=200, seed=1)
    assert len(frame) == 5 and frame["pi"].between(0, 1).all()
    with pytest.raises(ValueError, match="no per-input outcome"):
        unit_outcomes(passes, labels, "f1")


def test_a_search_reads_the_layer_that_gives_the_tables_core(tiny, full):
    """`read_units` (what a search reads, rows in Θ's index order) reproduces the table's core exactly: the bootstrap on
    every configuration's units with the ground truth's seed is the ground truth's, for a per-input metric (SSIM) and a
    set statistic (KID); its slopes map the units' mean δ to `delta_norm`."""
    from pipeline.search.stopping.core_recall import core_of_evaluated
    from pipeline.search.ground_truth import GroundTruth
    from pipeline.search.tables import read_units

    spec, tiny_dir = tiny
    _, table, inputs_path = full[:3]
    labels = build_benchmark(spec, tiny_dir).labels
    for metric in ("ssim", "kid"):
        truth = GroundTruth.from_table(table, "tiny", metric)
        units = read_units(inputs_path, table, labels, metric, "accuracy")
        assert units.fidelity.ndim == (2 if metric == "ssim" else 1)
        np.testing.assert_array_equal(core_of_evaluated(units), truth.core)
        raw = np.maximum((units.clean[None, :] - units.outcomes).mean(axis=1), 0.0)
        norm = truth.oracle.objectives[:, 0]
        np.testing.assert_allclose((raw - raw.min()) * units.scale[0], norm - norm.min(), atol=1e-12)


def test_the_gallery_shows_the_example_as_each_front_member_perturbs_it_in_its_set(tiny, full, tmp_path):
    """The gallery example (here input 3) under each P* member is that input of T_θ, read from the perturbation store
    or composed alone (seeded by its index in the set), the same bytes either way."""
    spec, tiny_dir = tiny
    spec = {**spec, "gallery_index": 3}
    bench = build_benchmark(spec, tiny_dir, per_input=True)
    raw = full[4].copy()
    raw["delta"] = np.arange(len(raw), dtype=float)  # every θ on both fronts: the gallery shows all of Θ
    for metric in spec["fidelity"]:
        raw[f"rho_{metric}"] = -raw["delta"]
    files = []
    for name, source in (("composed", None), ("stored", open_store(tmp_path / "store", None, bench))):
        paths = {k: tmp_path / name / f"tiny{s}" for k, s in (("table", ".parquet"), ("summary", ".summary.json"),
                                                               ("gallery", ".gallery.npz"), ("inputs", ".inputs.parquet"))}
        paths["table"].parent.mkdir()
        write_final(raw, bench, spec, **paths, source=source)
        files.append(paths["gallery"].read_bytes())
        with np.load(paths["gallery"]) as gallery:
            assert len(gallery["thetas"]) == bench.space.size and gallery["label"] == bench.labels[3]
            assert np.array_equal(gallery["clean"], bench.clean[3])
            for theta, image in zip(gallery["thetas"], gallery["images"]):
                assert np.array_equal(image, compose(bench.perturbations, bench.clean, tuple(theta), bench.seed)[3])
    assert files[0] == files[1]

"""The perturbation store: T_θ read back bit-identical to `compose` for every θ (images and text),
resume after an interrupted fill computes only the missing chunks, a corrupt, truncated or foreign
chunk is reported and recomputed, every key part names its own folder, the bound, and ground-truth
rows through the store equal those of in-memory prefix reuse."""
from __future__ import annotations

import functools
import itertools
import json

import numpy as np
import pytest

from pipeline.benchmark.problem import Benchmark, accuracy
from pipeline.perturb.compose import PrefixCache, compose
from pipeline.perturb.fill import materialize
from pipeline.perturb.materialize import PerturbationStore, data_digest, perturbation_fingerprint
from pipeline.perturb.registry import Perturbation, get_perturbation
from pipeline.front.space import Space
from tests.synthetic import make_benchmark

NAMES = ("brightness", "pixelate")
LEVELS = 3
SPACE = Space(NAMES, LEVELS)
THETAS = [tuple(t) for t in itertools.product(range(LEVELS), repeat=2)]
SENTENCES = ["It is not easy to find a good job in a big city.", "How do I learn to play the guitar quickly?",
             "We do not know what is going on", "Café naïve — “quoted” text\u2028with a line separator.", "", "ok"]


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    return np.random.default_rng(7).integers(0, 256, size=(10, 32, 32, 3), dtype=np.uint8)


@pytest.fixture(scope="module")
def perturbations() -> list[Perturbation]:
    return [get_perturbation(n) for n in NAMES]


def _counting(perturbations, log, interrupt_after=None):
    """The perturbations with every per-input application logged; raising KeyboardInterrupt on the
    application after `interrupt_after` (a killed fill)."""
    def wrap(p):
        def apply(x, level, seed):
            if interrupt_after is not None and len(log) >= interrupt_after:
                raise KeyboardInterrupt
            log.append((p.name, level))
            return p.apply(x, level, seed)
        return Perturbation(p.name, p.modality, p.max_level, apply)
    return [wrap(p) for p in perturbations]


def _store(root, perturbations, clean, **kwargs):
    return PerturbationStore(root, perturbations, clean, Space(tuple(p.name for p in perturbations), kwargs.pop("levels", LEVELS)),
                             kwargs.pop("seed", 3), code=kwargs.pop("code", "test-code"), **kwargs)


def _assert_identical(got, want):
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    else:
        assert type(got) is type(want) and got == want


def test_images_read_back_bit_identical_to_compose(tmp_path, images, perturbations):
    store = PerturbationStore(tmp_path, perturbations, images, SPACE, 3)  # the real code fingerprint
    stats = materialize(store, progress=False)
    assert stats["configurations"] == stats["computed"] == len(THETAS) - 1  # the identity is never stored
    assert stats["chunks_written"] == LEVELS
    reader = PerturbationStore(tmp_path, perturbations, images, SPACE, 3)
    for theta in THETAS:
        got, want = reader.get(theta), compose(perturbations, images, theta, 3)
        assert got.dtype == np.uint8
        _assert_identical(got, want)
    assert reader.applications == 0  # everything came from disk
    assert any(not np.array_equal(reader.get(t), images) for t in THETAS[1:])
    manifest = json.loads((store.path / "manifest.json").read_text())
    assert manifest["size_bytes"] == store.size_bytes() == sum(p.stat().st_size for p in store.chunk_files()) > 0
    assert manifest["configurations"] == len(THETAS) - 1 and manifest["key"]["names"] == list(NAMES)
    assert store.size_bytes() >= (len(THETAS) - 1) * images.nbytes


def _three_image_store(root, images) -> PerturbationStore:
    perts = [get_perturbation(n) for n in ("brightness", "pixelate", "speckle_noise")]
    return PerturbationStore(root, perts, images, Space(tuple(p.name for p in perts), LEVELS), 3)


def test_a_fill_in_worker_processes_writes_the_same_chunk_files(tmp_path, images):
    """Three perturbations, so the fill splits into (θ_1, θ_2) tasks over two spawned workers; every chunk
    file, checksums included, is byte-identical to the one-process fill's, and so are the counts."""
    factories = {w: functools.partial(_three_image_store, tmp_path / str(w), images) for w in (1, 2)}
    stores = {w: factory() for w, factory in factories.items()}
    stats = {w: materialize(store, progress=False, workers=w, factory=factories[w]) for w, store in stores.items()}
    files = {w: {p.name: p.read_bytes() for p in store.chunk_files()} for w, store in stores.items()}
    assert len(files[1]) == LEVELS**2 and files[1] == files[2]
    for key in ("configurations", "computed", "present", "chunks_written", "size_bytes"):
        assert stats[1][key] == stats[2][key], key
    assert stats[2]["computed"] == LEVELS**3 - 1
    again = materialize(stores[2], progress=False, workers=2, factory=factories[2])  # a finished fill resumes to nothing
    assert again["computed"] == 0 and again["present"] == LEVELS**3 - 1
    with pytest.raises(ValueError, match="workers=2 needs a factory"):
        materialize(stores[2], progress=False, workers=2)
    other = functools.partial(_three_image_store, tmp_path / "other", images[:5])  # another clean set: another store
    with pytest.raises(ValueError, match="is not the one being filled"):
        materialize(_three_image_store(tmp_path / "3", images), progress=False, workers=2, factory=other)


def test_text_read_back_identical_to_compose(tmp_path):
    perts = [get_perturbation("typo"), get_perturbation("punctuation")]
    space = Space(("typo", "punctuation"), LEVELS)
    store = PerturbationStore(tmp_path, perts, SENTENCES, space, 0, code="text")
    materialize(store, progress=False)
    reader = PerturbationStore(tmp_path, perts, SENTENCES, space, 0, code="text")
    for theta in THETAS:
        _assert_identical(reader.get(theta), compose(perts, SENTENCES, theta, 0))
    assert reader.applications == 0
    assert reader.get((2, 2)) != SENTENCES


def test_float_arrays_and_the_identity(tmp_path):
    bench = make_benchmark(n_inputs=6, levels=3)
    store = PerturbationStore.for_benchmark(tmp_path, bench, code="synthetic")
    materialize(store, progress=False)
    reader = PerturbationStore.for_benchmark(tmp_path, bench, code="synthetic")
    for theta in THETAS:
        _assert_identical(reader.get(theta), compose(bench.perturbations, bench.clean, theta, bench.seed))
    assert reader.get((0, 0)) is bench.clean  # as compose: the clean set itself


def test_resume_computes_only_the_missing_chunks(tmp_path, images, perturbations):
    log: list = []
    # the first fill is killed at its 61st per-input application, in the third chunk (prefix (2,)) after T_1
    # at level 2: chunks (0,) (20 applications) and (1,) (30) are on disk, (2,) is not
    interrupted = _store(tmp_path, _counting(perturbations, log, interrupt_after=6 * len(images)), images)
    with pytest.raises(KeyboardInterrupt):
        materialize(interrupted, progress=False)
    assert [p.name for p in interrupted.chunk_files()] == ["0.chunk", "1.chunk"]
    assert not [p for p in interrupted.path.rglob("*") if p.name.startswith(".")]  # no temporary file left
    before = {p.name: p.stat().st_mtime_ns for p in interrupted.chunk_files()}

    log.clear()
    stats = materialize(_store(tmp_path, _counting(perturbations, log), images), progress=False)
    missing = [t for t in THETAS if t[0] == 2]
    expected = PrefixCache(perturbations, images, 3)
    for theta in missing:
        expected.get(theta)
    assert stats["applications"] == expected.applications == 3  # T_1 at level 2, T_2 at levels 1 and 2
    assert sorted(log) == sorted([("brightness", 2)] * 10 + [("pixelate", 1)] * 10 + [("pixelate", 2)] * 10)
    assert stats["computed"] == 3 and stats["present"] == 5 and stats["chunks_written"] == 1
    assert {p.name: p.stat().st_mtime_ns for p in interrupted.chunk_files() if p.name in before} == before

    log.clear()
    again = materialize(_store(tmp_path, _counting(perturbations, log), images), progress=False)
    assert log == [] and again["computed"] == 0 and again["present"] == 8
    reader = _store(tmp_path, perturbations, images)
    for theta in THETAS:
        _assert_identical(reader.get(theta), compose(perturbations, images, theta, 3))


def test_corrupt_truncated_and_foreign_chunks_are_recomputed(tmp_path, images, perturbations, capsys):
    store = _store(tmp_path, perturbations, images)
    materialize(store, progress=False)
    flip = store.chunk_path((1,))
    data = bytearray(flip.read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit in a payload
    flip.write_bytes(bytes(data))
    short = store.chunk_path((2,))
    short.write_bytes(short.read_bytes()[: short.stat().st_size // 2])
    foreign = _store(tmp_path, perturbations, images, seed=4)  # a valid chunk of another store, copied in
    materialize(foreign, progress=False)
    store.chunk_path((0,)).write_bytes(foreign.chunk_path((0,)).read_bytes())
    capsys.readouterr()

    log: list = []
    reader = _store(tmp_path, _counting(perturbations, log), images)
    for theta in THETAS:
        _assert_identical(reader.get(theta), compose(perturbations, images, theta, 3))
    err = capsys.readouterr().err
    assert "checksum mismatch" in err and "another store" in err and err.count("recomputing") == 3
    assert "Traceback" not in err
    assert reader.applications > 0 and log

    log.clear()  # the chunks were rewritten: a fresh reader computes nothing
    again = _store(tmp_path, _counting(perturbations, log), images)
    for theta in THETAS:
        _assert_identical(again.get(theta), compose(perturbations, images, theta, 3))
    assert log == [] and capsys.readouterr().err == ""


@pytest.mark.parametrize("garbage", [b"", b"PTSTORE", b"\x00" * 100], ids=["empty", "magic-only", "zeros"])
def test_garbage_chunk_files_are_recomputed_by_materialize(tmp_path, images, perturbations, garbage, capsys):
    store = _store(tmp_path, perturbations, images)
    materialize(store, progress=False)
    store.chunk_path((1,)).write_bytes(garbage)
    stats = materialize(_store(tmp_path, perturbations, images), progress=False)
    assert stats["computed"] == 3 and stats["chunks_written"] == 1
    assert "recomputing" in capsys.readouterr().err
    reader = _store(tmp_path, perturbations, images)
    for theta in THETAS:
        _assert_identical(reader.get(theta), compose(perturbations, images, theta, 3))
    assert reader.applications == 0


def test_each_key_part_names_its_own_folder(tmp_path, images, perturbations):
    base = _store(tmp_path, perturbations, images).path
    assert _store(tmp_path, perturbations, images.copy()).path == base
    changed = images.copy()
    changed[0, 0, 0, 0] ^= 1
    others = [
        _store(tmp_path, perturbations, images, seed=4).path,
        _store(tmp_path, perturbations, images, code="other-code").path,
        _store(tmp_path, perturbations, changed).path,
        _store(tmp_path, perturbations, images, levels=4).path,
        _store(tmp_path, perturbations[::-1], images).path,
        _store(tmp_path, perturbations, images.astype(np.int16)).path,
    ]
    assert len({base, *others}) == len(others) + 1
    assert data_digest(SENTENCES) != data_digest(SENTENCES[:-1])
    with pytest.raises(TypeError, match="object dtype"):
        data_digest(np.array([object()]))


def test_default_code_fingerprint_covers_the_perturbation_source(perturbations, monkeypatch):
    from pipeline.runtime import fingerprint

    seen = []
    real = fingerprint.source_fingerprint
    monkeypatch.setattr("pipeline.perturb.materialize.source_fingerprint", lambda roots: seen.append(list(roots)) or real(roots))
    fp = perturbation_fingerprint(perturbations)
    closure = {p.name for p in fingerprint.module_closure(seen[0])}
    assert {"compose.py", "registry.py", "imagenet_c.py", "levels.py"} <= closure
    assert fp == perturbation_fingerprint(perturbations)


def test_bound_writes_only_its_configurations(tmp_path, images, perturbations):
    bound = [(1, 1), (1, 2), (2, 0)]
    store = _store(tmp_path, perturbations, images, thetas=bound)
    stats = materialize(store, progress=False)
    assert stats["computed"] == 3 and [p.name for p in store.chunk_files()] == ["1.chunk", "2.chunk"]
    files = {p: p.read_bytes() for p in store.chunk_files()}
    reader = _store(tmp_path, perturbations, images, thetas=bound)
    for theta in THETAS:  # outside the bound: computed in memory, nothing written
        _assert_identical(reader.get(theta), compose(perturbations, images, theta, 3))
    assert {p: p.read_bytes() for p in reader.chunk_files()} == files

    lazy = _store(tmp_path / "lazy", perturbations, images, thetas=bound)  # never filled: get writes its chunk
    _assert_identical(lazy.get((1, 2)), compose(perturbations, images, (1, 2), 3))
    assert [p.name for p in lazy.chunk_files()] == ["1.chunk"]
    assert set(lazy.read_chunk((1,))) == {(1, 1), (1, 2)}


def test_ground_truth_through_the_store_gives_identical_rows(tmp_path, images, perturbations):
    def predict(x):
        return (np.asarray(x).reshape(len(x), -1).mean(axis=1) > 127).astype(int)

    bench = Benchmark(name="tiny", space=SPACE, perturbations=perturbations, clean=images, labels=predict(images),
                      predict=predict, task_metric=accuracy, seed=3,
                      fidelity={"negmse": lambda x: -float(np.mean((np.asarray(x, float) - images) ** 2))})
    store = PerturbationStore.for_benchmark(tmp_path, bench)
    materialize(store, progress=False)
    reader = PerturbationStore.for_benchmark(tmp_path, bench)
    read: list = []

    class Spy:
        def get(self, theta):
            read.append(theta)
            return reader.get(theta)

    cold = list(bench.evaluate_many(THETAS[::-1]))
    warm = list(bench.evaluate_many(THETAS[::-1], source=Spy()))
    assert read == THETAS

    def values(rows):
        return [(theta, {k: v for k, v in row.items() if not k.startswith("seconds_")}) for theta, row in rows]

    assert values(warm) == values(cold) and [t for t, _ in warm] == THETAS
    assert any(row["delta"] > 0 for _, row in cold) and reader.applications == 0


def test_unstorable_inputs_are_refused(tmp_path):
    with pytest.raises(TypeError, match="list of str"):
        data_digest({"a": 1})
    boxes = Perturbation("box", "test", 2, lambda x, level, seed: object())
    store = PerturbationStore(tmp_path, [boxes], np.zeros((2, 3)), Space(("box",), 2), 0, code="c")
    with pytest.raises(TypeError, match="object dtype"):
        materialize(store, progress=False)
    assert store.chunk_files() == []

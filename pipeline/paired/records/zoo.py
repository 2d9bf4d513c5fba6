"""Real-source prediction records of a model zoo (paired evaluations §3.3, §5): each model's clean and
recaptured predictions of the same test images, in the record schema of `pipeline.paired.records.table`,
with the probe probabilities the screening comparison of §5.3 needs (`pipeline.paired.records.probes`).

The records stage (`scripts/records.py`) writes the Syn-B table of a pool; this module writes the real
table of the same images. Both train the zoo with `pipeline.models.zoo.build_model` on the same split:
the zoo's models are deterministic, so the clean side of the two tables agrees record for record
(`check_clean_agreement`), which is what lets screening scores from one table rank failures of the other.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from pipeline.models.zoo import build_model
from pipeline.runtime.numerics import n_workers
from pipeline.paired.records.pools import PoolImages
from pipeline.paired.records.table import SAME_RUN_TOL, records_from_probabilities
from pipeline.perturb.recapture import RecaptureCondition, recapture


def recaptured_stream(images: np.ndarray, conditions: Sequence[RecaptureCondition], seed: int,
                      workers: int = 1) -> Iterator[tuple[str, np.ndarray]]:
    """(condition name, every image recaptured under it) for each condition in order (`pipeline.perturb.recapture`);
    image k is source image k, so a subset of conditions gives the same images as the full grid. On `workers`
    processes (0: every core this process may use) the conditions are computed from this call on, whether or not the
    stream is read yet, so the caller can work meanwhile; each is a pure function of the images, the condition and the
    seed, so the images do not depend on how many processes there are."""
    if len({c.name for c in conditions}) != len(conditions):
        raise ValueError(f"conditions repeat: {[c.name for c in conditions]}")
    n = min(n_workers(workers), len(conditions))
    if n <= 1:
        return ((c.name, recapture(images, c, seed)) for c in conditions)
    from joblib import Parallel, delayed

    shots = Parallel(n_jobs=n, return_as="generator")(delayed(recapture)(images, c, seed) for c in conditions)
    return zip((c.name for c in conditions), shots)


def recaptured_images(images: np.ndarray, conditions: Sequence[RecaptureCondition], seed: int,
                      progress: Callable[[Iterable], Iterable] = iter, workers: int = 1) -> dict[str, np.ndarray]:
    """`recaptured_stream` read whole, keyed by condition name."""
    return dict(progress(recaptured_stream(images, conditions, seed, workers)))


def zoo_records(models: Sequence[Mapping], train: tuple[np.ndarray, np.ndarray], pool: PoolImages,
                conditions: Mapping[str, np.ndarray] | Iterable[tuple[str, np.ndarray]],
                probes: Mapping[str, np.ndarray] | None = None,
                progress: Callable[[Iterable], Iterable] = iter) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Train each zoo model on `train` and predict the clean pool and every condition's images.

    `conditions`: name -> images, or a stream of (name, images) pairs (`recaptured_stream`), read once, after every
    model is trained, each condition's images predicted by every model as they come. Returns the record table (one
    row per model, condition and image; model-major, conditions in their order) and, when `probes` (name ->
    (A, N, H, W, 3) stacks of transformed images) is given, the probe probabilities per model:
    `{"<model>/clean": (N, C), "<model>/<probe>": (A, N, C)}`; otherwise an empty dict.
    """
    train_x, train_y = train
    fitted = [(spec, build_model(dict(spec)).fit(train_x, train_y)) for spec in progress(models)]
    cleans = [model.predict_proba(pool.images) for _, model in fitted]
    parts: list[list[pd.DataFrame]] = [[] for _ in fitted]  # per model, its conditions in order
    for name, images in conditions.items() if isinstance(conditions, Mapping) else conditions:
        for own, (spec, model), clean in zip(parts, fitted, cleans):
            own.append(records_from_probabilities(spec["name"], spec["family"], name, pool.image_ids, pool.labels,
                                                  pool.split, clean, model.predict_proba(images)))
    arrays = {}
    for (spec, model), clean in zip(fitted, cleans) if probes else ():
        arrays[f"{spec['name']}/clean"] = clean
        for probe, stack in probes.items():
            flat = model.predict_proba(stack.reshape(-1, *stack.shape[2:]))
            arrays[f"{spec['name']}/{probe}"] = flat.reshape(len(stack), len(pool.labels), -1)
    if not any(parts):
        raise ValueError("no models or no conditions to predict")
    return pd.concat([part for own in parts for part in own], ignore_index=True), arrays


def synthetic_images(images: np.ndarray, corruptions: Sequence[str], severities: Sequence[int],
                     seed: int) -> dict[str, np.ndarray]:
    """The Syn-B images exactly as the records stage makes them: "<name>-<severity>" in name-major order,
    per-image seeds from (seed, image index, severity) (`pipeline.perturb.compose.apply_step`)."""
    from pipeline.perturb.compose import apply_step
    from pipeline.perturb.registry import get_perturbation

    return {f"{name}-{int(sev)}": apply_step(get_perturbation(name), images, (int(sev),), seed)
            for name in corruptions for sev in severities}


def synthetic_records(models: Sequence[Mapping], pool: PoolImages, arrays: Mapping[str, np.ndarray],
                      names: Sequence[str]) -> pd.DataFrame:
    """The Syn-B record table of the pool from `zoo_records`' probe probabilities (`<model>/clean`,
    `<model>/synb` in the order of `names`): the records stage's table of the same images and models."""
    parts = [records_from_probabilities(spec["name"], spec["family"], name, pool.image_ids, pool.labels, pool.split,
                                        arrays[f"{spec['name']}/clean"], arrays[f"{spec['name']}/synb"][a])
             for spec in models for a, name in enumerate(names)]
    return pd.concat(parts, ignore_index=True)


def check_clean_agreement(synthetic: pd.DataFrame, real: pd.DataFrame, tol: float = SAME_RUN_TOL) -> None:
    """The clean side of the Syn-B and the real record tables must be one set of predictions: the same
    models, images, labels, splits, clean predictions and probabilities (else the zoo was not retrained
    identically, or the tables come from different pools)."""
    cols = ["model", "group", "image_id", "split", "y", "clean_pred", "clean_maxprob", "clean_trueprob"]
    a = synthetic[cols].drop_duplicates(["model", "image_id"]).set_index(["model", "image_id"]).sort_index()
    b = real[cols].drop_duplicates(["model", "image_id"]).set_index(["model", "image_id"]).sort_index()
    if not a.index.equals(b.index):
        diff = a.index.symmetric_difference(b.index)
        raise ValueError(f"the synthetic and real records hold different (model, image) pairs, e.g. {list(diff[:3])}")
    for col in ("group", "split", "y", "clean_pred"):
        bad = a[col].to_numpy() != b[col].to_numpy()
        if bad.any():
            key = a.index[bad][0]
            raise ValueError(f"model {key[0]!r}, image {key[1]!r}: {col} differs between the synthetic and real records "
                             f"({a.loc[key, col]!r} vs {b.loc[key, col]!r})")
    for col in ("clean_maxprob", "clean_trueprob"):
        gap = np.abs(a[col].to_numpy(float) - b[col].to_numpy(float))
        if (gap > tol).any():
            key = a.index[int(gap.argmax())]
            raise ValueError(f"model {key[0]!r}, image {key[1]!r}: {col} differs by {gap.max():.3g} between the "
                             "synthetic and real records (the zoo was not retrained identically)")


def check_same_records(a: pd.DataFrame, b: pd.DataFrame, tol: float = SAME_RUN_TOL) -> None:
    """Two record tables of the same models, conditions and images must hold the same predictions and
    probabilities (the records stage's Syn-B table against the recapture stage's recomputation)."""
    key = ["model", "condition", "image_id"]
    left, right = a.set_index(key).sort_index(), b.set_index(key).sort_index()
    if not left.index.equals(right.index):
        diff = left.index.symmetric_difference(right.index)
        raise ValueError(f"the two Syn-B tables hold different (model, condition, image) rows, e.g. {list(diff[:3])}")
    for col in ("group", "split", "y", "clean_pred", "pert_pred"):
        bad = left[col].to_numpy() != right[col].to_numpy()
        if bad.any():
            raise ValueError(f"Syn-B row {left.index[bad][0]}: {col} differs ({left[col][bad].iloc[0]!r} vs {right[col][bad].iloc[0]!r})")
    for col in ("clean_maxprob", "clean_trueprob", "pert_maxprob", "pert_trueprob"):
        gap = np.abs(left[col].to_numpy(float) - right[col].to_numpy(float))
        if (gap > tol).any():
            raise ValueError(f"Syn-B row {left.index[int(gap.argmax())]}: {col} differs by {gap.max():.3g} (the zoo or the "
                             "corruptions were not reproduced)")

"""Real-source prediction records of a model zoo (paired evaluations §3.3, §5): each model's clean and
recaptured predictions of the same test images, in the record schema of `pipeline.paired.records`, and
the probe probabilities the screening comparison of §5.3 needs (TTA18 and the Syn-B corruptions).

The records stage (`scripts/records.py`) writes the Syn-B table of a pool; this module writes the real
table of the same images. Both train the zoo with `pipeline.models.zoo.build_model` on the same split:
the zoo's models are deterministic, so the clean side of the two tables agrees record for record
(`check_clean_agreement`), which is what lets screening scores from one table rank failures of the other.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from pipeline.models.zoo import build_model
from pipeline.paired.pools import PoolImages
from pipeline.paired.records import records_from_probabilities
from pipeline.paired.screening import condition_tiers
from pipeline.paired.screening_probes import tta18
from pipeline.perturb.recapture import RecaptureCondition, recapture

_CLEAN_TOL = 1e-9


def recaptured_images(images: np.ndarray, conditions: Sequence[RecaptureCondition], seed: int,
                      progress: Callable[[Iterable], Iterable] = iter) -> dict[str, np.ndarray]:
    """Every image recaptured under every condition (`pipeline.perturb.recapture`), keyed by condition
    name; image k is source image k, so a subset of conditions gives the same images as the full grid."""
    if len({c.name for c in conditions}) != len(conditions):
        raise ValueError(f"conditions repeat: {[c.name for c in conditions]}")
    return {c.name: recapture(images, c, seed) for c in progress(conditions)}


def zoo_records(models: Sequence[Mapping], train: tuple[np.ndarray, np.ndarray], pool: PoolImages,
                conditions: Mapping[str, np.ndarray], probes: Mapping[str, np.ndarray] | None = None,
                progress: Callable[[Iterable], Iterable] = iter) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Train each zoo model on `train` and predict the clean pool and every condition's images.

    Returns the record table (one row per model, condition and image) and, when `probes` (name ->
    (A, N, H, W, 3) stacks of transformed images) is given, the probe probabilities per model:
    `{"<model>/clean": (N, C), "<model>/<probe>": (A, N, C)}`; otherwise an empty dict.
    """
    train_x, train_y = train
    parts, arrays = [], {}
    for spec in progress(models):
        model = build_model(dict(spec)).fit(train_x, train_y)
        clean = model.predict_proba(pool.images)
        for name, images in conditions.items():
            parts.append(records_from_probabilities(spec["name"], spec["family"], name, pool.image_ids, pool.labels,
                                                    pool.split, clean, model.predict_proba(images)))
        if probes:
            arrays[f"{spec['name']}/clean"] = clean
            for probe, stack in probes.items():
                flat = model.predict_proba(stack.reshape(-1, *stack.shape[2:]))
                arrays[f"{spec['name']}/{probe}"] = flat.reshape(len(stack), len(pool.labels), -1)
    if not parts:
        raise ValueError("no models or no conditions to predict")
    return pd.concat(parts, ignore_index=True), arrays


def probe_stacks(images: np.ndarray, synthetic: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The two probe sets of §5.3 on the clean images: "tta" (the 18 natural transformations of TTA18)
    and "synb" (the Syn-B images in the records' condition order, `synthetic` name -> images)."""
    return {"tta": tta18(images), "synb": np.stack(list(synthetic.values()))}


def condition_summary(records: pd.DataFrame) -> dict:
    """Per condition its mean development accuracy across models and tier (§3.3), and the tier counts."""
    tiers = condition_tiers(records, split="dev")
    counts = {t: int((tiers["tier"] == t).sum()) for t in ("mild", "severe", "extreme")}
    per = {row.condition: {"dev_accuracy": float(row.accuracy), "tier": str(row.tier)} for row in tiers.itertuples()}
    return {"tier_counts": counts, "conditions": per}


def check_clean_agreement(synthetic: pd.DataFrame, real: pd.DataFrame, tol: float = _CLEAN_TOL) -> None:
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


def synthetic_images(images: np.ndarray, corruptions: Sequence[str], severities: Sequence[int],
                     seed: int) -> dict[str, np.ndarray]:
    """The Syn-B images exactly as the records stage makes them: "<name>-<severity>" in name-major order,
    per-image seeds from (seed, image index, severity) (`pipeline.perturb.compose.apply_step`)."""
    from pipeline.perturb.compose import apply_step
    from pipeline.perturb.registry import get_perturbation

    return {f"{name}-{int(sev)}": apply_step(get_perturbation(name), images, (int(sev),), seed)
            for name in corruptions for sev in severities}


def probe_table(arrays: Mapping[str, np.ndarray], image_ids: Sequence[str],
                names: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """The probe probabilities of `zoo_records` as one long table: model, probe ("clean" or a probe set),
    index (position in the set), name (`names[probe][index]`), image_id and p0..p{C-1}."""
    parts = []
    for key, values in arrays.items():
        model, probe = key.split("/", 1)
        stack = values[None] if values.ndim == 2 else values
        if len(stack) != len(names[probe]):
            raise ValueError(f"probe set {probe!r} has {len(stack)} members but {len(names[probe])} names")
        n, c = stack.shape[1:]
        frame = pd.DataFrame(stack.reshape(-1, c), columns=[f"p{j}" for j in range(c)])
        frame.insert(0, "image_id", np.tile(np.asarray(image_ids, dtype=str), len(stack)))
        frame.insert(0, "name", np.repeat(np.asarray(names[probe], dtype=str), n))
        frame.insert(0, "index", np.repeat(np.arange(len(stack)), n))
        frame.insert(0, "probe", probe)
        frame.insert(0, "model", model)
        parts.append(frame)
    return pd.concat(parts, ignore_index=True)


def probe_arrays(table: pd.DataFrame, model: str, probe: str, image_ids: Sequence[str]) -> np.ndarray:
    """(members, len(image_ids), C) probabilities of one model's probe set from `probe_table`'s table, in
    the order of `image_ids` (every id must be present in every member)."""
    part = table[(table["model"] == model) & (table["probe"] == probe)]
    if part.empty:
        raise ValueError(f"no {probe!r} probes of model {model!r}")
    cols = [c for c in table.columns if c.startswith("p") and c[1:].isdigit()]
    members = np.sort(part["index"].unique())
    wide = part.set_index(["index", "image_id"])[cols]
    want = pd.MultiIndex.from_product([members, list(image_ids)])
    missing = want.difference(wide.index)
    if len(missing):
        raise ValueError(f"model {model!r}, probe {probe!r}: no probabilities for {list(missing[:3])}")
    return wide.loc[want].to_numpy(float).reshape(len(members), len(image_ids), len(cols))


def synthetic_records(models: Sequence[Mapping], pool: PoolImages, arrays: Mapping[str, np.ndarray],
                      names: Sequence[str]) -> pd.DataFrame:
    """The Syn-B record table of the pool from `zoo_records`' probe probabilities (`<model>/clean`,
    `<model>/synb` in the order of `names`): the records stage's table of the same images and models."""
    parts = [records_from_probabilities(spec["name"], spec["family"], name, pool.image_ids, pool.labels, pool.split,
                                        arrays[f"{spec['name']}/clean"], arrays[f"{spec['name']}/synb"][a])
             for spec in models for a, name in enumerate(names)]
    return pd.concat(parts, ignore_index=True)


def check_same_records(a: pd.DataFrame, b: pd.DataFrame, tol: float = _CLEAN_TOL) -> None:
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

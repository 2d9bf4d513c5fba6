"""The real recapture sources of the recapture stage (paired evaluations §3.3): the zoo's training split,
the clean pool and the recaptured images per real condition, chosen by `paired.recapture.source`.

* ``embedded``: the records stage's pool photographed under the simulated recapture conditions of
  `pipeline.perturb.recapture` (lightings x camera settings `param_<k>`);
* ``es`` / ``diverse``: ImageNet-ES or ES-Diverse read from disk (`pipeline.data.imagenet_es`) with a
  labelled training folder for the model zoo. The source's reference images are the clean pool (labels:
  line order of Tiny-ImageNet's `wnids.txt`, the 200-class space), split into development and evaluation
  images within each class by seed; each `<lighting>-param_<k>` folder is one real condition, its images
  paired with the references by `<wnid>/<file stem>`. The zoo trains on `train_root`, an ImageFolder
  `<wnid>/<file>` or Tiny-ImageNet's training layout `<wnid>/images/<file>`; images are resized to one
  square size so that every zoo kind takes them.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

from pipeline.data.imagenet_es import (
    IMG_EXTENSIONS,
    es_records,
    load_images,
    load_wnids,
    reference_records,
)
from pipeline.paired.records.pools import POOLS, PoolImages, pool_test_set
from pipeline.paired.records.table import split_dev_eval
from pipeline.paired.records.zoo import recaptured_stream
from pipeline.perturb.recapture import N_PARAMS, make_condition

# (train split, pool, condition name -> recaptured images or a stream of (name, images), condition metadata, classes)
Source = tuple[tuple[np.ndarray, np.ndarray], PoolImages, Mapping[str, np.ndarray] | Iterator[tuple[str, np.ndarray]], dict, int]


def load_image_folder(root: str | Path, wnids: str | Path | Sequence[str], size: int) -> tuple[np.ndarray, np.ndarray]:
    """Labelled images of `root` (`<wnid>/<file>` or `<wnid>/images/<file>`), resized to `size`; labels
    index `wnids`. A class folder outside the label space is an error; classes may lack a folder."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is missing: expected a training folder <wnid>/<file> or <wnid>/images/<file>")
    index = {w: i for i, w in enumerate(load_wnids(wnids))}
    paths, labels = [], []
    for class_dir in sorted(d for d in root.iterdir() if d.is_dir()):
        if class_dir.name not in index:
            raise ValueError(f"{class_dir}: class {class_dir.name!r} is not in the label space (wnids.txt)")
        folder = class_dir / "images" if (class_dir / "images").is_dir() else class_dir
        files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMG_EXTENSIONS)
        paths += files
        labels += [index[class_dir.name]] * len(files)
    if not paths:
        raise ValueError(f"{root} holds no training images")
    return load_images(paths, size), np.asarray(labels, dtype=np.int64)


def es_pool(root: str | Path, wnids: str | Path | Sequence[str], source: str, lightings: Sequence[str],
            params: Sequence[int] | None, size: int, dev_fraction: float, seed: int) -> tuple[PoolImages, dict[str, np.ndarray], dict]:
    """(the references as the clean pool, condition name -> recaptured images in the pool's order,
    condition name -> {lighting, param, setting}) for the `lightings` x `params` conditions of the tree."""
    refs = reference_records(root, wnids, source)
    records = es_records(root, wnids, source, params)
    absent = [lighting for lighting in lightings if lighting not in set(records["lighting"])]
    if absent:
        raise ValueError(f"paired.recapture.lightings: {absent} not in the {source} tree (it holds "
                         f"{sorted(records['lighting'].unique())})")
    records = records[records["lighting"].isin(list(lightings))]
    ids = refs["image_id"].tolist()
    unpaired = sorted(set(records["image_id"]) ^ set(ids))
    if unpaired:
        raise ValueError(f"recaptures and references of {root} do not pair, e.g. {unpaired[:3]}")
    labels = refs["label"].to_numpy(np.int64)
    pool = PoolImages(load_images(refs["path"].tolist(), size), labels, np.asarray(ids),
                      split_dev_eval(labels, dev_fraction, seed))
    shots, meta = {}, {}
    for condition, part in records.groupby("condition", sort=False):
        shots[condition] = load_images(part.set_index("image_id").loc[ids, "path"].tolist(), size)
        row = part.iloc[0]
        shutter = f"1/{round(1 / row['shutter'])}" if row["shutter"] < 1 else f"{row['shutter']:g}"
        meta[condition] = {"lighting": str(row["lighting"]), "param": int(row["param"]),
                           "setting": f"ISO {row['iso']}, {shutter} s, f/{row['aperture']:g}"}
    return pool, shots, meta


def embedded_source(spec: dict, progress: Callable[[Iterable], Iterable] = iter, workers: int = 1) -> Source:
    """The records stage's pool photographed under the simulated recapture conditions, over `workers` processes:
    (train split, pool, the stream of (condition name, recaptured images) (`recaptured_stream`: computed from this call
    on, read through `progress`), condition name -> {lighting, param, setting}, number of classes)."""
    rec, rc = spec["records"], spec["recapture"]
    modality = POOLS.facts(rec["pool"])["modality"]
    if modality != "vision":
        raise ValueError(f"paired.records.pool: {rec['pool']!r} holds {modality}; a recapture photographs images "
                         f"(an image pool: {', '.join(POOLS.where(modality='vision'))})")
    (train_x, train_y), images = pool_test_set(rec)
    test_x = images.images
    params = rc["params"] if rc["params"] is not None else range(1, N_PARAMS + 1)
    conditions = [make_condition(lighting, p) for lighting in rc["lightings"] for p in params]
    shots = progress(recaptured_stream(test_x, conditions, rc["seed"], workers))
    meta = {c.name: {"lighting": c.lighting, "param": c.param, "setting": c.label} for c in conditions}
    return (train_x, train_y), images, shots, meta, int(train_y.max()) + 1


def disk_source(spec: dict) -> Source:
    """ImageNet-ES / ES-Diverse recaptures of their references, the zoo training on `train_root`; the
    tuple of `embedded_source`."""
    rec, rc = spec["records"], spec["recapture"]
    size = rec["image_size"]
    images, shots, meta = es_pool(rc["root"], rc["wnids"], rc["source"], rc["lightings"], rc["params"], size,
                                  rec["dev_fraction"], rec["seed"])
    return load_image_folder(rc["train_root"], rc["wnids"], size), images, shots, meta, len(load_wnids(rc["wnids"]))


def recapture_source(spec: dict, progress: Callable[[Iterable], Iterable] = iter, workers: int = 1) -> Source:
    """The source `spec["recapture"]["source"]` names (`spec` is the `paired` config node): `embedded_source`
    (over `workers` processes) for "embedded", `disk_source` for "es" / "diverse"."""
    if spec["recapture"]["source"] == "embedded":
        return embedded_source(spec, progress, workers)
    return disk_source(spec)

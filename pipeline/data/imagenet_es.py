"""ImageNet-ES and ES-Diverse physical recaptures read from their folder layouts (paired evaluations §3.3).

Layouts, as the data sets document them (checked against the ImageNet-ES README, `configs/datasets.py`
and `DG_Param_Control/configs/config.py` of github.com/Edw2n/ImageNet-ES, and the ES-Diverse README of
github.com/Edw2n/Lens):

    ImageNet-ES/es-test/param_control/<l1|l5>/param_<1..27>/<wnid>/<file>      54K = 1K x 2 lightings x 27
    ImageNet-ES/es-test/sampled_tin_no_resize2/<wnid>/<file>                    the 1K reference images
    ImageNet-ES-Diverse/es-diverse-test/param_control/<env>/param_<1..27>/<wnid>/<file>   162K = 1K x 6 x 27
    ImageNet-ES-Diverse/es-diverse-test/sampled_tin_no_resize2/<wnid>/<file>

Each `param_<k>` folder is an ImageFolder (one sub-folder per class). ImageNet-ES's camera settings
follow its `settings/grid-options-3x3x3.csv` (`pipeline.perturb.recapture.camera_setting`); the ES-Diverse
README gives 27 settings per environment but neither the grid nor the six environment folder names, so
environments are discovered from the tree and the same 27-setting grid is assumed for them. A recapture's
image identity is `<wnid>/<file stem>`, on the assumption that a recapture keeps its reference's file name
(the stems, not the extensions, are compared, so a PNG capture of a JPEG reference still pairs).

Labels are indices into Tiny-ImageNet's `wnids.txt` (line order, as `pipeline.data.tiny_imagenet`): the
200-class space of the paper. Tiers are not stored in the data: they come from mean development accuracy
across models (`tiers_from_accuracy`, or `pipeline.paired.screening.condition_tiers` on record tables).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from pipeline.perturb.recapture import N_PARAMS, make_condition, parse_condition, tier_of

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")
RECORD_COLUMNS = ("path", "condition", "lighting", "param", "shutter", "iso", "aperture", "wnid", "label", "image_id")
_PARAM = re.compile(r"^param_(\d+)$")


@dataclass(frozen=True)
class EsSource:
    """One recapture data set: its test folder, reference folder and expected lighting folders
    (None: discovered from the tree)."""

    name: str
    test_dir: str
    reference_dir: str
    lightings: tuple[str, ...] | None


SOURCES: dict[str, EsSource] = {
    "es": EsSource("es", "es-test", "sampled_tin_no_resize2", ("l1", "l5")),
    "diverse": EsSource("diverse", "es-diverse-test", "sampled_tin_no_resize2", None),
}


def get_source(source: str) -> EsSource:
    """The layout of source "es" or "diverse"."""
    if source not in SOURCES:
        raise ValueError(f"unknown recapture source {source!r}; valid sources are {sorted(SOURCES)}")
    return SOURCES[source]


def load_wnids(wnids: str | Path | Sequence[str]) -> list[str]:
    """Tiny-ImageNet's class list: a `wnids.txt` path (one WordNet id a line; the line number is the
    label) or the ids themselves. Duplicates are an error."""
    if isinstance(wnids, (str, Path)):
        path = Path(wnids)
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing: pass Tiny-ImageNet's wnids.txt (the 200-class label space)")
        ids = [w.strip() for w in path.read_text().splitlines() if w.strip()]
    else:
        ids = [str(w) for w in wnids]
    dupes = sorted({w for w in ids if ids.count(w) > 1})
    if not ids or dupes:
        raise ValueError(f"the class list must be non-empty without repeats; repeated: {dupes}")
    return ids


def _natural(name: str) -> tuple:
    """Sort key that orders embedded numbers numerically (l2 before l10)."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def _test_root(root: str | Path, spec: EsSource) -> Path:
    root = Path(root)
    test = root if root.name == spec.test_dir else root / spec.test_dir
    if not test.is_dir():
        raise FileNotFoundError(f"{test} is missing: expected the {spec.name} layout <root>/{spec.test_dir}/param_control/...")
    return test


def _image_files(folder: Path) -> list[Path]:
    return sorted((p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMG_EXTENSIONS), key=lambda p: p.name)


def _class_images(folder: Path, index: dict[str, int]) -> list[tuple[Path, str]]:
    """(file, wnid) of an ImageFolder; a class folder outside the label space is an error."""
    out = []
    for class_dir in sorted((d for d in folder.iterdir() if d.is_dir()), key=lambda d: d.name):
        if class_dir.name not in index:
            raise ValueError(f"{class_dir}: class {class_dir.name!r} is not in the label space (wnids.txt)")
        out.extend((f, class_dir.name) for f in _image_files(class_dir))
    return out


def lightings_of(root: str | Path, source: str = "es") -> list[str]:
    """The lighting / environment folders of a source's param_control tree, checked against the
    documented ones where the source names them (ImageNet-ES: l1, l5)."""
    spec = get_source(source)
    control = _test_root(root, spec) / "param_control"
    if not control.is_dir():
        raise FileNotFoundError(f"{control} is missing: expected <root>/{spec.test_dir}/param_control/<lighting>/param_<k>/<wnid>/<file>")
    found = sorted((d.name for d in control.iterdir() if d.is_dir()), key=_natural)
    if spec.lightings is not None and sorted(found) != sorted(spec.lightings):
        raise ValueError(f"{control} holds lightings {found}; {spec.name} has {list(spec.lightings)}")
    if not found:
        raise ValueError(f"{control} holds no lighting folders")
    return found


def es_records(root: str | Path, wnids: str | Path | Sequence[str], source: str = "es",
               params: Iterable[int] | None = None) -> pd.DataFrame:
    """One row per recaptured image: path, condition ("<lighting>-param_<k>"), lighting, param, the
    camera setting (shutter s, ISO, f-number), wnid, label (index in `wnids`) and image_id
    ("<wnid>/<stem>"). `params` restricts the settings read (default all 27, every one required).
    Every condition must hold the same image ids, each once, so conditions pair image by image."""
    spec = get_source(source)
    index = {w: i for i, w in enumerate(load_wnids(wnids))}
    wanted = list(range(1, N_PARAMS + 1)) if params is None else sorted({int(p) for p in params})
    control = _test_root(root, spec) / "param_control"
    rows = []
    for lighting in lightings_of(root, source):
        folder = control / lighting
        present = {int(m.group(1)) for d in folder.iterdir() if d.is_dir() and (m := _PARAM.match(d.name))}
        missing = [p for p in wanted if p not in present]
        if missing or any(not 1 <= p <= N_PARAMS for p in present):
            raise ValueError(f"{folder} holds param folders {sorted(present)}; expected param_1..param_{N_PARAMS}"
                             + (f", missing {missing}" if missing else ""))
        for param in wanted:
            condition = make_condition(lighting, param)
            for path, wnid in _class_images(folder / f"param_{param}", index):
                rows.append((str(path), condition.name, lighting, param, condition.shutter, condition.iso,
                             condition.aperture, wnid, index[wnid], f"{wnid}/{path.stem}"))
    records = pd.DataFrame(rows, columns=list(RECORD_COLUMNS))
    if records.empty:
        raise ValueError(f"{control} holds no images")
    _check_pairing(records)
    return records


def _check_pairing(records: pd.DataFrame) -> None:
    dup = records.duplicated(["condition", "image_id"])
    if dup.any():
        row = records[dup].iloc[0]
        raise ValueError(f"condition {row['condition']!r} holds image {row['image_id']!r} twice (files with one stem)")
    ids = records.groupby("condition", sort=False)["image_id"].apply(frozenset)
    if ids.nunique() > 1:
        first = ids.iloc[0]
        other = ids[ids != first].index[0]
        diff = sorted(first ^ ids[other])[:5]
        raise ValueError(f"conditions {ids.index[0]!r} and {other!r} hold different images, e.g. {diff}")


def reference_records(root: str | Path, wnids: str | Path | Sequence[str], source: str = "es") -> pd.DataFrame:
    """The reference (clean) images of a source: path, wnid, label and image_id, as `es_records`."""
    spec = get_source(source)
    index = {w: i for i, w in enumerate(load_wnids(wnids))}
    folder = _test_root(root, spec) / spec.reference_dir
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is missing: expected <root>/{spec.test_dir}/{spec.reference_dir}/<wnid>/<file>")
    rows = [(str(p), w, index[w], f"{w}/{p.stem}") for p, w in _class_images(folder, index)]
    out = pd.DataFrame(rows, columns=["path", "wnid", "label", "image_id"])
    if out["image_id"].duplicated().any():
        raise ValueError(f"{folder} holds two references with one image id {out.loc[out['image_id'].duplicated(), 'image_id'].iloc[0]!r}")
    return out


def condition_table(records: pd.DataFrame) -> pd.DataFrame:
    """One row per condition of a record table: condition, lighting, param, shutter, iso, aperture, in
    lighting then param order."""
    cols = ["condition", "lighting", "param", "shutter", "iso", "aperture"]
    table = records[cols].drop_duplicates("condition")
    order = sorted(range(len(table)), key=lambda i: (_natural(table["lighting"].iloc[i]), int(table["param"].iloc[i])))
    return table.iloc[order].reset_index(drop=True)


def tiers_from_accuracy(accuracy: pd.DataFrame) -> pd.DataFrame:
    """Tiers from development accuracy (§3.3): `accuracy` has one row per (condition, model) with an
    `accuracy` column; models weigh equally. Returns condition, lighting, param, accuracy (the mean
    across models) and tier (mild >= 40%, severe 20% to < 40%, extreme < 20%)."""
    missing = [c for c in ("condition", "model", "accuracy") if c not in accuracy.columns]
    if missing:
        raise ValueError(f"accuracy lacks columns {missing}; it needs condition, model and accuracy")
    mean = accuracy.groupby("condition", sort=False)["accuracy"].mean()
    parsed = [parse_condition(name) for name in mean.index]
    bad = next((name for name, p in zip(mean.index, parsed) if p is None), None)
    if bad is not None:
        raise ValueError(f"condition {bad!r} is not named <lighting>-param_<k>")
    out = pd.DataFrame({"condition": mean.index, "lighting": [p[0] for p in parsed],
                        "param": np.array([p[1] for p in parsed], dtype=int), "accuracy": mean.to_numpy()})
    out["tier"] = [tier_of(a) for a in out["accuracy"]]
    order = sorted(range(len(out)), key=lambda i: (_natural(out["lighting"].iloc[i]), int(out["param"].iloc[i])))
    return out.iloc[order].reset_index(drop=True)


def load_images(paths: Sequence[str | Path], size: int | None = None) -> np.ndarray:
    """Images as (N, H, W, 3) uint8, resized bilinearly to `size` x `size` when given (needed when the
    files differ in size)."""
    images = []
    for path in paths:
        with Image.open(path) as img:
            img = img.convert("RGB")
            if size is not None:
                img = img.resize((size, size), Image.BILINEAR)
            images.append(np.asarray(img, dtype=np.uint8))
    if not images:
        return np.zeros((0, size or 0, size or 0, 3), dtype=np.uint8)
    shapes = {im.shape for im in images}
    if len(shapes) > 1:
        raise ValueError(f"images differ in size {sorted(shapes)}; pass size to resize them")
    return np.stack(images)

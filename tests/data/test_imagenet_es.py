"""ImageNet-ES / ES-Diverse loaders on tiny fixture trees: conditions (lighting x param) with ES's camera
grid, Tiny-ImageNet labels from wnids.txt line order, image pairing across conditions, references,
tiers computed from accuracy, and errors naming what is wrong."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from pipeline.data.imagenet_es import (
    condition_table,
    es_records,
    lightings_of,
    load_images,
    load_wnids,
    reference_records,
    tiers_from_accuracy,
)

WNIDS = ["n09999999", "n01443537", "n02085620"]          # not sorted: labels follow line order
IMAGES = {"n01443537": ["val_1", "val_7"], "n02085620": ["val_3"]}


def _png(path: Path, value: int, size: int = 8) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((size, size, 3), value, np.uint8)).save(path)


def _tree(root: Path, test_dir: str, lightings: list[str], params=range(1, 28)) -> Path:
    """<root>/<test_dir>/param_control/<lighting>/param_<k>/<wnid>/<stem>.png plus the references."""
    test = root / test_dir
    for lighting in lightings:
        for param in params:
            for wnid, stems in IMAGES.items():
                for j, stem in enumerate(stems):
                    _png(test / "param_control" / lighting / f"param_{param}" / wnid / f"{stem}.png", 7 * param + j)
    for wnid, stems in IMAGES.items():
        for stem in stems:
            _png(test / "sampled_tin_no_resize2" / wnid / f"{stem}.JPEG", 200)
    (root / "wnids.txt").write_text("\n".join(WNIDS) + "\n")
    return root


@pytest.fixture
def es_root(tmp_path: Path) -> Path:
    return _tree(tmp_path / "ImageNet-ES", "es-test", ["l1", "l5"])


def test_es_records_cover_54_conditions_with_the_es_grid(es_root: Path):
    records = es_records(es_root, es_root / "wnids.txt")
    assert list(records.columns) == ["path", "condition", "lighting", "param", "shutter", "iso", "aperture", "wnid",
                                     "label", "image_id"]
    assert len(records) == 54 * 3
    conditions = condition_table(records)
    assert len(conditions) == 54
    assert conditions["condition"].tolist()[:2] == ["l1-param_1", "l1-param_2"]
    assert conditions["condition"].tolist()[27] == "l5-param_1"
    row = conditions.set_index("condition").loc["l5-param_14"]
    assert (row["shutter"], row["iso"], row["aperture"]) == (1 / 60, 2000, 9.0)
    assert set(records["label"]) == {1, 2}
    assert (records["label"] == records["wnid"].map({w: i for i, w in enumerate(WNIDS)})).all()
    one = records[records["condition"] == "l1-param_3"]
    assert sorted(one["image_id"]) == ["n01443537/val_1", "n01443537/val_7", "n02085620/val_3"]
    path = Path(one.loc[one["image_id"] == "n02085620/val_3", "path"].iloc[0])
    assert path.parts[-6:] == ("es-test", "param_control", "l1", "param_3", "n02085620", "val_3.png")


def test_root_may_be_the_test_folder_and_wnids_a_list(es_root: Path):
    a = es_records(es_root, es_root / "wnids.txt")
    b = es_records(es_root / "es-test", WNIDS)
    pd.testing.assert_frame_equal(a, b)


def test_params_subset(es_root: Path):
    records = es_records(es_root, WNIDS, params=[27, 2])
    assert sorted(records["condition"].unique()) == ["l1-param_2", "l1-param_27", "l5-param_2", "l5-param_27"]


def test_reference_records_pair_with_recaptures(es_root: Path):
    refs = reference_records(es_root, WNIDS)
    records = es_records(es_root, WNIDS)
    assert len(refs) == 3 and set(refs["image_id"]) == set(records["image_id"])
    assert refs["label"].tolist() == [1, 1, 2]


def test_diverse_environments_are_discovered(tmp_path: Path):
    root = _tree(tmp_path / "ImageNet-ES-Diverse", "es-diverse-test", ["l10", "l2", "l1"], params=range(1, 28))
    assert lightings_of(root, "diverse") == ["l1", "l2", "l10"]
    records = es_records(root, root / "wnids.txt", source="diverse")
    assert records["condition"].nunique() == 81
    assert condition_table(records)["lighting"].drop_duplicates().tolist() == ["l1", "l2", "l10"]


def test_es_rejects_other_lightings(tmp_path: Path):
    root = _tree(tmp_path / "ImageNet-ES", "es-test", ["l1", "l3"], params=[1])
    with pytest.raises(ValueError, match=r"lightings \['l1', 'l3'\]"):
        es_records(root, WNIDS, params=[1])


def test_missing_param_folder_is_named(es_root: Path):
    shutil.rmtree(es_root / "es-test" / "param_control" / "l5" / "param_13")
    with pytest.raises(ValueError, match=r"missing \[13\]"):
        es_records(es_root, WNIDS)


def test_class_outside_the_label_space(es_root: Path):
    with pytest.raises(ValueError, match="n02085620.*not in the label space"):
        es_records(es_root, WNIDS[:2])


def test_conditions_must_hold_the_same_images(es_root: Path):
    (es_root / "es-test" / "param_control" / "l5" / "param_4" / "n01443537" / "val_7.png").unlink()
    with pytest.raises(ValueError, match="hold different images"):
        es_records(es_root, WNIDS)


def test_missing_layout_and_unknown_source(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="es-test"):
        es_records(tmp_path, WNIDS)
    with pytest.raises(ValueError, match="valid sources"):
        es_records(tmp_path, WNIDS, source="es-c")


def test_load_wnids(tmp_path: Path):
    (tmp_path / "wnids.txt").write_text("a\n\nb\n")
    assert load_wnids(tmp_path / "wnids.txt") == ["a", "b"]
    with pytest.raises(ValueError, match="repeated"):
        load_wnids(["a", "a"])
    with pytest.raises(FileNotFoundError, match="wnids.txt"):
        load_wnids(tmp_path / "missing.txt")


def test_tiers_from_accuracy():
    acc = pd.DataFrame({"condition": ["l5-param_2", "l5-param_2", "l1-param_10", "l1-param_10", "l1-param_9", "l1-param_9"],
                        "model": ["a", "b"] * 3, "accuracy": [0.5, 0.3, 0.3, 0.1, 0.1, 0.2]})
    tiers = tiers_from_accuracy(acc)
    assert tiers["condition"].tolist() == ["l1-param_9", "l1-param_10", "l5-param_2"]
    assert np.allclose(tiers["accuracy"], [0.15, 0.2, 0.4])
    assert tiers["tier"].tolist() == ["extreme", "severe", "mild"]
    assert tiers["param"].tolist() == [9, 10, 2]
    with pytest.raises(ValueError, match="not named"):
        tiers_from_accuracy(pd.DataFrame({"condition": ["fog-2"], "model": ["a"], "accuracy": [0.5]}))


def test_load_images(es_root: Path):
    records = es_records(es_root, WNIDS, params=[5])
    images = load_images(records["path"].tolist())
    assert images.shape == (6, 8, 8, 3) and images.dtype == np.uint8
    assert images[0, 0, 0, 0] == 35
    assert load_images(records["path"].tolist()[:2], size=4).shape == (2, 4, 4, 3)

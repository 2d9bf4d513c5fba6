"""ImageFolderDataSet on tiny generated folders: labels against torchvision's ImageFolder (the oracle), RGB
conversion of mixed modes and formats, resizing, the one-size rule, seeded subsets and layout errors."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from torchvision.datasets import ImageFolder

from pipeline.data.image_folder import ImageFolderDataSet, subset_indices
from pipeline.plugins.protocols import DataSet

CLASSES = ["zebra", "Ant", "cat"]  # not sorted; sorted order is Ant, cat, zebra (uppercase first)
MODES = ["RGB", "L", "RGBA", "P"]


def _image(path: Path, mode: str, size: tuple[int, int], value: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rgb = np.full((size[1], size[0], 3), value, np.uint8)
    rgb[0, :, 0] = 255 - value                       # a row that differs, so resizing has something to blend
    image = Image.fromarray(rgb).convert(mode)
    image.save(path)


def _folder(root: Path, per_class: int = 4, mixed: bool = True) -> Path:
    """len(CLASSES) x per_class images; with `mixed`, modes RGB/L/RGBA/P, PNG and JPEG, sizes 10x12 and 7x9."""
    for c, name in enumerate(CLASSES):
        for j in range(per_class):
            mode = MODES[j % len(MODES)] if mixed else "RGB"
            suffix = ".jpg" if mixed and mode in ("RGB", "L") else ".png"
            size = (7, 9) if mixed and j % 3 == 1 else (10, 12)
            _image(root / name / f"img_{j:02d}{suffix}", mode, size, 20 * c + 3 * j)
    return root


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    return _folder(tmp_path / "mixed")


def test_labels_and_order_match_torchvision(mixed: Path):
    data = ImageFolderDataSet(str(mixed), size=8)
    oracle = ImageFolder(str(mixed))
    assert isinstance(data, DataSet)
    assert data.classes == oracle.classes == ["Ant", "cat", "zebra"]
    images, labels = data.test_set()
    assert labels.dtype == np.int64
    np.testing.assert_array_equal(labels, [target for _, target in oracle.samples])
    assert [str(p) for p in data.paths] == [path for path, _ in oracle.samples]
    for k, (image, _) in enumerate(oracle):                 # same pixels as torchvision's loader + PIL resize
        np.testing.assert_array_equal(images[k], np.asarray(image.resize((8, 8), Image.Resampling.BILINEAR)))


def test_size_gives_uint8_rgb_squares(mixed: Path):
    images, labels = ImageFolderDataSet(str(mixed), size=5).test_set()
    assert images.shape == (12, 5, 5, 3) and images.dtype == np.uint8
    assert labels.shape == (12,)


def test_one_size_without_resizing(tmp_path: Path):
    root = _folder(tmp_path / "same", per_class=2, mixed=False)
    images, _ = ImageFolderDataSet(str(root)).test_set()
    assert images.shape == (6, 12, 10, 3) and images.dtype == np.uint8


def test_mixed_sizes_need_size(mixed: Path):
    with pytest.raises(ValueError, match=r"img_01\.jpg.* is 7x9 but .*img_00\.jpg.* is 10x12.*size="):
        ImageFolderDataSet(str(mixed))


def test_limit_is_seeded_and_keeps_listing_order(tmp_path: Path):
    root = _folder(tmp_path / "big", per_class=10, mixed=False)
    full = ImageFolderDataSet(str(root))
    a, b = ImageFolderDataSet(str(root), limit=7, seed=3), ImageFolderDataSet(str(root), limit=7, seed=3)
    other = ImageFolderDataSet(str(root), limit=7, seed=4)
    assert a.paths == b.paths and a.paths != other.paths
    for subset in (a, other):
        assert len(subset.paths) == 7
        positions = [full.paths.index(p) for p in subset.paths]
        assert positions == sorted(positions)
        np.testing.assert_array_equal(subset.test_set()[1], full.labels[positions])
        np.testing.assert_array_equal(subset.test_set()[0], full.test_set()[0][positions])
    assert ImageFolderDataSet(str(root), limit=100).paths == full.paths


def test_subset_indices_rejects_bad_limits():
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(ValueError, match="limit must be a positive integer or None"):
            subset_indices(10, bad, 0)


def test_empty_class_folder_keeps_its_index(tmp_path: Path):
    root = _folder(tmp_path / "gap", per_class=1, mixed=False)
    (root / "bee").mkdir()                           # sorted: Ant, bee, cat, zebra
    data = ImageFolderDataSet(str(root))
    assert data.classes == ["Ant", "bee", "cat", "zebra"]
    np.testing.assert_array_equal(data.test_set()[1], [0, 2, 3])


def test_layout_errors_name_the_path(tmp_path: Path):
    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError, match=r"nowhere.*is not a folder.*<root>/<class>/<image>"):
        ImageFolderDataSet(str(missing))
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "stray.png").write_bytes(b"")
    with pytest.raises(ValueError, match=r"empty.*has no class folders.*<root>/<class>/<image>"):
        ImageFolderDataSet(str(empty))
    (empty / "cat").mkdir()
    (empty / "cat" / "notes.txt").write_text("not an image")
    with pytest.raises(ValueError, match=r"empty.*has class folders \(cat\) but no images.*\.png"):
        ImageFolderDataSet(str(empty))
    with pytest.raises(ValueError, match="size must be a positive integer or None, got 0"):
        ImageFolderDataSet(str(empty), size=0)


def test_built_by_hydra_instantiate(mixed: Path):
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    node = OmegaConf.create({"_target_": "pipeline.data.image_folder.ImageFolderDataSet", "root": str(mixed),
                             "size": 6, "limit": 5, "seed": 1})
    images, labels = instantiate(node).test_set()
    assert images.shape == (5, 6, 6, 3) and labels.shape == (5,)

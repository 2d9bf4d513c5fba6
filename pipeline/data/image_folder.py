"""A vision test set read from torchvision's ImageFolder layout:

    <root>/<class>/<image>          e.g. root/cat/001.png, root/dog/sub/002.jpg

Files and labels are listed by torchvision itself (`torchvision.datasets.folder.find_classes` and
`make_dataset`): the class index is the position of the class folder in sorted name order, the files are
those with an image extension (`IMG_EXTENSIONS`, case-insensitive) anywhere below a class folder, in class
order and then sorted path order. A class folder without images keeps its index (torchvision's
`allow_empty=True`), so labels still match a model trained on the full class list.

Images of any size and mode are converted to RGB (torchvision's `pil_loader`); with `size` each is resized to
`size` x `size` (PIL bilinear), without it all must share one size. `limit` keeps a simple (not stratified)
random subset of `limit` images drawn with `numpy.random.default_rng(seed)` without replacement, returned in
the listing order above; a `limit` at least the number of images keeps them all (`subset_indices`, which
`pipeline.data.text_table` shares: torchvision is imported only where it is used, so that import stays light).
Images are decoded when `test_set` is called; the constructor lists them and, without `size`, reads only
their headers to check the one-size rule, so a bad layout is refused before any work.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

LAYOUT = "<root>/<class>/<image> (one folder per class, as torchvision's ImageFolder)"


def subset_indices(n: int, limit: int | None, seed: int) -> np.ndarray:
    """Sorted indices of a seeded simple random subset of `limit` of `n` items (all of them when `limit` is
    None or at least `n`)."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1):
        raise ValueError(f"limit must be a positive integer or None, got {limit!r}")
    if limit is None or limit >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=int(limit), replace=False))


class ImageFolderDataSet:
    """The images below `root` as the clean test set D: (N, H, W, 3) uint8 RGB and int64 labels.

    size: side of the square every image is resized to (None: keep sizes, which must then agree);
    limit: number of images to keep (None: all); seed: the RNG seed of that subset."""

    def __init__(self, root: str, size: int | None = None, limit: int | None = None, seed: int = 0) -> None:
        from torchvision.datasets.folder import (
            IMG_EXTENSIONS,
            find_classes,
            make_dataset,
        )

        if size is not None and (isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1):
            raise ValueError(f"size must be a positive integer or None, got {size!r}")
        self.root = Path(root).expanduser()
        if not self.root.is_dir():
            raise FileNotFoundError(f"image folder root {str(self.root)!r} is not a folder; expected the layout {LAYOUT}")
        try:
            self.classes, class_to_idx = find_classes(self.root)
        except FileNotFoundError:
            raise ValueError(f"image folder root {str(self.root)!r} has no class folders; expected the layout "
                             f"{LAYOUT}") from None
        samples = make_dataset(self.root, class_to_idx, extensions=IMG_EXTENSIONS, allow_empty=True)
        if not samples:
            raise ValueError(f"image folder root {str(self.root)!r} has class folders ({', '.join(self.classes)}) but no "
                             f"images with an extension in {', '.join(IMG_EXTENSIONS)}; expected the layout {LAYOUT}")
        keep = subset_indices(len(samples), limit, seed)
        self.size = None if size is None else int(size)
        self.paths = [Path(samples[i][0]) for i in keep]
        self.labels = np.array([samples[i][1] for i in keep], dtype=np.int64)
        if self.size is None:
            self._check_one_size()

    def _check_one_size(self) -> None:
        """A ValueError naming the first image whose size differs from the first image's (headers only)."""
        with Image.open(self.paths[0]) as first:
            expected = first.size
        for path in self.paths[1:]:
            with Image.open(path) as image:
                if image.size != expected:
                    raise ValueError(f"image {str(path)!r} is {image.size[0]}x{image.size[1]} but {str(self.paths[0])!r} is "
                                     f"{expected[0]}x{expected[1]}; images of different sizes need size=<side> to resize "
                                     "them all to one square")

    def _load(self, path: Path) -> np.ndarray:
        from torchvision.datasets.folder import pil_loader

        image = pil_loader(path)
        if self.size is not None:
            image = image.resize((self.size, self.size), Image.Resampling.BILINEAR)
        return np.asarray(image, dtype=np.uint8)

    def test_set(self) -> tuple[np.ndarray, np.ndarray]:
        """(images (N, H, W, 3) uint8 RGB, labels (N,) int64), in listing order."""
        images = np.stack([self._load(path) for path in self.paths])
        return images, self.labels.copy()

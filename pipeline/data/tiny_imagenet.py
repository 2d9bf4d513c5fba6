"""Tiny-ImageNet validation set read from its folder layout (the paper's vision benchmark, §4.1):

    <root>/wnids.txt                      one WordNet id per line; the line number is the class index
    <root>/val/val_annotations.txt        <file>\t<wnid>\t<x0>\t<y0>\t<x1>\t<y1>
    <root>/val/images/<file>              64x64 JPEG images
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image


def load_tiny_imagenet_val(root: str | Path, limit: int | None = None, size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Validation images as (N, H, W, 3) uint8 (resized to `size` if given) and int64 labels, in
    annotation-file order; `limit` keeps the first images."""
    root = Path(root)
    wnids_file, ann_file = root / "wnids.txt", root / "val" / "val_annotations.txt"
    for required in (wnids_file, ann_file):
        if not required.is_file():
            raise FileNotFoundError(f"{required} is missing: expected the Tiny-ImageNet layout (wnids.txt, val/val_annotations.txt, val/images/)")
    wnids = [w.strip() for w in wnids_file.read_text().splitlines() if w.strip()]
    index = {w: i for i, w in enumerate(wnids)}
    rows = [line.split("\t") for line in ann_file.read_text().splitlines() if line.strip()]
    if limit is not None:
        rows = rows[: int(limit)]
    if not rows:
        raise ValueError(f"{ann_file} lists no images")
    images, labels = [], []
    for lineno, row in enumerate(rows, 1):
        if row[1] not in index:
            raise ValueError(f"{ann_file}:{lineno}: class {row[1]!r} is not in wnids.txt")
        img = Image.open(root / "val" / "images" / row[0]).convert("RGB")
        if size is not None:
            img = img.resize((size, size), Image.BILINEAR)
        images.append(np.asarray(img, dtype=np.uint8))
        labels.append(index[row[1]])
    return np.stack(images), np.asarray(labels, dtype=np.int64)

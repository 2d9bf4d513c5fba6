"""Images inlined into the report page as base64 PNG data URIs, so the page needs no file beside it:
the stages' figures (downscaled to the page's width and reduced to a palette) and gallery thumbnails."""
from __future__ import annotations

import base64
import io
from pathlib import Path

import numpy as np
from PIL import Image

MAX_WIDTH = 1100      # px: wider figures are downscaled (the page is 1100 px wide at most)
COLOURS = 128         # palette size of a downscaled figure (matplotlib figures use few colours)


def _uri(image: Image.Image) -> str:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def figure_uri(path: Path, max_width: int = MAX_WIDTH) -> str:
    """The PNG at `path` as a data URI, at most `max_width` px wide, in a palette of `COLOURS` colours."""
    with Image.open(path) as image:
        image = image.convert("RGB")
    if image.width > max_width:
        image = image.resize((max_width, round(image.height * max_width / image.width)), Image.LANCZOS)
    return _uri(image.quantize(COLOURS, method=Image.Quantize.MEDIANCUT))


def array_uri(pixels: np.ndarray) -> str:
    """An image array (H x W, or H x W x 3/4; uint8, or floats in [0, 1]) as a lossless PNG data URI."""
    array = np.asarray(pixels)
    if array.dtype.kind == "f":
        array = np.clip(np.round(array * 255), 0, 255)
    array = array.astype(np.uint8)
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    return _uri(Image.fromarray(array))

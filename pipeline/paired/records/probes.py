"""The probe probabilities of the screening comparison (paired evaluations §5.3, App. E.1-E.2): per model
the clean, TTA18 (`pipeline.perturb.tta`) and Syn-B class probabilities of every image, stored as one
long table beside the real-condition records and read back as (members, images, classes) arrays.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from pipeline.perturb.tta import tta18


def probe_stacks(images: np.ndarray, synthetic: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The two probe sets of §5.3 on the clean images: "tta" (the 18 natural transformations of TTA18)
    and "synb" (the Syn-B images in the records' condition order, `synthetic` name -> images)."""
    return {"tta": tta18(images), "synb": np.stack(list(synthetic.values()))}


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

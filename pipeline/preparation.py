"""The `prepare` stage's library: clean inputs, labels, splits and the embedded models of a benchmark,
one registry entry per dataset kind that needs preparing (real-world data sets are read where they are)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np

from pipeline.data.digits import load_digits_splits
from pipeline.models.cnn import predict_proba, save_cnn, train_cnn
from pipeline.registry import Registry

Spec = dict[str, Any]


def prepare_digits(spec: Spec, data_dir: str | Path, progress: bool = True) -> dict[str, float]:
    """Split the digits, train the model under test and the KID feature network; return clean metrics."""
    data_dir = Path(data_dir)
    ds = spec["dataset"]
    splits = load_digits_splits(seed=int(ds.get("split_seed", 0)), size=int(ds.get("size", 32)))
    data_dir.mkdir(parents=True, exist_ok=True)
    tmp = data_dir / ".splits.tmp.npz"
    np.savez_compressed(tmp, **{f"{k}_{xy}": v for k, (x, y) in splits.items() for xy, v in (("x", x), ("y", y))})
    tmp.replace(data_dir / "splits.npz")
    metrics = {f"n_{k}": len(y) for k, (_, y) in splits.items()}
    for role, file in (("model", "model.pt"), ("features", "features.pt")):
        m = spec[role]
        net = train_cnn(*splits["train"], seed=int(m["seed"]), width=int(m["width"]), epochs=int(m["epochs"]), progress=progress)
        save_cnn(net, data_dir / file)
        for split in ("dev", "test"):
            x, y = splits[split]
            metrics[f"{role}_{split}_accuracy"] = float((predict_proba(net, x).argmax(1) == y).mean())
    return metrics


PREPARERS: Registry[Callable[..., dict[str, float]]] = Registry("preparer")
PREPARERS.register("digits", prepare_digits)


def prepare(spec: Spec, data_dir: str | Path, progress: bool = True) -> dict[str, float]:
    """Prepare the assets of `spec` into `data_dir`; returns clean metrics (none for data read in place)."""
    kind = spec["dataset"]["kind"]
    if kind not in PREPARERS:
        return {}  # real-world datasets and models are read from where they are
    return PREPARERS.get(kind)(spec, data_dir, progress)

"""The digits CNN under the digits benchmark's corruptions at continuous severities.

Parameter j is the severity s_j ∈ [0, 5] of family j (speckle noise, glass blur, brightness, pixelate
by default), applied in that order to every test image by `pipeline.perturb.continuous.apply_continuous`,
which interpolates each family's ImageNet-C parameter table between integer severities (integers
reproduce the discrete levels, 0 is the identity). Inactive = severity 0.

Two choices the chapter's generic tools need here:
- Severities above the table's last level saturate at 5: the threshold scan runs to ×1000 of the base
  value and the MRI's log-normal factors are unbounded, while the corruption is only defined on [0, 5].
  A threshold reported above 5 therefore means "breaks at severity 5" (its ratio still says how far the
  scan had to go); none reported means none up to severity 5.
- The random draws of family j on image i are seeded by (seed, i, j) only, not by the severities: the
  same noise pattern is scaled up as the severity grows (common random numbers), so an error change
  along a scan is the severity's doing, not a new draw's.

Corrupting the images dominates the cost, so the corrupted stack after each family is cached under the
severities applied so far (LRU): a scan of the last family re-applies only that family.

Error = error rate on the images; targets = error rate within each true class (`digit_0` … `digit_9`),
which answers "how much brightness before digit 7 breaks".
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Sequence

import numpy as np
import torch
from torch import nn

from pipeline.plugins.catalog import MAX_CONTINUOUS_SEVERITY
from pipeline.fuzz.adapters import (
    Adapter,
    check_images,
    class_names,
    per_class_error_rates,
)
from pipeline.models.cnn import predict_proba
from pipeline.perturb.continuous import FAMILIES, apply_continuous

INACTIVE = 0.0
MAX_SEVERITY = MAX_CONTINUOUS_SEVERITY


def step_seed(seed: int, image: int, family: int) -> int:
    """Seed of family `family` on image `image`: independent of the severity (common random numbers)."""
    return int(np.random.SeedSequence([int(seed), int(image), int(family)]).generate_state(1)[0])


class SeverityChain:
    """Applies the families in order at given severities, caching the stack after each family."""

    def __init__(self, images: np.ndarray, families: Sequence[str], seed: int = 0, cache_size: int = 32) -> None:
        self.images, self.families, self.seed, self.cache_size = images, tuple(families), int(seed), int(cache_size)
        self._cache: list[OrderedDict] = [OrderedDict() for _ in self.families]

    def apply(self, severities: Sequence[float]) -> np.ndarray:
        sev = tuple(float(s) for s in severities)
        depth = next((j for j in range(len(sev), 0, -1) if sev[:j] in self._cache[j - 1]), 0)
        out = self._cache[depth - 1][sev[:depth]] if depth else self.images
        if depth:
            self._cache[depth - 1].move_to_end(sev[:depth])
        for j in range(depth, len(sev)):
            if sev[j] > 0:
                out = np.stack([apply_continuous(img, self.families[j], sev[j], step_seed(self.seed, i, j)) for i, img in enumerate(out)])
            cache = self._cache[j]
            cache[sev[: j + 1]] = out
            if len(cache) > self.cache_size:
                cache.popitem(last=False)
        return out


def severity_adapter(
    model: nn.Module, images: np.ndarray, labels: np.ndarray, families: Sequence[str] = FAMILIES, seed: int = 0,
    operating_severity: float = 1.0, batch_size: int = 512,
) -> Adapter:
    """The CNN on (images, labels) under `families` at continuous severities, as an Adapter."""
    images, labels = check_images(images, labels)
    families = tuple(families)
    unknown = [f for f in families if f not in FAMILIES]
    if unknown or not families or len(set(families)) != len(families):
        raise ValueError(f"families must be distinct names among {', '.join(FAMILIES)}; got {list(families)}")
    if not 0 < float(operating_severity) <= MAX_SEVERITY:
        raise ValueError(f"operating_severity must be in (0, {MAX_SEVERITY:g}], got {operating_severity}")
    chain = SeverityChain(images, families, seed)
    n_classes = int(getattr(model, "n_classes", int(labels.max()) + 1))

    def evaluate(severities: np.ndarray) -> tuple[float, dict[str, float]]:
        severities = np.asarray(severities, dtype=float)
        if severities.shape != (len(families),) or not np.isfinite(severities).all():
            raise ValueError(f"expected {len(families)} finite severities ({list(families)}), got {severities!r}")
        corrupted = chain.apply(np.clip(severities, 0.0, MAX_SEVERITY))
        with torch.no_grad():
            predicted = predict_proba(model, corrupted, batch_size).argmax(1)
        return per_class_error_rates(predicted, labels, n_classes)

    return Adapter(
        name="severity", dim_names=families, evaluate_fn=evaluate, evaluate_batch_fn=None, inactive_value=INACTIVE,
        candidate_values=(float(operating_severity),), operating_point=tuple(float(operating_severity) for _ in families),
        target_names=class_names(n_classes), error_name="error rate",
    )

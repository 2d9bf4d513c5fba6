"""The built-in models under test as plug-ins (`pipeline.plugins.protocols`): each `conf/model/<name>.yaml` names one of
these classes as its `_target_`, exactly as a user's config names a class in their own package.

A classifier gives `predict_proba`; the text head and the sequence classifier give `predict` (their
predictions are what they were before plug-ins existed: the head's own argmax). The two models the
prepare stage trains also give `observer(adequacy)`: their forward pass with the input-level adequacy
metrics of TestNav §4.4, from the one pass that gives the predictions.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from pipeline.runtime.device import resolve_device
from pipeline.models.cnn import load_cnn, predict_proba

Observe = Callable[[Any], tuple[np.ndarray, dict[str, float]]]


class DigitsCNN:
    """The small CNN the prepare stage trains on the digits splits (`data_dir/model.pt`)."""

    def __init__(self, data_dir: Path, width: int, epochs: int, seed: int, device: str = "cpu", batch_size: int = 512) -> None:
        self.data_dir, self.batch_size = Path(data_dir), int(batch_size)
        self.net = load_cnn(self.data_dir / "model.pt").to(resolve_device(device, "model.device"))

    def predict_proba(self, images: np.ndarray) -> np.ndarray:
        return predict_proba(self.net, images, self.batch_size)

    def observer(self, adequacy: dict[str, Any]) -> Observe:
        """(predictions, {metric: value}) of a perturbed set, from one forward pass with hooks."""
        from pipeline.adequacy import (
            ActivationProfile,
            AdequacySettings,
            adequacy_scores,
        )
        from pipeline.adequacy.hooks import capture
        from pipeline.models.cnn import to_tensor

        settings = AdequacySettings.from_spec(adequacy)
        profile = ActivationProfile.load(self.data_dir / "adequacy_profile.npz")
        names = list(adequacy["metrics"])

        def observe(x: np.ndarray) -> tuple[np.ndarray, dict[str, float]]:
            logits, acts = capture(self.net, settings.layers, x, self.batch_size, transform=to_tensor)
            # predictions exactly as `predict_proba(...).argmax(1)` computes them (softmax before argmax)
            predictions = torch.softmax(torch.from_numpy(logits), dim=1).double().numpy().argmax(1)
            return predictions, adequacy_scores(names, logits, acts, profile, settings)

        return observe


class Torchvision:
    """A torchvision classifier with local weights (nothing is downloaded)."""

    def __init__(self, arch: str, num_classes: int, weights_path: str | None, input_size: int = 224, device: str = "cpu",
                 batch_size: int = 64) -> None:
        from pipeline.models.torchvision_classifier import TorchvisionClassifier

        self.batch_size = int(batch_size)
        self.net = TorchvisionClassifier(arch, int(num_classes), weights_path, int(input_size)).to(resolve_device(device, "model.device"))

    def predict_proba(self, images: np.ndarray) -> np.ndarray:
        return predict_proba(self.net, images, self.batch_size)


class TextHead:
    """The logistic head on the frozen MiniLM encoder the prepare stage trains on BBC News (`data_dir/model.npz`);
    the encoder is the process-wide one BERT-F1 shares."""

    def __init__(self, data_dir: Path, C: float, max_iter: int, device: str = "cpu") -> None:
        from pipeline.models.text_encoder import TextClassifier, default_encoder

        self.data_dir = Path(data_dir)
        with np.load(self.data_dir / "model.npz") as z:
            self.head = TextClassifier.from_state({k: z[k] for k in z.files}, default_encoder(device))

    def predict(self, texts: Any) -> np.ndarray:
        return self.head.predict(list(texts))

    def observer(self, adequacy: dict[str, Any]) -> Observe:
        """The encoder's one forward pass per text gives the head's prediction and the activations
        (`pipeline.adequacy.text_model`); decision_function and predict read the same cached encodings."""
        from pipeline.adequacy import ActivationProfile, adequacy_scores
        from pipeline.adequacy.text_model import (
            Projection,
            encoder_views,
            text_activations,
            text_settings,
        )

        head = self.head
        settings = text_settings(adequacy, head.encoder.num_layers)
        profile = ActivationProfile.load(self.data_dir / "adequacy_profile.npz")
        projection = Projection.load(self.data_dir / "adequacy_projection.npz")
        names = list(adequacy["metrics"])

        def observe(texts: Any) -> tuple[np.ndarray, dict[str, float]]:
            texts = list(texts)
            layers, sentences = encoder_views(head.encoder.encode(texts))
            acts = text_activations(layers, sentences, projection)
            return head.predict(texts), adequacy_scores(names, head.decision_function(texts), acts, profile, settings)

        return observe


class SequenceClassifier:
    """A local Hugging Face sequence-pair checkpoint (strings or question pairs -> class), the one `prepare`
    recorded in `data_dir/weights.json` (its sha256 is checked)."""

    def __init__(self, data_dir: Path, weights_path: str, max_length: int, device: str = "cpu", batch_size: int = 32) -> None:
        from pipeline.models.pair_classifier import PairClassifier, check_weights

        check_weights(weights_path, json.loads((Path(data_dir) / "weights.json").read_text(encoding="utf-8")))
        self.classifier = PairClassifier(weights_path, batch_size=int(batch_size), max_length=int(max_length),
                                         device=resolve_device(device, "model.device"))

    def predict(self, inputs: Any) -> np.ndarray:
        return self.classifier.predict(inputs)

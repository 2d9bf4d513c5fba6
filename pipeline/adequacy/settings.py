"""The settings of the seven input-level adequacy metrics (TestNav §4.4), one frozen value.

Defaults and why:

- `coverage_layers`: the three hidden ReLU outputs of the embedded digits CNN
  (`pipeline.models.cnn.SmallCNN`: `features.1` after conv1, `features.4` after conv2, `features.8` after
  the 64-unit dense layer). Coverage criteria count hidden neurons (DeepXplore, DeepGauge); the logits are
  left out because they are the prediction itself, which DeepGini already scores. Another model names
  its own modules (`dict(model.named_modules())`).
- `surprise_layers`: the penultimate layer (`features.8`, the 64 features before the classifier head),
  the layer Kim et al. (2019) use for LSA/DSA on their MNIST/CIFAR models. Several layers are
  concatenated in the given order.
- `nac_threshold` = 0.5: NAC scales each layer's outputs per input to [0, 1] (DeepXplore) and counts a
  neuron as activated above the threshold. DeepXplore reports thresholds between 0 and 0.75; at 0 every
  neuron not at its layer's minimum counts, so on ReLU channel means NAC saturates after a few inputs
  and no longer tells configurations apart; 0.5 (above half of the layer's range on some input) is the
  midpoint and keeps a gradient across configurations.
- `kmnc_sections` = 10 (k of DeepGauge's k-multisection coverage): with a few hundred inputs per
  configuration, a k far above the number of inputs makes KMNC count in-range inputs rather than how
  they spread over a neuron's training range; 10 sections can be filled by such a set.
- `tknc_k` = 2 (DeepGauge's top-k neuron coverage uses small k): with 16-64 neurons per layer, k = 2 marks
  the dominant neurons of each layer without covering most of a small layer on every input.
- `lsa_variance_threshold` = 1e-5: Kim et al.'s value; neurons whose training variance within some class
  is below it are dropped before the KDE (a constant neuron, e.g. a dead ReLU, makes the KDE's
  covariance singular).
"""
from __future__ import annotations

from dataclasses import dataclass

DIGITS_COVERAGE_LAYERS: tuple[str, ...] = ("features.1", "features.4", "features.8")
DIGITS_PENULTIMATE: tuple[str, ...] = ("features.8",)


@dataclass(frozen=True)
class AdequacySettings:
    """Layers and parameters of NAC, SNAC, KMNC, TKNC, DeepGini, LSA and DSA (defaults: module docstring)."""

    coverage_layers: tuple[str, ...] = DIGITS_COVERAGE_LAYERS
    surprise_layers: tuple[str, ...] = DIGITS_PENULTIMATE
    nac_threshold: float = 0.5
    kmnc_sections: int = 10
    tknc_k: int = 2
    lsa_variance_threshold: float = 1e-5

    def __post_init__(self) -> None:
        for name in ("coverage_layers", "surprise_layers"):
            layers = getattr(self, name)
            if isinstance(layers, str) or not isinstance(layers, tuple):
                raise TypeError(f"{name} must be a tuple of layer names, got {layers!r}")
            if not layers or len(set(layers)) != len(layers):
                raise ValueError(f"{name} must name at least one layer, each once, got {layers!r}")
        if not 0.0 <= self.nac_threshold < 1.0:
            raise ValueError(f"nac_threshold {self.nac_threshold} is outside [0, 1): NAC compares outputs scaled to [0, 1]")
        if int(self.kmnc_sections) != self.kmnc_sections or self.kmnc_sections < 1:
            raise ValueError(f"kmnc_sections must be a positive integer, got {self.kmnc_sections}")
        if int(self.tknc_k) != self.tknc_k or self.tknc_k < 1:
            raise ValueError(f"tknc_k must be a positive integer, got {self.tknc_k}")
        if not self.lsa_variance_threshold >= 0.0:
            raise ValueError(f"lsa_variance_threshold must be >= 0, got {self.lsa_variance_threshold}")

    @classmethod
    def from_spec(cls, adequacy: dict) -> "AdequacySettings":
        """From a `benchmark.adequacy` config node (its thresholds; the layers stay the digits CNN's)."""
        return cls(nac_threshold=float(adequacy["nac_threshold"]), kmnc_sections=int(adequacy["kmnc_sections"]),
                   tknc_k=int(adequacy["tknc_k"]))

    @property
    def layers(self) -> tuple[str, ...]:
        """Every layer the metrics read, coverage layers first, each once: what `hooks.capture` needs."""
        return tuple(dict.fromkeys(self.coverage_layers + self.surprise_layers))

"""Input-level test-adequacy metrics, the baselines of TestNav §4.4 (Fig. 4): NAC (DeepXplore), SNAC,
KMNC, TKNC (DeepGauge), DeepGini, LSA and DSA (surprise adequacy). Each maps one perturbed test set
T_θ to one number, larger = more adequate / more surprising, so that it can stand in for a search
objective; this package is a library only (no stage reads it).

From a per-input quantity to a per-set value:

- NAC, SNAC, KMNC, TKNC are set-level by definition: the fraction of neurons (KMNC: of neuron sections)
  covered by at least one input of T_θ, pooled over the coverage layers. This is how DeepXplore and
  DeepGauge measure a test suite, and it is monotone: adding inputs never lowers it.
- DeepGini, LSA, DSA are per-input scores (Feng et al., Kim et al. use them to rank inputs); the value of
  T_θ is their mean. Every configuration perturbs the same clean inputs, so the mean compares
  configurations on equal footing: it is the expected surprise / uncertainty of an input of T_θ, does
  not grow with the set size, and is not dominated by one outlier the way a maximum would be (a maximum
  also saturates: once one input is far out, every configuration containing it ties).

Use: `logits, acts = hooks.capture(model, settings.layers, inputs, transform=to_tensor)` once on the
training inputs, `profile = build_profile(acts, logits.argmax(1), settings.surprise_layers)`; then per
configuration one `capture` on T_θ gives the predictions for ψ and `adequacy_scores(names, logits,
acts, profile, settings)`.

Modules: `settings` (AdequacySettings and why its defaults), `profile` (training activation profile),
`coverage` (NAC/SNAC/KMNC/TKNC), `gini` (DeepGini), `surprise` (LSA/DSA), `hooks` (one forward pass,
logits + activations; imports torch), `registry` (ADEQUACY).
"""
from pipeline.adequacy.profile import ActivationProfile, build_profile
from pipeline.adequacy.registry import ADEQUACY, adequacy_scores
from pipeline.adequacy.settings import AdequacySettings

__all__ = ["ADEQUACY", "ActivationProfile", "AdequacySettings", "adequacy_scores", "build_profile"]

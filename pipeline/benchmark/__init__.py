"""A benchmark (TestNav §4.1): a model under test, its data, perturbations and fidelity metrics, built from a
config, prepared, evaluated over Θ (the exhaustive ground truth) or live for a search."""

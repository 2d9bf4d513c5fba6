"""The Gaussian-process surrogate of the GP-based searches."""

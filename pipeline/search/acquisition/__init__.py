"""Acquisition: the probability that a Gaussian outcome is dominated, which GP-PND ranks by."""

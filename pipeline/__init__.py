"""The robustness-testing library: benchmarks, ground truth, search, paired evaluations, structural fuzzing and figures."""

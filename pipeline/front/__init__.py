"""The objects every analysis shares: the configuration space Θ, Pareto dominance, front membership and its
confidence, and the ground-truth table with its per-input file."""

"""Racing over inputs: per-unit outcomes, and oracles that stop a configuration once its place is settled."""

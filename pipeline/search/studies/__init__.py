"""Studies of the search methods: initial-design ablations, synthetic tables, tuning, leave-one-out order, monotonicity."""

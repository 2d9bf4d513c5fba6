"""How the pipeline runs, whatever it computes: pinned numerics, atomic files, fingerprints, resume stores,
per-worker state and the compute device."""

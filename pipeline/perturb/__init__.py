"""Perturbation families T_i (images, text, code, recaptures), their composition π_θ and the on-disk perturbation store."""

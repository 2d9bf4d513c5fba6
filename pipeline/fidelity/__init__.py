"""Fidelity metrics φ of a perturbed set against the clean one: SSIM and KID for images, chrF and BERT-F1 for text and code."""

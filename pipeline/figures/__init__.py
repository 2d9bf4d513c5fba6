"""Figures from tables only: ground-truth fronts and voxels, Recall@P* curves, paired, screening, recapture and fuzz figures."""

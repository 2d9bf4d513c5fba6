"""Synthetic models for the fuzzing tests, with properties known by construction."""
from __future__ import annotations

import numpy as np


class Quadratic:
    """Loss ½ xᵀHx in log-coordinates x = log θ − log θ*: the chapter's multiplicative perturbation
    θ*·exp(ε) is then the additive perturbation δ = ε of exercise 9.3, exactly."""

    def __init__(self, hessian: np.ndarray, theta_star: np.ndarray):
        self.h = np.asarray(hessian, dtype=float)
        self.log_star = np.log(np.asarray(theta_star, dtype=float))

    def batch(self, thetas: np.ndarray):
        x = np.log(np.atleast_2d(thetas)) - self.log_star
        loss = 0.5 * np.einsum("mi,ij,mj->m", x, self.h, x)
        return loss, {"loss": loss.copy()}

    def single(self, theta: np.ndarray):
        x = np.log(theta) - self.log_star
        loss = float(0.5 * x @ self.h @ x)
        return loss, {"loss": loss}


class Tipping:
    """Three dimensions, base (1, 1, 1). Target `a` breaks (0 → 1) once θ_0 > 5 and only then; target
    `b` breaks once θ_1 < 0.2; θ_2 influences nothing. The error is a + b + a smooth term in θ_0."""

    def __init__(self, up: float = 5.0, down: float = 0.2):
        self.up, self.down = up, down
        self.calls = 0

    def __call__(self, theta: np.ndarray):
        self.calls += 1
        a = float(theta[0] > self.up)
        b = float(theta[1] < self.down)
        return a + b + 0.01 * float(np.log(theta[0]) ** 2), {"a": a, "b": b}

    def batch(self, thetas: np.ndarray):
        rows = [self(t) for t in thetas]
        self.calls -= len(rows) - 1  # one batched call
        return np.array([r[0] for r in rows]), {k: np.array([r[1][k] for r in rows]) for k in ("a", "b")}


class Additive:
    """error = Σ_i f_i(θ_i): an inactive dimension costs `cost[i]`, an active one (log θ_i − log best_i)²."""

    def __init__(self, cost, best, inactive: float = 1e6):
        self.cost, self.best, self.inactive = np.asarray(cost, float), np.asarray(best, float), inactive

    def parts(self, theta: np.ndarray) -> np.ndarray:
        theta = np.asarray(theta, float)
        return np.where(theta == self.inactive, self.cost, (np.log(theta) - np.log(self.best)) ** 2)

    def __call__(self, theta: np.ndarray):
        p = self.parts(theta)
        return float(p.sum()), {f"t{i}": float(v) for i, v in enumerate(p)}

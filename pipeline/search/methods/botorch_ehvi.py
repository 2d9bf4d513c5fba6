"""Anchor method from BoTorch: qLogNEHVI, the log noisy expected hypervolume improvement
(Ament et al., "Unexpected Improvements to Expected Improvement", 2023; Daulton et al., qNEHVI, 2021),
maximised exactly over the finite lattice Θ.

Loop, with BoTorch's defaults where a choice is left open:

* Initial design: 2·(n+1) configurations drawn uniformly without replacement (the convention of BoTorch's
  multi-objective tutorials).
* Surrogate: one `SingleTaskGP` per objective (a `ModelListGP`; BoTorch's default kernel and priors) on the
  inputs θ/(ℓ−1) in float64, outcomes standardised (`Standardize`), hyperparameters by `fit_gpytorch_mll`.
* Acquisition: `qLogNoisyExpectedHypervolumeImprovement` with X_baseline = the evaluated inputs,
  `prune_baseline=True`, 128 quasi-MC samples (`SobolQMCNormalSampler`, seeded from the run's RNG each
  round) and the reference point r_k = min_k − 0.1·(max_k − min_k) of the observed objective values.
* Proposal: the acquisition is evaluated on every unevaluated θ (in chunks of `CHUNK`), which maximises it
  exactly over Θ; the argmax (the first on ties) is proposed. For q > 1, BoTorch's sequential greedy
  q-batch rule: the points chosen so far in the round are set as `X_pending` and the acquisition is
  re-evaluated over the remaining candidates. Nothing is proposed twice, so a run stops after |Θ| proposals.
* Cost rule: hyperparameters are refitted at every round while fewer than `FIT_ALWAYS` configurations are
  evaluated, and afterwards whenever their number has grown by `FIT_GROWTH` since the last fit; between
  fits the GPs are rebuilt on all the data with the last fitted hyperparameters (exact conditioning, no
  re-optimisation).

Torch's global RNG is not disturbed: a run draws under `torch.random.fork_rng`, seeded from its RNG.
Cost on a 6^4 table (`synthetic_table`, 2 shared CPU cores): see `BoTorchQLogNEHVI`.

One code path on every host: BoTorch 0.18 compiles a fused C++ kernel for the qLogEHVI family the first time such
an acquisition is built (`torch.utils.cpp_extension.load` with `-march=native`, cached per environment path), and
falls back to its pure-Python computation where no compiler is found. So the path depended on the host's compiler and
CPU, and every new environment (a fresh clone's venv, a cluster node) spent about 30 s compiling at its first run.
BoTorch has no switch for it; this module marks the load as done, which keeps the pure-Python path everywhere. Measured
here (24 proposals on the synthetic 6^4 table, seed 0, the second of two runs in one process): 15.7 s against 10.1 s
with the fused kernel, and the same trace.
"""
from __future__ import annotations

import numpy as np
import torch
from botorch.acquisition.multi_objective import logei
from botorch.acquisition.multi_objective.logei import qLogNoisyExpectedHypervolumeImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import ModelListGP, SingleTaskGP
from botorch.models.transforms.outcome import Standardize
from botorch.sampling import SobolQMCNormalSampler
from gpytorch.mlls import SumMarginalLogLikelihood

from pipeline.search.methods.base import Method
from pipeline.search.ledger import Ledger
from pipeline.front.space import Space

logei._load_attempted = True  # BoTorch's fused kernel stays unloaded: its pure-Python path (module docstring)


def surrogate(X: torch.Tensor, Y: torch.Tensor, hyperparameters: dict[str, torch.Tensor] | None) -> ModelListGP:
    """One standardised `SingleTaskGP` per objective on (X, Y); fitted by maximum marginal likelihood when
    `hyperparameters` is None, otherwise given those (a state dict without the outcome transforms)."""
    model = ModelListGP(*[SingleTaskGP(X, Y[:, k : k + 1], outcome_transform=Standardize(m=1)) for k in range(Y.shape[1])])
    if hyperparameters is None:
        fit_gpytorch_mll(SumMarginalLogLikelihood(model.likelihood, model))
    else:
        model.load_state_dict(hyperparameters, strict=False)
    return model.eval()


def hyperparameters_of(model: ModelListGP) -> dict[str, torch.Tensor]:
    """The model's fitted state, less the outcome transforms' statistics (which belong to the data)."""
    return {k: v.clone() for k, v in model.state_dict().items() if "outcome_transform" not in k}


class BoTorchQLogNEHVI(Method):
    """qLogNEHVI over the lattice (module docstring); each θ at most once."""

    name, label, single_pass = "botorch_qlognehvi", "BoTorch qLogNEHVI", True
    MC_SAMPLES = 128
    FIT_ALWAYS = 50    # hyperparameters are refitted at every round below this many evaluated configurations
    FIT_GROWTH = 1.1   # ... and afterwards whenever their number has grown by this factor
    CHUNK = 256        # candidates per acquisition evaluation

    def _do(self, ledger: Ledger, space: Space, rng: np.random.Generator) -> None:
        grid = space.grid()
        X = torch.as_tensor(grid / (space.levels - 1), dtype=torch.float64)
        initial = rng.choice(space.size, size=min(space.size, 2 * (space.n_dims + 1)), replace=False)
        values = np.zeros((space.size, 2))
        evaluated = list(initial[: ledger.remaining])
        values[evaluated] = ledger.propose(grid[evaluated])
        seen = np.zeros(space.size, dtype=bool)
        seen[evaluated] = True
        hyperparameters, fitted_at = None, 0
        with torch.random.fork_rng():
            torch.manual_seed(int(rng.integers(2**31)))
            while not ledger.exhausted and len(evaluated) < space.size:
                n = len(evaluated)
                refit = hyperparameters is None or n < self.FIT_ALWAYS or n >= self.FIT_GROWTH * fitted_at
                Y = torch.as_tensor(values[evaluated], dtype=torch.float64)
                model = surrogate(X[evaluated], Y, None if refit else hyperparameters)
                if refit:
                    hyperparameters, fitted_at = hyperparameters_of(model), n
                chosen = self._round(model, X, Y, evaluated, np.flatnonzero(~seen), min(ledger.batch_size, ledger.remaining), rng)
                values[chosen] = ledger.propose(grid[chosen])
                seen[chosen] = True
                evaluated.extend(chosen)

    def _round(self, model: ModelListGP, X: torch.Tensor, Y: torch.Tensor, evaluated: list[int], candidates: np.ndarray,
               q: int, rng: np.random.Generator) -> list[int]:
        """Up to q candidates by sequential greedy maximisation of qLogNEHVI, earlier picks as X_pending."""
        low, high = Y.min(dim=0).values, Y.max(dim=0).values
        span = torch.where(high > low, high - low, torch.ones_like(high))
        sampler = SobolQMCNormalSampler(sample_shape=torch.Size([self.MC_SAMPLES]), seed=int(rng.integers(2**31)))
        acqf = qLogNoisyExpectedHypervolumeImprovement(model, ref_point=(low - 0.1 * span).tolist(), X_baseline=X[evaluated],
                                                       sampler=sampler, prune_baseline=True)
        chosen: list[int] = []
        remaining = candidates
        with torch.no_grad():
            for _ in range(min(q, len(candidates))):
                if chosen:
                    acqf.set_X_pending(X[chosen])
                score = torch.cat([acqf(X[remaining[i : i + self.CHUNK]].unsqueeze(1)) for i in range(0, len(remaining), self.CHUNK)])
                best = int(torch.argmax(score))
                chosen.append(int(remaining[best]))
                remaining = np.delete(remaining, best)
        return chosen

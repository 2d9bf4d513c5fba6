"""Anchor methods from Optuna: NSGA-II, multivariate TPE and the GP sampler, run through Optuna's
ask-and-tell interface on the lattice Θ, each with its library-default settings except the seed.

The search space is one `IntDistribution(0, ℓ−1)` per perturbation type (named `space.names`), both
objectives maximised (`directions=["maximize", "maximize"]`). Each round asks q trials (q = the ledger's
batch size), proposes them in one `ledger.propose` call and tells each trial its (δ, ρ). A sampler may
suggest a configuration it has already seen: that is a proposal like any other (the ledger serves it from
its cache: it costs budget b but not u). A run ends when the budget is spent, as TestNav's does: once all of Θ is
evaluated (a small lattice, such as benchmark=tiny's 3^2 with B = 45) the sampler keeps asking and every trial is a
cache hit, so the trace always has B rows (`pipeline.search.traces.validate_trace`'s rule for a method that is not
single-pass).

Settings (Optuna 5.0 defaults):

* `NSGAIISampler`: population 50, uniform crossover (probability 0.9, swapping 0.5), each parameter
  mutated with probability 1/n by resampling it uniformly.
* `TPESampler(multivariate=True)` (multi-objective TPE; for several objectives the library default is the
  independent TPE, which its documentation reports the multivariate one to outperform): 10 random start-up trials, 24
  candidates per suggestion, the default γ and weights, prior and magic clip on, constant liar on (it
  penalises the pending trials of a batch).
* `GPSampler`: Matérn-5/2 ARD kernel with Optuna's priors, 10 random start-up trials, log-EHVI for two
  objectives (qLogEHVI over the pending trials of a batch), `deterministic_objective=False`.

The library behaviour is kept (no trial cap): the GP sampler's cost grows with every trial, so choose its budgets
and seeds by the costs in docs/timings.md, "Costs behind design choices".
Torch's global RNG (which the GP sampler may draw from) is not disturbed: a run draws under
`torch.random.fork_rng`, seeded from its RNG.
"""
from __future__ import annotations

import warnings
from abc import abstractmethod
from typing import Any

import numpy as np
import optuna
import torch

from pipeline.search.methods.base import Method
from pipeline.search.ledger import Ledger
from pipeline.front.space import Space


class OptunaSampler(Method):
    """Ask q trials, propose them in one call, tell the (δ, ρ) of each; until B is spent (repeats included)."""

    single_pass = False

    @abstractmethod
    def sampler(self, seed: int) -> optuna.samplers.BaseSampler:
        """The Optuna sampler, seeded."""

    def _do(self, ledger: Ledger, space: Space, rng: np.random.Generator) -> None:
        seed = int(rng.integers(2**31))
        distributions = {name: optuna.distributions.IntDistribution(0, space.levels - 1) for name in space.names}
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        with warnings.catch_warnings(), torch.random.fork_rng():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            torch.manual_seed(seed)
            study = optuna.create_study(directions=["maximize", "maximize"], sampler=self.sampler(seed))
            while not ledger.exhausted:
                trials = [study.ask(distributions) for _ in range(min(ledger.batch_size, ledger.remaining))]
                values = ledger.propose(np.array([[t.params[name] for name in space.names] for t in trials]))
                for trial, value in zip(trials, values):
                    study.tell(trial, value.tolist())


class CountingNSGAIISampler(optuna.samplers.NSGAIISampler):
    """Optuna's `NSGAIISampler`, the same trials, with its generation bookkeeping kept as it goes.

    Written here because Optuna 5.0 does not keep it: every ask recounts the generations of all completed trials
    (`BaseGASampler.get_trial_generation`) and filters all trials for the parents' ids (`get_parent_population`), so a
    run of B = 6,480 asks is quadratic in B, about three quarters of its 9 s. This subclass counts the completed
    trials of each generation as they are told (`after_trial`) and keeps each generation's parent population once
    it is chosen (it never changes after that; in trial order, as Optuna reads it back), which gives the same
    generation numbers, the same parents in the same order and so the same trials (checked against the library's
    own sampler in `tests/search/test_search_anchors.py`)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._completed: dict[int, int] = {}  # generation -> completed trials (-1: none recorded, as Optuna reads it)
        self._parents: dict[int, list[optuna.trial.FrozenTrial]] = {}

    def get_trial_generation(self, study: optuna.Study, trial: optuna.trial.FrozenTrial) -> int:
        key = self._get_generation_key()
        generation = trial.system_attrs.get(key)
        if generation is not None:
            return generation
        top = max([0, *self._completed])  # the library's scan: the highest generation (at least 0) and its count
        generation = top if self._completed.get(top, 0) < self.population_size else top + 1
        study._storage.set_trial_system_attr(trial._trial_id, key, generation)
        return generation

    def get_parent_population(self, study: optuna.Study, generation: int) -> list[optuna.trial.FrozenTrial]:
        if generation in self._parents:
            return self._parents[generation]
        chosen = super().get_parent_population(study, generation)  # in selection order the first time, as Optuna's;
        self._parents[generation] = sorted(chosen, key=lambda t: t.number)  # in trial order from its cache after that
        return chosen

    def after_trial(self, study: optuna.Study, trial: optuna.trial.FrozenTrial, state: optuna.trial.TrialState,
                    values) -> None:
        super().after_trial(study, trial, state, values)
        if state == optuna.trial.TrialState.COMPLETE:  # Study.tell stores this state right after this call
            generation = trial.system_attrs.get(self._get_generation_key(), -1)
            self._completed[generation] = self._completed.get(generation, 0) + 1


class OptunaNSGA2(OptunaSampler):
    """Optuna's NSGA-II sampler with its defaults (module docstring), its bookkeeping linear in B
    (`CountingNSGAIISampler`)."""

    name, label = "optuna_nsga2", "Optuna NSGA-II"

    def sampler(self, seed: int) -> optuna.samplers.BaseSampler:
        return CountingNSGAIISampler(seed=seed)


class OptunaTPE(OptunaSampler):
    """Optuna's multivariate (multi-objective) TPE sampler with its defaults (module docstring)."""

    name, label = "optuna_tpe", "Optuna TPE"

    def sampler(self, seed: int) -> optuna.samplers.BaseSampler:
        return optuna.samplers.TPESampler(multivariate=True, seed=seed)


class OptunaGP(OptunaSampler):
    """Optuna's GP sampler (log-EHVI for two objectives) with its defaults (module docstring)."""

    name, label = "optuna_gp", "Optuna GP"

    def sampler(self, seed: int) -> optuna.samplers.BaseSampler:
        return optuna.samplers.GPSampler(seed=seed)

"""The privacy boundary: budgets, accounting, noise, the neighbouring relation, and the ``Curator``.
Only the curator (and the ``CountRelease`` it shares) touches private data: codes and exact counts.
Hands on noisy answers alone (``Measurement``, ledger entries), each charged before its noise is drawn.

Modules: ``budget`` (notions, budgets, costs), ``composition``, ``accounting`` (the accountant and
its ledger), ``costs`` and ``exact`` (calibration on exact arithmetic), ``count_noise`` and
``mechanisms`` (noise), ``neighbours`` (the relation and the sensitivities it gives), ``curator``
(the mechanisms on private codes), ``boundary`` (the curator as engines see it), ``held_back``
(the same with part of its budget kept for after the engine), ``selection_scores`` (what its
noisy max selects by) and ``measurement`` (a noisy marginal).
"""

from synth.privacy.accounting import Accountant, LedgerEntry
from synth.privacy.budget import Budget, Cost, Notion
from synth.privacy.composition import approx_to_zcdp_rho, zcdp_to_approx_epsilon
from synth.privacy.costs import (
    check_randomized_response,
    exponential_cost,
    exponential_scale,
    gaussian_cost,
    gaussian_sigma,
    laplace_cost,
    laplace_scale,
    randomized_response_cost,
    split_budget,
)
from synth.privacy.count_noise import COUNT_NOISE, CountNoise, DiscreteGaussian, DiscreteLaplace
from synth.privacy.mechanisms import NoiseSource, SecureNoise, SeededNoise

__all__ = [
    "COUNT_NOISE",
    "Accountant",
    "Budget",
    "Cost",
    "CountNoise",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "LedgerEntry",
    "NoiseSource",
    "Notion",
    "SecureNoise",
    "SeededNoise",
    "approx_to_zcdp_rho",
    "check_randomized_response",
    "exponential_cost",
    "exponential_scale",
    "gaussian_cost",
    "gaussian_sigma",
    "laplace_cost",
    "laplace_scale",
    "randomized_response_cost",
    "split_budget",
    "zcdp_to_approx_epsilon",
]

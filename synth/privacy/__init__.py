"""Privacy primitives of synth: the notions, budgets and costs (``budget``), how costs compose under
each notion (``composition``), the accountant and its ledger (``accounting``), mechanisms' costs and
calibration (``costs``) on exact arithmetic (``exact``), the noise on counts as mechanism objects
(``count_noise``) and the noise samplers (``mechanisms``). This package never reads data; it only
accounts for and draws noise."""

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

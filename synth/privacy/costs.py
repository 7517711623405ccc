"""The privacy cost of each noise mechanism, and the noise calibrated to a cost.

Costs are rounded up and calibrated scales up (``synth.privacy.exact``), so a mechanism is never
charged less than it spends; ``split_budget`` splits a budget into parts whose exact sum fits it.
This module never draws noise and never sees data.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from fractions import Fraction

from synth.errors import BudgetError
from synth.privacy.budget import Cost, Notion
from synth.privacy.exact import ceil_float, floor_float, is_real, non_negative, positive, round_up

# --------------------------------------------------------------------------------------------
# Costs of mechanisms and their calibration
# --------------------------------------------------------------------------------------------


def laplace_cost(l1_sensitivity: float, scale: float) -> Cost:
    """Laplace / discrete Laplace noise of scale b on an L1-sensitivity-Δ query: ε = Δ/b (rounded up)."""
    sensitivity = non_negative("l1_sensitivity", l1_sensitivity)
    scale = positive("scale", scale)
    return Cost(epsilon=ceil_float(Fraction(sensitivity) / Fraction(scale)))


def gaussian_cost(l2_sensitivity: float, sigma: float) -> Cost:
    """(Discrete) Gaussian noise σ on an L2-sensitivity-Δ query: ρ = Δ²/(2σ²) (rounded up)."""
    sensitivity = non_negative("l2_sensitivity", l2_sensitivity)
    sigma = positive("sigma", sigma)
    return Cost(rho=ceil_float(Fraction(sensitivity) ** 2 / (2 * Fraction(sigma) ** 2)))


def _exponential_epsilon(sensitivity: float, scale: float, monotonic: bool) -> Fraction:
    """ε of report-noisy-max with Gumbel(scale β) noise: 2Δ/β, or Δ/β for monotonic scores."""
    factor = 1 if monotonic else 2
    return factor * Fraction(sensitivity) / Fraction(scale)


def exponential_cost(sensitivity: float, scale: float, monotonic: bool = False,
                     notion: Notion = Notion.PURE) -> Cost:
    """Cost of the exponential mechanism run as Gumbel report-noisy-max with Gumbel scale β.

    The mechanism is ε-DP with ε = 2Δ/β (Δ/β when every score moves in the same direction between
    neighbours). It is also ε-bounded-range, hence ε²/8-zCDP (Cesar & Rogers 2021), which is four
    times cheaper than the generic pure-to-zCDP conversion ε²/2. So the cost depends on how it will
    be accounted: pass the accountant's ``notion``. Under ``Notion.ZCDP`` the cost is ``Cost(rho=ε²/8)``;
    otherwise ``Cost(epsilon=ε)`` (which a zCDP accountant would also accept, at ε²/2).
    """
    sensitivity = non_negative("sensitivity", sensitivity)
    scale = positive("scale", scale)
    epsilon = _exponential_epsilon(sensitivity, scale, monotonic)
    if Notion(notion) == Notion.ZCDP:
        return Cost(rho=ceil_float(epsilon**2 / 8))
    return Cost(epsilon=ceil_float(epsilon))


def check_randomized_response(k: int, p_true: float) -> tuple[int, float]:
    """Validate the parameters of k-ary randomized response: k >= 2 and 1/k <= p_true < 1."""
    if not isinstance(k, numbers.Integral) or isinstance(k, bool) or k < 2:
        raise BudgetError(f"randomized response needs k >= 2 categories; got k={k!r}.")
    if not is_real(p_true) or not (Fraction(float(p_true)) * int(k) >= 1 and float(p_true) < 1):
        raise BudgetError(
            f"randomized response needs 1/k <= p_true < 1 (p_true = 1 releases the true values); "
            f"got p_true={p_true!r} with k={k}."
        )
    return int(k), float(p_true)


def randomized_response_cost(k: int, p_true: float) -> Cost:
    """k-ary randomized response keeping the true value with probability p (else one of the k−1
    others uniformly) is ε-DP with ε = ln(p(k−1)/(1−p)) (rounded up)."""
    k, p_true = check_randomized_response(k, p_true)
    ratio = Fraction(p_true) * (k - 1) / (1 - Fraction(p_true))
    if ratio == 1:
        return Cost()
    return Cost(epsilon=round_up(math.log(ceil_float(ratio))))


def _smallest_scale(fits: Callable[[float], bool], guess: float) -> float:
    """Move ``guess`` up float by float until ``fits`` (the exact cost is within the target)."""
    scale = guess
    while not fits(scale):
        scale = math.nextafter(scale, math.inf)
    return scale


def laplace_scale(l1_sensitivity: float, epsilon: float) -> float:
    """Laplace scale b = Δ/ε, rounded up so that the exact cost Δ/b never exceeds ε."""
    sensitivity = positive("l1_sensitivity", l1_sensitivity)
    target = Fraction(positive("epsilon", epsilon))
    return _smallest_scale(lambda b: Fraction(sensitivity) / Fraction(b) <= target,
                           sensitivity / float(target))


def gaussian_sigma(l2_sensitivity: float, rho: float) -> float:
    """Gaussian σ = Δ/sqrt(2ρ), rounded up so that the exact cost Δ²/(2σ²) never exceeds ρ."""
    sensitivity = positive("l2_sensitivity", l2_sensitivity)
    target = Fraction(positive("rho", rho))
    return _smallest_scale(lambda s: Fraction(sensitivity) ** 2 / (2 * Fraction(s) ** 2) <= target,
                           sensitivity / math.sqrt(2 * float(target)))


def exponential_scale(sensitivity: float, *, epsilon: float | None = None, rho: float | None = None,
                      monotonic: bool = False) -> float:
    """Gumbel scale β for report-noisy-max, from exactly one of a pure ε target (ε = 2Δ/β, or Δ/β
    if monotonic) or a zCDP ρ target (bounded range: ρ = ε²/8). Rounded up, so the cost charged by
    ``exponential_cost`` never exceeds the target."""
    sensitivity = positive("sensitivity", sensitivity)
    if (epsilon is None) == (rho is None):
        raise BudgetError("exponential_scale needs exactly one of epsilon= or rho=.")
    factor = 1.0 if monotonic else 2.0
    if epsilon is not None:
        target = Fraction(positive("epsilon", epsilon))
        return _smallest_scale(lambda b: _exponential_epsilon(sensitivity, b, monotonic) <= target,
                               factor * sensitivity / float(target))
    target = Fraction(positive("rho", rho))
    return _smallest_scale(lambda b: _exponential_epsilon(sensitivity, b, monotonic) ** 2 / 8 <= target,
                           factor * sensitivity / math.sqrt(8 * float(target)))


def split_budget(total: float, weights: Sequence[float]) -> list[float]:
    """Split ``total`` in proportion to ``weights``. Each part is the largest float <= its exact
    share, so the exact sum of the parts is <= ``total`` and charging every part never fails."""
    total_exact = Fraction(positive("total", total))
    if len(weights) == 0:
        raise BudgetError("split_budget needs at least one weight; got none.")
    exact_weights = [Fraction(positive("each weight", w)) for w in weights]
    weight_sum = sum(exact_weights)
    return [floor_float(total_exact * w / weight_sum) for w in exact_weights]

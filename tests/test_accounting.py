"""Tests of synth.privacy (accounting, costs, exact): budgets, costs, composition, conversions, exact splits."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import opendp.prelude as dp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synth.errors import BudgetError, BudgetExhaustedError, DescriptionError
from synth.privacy import (
    Accountant,
    Budget,
    Cost,
    LedgerEntry,
    Notion,
    approx_to_zcdp_rho,
    exponential_cost,
    exponential_scale,
    gaussian_cost,
    gaussian_sigma,
    laplace_cost,
    laplace_scale,
    randomized_response_cost,
    split_budget,
    zcdp_to_approx_epsilon,
)

dp.enable_features("contrib")


def charge(accountant: Accountant, cost: Cost) -> LedgerEntry:
    return accountant.charge(cost, mechanism="test", query="q", sensitivity=1.0, noise_scale=1.0)


def uneven_weights(n: int) -> list[float]:
    return [float(w) for w in np.random.default_rng(n).uniform(0.05, 3.0, n)]


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0, 0.0, -1.0, math.nan, math.inf, True, "1.0", None])
def test_budget_rejects_bad_epsilon(epsilon: object) -> None:
    with pytest.raises(BudgetError, match=r"epsilon must be a positive number such as 1\.0"):
        Budget(epsilon)  # type: ignore[arg-type]


@pytest.mark.parametrize("delta", [-1e-9, 1.0, 2.0, math.nan, math.inf, True, "0"])
def test_budget_rejects_bad_delta(delta: object) -> None:
    with pytest.raises(BudgetError, match="delta must be a number in"):
        Budget(1.0, delta)  # type: ignore[arg-type]


def test_budget_accepts_ints_and_numpy_numbers() -> None:
    budget = Budget(np.float64(2), 0)  # type: ignore[arg-type]
    assert budget == Budget(2.0, 0.0)
    assert isinstance(budget.epsilon, float)


@pytest.mark.parametrize("kwargs", [{"epsilon": -0.1}, {"rho": math.inf}, {"delta": 1.0},
                                    {"epsilon": math.nan}, {"rho": "1"}])
def test_cost_rejects_bad_values(kwargs: dict) -> None:
    with pytest.raises(BudgetError):
        Cost(**kwargs)


@pytest.mark.parametrize(
    "budget, kwargs, message",
    [
        (Budget(1.0, 1e-6), {"notion": Notion.PURE}, "pure has no delta"),
        (Budget(1.0), {"notion": Notion.ZCDP}, "use notion pure, or give delta > 0"),
        (Budget(1.0), {"notion": Notion.APPROX}, "use notion pure, or give delta > 0"),
        (Budget(1.0), {"composition": "fancy"}, "composition must be"),
        (Budget(1.0), {"composition": "advanced"}, "only to notion approx"),
        (Budget(1.0, 1e-6), {"composition": "advanced"}, "only to notion approx"),
        (Budget(1.0, 1e-6), {"delta_reserve": 1e-6}, "delta_reserve must be smaller"),
        (Budget(1.0, 1e-6), {"notion": Notion.APPROX, "delta_reserve": 1e-7}, "only to notion zcdp"),
        (Budget(1.0, 1e-6), {"notion": Notion.APPROX, "delta_slack": 1e-7}, "only to composition"),
        (Budget(1.0, 1e-6), {"notion": Notion.APPROX, "composition": "advanced",
                             "delta_slack": 1e-5}, "at most delta"),
        (Budget(1.0, 1e-6), {"notion": "renyi"}, "notion must be one of"),
    ],
)
def test_accountant_rejects_bad_settings(budget: Budget, kwargs: dict, message: str) -> None:
    with pytest.raises(BudgetError, match=message):
        Accountant(budget, **kwargs)


def test_default_notion() -> None:
    assert Accountant(Budget(1.0)).notion == Notion.PURE
    assert Accountant(Budget(1.0, 1e-6)).notion == Notion.ZCDP


def test_costs_not_accepted_by_the_notion_raise() -> None:
    with pytest.raises(BudgetError, match="only epsilon"):
        charge(Accountant(Budget(1.0)), Cost(epsilon=0.1, delta=1e-9))
    with pytest.raises(BudgetError, match="only epsilon"):
        charge(Accountant(Budget(1.0)), Cost(rho=0.1))
    with pytest.raises(BudgetError, match="cannot convert"):
        charge(Accountant(Budget(1.0, 1e-6), Notion.APPROX), Cost(rho=0.01))
    with pytest.raises(BudgetError, match="not both"):
        charge(Accountant(Budget(1.0, 1e-6)), Cost(epsilon=0.01, rho=0.01))
    with pytest.raises(BudgetError):
        Accountant(Budget(1.0)).charge(Cost(epsilon=0.1), mechanism="laplace", query="q",
                                       sensitivity=-1.0, noise_scale=1.0)


# ---------------------------------------------------------------------------------------------
# Pure and basic composition, refusals
# ---------------------------------------------------------------------------------------------


def test_pure_composition_sums_and_ledger() -> None:
    accountant = Accountant(Budget(1.0))
    first = accountant.charge(Cost(epsilon=0.25), mechanism="discrete_laplace", query="age",
                              sensitivity=1.0, noise_scale=4.0, note="1-way")
    second = charge(accountant, Cost(epsilon=0.5))
    assert (first.index, second.index) == (0, 1)
    assert accountant.ledger == (first, second)
    assert accountant.spent() == {"epsilon": 0.75, "delta": 0.0, "rho": None, "notion": "pure",
                                  "composition": "basic"}
    assert accountant.remaining() == Cost(epsilon=0.25)
    assert accountant.budget_dict()["epsilon"] == 1.0 and accountant.budget_dict()["rho"] is None


def test_refusal_leaves_state_unchanged() -> None:
    accountant = Accountant(Budget(1.0))
    charge(accountant, Cost(epsilon=0.75))
    before = (accountant.spent(), accountant.remaining(), accountant.ledger)
    with pytest.raises(BudgetExhaustedError, match="lower the number of queries or raise the budget"):
        charge(accountant, Cost(epsilon=0.3))
    assert (accountant.spent(), accountant.remaining(), accountant.ledger) == before
    charge(accountant, Cost(epsilon=0.25))  # what is left still fits


def test_approx_basic_sums_epsilon_and_delta() -> None:
    accountant = Accountant(Budget(1.0, 1e-5), Notion.APPROX)
    charge(accountant, Cost(epsilon=0.5, delta=4e-6))
    charge(accountant, Cost(epsilon=0.25, delta=5e-6))
    spent = accountant.spent()
    assert spent["epsilon"] == 0.75 and spent["delta"] == pytest.approx(9e-6, rel=1e-12)
    assert spent["rho"] is None
    with pytest.raises(BudgetExhaustedError):
        charge(accountant, Cost(epsilon=0.1, delta=2e-6))  # δ would exceed 1e-5
    charge(accountant, accountant.remaining())
    with pytest.raises(BudgetExhaustedError):
        charge(accountant, Cost(epsilon=1e-12))


# ---------------------------------------------------------------------------------------------
# Exact arithmetic
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("total", [1.0, 0.3, 1e-3, 0.1])
@pytest.mark.parametrize("parts", [7, 13])
def test_split_parts_all_fit_and_nothing_more(total: float, parts: int) -> None:
    weights = uneven_weights(parts)
    shares = split_budget(total, weights)
    assert len(shares) == parts and all(s > 0 for s in shares)
    assert sum(Fraction(s) for s in shares) <= Fraction(total)
    weight_sum = math.fsum(weights)
    for share, weight in zip(shares, weights, strict=True):
        assert share == pytest.approx(total * weight / weight_sum, rel=1e-14)
    accountant = Accountant(Budget(total))
    for share in shares:
        charge(accountant, Cost(epsilon=share))
    left = accountant.remaining().epsilon
    assert 0 <= left <= 1e-14 * total
    with pytest.raises(BudgetExhaustedError):
        charge(accountant, Cost(epsilon=1e-9 * total))
    with pytest.raises(BudgetExhaustedError):
        charge(accountant, Cost(epsilon=math.nextafter(left, math.inf)))
    charge(accountant, Cost(epsilon=left))  # exactly what is left always fits


def test_naive_float_split_is_why_split_budget_exists() -> None:
    # 100 charges of the float 0.01 exceed 1.0 exactly (0.01 is stored slightly above 1/100).
    accountant = Accountant(Budget(1.0))
    for _ in range(99):
        charge(accountant, Cost(epsilon=0.01))
    with pytest.raises(BudgetExhaustedError):
        charge(accountant, Cost(epsilon=0.01))
    accountant = Accountant(Budget(1.0))
    for share in split_budget(1.0, [1.0] * 100):
        charge(accountant, Cost(epsilon=share))


@settings(max_examples=60, deadline=None)
@given(
    total=st.floats(min_value=1e-6, max_value=100.0),
    weights=st.lists(st.floats(min_value=1e-3, max_value=1e3), min_size=1, max_size=40),
)
def test_split_property(total: float, weights: list[float]) -> None:
    accountant = Accountant(Budget(total))
    for share in split_budget(total, weights):
        charge(accountant, Cost(epsilon=share))
    charge(accountant, accountant.remaining())
    assert accountant.remaining().epsilon <= 1e-15 * total


def test_split_rejects_bad_input() -> None:
    with pytest.raises(BudgetError):
        split_budget(1.0, [])
    with pytest.raises(BudgetError):
        split_budget(1.0, [1.0, 0.0])
    with pytest.raises(BudgetError):
        split_budget(0.0, [1.0])


@pytest.mark.parametrize("parts", [7, 13])
def test_zcdp_and_approx_splits_fit(parts: int) -> None:
    weights = uneven_weights(parts)
    zcdp = Accountant(Budget(0.3, 1e-6), delta_reserve=1e-7)
    rho_parts = split_budget(zcdp.remaining().rho, weights)
    delta_parts = split_budget(zcdp.remaining().delta, weights)
    for rho, delta in zip(rho_parts, delta_parts, strict=True):
        charge(zcdp, Cost(rho=rho, delta=delta))
    with pytest.raises(BudgetExhaustedError):
        charge(zcdp, Cost(rho=1e-12))
    approx = Accountant(Budget(0.1, 1e-5), Notion.APPROX)
    for epsilon, delta in zip(split_budget(0.1, weights), split_budget(1e-5, weights), strict=True):
        charge(approx, Cost(epsilon=epsilon, delta=delta))
    with pytest.raises(BudgetExhaustedError):
        charge(approx, Cost(epsilon=1e-12))


@pytest.mark.parametrize(
    "accountant, first",
    [
        (Accountant(Budget(0.7)), Cost(epsilon=0.1)),
        (Accountant(Budget(0.7, 1e-6), Notion.APPROX), Cost(epsilon=0.1, delta=3e-7)),
        (Accountant(Budget(0.7, 1e-6), Notion.APPROX, "advanced"), Cost(epsilon=0.1, delta=3e-8)),
        (Accountant(Budget(0.7, 1e-6), delta_reserve=2e-7), Cost(rho=0.01, delta=1e-7)),
    ],
)
def test_charging_exactly_the_remainder_succeeds(accountant: Accountant, first: Cost) -> None:
    charge(accountant, first)
    left = accountant.remaining()
    assert left.epsilon > 0 or left.rho > 0
    charge(accountant, left)
    bigger = Cost(epsilon=left.epsilon * 1.001, delta=left.delta, rho=left.rho * 1.001)
    fresh = accountant.remaining()
    assert fresh.epsilon <= 1e-3 * left.epsilon and fresh.rho <= 1e-3 * left.rho
    with pytest.raises(BudgetExhaustedError):
        charge(accountant, bigger)


# ---------------------------------------------------------------------------------------------
# Advanced composition
# ---------------------------------------------------------------------------------------------


def test_advanced_composition_against_hand_computation() -> None:
    k, slack = 100, 1e-6
    shares = split_budget(1.0, [1.0] * k)  # each just below 0.01
    advanced = Accountant(Budget(1.0, 1e-5), Notion.APPROX, "advanced", delta_slack=slack)
    basic = Accountant(Budget(1.0, 1e-5), Notion.APPROX, "basic")
    for share in shares:
        charge(advanced, Cost(epsilon=share))
        charge(basic, Cost(epsilon=share))
    expected = (math.sqrt(2 * math.log(1 / slack) * math.fsum(e * e for e in shares))
                + math.fsum(e * math.expm1(e) for e in shares))
    # k ε0 = 1, sqrt(2 k ln(1/δ')) ε0 + k ε0 (e^ε0 − 1) ≈ 0.5257 + 0.0101
    assert expected == pytest.approx(math.sqrt(2 * k * math.log(1e6)) * 0.01 + k * 0.01 * math.expm1(0.01),
                                     rel=1e-12)
    spent = advanced.spent()
    assert spent["epsilon"] >= expected
    assert spent["epsilon"] == pytest.approx(expected, rel=1e-12)
    assert spent["delta"] == slack
    assert spent["composition"] == "advanced"
    assert spent["epsilon"] < basic.spent()["epsilon"] <= 1.0


def test_advanced_composition_allows_more_queries_than_basic() -> None:
    budget = Budget(0.6, 1e-5)
    advanced = Accountant(budget, Notion.APPROX, "advanced", delta_slack=1e-6)
    basic = Accountant(budget, Notion.APPROX)
    for _ in range(100):
        charge(advanced, Cost(epsilon=0.01))
    for _ in range(59):
        charge(basic, Cost(epsilon=0.01))
    with pytest.raises(BudgetExhaustedError):
        charge(basic, Cost(epsilon=0.01))


def test_advanced_uses_basic_bound_when_better() -> None:
    accountant = Accountant(Budget(1.0, 1e-5), Notion.APPROX, "advanced")
    assert accountant.budget_dict()["delta_slack"] == 5e-6
    charge(accountant, Cost(epsilon=0.5, delta=1e-6))
    assert accountant.spent()["epsilon"] == 0.5  # the basic bound is the one used, with the slack kept aside
    assert accountant.spent()["delta"] == pytest.approx(6e-6, rel=1e-12) and accountant.spent()["delta"] >= 6e-6


def test_advanced_survives_huge_epsilon() -> None:
    accountant = Accountant(Budget(2000.0, 1e-5), Notion.APPROX, "advanced")
    charge(accountant, Cost(epsilon=800.0))
    charge(accountant, Cost(epsilon=0.5))
    assert accountant.spent()["epsilon"] == 800.5
    assert accountant.remaining().epsilon == 1199.5


# ---------------------------------------------------------------------------------------------
# zCDP
# ---------------------------------------------------------------------------------------------


def test_zcdp_sums_rho_and_converts() -> None:
    accountant = Accountant(Budget(1.0, 1e-6))
    rho_budget = approx_to_zcdp_rho(1.0, 1e-6)
    assert accountant.budget_dict()["rho"] == rho_budget
    charge(accountant, Cost(rho=0.005))
    charge(accountant, Cost(rho=0.0075))
    spent = accountant.spent()
    assert spent["rho"] == 0.0125
    assert spent["epsilon"] == zcdp_to_approx_epsilon(0.0125, 1e-6)
    assert spent["delta"] == 1e-6
    assert accountant.remaining().rho == pytest.approx(rho_budget - 0.0125, rel=1e-12)
    assert Accountant(Budget(1.0, 1e-6)).spent()["epsilon"] == 0.0


def test_zcdp_converts_pure_epsilon_cost() -> None:
    accountant = Accountant(Budget(1.0, 1e-6))
    entry = charge(accountant, Cost(epsilon=0.1))
    exact = Fraction(0.1) ** 2 / 2  # the smallest float >= the exact ε²/2 is recorded
    assert Fraction(entry.cost.rho) >= exact > Fraction(math.nextafter(entry.cost.rho, 0.0))
    assert entry.cost.epsilon == 0.0 and "epsilon^2/2" in entry.note
    assert accountant.spent()["rho"] == entry.cost.rho


def test_zcdp_delta_reserve() -> None:
    accountant = Accountant(Budget(1.0, 1e-6), delta_reserve=2e-7)
    assert accountant.budget_dict()["rho"] == approx_to_zcdp_rho(1.0, 1e-6 - 2e-7)
    charge(accountant, Cost(rho=0.01, delta=1.5e-7))
    with pytest.raises(BudgetExhaustedError):
        charge(accountant, Cost(rho=0.001, delta=1e-7))
    spent = accountant.spent()
    assert spent["delta"] == pytest.approx(8e-7 + 1.5e-7, rel=1e-12)
    assert spent["delta"] <= 1e-6
    assert spent["epsilon"] == zcdp_to_approx_epsilon(0.01, 8e-7)
    no_reserve = Accountant(Budget(1.0, 1e-6))
    with pytest.raises(BudgetExhaustedError, match="delta_reserve"):
        charge(no_reserve, Cost(rho=0.001, delta=1e-9))


def test_zcdp_spending_the_whole_rho_meets_the_target() -> None:
    accountant = Accountant(Budget(2.0, 1e-7))
    charge(accountant, accountant.remaining())
    spent = accountant.spent()
    assert spent["epsilon"] <= 2.0 and spent["epsilon"] == pytest.approx(2.0, rel=1e-9)
    assert spent["delta"] <= 1e-7


# ---------------------------------------------------------------------------------------------
# Conversions
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rho", [0.01, 0.1, 0.5, 2.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_conversion_matches_opendp(rho: float, delta: float) -> None:
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    gaussian = dp.m.make_gaussian(*space, 1.0 / math.sqrt(2 * rho))
    opendp_rho = gaussian.map(1.0)
    curve = dp.c.make_zCDP_to_approxDP(gaussian).map(1.0)
    ours = zcdp_to_approx_epsilon(opendp_rho, delta)
    assert ours == pytest.approx(curve.epsilon(delta), rel=1e-6)
    assert ours <= opendp_rho + 2 * math.sqrt(opendp_rho * math.log(1 / delta))


@pytest.mark.parametrize("rho", [1e-8, 1e-4, 0.3, 10.0, 1e4])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-12])
def test_conversion_below_classical_bound(rho: float, delta: float) -> None:
    epsilon = zcdp_to_approx_epsilon(rho, delta)
    assert 0 <= epsilon <= rho + 2 * math.sqrt(rho * math.log(1 / delta))


@pytest.mark.parametrize("epsilon", [0.01, 0.5, 1.0, 4.0, 20.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_round_trip(epsilon: float, delta: float) -> None:
    rho = approx_to_zcdp_rho(epsilon, delta)
    assert zcdp_to_approx_epsilon(rho, delta) <= epsilon
    assert zcdp_to_approx_epsilon(rho * (1 + 1e-9), delta) > epsilon  # the largest such ρ
    assert zcdp_to_approx_epsilon(rho, delta) == pytest.approx(epsilon, rel=1e-12)


def test_conversion_edge_cases() -> None:
    assert zcdp_to_approx_epsilon(0.0, 1e-6) == 0.0
    with pytest.raises(BudgetError):
        zcdp_to_approx_epsilon(0.1, 0.0)
    with pytest.raises(BudgetError):
        zcdp_to_approx_epsilon(-0.1, 1e-6)
    with pytest.raises(BudgetError):
        approx_to_zcdp_rho(0.0, 1e-6)


# ---------------------------------------------------------------------------------------------
# Costs and calibration
# ---------------------------------------------------------------------------------------------


def test_costs_match_opendp_maps() -> None:
    int_vector = dp.vector_domain(dp.atom_domain(T="i64"))
    laplace = dp.m.make_laplace(int_vector, dp.l1_distance(T="i64"), 4.0)
    assert laplace_cost(2.0, 4.0).epsilon == laplace.map(2) == 0.5
    gaussian = dp.m.make_gaussian(int_vector, dp.l2_distance(T="i64"), 2.0)
    assert gaussian_cost(1.0, 2.0).rho == gaussian.map(1) == 0.125
    scores = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    for monotonic in (False, True):
        metric = dp.linf_distance(T=float, monotonic=monotonic)
        pure = dp.m.make_noisy_max(scores, metric, dp.max_divergence(), 3.0)
        zcdp = dp.m.make_noisy_max(scores, metric, dp.zero_concentrated_divergence(), 3.0)
        assert exponential_cost(1.5, 3.0, monotonic).epsilon == pytest.approx(pure.map(1.5), rel=1e-12)
        assert exponential_cost(1.5, 3.0, monotonic, Notion.ZCDP).rho == pytest.approx(zcdp.map(1.5),
                                                                                       rel=1e-12)
    assert exponential_cost(1.0, 2.0) == Cost(epsilon=1.0)
    assert exponential_cost(1.0, 2.0, notion=Notion.ZCDP) == Cost(rho=0.125)


def test_randomized_response_cost() -> None:
    for k, p in [(2, 0.75), (4, 0.7), (10, 0.5)]:
        measurement = dp.m.make_randomized_response(list(range(k)), p, T="i64")
        epsilon = randomized_response_cost(k, p).epsilon
        assert epsilon >= math.log(p * (k - 1) / (1 - p))
        assert epsilon == pytest.approx(measurement.map(1), rel=1e-12)
    assert randomized_response_cost(2, 0.5) == Cost()
    for k, p in [(1, 0.9), (3, 0.2), (3, 1.0), (True, 0.7), (3, "0.5")]:
        with pytest.raises(BudgetError):
            randomized_response_cost(k, p)  # type: ignore[arg-type]


@pytest.mark.parametrize("sensitivity", [1.0, 2.0, 0.3, 7.0 / 3.0])
@pytest.mark.parametrize("target", [1.0, 0.1, 1e-3, 0.7, 1 / 3])
def test_calibration_never_overspends_and_is_tight(sensitivity: float, target: float) -> None:
    scale = laplace_scale(sensitivity, target)
    assert Fraction(sensitivity) / Fraction(scale) <= Fraction(target)
    assert Fraction(sensitivity) / Fraction(math.nextafter(scale, 0)) > Fraction(target)
    assert laplace_cost(sensitivity, scale).epsilon <= target

    sigma = gaussian_sigma(sensitivity, target)
    assert Fraction(sensitivity) ** 2 / (2 * Fraction(sigma) ** 2) <= Fraction(target)
    assert Fraction(sensitivity) ** 2 / (2 * Fraction(math.nextafter(sigma, 0)) ** 2) > Fraction(target)
    assert gaussian_cost(sensitivity, sigma).rho <= target

    for monotonic in (False, True):
        beta = exponential_scale(sensitivity, epsilon=target, monotonic=monotonic)
        assert exponential_cost(sensitivity, beta, monotonic).epsilon <= target
        assert beta == pytest.approx((1 if monotonic else 2) * sensitivity / target, rel=1e-15)
        beta = exponential_scale(sensitivity, rho=target, monotonic=monotonic)
        assert exponential_cost(sensitivity, beta, monotonic, Notion.ZCDP).rho <= target
        assert beta == pytest.approx((1 if monotonic else 2) * sensitivity / math.sqrt(8 * target),
                                     rel=1e-15)


def test_calibration_rejects_bad_input() -> None:
    with pytest.raises(BudgetError):
        laplace_scale(1.0, 0.0)
    with pytest.raises(BudgetError):
        gaussian_sigma(0.0, 1.0)
    with pytest.raises(BudgetError, match="exactly one"):
        exponential_scale(1.0, epsilon=1.0, rho=1.0)
    with pytest.raises(BudgetError, match="exactly one"):
        exponential_scale(1.0)


def test_exponential_charges_under_each_notion() -> None:
    zcdp = Accountant(Budget(1.0, 1e-6))
    beta = exponential_scale(1.0, rho=0.001)
    entry = charge(zcdp, exponential_cost(1.0, beta, notion=zcdp.notion))
    assert entry.cost.rho <= 0.001 and entry.cost.epsilon == 0.0
    pure = Accountant(Budget(1.0))
    beta = exponential_scale(1.0, epsilon=0.1)
    assert charge(pure, exponential_cost(1.0, beta, notion=pure.notion)).cost.epsilon <= 0.1


# ---------------------------------------------------------------------------------------------
# Ledger
# ---------------------------------------------------------------------------------------------


def test_ledger_entry_round_trip() -> None:
    accountant = Accountant(Budget(1.0, 1e-6))
    entry = accountant.charge(Cost(epsilon=0.2), mechanism="noisy_max", query="select pair",
                              sensitivity=1.0, noise_scale=10.0, note="round 1")
    data = json.loads(json.dumps(entry.to_dict()))
    assert LedgerEntry.from_dict(data) == entry
    assert data["cost"] == {"epsilon": 0.0, "delta": 0.0, "rho": entry.cost.rho}
    assert accountant.ledger == (entry,)
    with pytest.raises(DescriptionError):
        LedgerEntry.from_dict({"index": 0, "mechanism": "x"})
    with pytest.raises(DescriptionError):
        LedgerEntry.from_dict({**data, "cost": {"epsilon": -1.0}})


def _filter_bound(epsilons: list[float], slack: float) -> float:
    """Whitehouse, Ramdas, Rogers & Wu (2023)'s advanced-composition filter: the ε it guarantees."""
    squares = math.fsum(e * e for e in epsilons)
    return math.sqrt(2 * math.log(1 / slack) * squares) + squares / 2


def test_advanced_composition_is_a_valid_filter_for_adaptively_chosen_epsilons() -> None:
    # Each ε_i is drawn after the previous charge (as an adaptive engine would); whatever the
    # accountant admits must satisfy the filter's conditions: Σδ_i ≤ δ − δ', and either the basic
    # bound or the filter's own bound within ε.
    rng = np.random.default_rng(3)
    budget, slack = Budget(1.0, 1e-5), 4e-6
    for _ in range(200):
        accountant = Accountant(budget, Notion.APPROX, "advanced", delta_slack=slack)
        admitted: list[tuple[float, float]] = []
        while True:
            scale = 0.3 if not admitted else 0.3 * rng.random()
            cost = Cost(epsilon=float(rng.exponential(scale)), delta=float(rng.choice([0.0, 1e-6])))
            try:
                accountant.charge(cost, mechanism="m", query="q", sensitivity=1.0, noise_scale=1.0)
            except BudgetExhaustedError:
                break
            admitted.append((cost.epsilon, cost.delta))
        epsilons = [e for e, _ in admitted]
        assert math.fsum(d for _, d in admitted) + slack <= budget.delta * (1 + 1e-12)
        assert math.fsum(epsilons) <= budget.epsilon * (1 + 1e-12) or _filter_bound(epsilons, slack) <= budget.epsilon


def test_the_advanced_bound_implies_the_filters() -> None:
    rng = np.random.default_rng(4)
    for _ in range(1000):
        epsilons = list(rng.exponential(rng.choice([0.01, 0.3, 3.0]), size=int(rng.integers(1, 200))))
        ours = (math.sqrt(2 * math.log(1 / 1e-6) * math.fsum(e * e for e in epsilons))
                + math.fsum(e * math.expm1(e) for e in epsilons))
        assert ours >= _filter_bound(epsilons, 1e-6)


def test_advanced_composition_keeps_the_slack_aside_under_the_basic_bound_too() -> None:
    # Without it, a run could end under the basic bound with Σδ_i = δ while another ends under the
    # advanced one with failure probability δ' on top: not a valid filter.
    accountant = Accountant(Budget(1.0, 1e-5), Notion.APPROX, "advanced", delta_slack=5e-6)
    with pytest.raises(BudgetExhaustedError):
        charge(accountant, Cost(epsilon=0.5, delta=8e-6))
    charge(accountant, Cost(epsilon=0.5, delta=5e-6))
    assert accountant.remaining().delta == 0.0

"""How charges compose: one rule per privacy notion (pure ε, approximate (ε, δ), approximate ρ-zCDP),
each knowing what cost it records, whether running totals fit its budget, what is left, and the (ε, δ)
guarantee of what was spent; ``composition_rule`` checks an accountant's settings and picks the rule.

Totals are exact ``fractions.Fraction`` sums; wherever a real number must become a float it is
rounded in the direction that can only overstate the privacy loss. This module never draws noise,
never sees data and keeps no state: the accountant holds the totals and the ledger.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

from synth.errors import BudgetError
from synth.privacy.budget import Budget, Cost, Notion
from synth.privacy.exact import ceil_float, floor_float, largest_true, non_negative, positive, probability, round_up

_MAX_EXP_ARGUMENT = 700.0  # math.expm1 overflows a little above 709
COMPOSITIONS = ("basic", "advanced")


# --------------------------------------------------------------------------------------------
# zCDP <-> (ε, δ) conversions
# --------------------------------------------------------------------------------------------


def _epsilon_at_order(alpha: float, rho: float, log_inv_delta: float) -> float:
    """Upper bound on ε(α) = αρ + (ln(1/δ) − ln α)/(α − 1) + ln(1 − 1/α), with a rounding margin."""
    terms = (
        alpha * rho,
        (log_inv_delta - math.log(alpha)) / (alpha - 1.0),
        math.log1p(-1.0 / alpha),
    )
    margin = 16 * math.ulp(1.0) * math.fsum(abs(term) for term in terms)
    return math.fsum(terms) + margin


def zcdp_to_approx_epsilon(rho: float, delta: float) -> float:
    """The smallest ε such that ρ-zCDP implies (ε, δ)-DP, rounded up (never below the true value).

    Uses the tight conversion of Canonne, Kamath & Steinke 2020 ("The discrete Gaussian for
    differential privacy", Prop. 12 / Cor. 13, after Asoodeh et al.): ρ-zCDP gives (ε, δ(ε))-DP with
    δ(ε) = inf_{α>1} exp((α−1)(αρ−ε)) / (α−1) · (1 − 1/α)^α. Solving δ(ε) <= δ for ε at a fixed α
    gives ε(α) = αρ + (ln(1/δ) − ln α)/(α−1) + ln(1 − 1/α), so the smallest ε is min_α ε(α). Its
    derivative ρ + ln(αδ)/(α−1)² is increasing in α, so the minimiser is found by bisection on the
    derivative's sign. Every α gives a valid bound, so an imprecise α can only make ε larger.
    The result is at most the classical ρ + 2·sqrt(ρ·ln(1/δ)).
    """
    rho = non_negative("rho", rho)
    delta = probability("delta", delta, allow_zero=False)
    if rho == 0:
        return 0.0
    log_inv_delta = round_up(-math.log(delta))

    def derivative_negative(alpha: float) -> bool:
        return rho * (alpha - 1.0) ** 2 + math.log(alpha * delta) < 0

    # At α = 1 + sqrt(ln(1/δ)/ρ) the derivative is ln(α)/(α−1)² > 0, so the minimiser lies below.
    high = 1.0 + math.sqrt(log_inv_delta / rho) + 1.0
    if not math.isfinite(high):
        high = 1e150
    alpha = largest_true(derivative_negative, 1.0, high)  # the minimiser is alpha or the next float
    orders = [order for order in (alpha, math.nextafter(alpha, math.inf)) if order > 1.0]
    return max(0.0, min(_epsilon_at_order(order, rho, log_inv_delta) for order in orders))


def approx_to_zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest ρ (rounded down) such that ρ-zCDP converts to (ε, δ)-DP with the conversion of
    ``zcdp_to_approx_epsilon``; a zCDP accountant with this ρ budget meets the (ε, δ) target."""
    epsilon = positive("epsilon", epsilon)
    delta = probability("delta", delta, allow_zero=False)

    def fits(rho: float) -> bool:
        return zcdp_to_approx_epsilon(rho, delta) <= epsilon

    high = max(epsilon, 1.0)
    while fits(high):
        high *= 2.0
    return largest_true(fits, 0.0, high)


# --------------------------------------------------------------------------------------------
# Running totals
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Totals:
    """Exact running sums of what was charged."""

    epsilon: Fraction = Fraction(0)
    delta: Fraction = Fraction(0)
    rho: Fraction = Fraction(0)
    epsilon_squared: Fraction = Fraction(0)  # Σ ε_i², for advanced composition
    # Upper bound on Σ ε_i (e^{ε_i} − 1), for advanced composition; None once it is beyond the
    # float range (some ε_i > _MAX_EXP_ARGUMENT), where the advanced bound is useless anyway.
    epsilon_expm1: Fraction | None = Fraction(0)

    def plus(self, cost: Cost) -> Totals:
        epsilon = Fraction(cost.epsilon)
        expm1_sum = None
        if self.epsilon_expm1 is not None and cost.epsilon <= _MAX_EXP_ARGUMENT:
            expm1_sum = self.epsilon_expm1 + epsilon * Fraction(round_up(math.expm1(cost.epsilon)))
        return Totals(
            epsilon=self.epsilon + epsilon,
            delta=self.delta + Fraction(cost.delta),
            rho=self.rho + Fraction(cost.rho),
            epsilon_squared=self.epsilon_squared + epsilon**2,
            epsilon_expm1=expm1_sum,
        )


# --------------------------------------------------------------------------------------------
# The rules
# --------------------------------------------------------------------------------------------


class CompositionRule(ABC):
    """How costs add up under one notion, for one budget. The class variables say which accountant
    settings the notion takes: a δ in the budget, advanced composition, a δ reserve."""

    notion: ClassVar[Notion]
    needs_delta: ClassVar[bool] = True
    composes_advanced: ClassVar[bool] = False
    reserves_delta: ClassVar[bool] = False
    rho_budget: float | None = None  # the ρ budget, under zCDP only

    def __init__(self, budget: Budget, delta_reserve: float = 0.0, delta_slack: float | None = None) -> None:
        self.budget = budget
        self.delta_reserve = delta_reserve
        self.delta_slack = delta_slack  # δ' of advanced composition; None under basic composition
        self.composition = "basic" if delta_slack is None else "advanced"

    @abstractmethod
    def record(self, cost: Cost) -> tuple[Cost, str]:
        """The cost as this notion records it, and a note on any conversion; BudgetError when the
        notion cannot account for it."""

    @abstractmethod
    def fits(self, totals: Totals) -> bool:
        """Whether ``totals`` are within the budget."""

    @abstractmethod
    def describe(self, cost: Cost) -> str:
        """The parts of ``cost`` that this notion spends, for messages."""

    @abstractmethod
    def remaining(self, totals: Totals) -> Cost:
        """What can still be charged after ``totals``, rounded down so that charging exactly this fits."""

    @abstractmethod
    def spent(self, totals: Totals) -> tuple[float, float, float | None]:
        """The (ε, δ) guarantee of ``totals``, rounded up, and ρ under zCDP (else None)."""


class PureRule(CompositionRule):
    """Pure ε-DP, basic composition: ε adds up."""

    notion = Notion.PURE
    needs_delta = False

    def record(self, cost: Cost) -> tuple[Cost, str]:
        if cost.delta > 0 or cost.rho > 0:
            raise BudgetError("a pure-DP accountant accepts only epsilon costs; this cost has "
                              "delta or rho > 0. Use notion approx or zcdp.")
        return cost, ""

    def fits(self, totals: Totals) -> bool:
        return totals.epsilon <= Fraction(self.budget.epsilon) and totals.delta <= Fraction(self.budget.delta)

    def describe(self, cost: Cost) -> str:
        return f"epsilon={cost.epsilon!r}"

    def remaining(self, totals: Totals) -> Cost:
        return Cost(epsilon=floor_float(Fraction(self.budget.epsilon) - totals.epsilon))

    def spent(self, totals: Totals) -> tuple[float, float, float | None]:
        return ceil_float(totals.epsilon), ceil_float(totals.delta), None


class ApproxRule(CompositionRule):
    """Approximate (ε, δ)-DP. Basic composition: ε and δ add up. Advanced: see ``options``."""

    notion = Notion.APPROX
    composes_advanced = True

    def record(self, cost: Cost) -> tuple[Cost, str]:
        if cost.rho > 0:
            raise BudgetError("an (epsilon, delta) accountant cannot convert a rho (zCDP) cost; "
                              "use notion zcdp or a pure/approximate mechanism.")
        return cost, ""

    def options(self, totals: Totals) -> list[tuple[Fraction, Fraction]]:
        """The (ε, δ) guarantees that hold for ``totals``.

        Basic composition: (Σε_i, Σδ_i). Advanced composition, heterogeneous form (Dwork, Rothblum &
        Vadhan 2010; Kairouz, Oh & Viswanath 2015), with the slack δ': either (Σε_i, Σδ_i + δ') or
        (sqrt(2 ln(1/δ') Σε_i²) + Σε_i(e^{ε_i} − 1), Σδ_i + δ'). Every bound is rounded up.

        The ε_i are often chosen adaptively (a PrivBayes step skipped, a share left unspent, AIM's
        annealing), which the advanced composition theorem does not cover. The accountant is then a
        privacy filter: it admits a charge only while the totals fit, and under advanced
        composition both options keep δ' aside, so every admitted sequence has Σδ_i ≤ δ − δ' and
        either Σε_i ≤ ε or the advanced bound ≤ ε. Whitehouse, Ramdas, Rogers & Wu ("Fully-Adaptive
        Composition in Differential Privacy", ICML 2023) prove that a filter stopping before
        sqrt(2 ln(1/δ') Σε_i²) + ½Σε_i² exceeds ε, or Σδ_i exceeds δ − δ', is (ε, δ)-DP however the
        (ε_i, δ_i) were chosen; since ε_i(e^{ε_i} − 1) ≥ ε_i²/2, our advanced bound implies theirs.
        Outside the δ_i events (probability at most Σδ_i ≤ δ − δ'), the loss is at most Σε_i ≤ ε on
        a run that ends under the basic bound, and exceeds ε with probability at most δ' on one that
        ends under the advanced bound (their bound is time-uniform, so it holds at any stopping
        time): in all, (ε, δ). Keeping δ' aside in the basic option too is what makes the union of
        the two rules a valid filter.
        """
        if self.delta_slack is None:
            return [(totals.epsilon, totals.delta)]
        slack = Fraction(self.delta_slack)
        options = [(totals.epsilon, totals.delta + slack)]
        if totals.epsilon > 0 and totals.epsilon_expm1 is not None:
            log_term = Fraction(2 * round_up(-math.log(self.delta_slack)))
            root = round_up(math.sqrt(ceil_float(log_term * totals.epsilon_squared)))
            advanced = Fraction(root) + totals.epsilon_expm1
            options.append((advanced, totals.delta + slack))
        return options

    def fitting_options(self, totals: Totals) -> list[tuple[Fraction, Fraction]]:
        """The (ε, δ) guarantees of ``totals`` that are within the budget."""
        budget = (Fraction(self.budget.epsilon), Fraction(self.budget.delta))
        return [(eps, delta) for eps, delta in self.options(totals) if eps <= budget[0] and delta <= budget[1]]

    def fits(self, totals: Totals) -> bool:
        return bool(self.fitting_options(totals))

    def describe(self, cost: Cost) -> str:
        return f"epsilon={cost.epsilon!r}, delta={cost.delta!r}"

    def remaining(self, totals: Totals) -> Cost:
        """Basic: ε and δ left. Advanced: the largest single (ε, δ) charge that still fits, with δ
        all the δ left after the slack δ', under the bound used (basic or advanced, whichever
        leaves more ε)."""
        budget_eps, budget_delta = Fraction(self.budget.epsilon), Fraction(self.budget.delta)
        candidates = []
        slack = Fraction(0) if self.delta_slack is None else Fraction(self.delta_slack)
        delta_left = budget_delta - totals.delta - slack
        if totals.epsilon <= budget_eps and delta_left >= 0:
            candidates.append(Cost(epsilon=floor_float(budget_eps - totals.epsilon),
                                   delta=floor_float(delta_left)))
        if self.delta_slack is not None and delta_left >= 0:
            delta = floor_float(delta_left)

            def fits(epsilon: float) -> bool:
                return self.fits(totals.plus(Cost(epsilon=epsilon, delta=delta)))

            if fits(0.0):
                high = max(self.budget.epsilon, 1.0)
                while fits(high):
                    high *= 2.0
                candidates.append(Cost(epsilon=largest_true(fits, 0.0, high), delta=delta))
        return max(candidates, key=lambda c: (c.epsilon, c.delta), default=Cost())

    def spent(self, totals: Totals) -> tuple[float, float, float | None]:
        """The better of the bounds that fits the budget (every committed state fits at least one:
        a charge that fits none is refused)."""
        eps_exact, delta_exact = min(self.fitting_options(totals))
        return ceil_float(eps_exact), ceil_float(delta_exact), None


class ZcdpRule(CompositionRule):
    """Approximate ρ-zCDP: ρ and δ add up; a pure ε cost is charged as ρ = ε²/2 (Bun & Steinke 2016,
    Prop. 1.4) and an (ε, δ) cost as ρ = ε²/2 plus δ ((ε, δ)-DP implies δ-approximate ε²/2-zCDP,
    ibid.). The ρ budget is the largest ρ that converts to (ε, δ − delta_reserve); δ costs are paid
    from ``delta_reserve``."""

    notion = Notion.ZCDP
    reserves_delta = True
    rho_budget: float

    def __init__(self, budget: Budget, delta_reserve: float = 0.0, delta_slack: float | None = None) -> None:
        super().__init__(budget, delta_reserve, delta_slack)
        # The part of δ given to the ρ -> (ε, δ) conversion, rounded down so that it plus the
        # reserve never exceeds δ.
        self.conversion_delta = floor_float(Fraction(budget.delta) - Fraction(delta_reserve))
        self.rho_budget = approx_to_zcdp_rho(budget.epsilon, self.conversion_delta)

    def record(self, cost: Cost) -> tuple[Cost, str]:
        if cost.epsilon > 0 and cost.rho > 0:
            raise BudgetError("a cost has either epsilon (pure or approximate DP) or rho (zCDP), not "
                              "both; charge them as two costs.")
        if cost.epsilon > 0:
            rho = ceil_float(Fraction(cost.epsilon) ** 2 / 2)
            return (Cost(rho=rho, delta=cost.delta),
                    f"charged as rho = epsilon^2/2 = {rho!r} from epsilon = {cost.epsilon!r} "
                    "(Bun & Steinke 2016)")
        return cost, ""

    def fits(self, totals: Totals) -> bool:
        return totals.rho <= Fraction(self.rho_budget) and totals.delta <= Fraction(self.delta_reserve)

    def describe(self, cost: Cost) -> str:
        return f"rho={cost.rho!r}, delta={cost.delta!r} (delta from delta_reserve)"

    def remaining(self, totals: Totals) -> Cost:
        """ρ left and δ left in the reserve."""
        return Cost(rho=floor_float(Fraction(self.rho_budget) - totals.rho),
                    delta=floor_float(Fraction(self.delta_reserve) - totals.delta))

    def spent(self, totals: Totals) -> tuple[float, float, float | None]:
        """ε = zcdp_to_approx_epsilon(ρ_spent, δ − delta_reserve) and δ = (δ − delta_reserve) + δ
        spent by approximate mechanisms, when ρ_spent > 0; with no ρ spent, (0, δ spent)."""
        rho = ceil_float(totals.rho)
        if totals.rho > 0:
            return (zcdp_to_approx_epsilon(rho, self.conversion_delta),
                    ceil_float(Fraction(self.conversion_delta) + totals.delta), rho)
        return 0.0, ceil_float(totals.delta), rho


RULES: dict[Notion, type[CompositionRule]] = {Notion.PURE: PureRule, Notion.APPROX: ApproxRule, Notion.ZCDP: ZcdpRule}


def composition_rule(budget: Budget, notion: Notion | None, composition: str, delta_reserve: float,
                     delta_slack: float | None) -> CompositionRule:
    """The rule for an accountant's settings (see ``Accountant``), or BudgetError naming the wrong one.

    ``notion`` None: pure when δ = 0, zCDP otherwise."""
    if notion is None:
        notion = Notion.PURE if budget.delta == 0 else Notion.ZCDP
    try:
        notion = Notion(notion)
    except ValueError as error:
        raise BudgetError(f"notion must be one of pure, approx, zcdp; got {notion!r}.") from error
    rule = RULES[notion]
    if not rule.needs_delta and budget.delta > 0:
        raise BudgetError(f"notion {notion.value} has no delta: give delta=0, or use notion approx or zcdp.")
    if rule.needs_delta and budget.delta == 0:
        raise BudgetError(f"notion {notion.value} needs delta > 0: use notion pure, or give delta > 0.")
    if composition not in COMPOSITIONS:
        raise BudgetError(f"composition must be 'basic' or 'advanced'; got {composition!r}.")
    if composition == "advanced" and not rule.composes_advanced:
        raise BudgetError("advanced composition applies only to notion approx; use composition='basic'.")
    reserve = probability("delta_reserve", delta_reserve)
    if rule.reserves_delta and reserve >= budget.delta:
        raise BudgetError(f"delta_reserve must be smaller than delta ({budget.delta}); got {reserve}.")
    if not rule.reserves_delta and reserve > 0:
        raise BudgetError(f"delta_reserve applies only to notion zcdp (under {notion.value} δ is "
                          "spent directly); leave it at 0.")
    slack = None
    if composition == "advanced":
        slack = budget.delta / 2 if delta_slack is None else probability("delta_slack", delta_slack,
                                                                           allow_zero=False)
        if slack > budget.delta:
            raise BudgetError(f"delta_slack must be at most delta ({budget.delta}); got {slack}.")
    elif delta_slack is not None:
        raise BudgetError("delta_slack applies only to composition='advanced'; leave it out.")
    return rule(budget, reserve, slack)

"""Privacy budgets, composition and the privacy ledger (mechanisms' costs: ``synth.privacy.costs``).

An ``Accountant`` holds one ``Budget`` under one privacy ``Notion`` (pure ε, approximate (ε, δ) with
basic or advanced composition, or approximate ρ-zCDP) and keeps a ledger of every charge. Budget
arithmetic is exact: spent totals are ``fractions.Fraction`` sums of the charged floats, so a budget
split with ``split_budget`` is never refused on its last part, and ``remaining()`` can always be
charged in full. Wherever a real number must be rounded (noise scales, costs, conversions between
notions), it is rounded in the direction that can only overstate the privacy loss.

This module must never draw noise, never see data, and never let a charge that does not fit change
its state: a refused charge raises ``BudgetExhaustedError`` and leaves the accountant untouched.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from typing import Any

from synth.errors import BudgetError, BudgetExhaustedError, DescriptionError
from synth.privacy.exact import ceil_float, floor_float, largest_true, non_negative, positive, probability, round_up

_MAX_EXP_ARGUMENT = 700.0  # math.expm1 overflows a little above 709


class Notion(str, Enum):
    """The privacy notion an accountant composes under."""

    PURE = "pure"  # ε-DP, basic composition
    APPROX = "approx"  # (ε, δ)-DP, basic or advanced composition
    ZCDP = "zcdp"  # approximate ρ-zCDP: a ρ part and a δ part, both additive


# --------------------------------------------------------------------------------------------
# Budget, cost, ledger entry
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """A total privacy budget: ε > 0 and δ in [0, 1)."""

    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", positive("epsilon", self.epsilon))
        object.__setattr__(self, "delta", probability("delta", self.delta))


@dataclass(frozen=True)
class Cost:
    """The privacy cost of one mechanism call: ε (pure or approximate DP), δ, and ρ (zCDP)."""

    epsilon: float = 0.0
    delta: float = 0.0
    rho: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", non_negative("a cost's epsilon", self.epsilon))
        object.__setattr__(self, "delta", probability("a cost's delta", self.delta))
        object.__setattr__(self, "rho", non_negative("a cost's rho", self.rho))

    def to_dict(self) -> dict[str, float]:
        return {"epsilon": self.epsilon, "delta": self.delta, "rho": self.rho}


@dataclass(frozen=True)
class LedgerEntry:
    """One charged mechanism call, as recorded in the release."""

    index: int
    mechanism: str
    query: str
    sensitivity: float
    noise_scale: float
    cost: Cost
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types only."""
        return {
            "index": self.index,
            "mechanism": self.mechanism,
            "query": self.query,
            "sensitivity": self.sensitivity,
            "noise_scale": self.noise_scale,
            "cost": self.cost.to_dict(),
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LedgerEntry:
        """Inverse of ``to_dict``; raises ``DescriptionError`` on a malformed entry."""
        try:
            cost = data["cost"]
            entry = cls(
                index=int(data["index"]),
                mechanism=str(data["mechanism"]),
                query=str(data["query"]),
                sensitivity=float(data["sensitivity"]),
                noise_scale=float(data["noise_scale"]),
                cost=Cost(
                    epsilon=float(cost.get("epsilon", 0.0)),
                    delta=float(cost.get("delta", 0.0)),
                    rho=float(cost.get("rho", 0.0)),
                ),
                note=str(data.get("note", "")),
            )
        except (KeyError, TypeError, ValueError, AttributeError, BudgetError) as error:
            raise DescriptionError(
                f"a ledger entry is malformed ({error}); it needs index, mechanism, query, "
                "sensitivity, noise_scale and cost {epsilon, delta, rho}. Re-create the Description."
            ) from error
        return entry


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
# The accountant
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Totals:
    """Exact running sums of what was charged."""

    epsilon: Fraction = Fraction(0)
    delta: Fraction = Fraction(0)
    rho: Fraction = Fraction(0)
    epsilon_squared: Fraction = Fraction(0)  # Σ ε_i², for advanced composition
    # Upper bound on Σ ε_i (e^{ε_i} − 1), for advanced composition; None once it is beyond the
    # float range (some ε_i > _MAX_EXP_ARGUMENT), where the advanced bound is useless anyway.
    epsilon_expm1: Fraction | None = Fraction(0)

    def plus(self, cost: Cost) -> _Totals:
        epsilon = Fraction(cost.epsilon)
        expm1_sum = None
        if self.epsilon_expm1 is not None and cost.epsilon <= _MAX_EXP_ARGUMENT:
            expm1_sum = self.epsilon_expm1 + epsilon * Fraction(round_up(math.expm1(cost.epsilon)))
        return _Totals(
            epsilon=self.epsilon + epsilon,
            delta=self.delta + Fraction(cost.delta),
            rho=self.rho + Fraction(cost.rho),
            epsilon_squared=self.epsilon_squared + epsilon**2,
            epsilon_expm1=expm1_sum,
        )


_COMPOSITIONS = ("basic", "advanced")


class Accountant:
    """Keeps the privacy budget, refuses charges that do not fit, and records the ledger.

    Pure: ε adds up. Approx, basic: ε and δ add up. Approx, advanced: see ``_approx_options``.
    zCDP (approximate zCDP): ρ and δ add up; a pure ε cost is charged as ρ = ε²/2 (Bun & Steinke 2016,
    Prop. 1.4) and an (ε, δ) cost as ρ = ε²/2 plus δ ((ε, δ)-DP implies δ-approximate ε²/2-zCDP,
    ibid.). The ρ budget is the largest ρ that converts to (ε, δ − delta_reserve); δ costs are
    paid from ``delta_reserve``.
    """

    def __init__(self, budget: Budget, notion: Notion | None = None, composition: str = "basic",
                 delta_reserve: float = 0.0, delta_slack: float | None = None) -> None:
        if not isinstance(budget, Budget):
            raise BudgetError(f"the accountant needs a Budget(epsilon=..., delta=...); got {budget!r}.")
        if notion is None:
            notion = Notion.PURE if budget.delta == 0 else Notion.ZCDP
        try:
            notion = Notion(notion)
        except ValueError as error:
            raise BudgetError(f"notion must be one of pure, approx, zcdp; got {notion!r}.") from error
        if notion == Notion.PURE and budget.delta > 0:
            raise BudgetError("notion pure has no delta: give delta=0, or use notion approx or zcdp.")
        if notion != Notion.PURE and budget.delta == 0:
            raise BudgetError(f"notion {notion.value} needs delta > 0: use notion pure, or give delta > 0.")
        if composition not in _COMPOSITIONS:
            raise BudgetError(f"composition must be 'basic' or 'advanced'; got {composition!r}.")
        if composition == "advanced" and notion != Notion.APPROX:
            raise BudgetError("advanced composition applies only to notion approx; use composition='basic'.")
        reserve = probability("delta_reserve", delta_reserve)
        if notion == Notion.ZCDP and reserve >= budget.delta:
            raise BudgetError(f"delta_reserve must be smaller than delta ({budget.delta}); got {reserve}.")
        if notion != Notion.ZCDP and reserve > 0:
            raise BudgetError(f"delta_reserve applies only to notion zcdp (under {notion.value} δ is "
                              "spent directly); leave it at 0.")
        if composition == "advanced":
            slack = budget.delta / 2 if delta_slack is None else probability("delta_slack", delta_slack,
                                                                               allow_zero=False)
            if slack > budget.delta:
                raise BudgetError(f"delta_slack must be at most delta ({budget.delta}); got {slack}.")
        elif delta_slack is not None:
            raise BudgetError("delta_slack applies only to composition='advanced'; leave it out.")
        else:
            slack = 0.0
        self._budget = budget
        self._notion = notion
        self._composition = composition
        self._delta_reserve = reserve
        self._delta_slack = slack
        # The part of δ given to the ρ -> (ε, δ) conversion, rounded down so that it plus the
        # reserve never exceeds δ.
        self._conversion_delta = floor_float(Fraction(budget.delta) - Fraction(reserve))
        self._rho_budget = (approx_to_zcdp_rho(budget.epsilon, self._conversion_delta)
                            if notion == Notion.ZCDP else 0.0)
        self._totals = _Totals()
        self._ledger: list[LedgerEntry] = []

    # -- properties --------------------------------------------------------------------------

    @property
    def budget(self) -> Budget:
        return self._budget

    @property
    def notion(self) -> Notion:
        return self._notion

    @property
    def composition(self) -> str:
        return self._composition

    @property
    def ledger(self) -> tuple[LedgerEntry, ...]:
        return tuple(self._ledger)

    # -- charging ----------------------------------------------------------------------------

    def _normalise(self, cost: Cost) -> tuple[Cost, str]:
        """The cost as this notion records it, and a note on any conversion."""
        if not isinstance(cost, Cost):
            raise BudgetError(f"charge needs a Cost(epsilon=..., delta=..., rho=...); got {cost!r}.")
        if self._notion == Notion.PURE:
            if cost.delta > 0 or cost.rho > 0:
                raise BudgetError("a pure-DP accountant accepts only epsilon costs; this cost has "
                                  "delta or rho > 0. Use notion approx or zcdp.")
            return cost, ""
        if self._notion == Notion.APPROX:
            if cost.rho > 0:
                raise BudgetError("an (epsilon, delta) accountant cannot convert a rho (zCDP) cost; "
                                  "use notion zcdp or a pure/approximate mechanism.")
            return cost, ""
        if cost.epsilon > 0 and cost.rho > 0:
            raise BudgetError("a cost has either epsilon (pure or approximate DP) or rho (zCDP), not "
                              "both; charge them as two costs.")
        if cost.epsilon > 0:
            rho = ceil_float(Fraction(cost.epsilon) ** 2 / 2)
            return (Cost(rho=rho, delta=cost.delta),
                    f"charged as rho = epsilon^2/2 = {rho!r} from epsilon = {cost.epsilon!r} "
                    "(Bun & Steinke 2016)")
        return cost, ""

    def _approx_options(self, totals: _Totals) -> list[tuple[Fraction, Fraction]]:
        """The (ε, δ) guarantees that hold for ``totals`` under approximate DP.

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
        if self._composition != "advanced":
            return [(totals.epsilon, totals.delta)]
        slack = Fraction(self._delta_slack)
        options = [(totals.epsilon, totals.delta + slack)]
        if totals.epsilon > 0 and totals.epsilon_expm1 is not None:
            log_term = Fraction(2 * round_up(-math.log(self._delta_slack)))
            root = round_up(math.sqrt(ceil_float(log_term * totals.epsilon_squared)))
            advanced = Fraction(root) + totals.epsilon_expm1
            options.append((advanced, totals.delta + slack))
        return options

    def _fitting_options(self, totals: _Totals) -> list[tuple[Fraction, Fraction]]:
        """The (ε, δ) guarantees of ``totals`` that are within the budget (pure and approx)."""
        budget = (Fraction(self._budget.epsilon), Fraction(self._budget.delta))
        return [(eps, delta) for eps, delta in self._approx_options(totals)
                if eps <= budget[0] and delta <= budget[1]]

    def _fits(self, totals: _Totals) -> bool:
        if self._notion == Notion.ZCDP:
            return totals.rho <= Fraction(self._rho_budget) and totals.delta <= Fraction(self._delta_reserve)
        return bool(self._fitting_options(totals))

    def charge(self, cost: Cost, *, mechanism: str, query: str, sensitivity: float, noise_scale: float,
               note: str = "") -> LedgerEntry:
        """Record ``cost`` and return its ledger entry, or raise ``BudgetExhaustedError`` (state
        unchanged) if it does not fit what is left. Call it *before* drawing any noise."""
        recorded, conversion = self._normalise(cost)
        sensitivity = non_negative("sensitivity", sensitivity)
        noise_scale = non_negative("noise_scale", noise_scale)
        if not isinstance(mechanism, str) or not mechanism:
            raise BudgetError(f"charge needs a mechanism name; got {mechanism!r}.")
        after = self._totals.plus(recorded)
        if not self._fits(after):
            raise BudgetExhaustedError(
                f"the query '{query}' ({mechanism}) asks for {self._describe(recorded)} but only "
                f"{self._describe(self.remaining())} is left; lower the number of queries or raise "
                "the budget."
            )
        entry = LedgerEntry(
            index=len(self._ledger),
            mechanism=mechanism,
            query=str(query),
            sensitivity=sensitivity,
            noise_scale=noise_scale,
            cost=recorded,
            note="; ".join(part for part in (str(note), conversion) if part),
        )
        self._totals = after
        self._ledger.append(entry)
        return entry

    def _describe(self, cost: Cost) -> str:
        if self._notion == Notion.PURE:
            return f"epsilon={cost.epsilon!r}"
        if self._notion == Notion.APPROX:
            return f"epsilon={cost.epsilon!r}, delta={cost.delta!r}"
        return f"rho={cost.rho!r}, delta={cost.delta!r} (delta from delta_reserve)"

    # -- reporting ---------------------------------------------------------------------------

    def remaining(self) -> Cost:
        """What can still be charged, rounded down so that charging exactly this always succeeds.

        Pure: ε left. Approx basic: ε and δ left. zCDP: ρ left and δ left in the reserve. Approx
        advanced: the largest single (ε, δ) charge that still fits, with δ all the δ left after the
        slack δ', under the bound used (basic or advanced, whichever leaves more ε).
        """
        totals = self._totals
        budget_eps, budget_delta = Fraction(self._budget.epsilon), Fraction(self._budget.delta)
        if self._notion == Notion.ZCDP:
            return Cost(rho=floor_float(Fraction(self._rho_budget) - totals.rho),
                        delta=floor_float(Fraction(self._delta_reserve) - totals.delta))
        if self._notion == Notion.PURE:
            return Cost(epsilon=floor_float(budget_eps - totals.epsilon))
        candidates = []
        slack = Fraction(self._delta_slack) if self._composition == "advanced" else Fraction(0)
        delta_left = budget_delta - totals.delta - slack
        if totals.epsilon <= budget_eps and delta_left >= 0:
            candidates.append(Cost(epsilon=floor_float(budget_eps - totals.epsilon),
                                   delta=floor_float(delta_left)))
        if self._composition == "advanced" and delta_left >= 0:
            delta = floor_float(delta_left)

            def fits(epsilon: float) -> bool:
                return self._fits(totals.plus(Cost(epsilon=epsilon, delta=delta)))

            if fits(0.0):
                high = max(self._budget.epsilon, 1.0)
                while fits(high):
                    high *= 2.0
                candidates.append(Cost(epsilon=largest_true(fits, 0.0, high), delta=delta))
        return max(candidates, key=lambda c: (c.epsilon, c.delta), default=Cost())

    def spent(self) -> dict[str, Any]:
        """The (ε, δ) guarantee of everything charged so far, plus ρ under zCDP.

        Under zCDP, ε = zcdp_to_approx_epsilon(ρ_spent, δ − delta_reserve) and
        δ = (δ − delta_reserve) + δ spent by approximate mechanisms, when ρ_spent > 0; with no ρ spent
        the guarantee is (0, δ spent). Under approx with advanced composition, the better of the
        basic and advanced bounds that fits the budget. Values are rounded up.
        """
        totals = self._totals
        rho: float | None = None
        if self._notion == Notion.ZCDP:
            rho = ceil_float(totals.rho)
            if totals.rho > 0:
                epsilon = zcdp_to_approx_epsilon(rho, self._conversion_delta)
                delta = ceil_float(Fraction(self._conversion_delta) + totals.delta)
            else:
                epsilon, delta = 0.0, ceil_float(totals.delta)
        else:
            # Every committed state fits at least one bound: a charge that fits none is refused.
            eps_exact, delta_exact = min(self._fitting_options(totals))
            epsilon, delta = ceil_float(eps_exact), ceil_float(delta_exact)
        return {"epsilon": epsilon, "delta": delta, "rho": rho, "notion": self._notion.value,
                "composition": self._composition}

    def budget_dict(self) -> dict[str, Any]:
        """The budget as plain JSON types; ``rho`` is the ρ budget under zCDP, else None."""
        return {
            "epsilon": self._budget.epsilon,
            "delta": self._budget.delta,
            "rho": self._rho_budget if self._notion == Notion.ZCDP else None,
            "notion": self._notion.value,
            "composition": self._composition,
            "delta_reserve": self._delta_reserve,
            "delta_slack": self._delta_slack if self._composition == "advanced" else None,
        }

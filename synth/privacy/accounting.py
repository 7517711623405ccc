"""The privacy accountant and its ledger (how costs compose: ``synth.privacy.composition``; mechanisms'
costs: ``synth.privacy.costs``).

An ``Accountant`` holds one ``Budget`` under one privacy ``Notion`` (pure ε, approximate (ε, δ) with
basic or advanced composition, or approximate ρ-zCDP) and keeps a ledger of every charge. Budget
arithmetic is exact: spent totals are ``fractions.Fraction`` sums of the charged floats, so a budget
split with ``split_budget`` is never refused on its last part, and ``remaining()`` can always be
charged in full. Wherever a real number must be rounded (noise scales, costs, conversions between
notions), it is rounded in the direction that can only overstate the privacy loss.

A ``PartAccountant`` is a share of another accountant's budget (a relational release's root and
child parts): each charge is checked against the share first, then charged on the whole, so the
whole's ledger holds every entry and the parts can never spend more than the whole.

This module must never draw noise, never see data, and never let a charge that does not fit change
its state: a refused charge raises ``BudgetExhaustedError`` and leaves the accountant untouched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from synth.errors import BudgetError, BudgetExhaustedError, DescriptionError
from synth.privacy.budget import Budget, Cost, Notion
from synth.privacy.composition import Totals, composition_rule
from synth.privacy.exact import floor_float, non_negative

__all__ = ["Accountant", "Budget", "Cost", "LedgerEntry", "Notion", "PartAccountant"]


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


class Accountant:
    """Keeps the privacy budget, refuses charges that do not fit, and records the ledger.

    How costs add up is the notion's rule (``synth.privacy.composition``): under pure DP ε adds up;
    under approx ε and δ add up (basic) or compose by the advanced composition theorem, keeping
    ``delta_slack`` aside; under zCDP ρ and δ add up, ε costs are charged as ρ = ε²/2, and δ costs are
    paid from ``delta_reserve`` (the ρ budget converts to (ε, δ − delta_reserve)).
    """

    def __init__(self, budget: Budget, notion: Notion | None = None, composition: str = "basic",
                 delta_reserve: float = 0.0, delta_slack: float | None = None) -> None:
        if not isinstance(budget, Budget):
            raise BudgetError(f"the accountant needs a Budget(epsilon=..., delta=...); got {budget!r}.")
        self._rule = composition_rule(budget, notion, composition, delta_reserve, delta_slack)
        self._totals = Totals()
        self._ledger: list[LedgerEntry] = []

    # -- properties --------------------------------------------------------------------------

    @property
    def budget(self) -> Budget:
        return self._rule.budget

    @property
    def notion(self) -> Notion:
        return self._rule.notion

    @property
    def composition(self) -> str:
        return self._rule.composition

    @property
    def ledger(self) -> tuple[LedgerEntry, ...]:
        return tuple(self._ledger)

    # -- charging ----------------------------------------------------------------------------

    def charge(self, cost: Cost, *, mechanism: str, query: str, sensitivity: float, noise_scale: float,
               note: str = "") -> LedgerEntry:
        """Record ``cost`` and return its ledger entry, or raise ``BudgetExhaustedError`` (state
        unchanged) if it does not fit what is left. Call it *before* drawing any noise."""
        if not isinstance(cost, Cost):
            raise BudgetError(f"charge needs a Cost(epsilon=..., delta=..., rho=...); got {cost!r}.")
        recorded, conversion = self._rule.record(cost)
        sensitivity = non_negative("sensitivity", sensitivity)
        noise_scale = non_negative("noise_scale", noise_scale)
        if not isinstance(mechanism, str) or not mechanism:
            raise BudgetError(f"charge needs a mechanism name; got {mechanism!r}.")
        after = self._totals.plus(recorded)
        if not self._rule.fits(after):
            raise BudgetExhaustedError(
                f"the query '{query}' ({mechanism}) asks for {self._rule.describe(recorded)} but only "
                f"{self._rule.describe(self.remaining())} is left; lower the number of queries or raise "
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

    # -- reporting ---------------------------------------------------------------------------

    def remaining(self) -> Cost:
        """What can still be charged, rounded down so that charging exactly this always succeeds.

        Pure: ε left. Approx basic: ε and δ left. zCDP: ρ left and δ left in the reserve. Approx
        advanced: the largest single (ε, δ) charge that still fits, with δ all the δ left after the
        slack δ', under the bound used (basic or advanced, whichever leaves more ε).
        """
        return self._rule.remaining(self._totals)

    def spent(self) -> dict[str, Any]:
        """The (ε, δ) guarantee of everything charged so far, plus ρ under zCDP.

        Under zCDP, ε = zcdp_to_approx_epsilon(ρ_spent, δ − delta_reserve) and
        δ = (δ − delta_reserve) + δ spent by approximate mechanisms, when ρ_spent > 0; with no ρ spent
        the guarantee is (0, δ spent). Under approx with advanced composition, the better of the
        basic and advanced bounds that fits the budget. Values are rounded up.
        """
        epsilon, delta, rho = self._rule.spent(self._totals)
        return {"epsilon": epsilon, "delta": delta, "rho": rho, "notion": self.notion.value,
                "composition": self.composition}

    def budget_dict(self) -> dict[str, Any]:
        """The budget as plain JSON types; ``rho`` is the ρ budget under zCDP, else None."""
        rule = self._rule
        return {
            "epsilon": rule.budget.epsilon,
            "delta": rule.budget.delta,
            "rho": rule.rho_budget,
            "notion": self.notion.value,
            "composition": self.composition,
            "delta_reserve": rule.delta_reserve,
            "delta_slack": rule.delta_slack,
        }


class PartAccountant(Accountant):
    """A share of ``whole``'s budget: at most ``limit`` of its unit (ρ under zCDP, ε otherwise),
    and never more than the whole has left. A charge is refused, with nothing changed, when it would
    take the part over its limit or the whole over its budget; otherwise it is charged on the whole
    (whose ledger it joins, index and all) and recorded here too. ``spent`` is what the part spent
    on its own under the whole's rule. Only additive rules can be shared: advanced composition is
    refused."""

    def __init__(self, whole: Accountant, limit: float) -> None:  # shares the whole's rule: no super().__init__
        if whole.composition != "basic":
            raise BudgetError("a budget can be shared between parts only under basic composition; "
                              "set composition = \"basic\" in [release].")
        self._whole = whole
        self._rule = whole._rule
        self._limit = Fraction(non_negative("a part's limit", limit))
        self._totals = Totals()
        self._ledger = []

    @property
    def limit(self) -> float:
        """The most this part may spend, in the notion's unit."""
        return float(self._limit)

    def _used(self, totals: Totals) -> Fraction:
        return totals.rho if self.notion is Notion.ZCDP else totals.epsilon

    def charge(self, cost: Cost, *, mechanism: str, query: str, sensitivity: float, noise_scale: float,
               note: str = "") -> LedgerEntry:
        """Check ``cost`` against the part's limit, then charge it on the whole (which may refuse it)."""
        recorded, _ = self._rule.record(cost)
        after = self._totals.plus(recorded)
        if self._used(after) > self._limit:
            raise BudgetExhaustedError(
                f"the query '{query}' ({mechanism}) asks for {self._rule.describe(recorded)} but this part of the "
                f"release has only {self._rule.describe(self.remaining())} left; lower the number of queries or "
                "raise the budget."
            )
        entry = self._whole.charge(cost, mechanism=mechanism, query=query, sensitivity=sensitivity,
                                   noise_scale=noise_scale, note=note)
        self._totals = after
        self._ledger.append(entry)
        return entry

    def remaining(self) -> Cost:
        """The whole's remaining, with its unit lowered to what is left of the part's limit."""
        whole = self._whole.remaining()
        left = floor_float(self._limit - self._used(self._totals))
        if self.notion is Notion.ZCDP:
            return replace(whole, rho=min(whole.rho, left))
        return replace(whole, epsilon=min(whole.epsilon, left))

    def budget_dict(self) -> dict[str, Any]:
        """The whole's budget, and this part's limit in the notion's unit."""
        return {**self._whole.budget_dict(), "part_limit": self.limit,
                "part_unit": "rho" if self.notion is Notion.ZCDP else "epsilon"}

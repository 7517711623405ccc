"""The words of privacy accounting: the ``Notion`` a budget is spent under, the ``Budget`` itself and
the ``Cost`` of one mechanism call. Plain checked values: this module never composes, draws or sees data.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from synth.privacy.exact import non_negative, positive, probability


class Notion(str, Enum):
    """The privacy notion an accountant composes under."""

    PURE = "pure"  # ε-DP, basic composition
    APPROX = "approx"  # (ε, δ)-DP, basic or advanced composition
    ZCDP = "zcdp"  # approximate ρ-zCDP: a ρ part and a δ part, both additive

    def unit_of(self, cost: Cost) -> float:
        """The part of ``cost`` that engines split under this notion: ρ under zCDP, ε otherwise."""
        return cost.rho if self is Notion.ZCDP else cost.epsilon


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

"""The neighbouring relation and the sensitivities that follow from it.

``add-remove`` (the default, unbounded DP): neighbouring tables differ by one row added or
removed, so the row count is protected. ``replace`` (bounded DP): one row is replaced by another,
so the row count is the same for neighbours: it is never measured with noise, but used exactly
(sensitivities, totals) and so **published** with the release.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from synth.errors import ProfileError

RELATIONS = ("add-remove", "replace")


@dataclass(frozen=True)
class Neighbouring:
    """Sensitivities of the queries synth asks, under one neighbouring relation."""

    relation: str = "add-remove"

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ProfileError(
                f"unknown neighbouring relation {self.relation!r}; use one of {list(RELATIONS)} "
                "(add-remove protects the row count, replace treats it as public)."
            )

    @property
    def histogram_l1(self) -> float:
        """L1 sensitivity of a histogram (each row falls in exactly one cell)."""
        return 1.0 if self.relation == "add-remove" else 2.0

    @property
    def histogram_l2(self) -> float:
        """L2 sensitivity of a histogram."""
        return 1.0 if self.relation == "add-remove" else math.sqrt(2.0)

    @property
    def count_is_public(self) -> bool:
        """Under replace-one the row count does not change between neighbours."""
        return self.relation == "replace"

    @property
    def cells_that_appear(self) -> int:
        """How many histogram cells can go from zero to non-zero between neighbours."""
        return 1 if self.relation == "add-remove" else 2

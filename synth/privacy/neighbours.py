"""The neighbouring relation (``Relation``) and the histogram sensitivities that follow from it.

``add-remove`` (the default, unbounded DP): neighbouring tables differ by one row added or
removed, so the row count is protected. ``replace`` (bounded DP): one row is replaced by another,
so the row count is the same for neighbours: it is never measured with noise, but used exactly
(sensitivities, totals) and so **published** with the release.

The selections' scores take their sensitivities from the same relation, beside their proofs
(``synth.privacy.selection_scores``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from synth.errors import ProfileError


class Relation(StrEnum):
    """Which tables are neighbours; the value is how profiles and Descriptions spell it."""

    ADD_REMOVE = "add-remove"  # one row added or removed: the row count is private
    REPLACE = "replace"  # one row replaced by another: the row count is public


RELATIONS = tuple(relation.value for relation in Relation)


@dataclass(frozen=True)
class Neighbouring:
    """Sensitivities of the queries synth asks, under one neighbouring relation (a ``Relation``
    or its spelling)."""

    relation: Relation = Relation.ADD_REMOVE

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ProfileError(
                f"unknown neighbouring relation {self.relation!r}; use one of {list(RELATIONS)} "
                "(add-remove protects the row count, replace treats it as public)."
            )
        object.__setattr__(self, "relation", Relation(self.relation))

    @property
    def histogram_l1(self) -> float:
        """L1 sensitivity of a histogram (each row falls in exactly one cell)."""
        return 1.0 if self.relation is Relation.ADD_REMOVE else 2.0

    @property
    def histogram_l2(self) -> float:
        """L2 sensitivity of a histogram."""
        return 1.0 if self.relation is Relation.ADD_REMOVE else math.sqrt(2.0)

    @property
    def count_is_public(self) -> bool:
        """Under replace-one the row count does not change between neighbours."""
        return self.relation is Relation.REPLACE

    @property
    def cells_that_appear(self) -> int:
        """How many histogram cells can go from zero to non-zero between neighbours."""
        return 1 if self.relation is Relation.ADD_REMOVE else 2

"""The neighbouring relation (``Relation``) and the histogram sensitivities that follow from it.

``add-remove`` (the default, unbounded DP): neighbouring tables differ by one row added or
removed, so the row count is protected. ``replace`` (bounded DP): one row is replaced by another,
so the row count is the same for neighbours: it is never measured with noise, but used exactly
(sensitivities, totals) and so **published** with the release.

The selections' scores take their sensitivities from the same relation, beside their proofs
(``synth.privacy.selection_scores``).

``rows_per_unit`` (``k``, default 1) is a contribution bound: the privacy unit (a person) may own up
to k rows of the table measured, as a parent owns its bounded children in a relational release
(``synth.relational``). Neighbours then differ by one unit added or removed, that is by up to k
rows at once. A histogram moves by at most k in L1: each of the unit's rows falls in one cell and
moves it by one. It moves by at most k in L2 too: with c_j of the unit's rows in cell j (Σ c_j ≤ k),
the change is (Σ c_j²)^½ ≤ Σ c_j ≤ k, reached when all k rows share a cell. Up to k cells can go
from zero to non-zero, each holding up to k rows. Only add/remove is defined for k > 1.
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
    rows_per_unit: int = 1  # contribution bound: rows one privacy unit may own (module docstring)

    def __post_init__(self) -> None:
        k = self.rows_per_unit
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ProfileError(f"a contribution bound must be a whole number of at least 1; got {k!r}.")
        if self.relation not in RELATIONS:
            raise ProfileError(
                f"unknown neighbouring relation {self.relation!r}; use one of {list(RELATIONS)} "
                "(add-remove protects the row count, replace treats it as public)."
            )
        object.__setattr__(self, "relation", Relation(self.relation))
        if k > 1 and self.relation is not Relation.ADD_REMOVE:
            raise ProfileError("a relational release (units of several rows) is defined under the add-remove "
                               "relation only; set neighbouring = \"add-remove\" in [release].")

    @property
    def histogram_l1(self) -> float:
        """L1 sensitivity of a histogram (each row falls in exactly one cell; a unit owns up to
        ``rows_per_unit`` rows)."""
        return float(self.rows_per_unit) if self.relation is Relation.ADD_REMOVE else 2.0

    @property
    def histogram_l2(self) -> float:
        """L2 sensitivity of a histogram (k rows of one unit in one cell: k)."""
        return float(self.rows_per_unit) if self.relation is Relation.ADD_REMOVE else math.sqrt(2.0)

    @property
    def count_is_public(self) -> bool:
        """Under replace-one the row count does not change between neighbours."""
        return self.relation is Relation.REPLACE

    @property
    def cells_that_appear(self) -> int:
        """How many histogram cells can go from zero to non-zero between neighbours."""
        return self.rows_per_unit if self.relation is Relation.ADD_REMOVE else 2

    @property
    def rows_in_new_cell(self) -> int:
        """The most rows a cell that appears between neighbours can hold (1 row, or k of one unit)."""
        return self.rows_per_unit

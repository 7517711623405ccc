"""A curator seen by an engine with part of its budget held back for measurements made after it.

``HeldBack`` wraps a ``Boundary`` (a ``Curator``) and answers every question by asking it, except
``remaining``, which is the curator's remaining budget less ``amount``: an engine spends what it is
told is left, so ``amount`` stays unspent for its caller to spend on the curator itself once the
engine is done (e.g. ``synth.relational.count_share``). Nothing is computed here: every mechanism
is the wrapped curator's, charged there, and its views (``compressed``) hold the same amount back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from synth.columns.domain import Domain
from synth.privacy.boundary import Boundary
from synth.privacy.budget import Notion
from synth.privacy.measurement import Measurement
from synth.privacy.neighbours import Neighbouring


class HeldBack:
    """``curator`` as an engine sees it with ``amount`` (in the notion's unit: ρ under zCDP, else ε)
    of its remaining budget held back."""

    def __init__(self, curator: Boundary, amount: float) -> None:
        if not amount >= 0:
            raise ValueError(f"the budget held back must be at least 0; got {amount}")
        self._curator = curator
        self.amount = float(amount)

    @property
    def domain(self) -> Domain:
        return self._curator.domain

    @property
    def neighbouring(self) -> Neighbouring:
        return self._curator.neighbouring

    @property
    def notion(self) -> Notion:
        return self._curator.notion

    def noise_scale(self, budget: float) -> float:
        return self._curator.noise_scale(budget)

    def expected_absolute_noise(self, budget: float) -> float:
        return self._curator.expected_absolute_noise(budget)

    def remaining(self) -> float:
        """The curator's remaining budget less the amount held back (never below 0)."""
        return max(self._curator.remaining() - self.amount, 0.0)

    def compressed(self, maps: Mapping[str, np.ndarray]) -> HeldBack:
        return HeldBack(self._curator.compressed(maps), self.amount)

    def measure_marginal(self, attrs: Sequence[str], budget: float,
                         coarsening: Mapping[str, np.ndarray] | None = None) -> Measurement:
        return self._curator.measure_marginal(attrs, budget, coarsening)

    def select_marginal(self, candidates: Sequence[tuple[str, ...]], estimates: Sequence[np.ndarray],
                        budget: float, weights: Sequence[float] | None = None,
                        penalties: Sequence[float] | None = None,
                        coarsenings: Sequence[Mapping[str, np.ndarray] | None] | None = None) -> int:
        return self._curator.select_marginal(candidates, estimates, budget, weights, penalties, coarsenings)

    def select_small_database(self, databases: np.ndarray,
                              tables: Sequence[tuple[Sequence[str], Mapping[str, np.ndarray] | None]],
                              budget: float) -> int:
        return self._curator.select_small_database(databases, tables, budget)

    def select_by_dependence(self, pairs: Sequence[tuple[str, Sequence[str]]], budget: float,
                             score: str = "mi", max_rows: int = 10**9,
                             coarsening: Mapping[str, np.ndarray] | None = None) -> int:
        return self._curator.select_by_dependence(pairs, budget, score, max_rows, coarsening)

    def public_count(self) -> int:
        return self._curator.public_count()

    def noisy_count(self, budget: float) -> Measurement:
        return self._curator.noisy_count(budget)

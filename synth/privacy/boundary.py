"""The privacy boundary as engines see it: the public API of ``synth.privacy.curator.Curator``, as a Protocol.

Engines are typed against ``Boundary``, not the concrete Curator: every method here is a charged
DP mechanism or a calibration from public facts (budget, relation, domain). The curator's
docstrings say what each mechanism measures, at what sensitivity, and what it charges. This module
holds no data and no mechanism; it only names what an engine may ask.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from synth.columns.domain import Domain
from synth.privacy import Notion
from synth.privacy.measurement import Measurement
from synth.privacy.neighbours import Neighbouring


class Boundary(Protocol):
    """What an engine may ask of the private table: noisy answers, each charged before its noise."""

    @property
    def domain(self) -> Domain:
        """The columns and their numbers of codes (public)."""

    @property
    def neighbouring(self) -> Neighbouring:
        """The neighbouring relation in force."""

    @property
    def notion(self) -> Notion:
        """The privacy notion in force: engines split ρ under zCDP, ε otherwise."""

    def noise_scale(self, budget: float) -> float:
        """The noise scale per cell of a marginal measured with ``budget``."""

    def expected_absolute_noise(self, budget: float) -> float:
        """The mean absolute noise per cell of a marginal measured with ``budget``."""

    def remaining(self) -> float:
        """What is left of the budget, in the notion's unit (ρ under zCDP, else ε)."""

    def compressed(self, maps: Mapping[str, np.ndarray]) -> Boundary:
        """The same rows and accountant with some columns' codes merged by public ``maps``."""

    def measure_marginal(self, attrs: Sequence[str], budget: float,
                         coarsening: Mapping[str, np.ndarray] | None = None) -> Measurement:
        """The noisy histogram of the columns ``attrs``, spending ``budget``."""

    def select_marginal(self, candidates: Sequence[tuple[str, ...]], estimates: Sequence[np.ndarray],
                        budget: float, weights: Sequence[float] | None = None,
                        penalties: Sequence[float] | None = None,
                        coarsenings: Sequence[Mapping[str, np.ndarray] | None] | None = None) -> int:
        """Index of the candidate marginal an estimate gets most wrong, chosen under DP."""

    def select_small_database(self, databases: np.ndarray,
                              tables: Sequence[tuple[Sequence[str], Mapping[str, np.ndarray] | None]],
                              budget: float) -> int:
        """Index of the small database that best answers the workload, chosen under DP."""

    def select_by_dependence(self, pairs: Sequence[tuple[str, Sequence[str]]], budget: float,
                             score: str = "mi", max_rows: int = 10**9,
                             coarsening: Mapping[str, np.ndarray] | None = None) -> int:
        """Index of the (child, parents) pair whose columns depend most on each other, under DP."""

    def public_count(self) -> int:
        """The number of rows, under the replace-one relation only (public there)."""

    def noisy_count(self, budget: float) -> Measurement:
        """The noisy number of rows, spending ``budget`` (add/remove only)."""

"""The privacy boundary: holds the encoded private rows and answers only through DP mechanisms.

``Curator`` is the only object that sees private codes after encoding. Its public methods are
mechanisms: each computes the exact answer privately, charges the accountant *before* any noise
is drawn (a refused charge draws nothing and changes nothing), draws the noise, appends a ledger
entry, and returns only the noisy answer. Engines talk to a Curator; they never see rows.

``CountRelease`` is the one place where noisy counts are made, shared by the curator and by domain
discovery: discrete Gaussian under zCDP, discrete Laplace under pure or approximate DP.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from synth.errors import EngineError
from synth.measurement import Measurement
from synth.neighbours import Neighbouring
from synth.privacy import (
    Accountant,
    Cost,
    NoiseSource,
    Notion,
    gaussian_cost,
    gaussian_sigma,
    laplace_cost,
    laplace_scale,
)
from synth.schema import Schema


@dataclass(frozen=True)
class NoisyCounts:
    """A noisy count vector with the mechanism and noise scale that produced it."""

    values: np.ndarray
    mechanism: str
    noise_scale: float


class CountRelease:
    """Releases count vectors (histograms) with noise calibrated to a share of the budget."""

    def __init__(self, accountant: Accountant, noise: NoiseSource, neighbouring: Neighbouring) -> None:
        self.accountant = accountant
        self.noise = noise
        self.neighbouring = neighbouring

    @property
    def budget_unit(self) -> str:
        """The unit engines split: ``rho`` under zCDP, ``epsilon`` otherwise."""
        return "rho" if self.accountant.notion == Notion.ZCDP else "epsilon"

    def calibrate(self, budget: float, l1: float, l2: float) -> tuple[str, float, Cost]:
        """Mechanism name, noise scale and exact cost for spending ``budget`` on one histogram."""
        if not budget > 0:
            raise EngineError(f"a measurement was given a budget of {budget}; it must be positive.")
        if self.accountant.notion == Notion.ZCDP:
            sigma = gaussian_sigma(l2, budget)
            return "discrete_gaussian", sigma, gaussian_cost(l2, sigma)
        scale = laplace_scale(l1, budget)
        return "discrete_laplace", scale, laplace_cost(l1, scale)

    def release(self, counts: np.ndarray, budget: float, query: str, extra_delta: float = 0.0,
                note: str = "") -> NoisyCounts:
        """Charge, then add noise to ``counts`` (a histogram: one row moves one cell by one).

        ``extra_delta`` is added to the charged δ by mechanisms that also reveal which cells are
        non-empty (thresholded histograms).
        """
        l1, l2 = self.neighbouring.histogram_l1, self.neighbouring.histogram_l2
        mechanism, scale, cost = self.calibrate(budget, l1, l2)
        if extra_delta:
            cost = Cost(epsilon=cost.epsilon, delta=cost.delta + extra_delta, rho=cost.rho)
        self.accountant.charge(cost, mechanism=mechanism, query=query,
                               sensitivity=l2 if mechanism == "discrete_gaussian" else l1,
                               noise_scale=scale, note=note)
        exact = np.asarray(counts, dtype=np.int64)
        if mechanism == "discrete_gaussian":
            noisy = self.noise.discrete_gaussian(exact, scale)
        else:
            noisy = self.noise.discrete_laplace(exact, scale)
        return NoisyCounts(np.asarray(noisy, dtype=np.int64), mechanism, scale)


class Curator:
    """Holds encoded private rows; every public method is a charged DP mechanism."""

    def __init__(self, codes: np.ndarray, schema: Schema, counts: CountRelease) -> None:
        if codes.ndim != 2 or codes.shape[1] != len(schema.columns):
            raise ValueError("codes must be a (rows, columns) matrix matching the schema")
        self._codes = codes
        self._counts = counts
        self.schema = schema

    @property
    def accountant(self) -> Accountant:
        return self._counts.accountant

    @property
    def neighbouring(self) -> Neighbouring:
        return self._counts.neighbouring

    @property
    def budget_unit(self) -> str:
        return self._counts.budget_unit

    def remaining(self) -> float:
        """What is left of the budget, in ``budget_unit``, rounded down (safe to spend)."""
        left = self.accountant.remaining()
        return left.rho if self.budget_unit == "rho" else left.epsilon

    def measure_marginal(self, attrs: Sequence[str], budget: float) -> Measurement:
        """The noisy histogram of the columns ``attrs``, spending ``budget``."""
        attrs = tuple(attrs)
        missing = [a for a in attrs if a not in self.schema.names]
        if missing or len(set(attrs)) != len(attrs) or not attrs:
            raise EngineError(
                f"cannot measure the marginal {list(attrs)}: columns must be distinct names of the "
                f"domain ({list(self.schema.names)})."
            )
        positions = [self.schema.names.index(a) for a in attrs]
        sizes = [self.schema.sizes[i] for i in positions]
        flat = np.ravel_multi_index(tuple(self._codes[:, i] for i in positions), sizes)
        exact = np.bincount(flat, minlength=int(np.prod(sizes)))
        released = self._counts.release(exact, budget, query=f"marginal({', '.join(attrs)})")
        return Measurement(attrs, released.values.astype(float), released.mechanism, released.noise_scale)

    def noisy_count(self, budget: float) -> Measurement:
        """The noisy number of rows (the empty marginal), spending ``budget``.

        Under the replace-one relation the count is public by definition and is not measured;
        asking for it is an engine bug.
        """
        if self.neighbouring.count_is_public:
            raise EngineError("under the replace-one relation the row count is not measured")
        released = self._counts.release(np.array([self._codes.shape[0]]), budget, query="count(*)")
        return Measurement((), released.values.astype(float), released.mechanism, released.noise_scale)

"""The privacy boundary: holds the encoded private rows and answers only through DP mechanisms.

``Curator`` is the only object that sees private codes after encoding. Its public methods are
mechanisms: each computes the exact answer privately, charges the accountant *before* any noise
is drawn (a refused charge draws nothing and changes nothing), draws the noise, appends a ledger
entry, and returns only the noisy answer. Engines talk to a Curator; they never see rows.

``CountRelease`` is the one place where noisy counts are made, shared by the curator and by domain
discovery: discrete Gaussian under zCDP, discrete Laplace under pure or approximate DP.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from synth.errors import EngineError
from synth.measurement import MECHANISM_STD, Measurement
from synth.neighbours import Neighbouring
from synth.model.domain import Domain
from synth.privacy import (
    Accountant,
    Cost,
    NoiseSource,
    Notion,
    exponential_cost,
    exponential_scale,
    gaussian_cost,
    gaussian_sigma,
    laplace_cost,
    laplace_scale,
)


@dataclass(frozen=True)
class NoisyCounts:
    """A noisy count vector with the mechanism and noise scale that produced it."""

    values: np.ndarray
    mechanism: str
    noise_scale: float

    @property
    def std(self) -> float:
        """Standard deviation of the noise added to each count."""
        return float(MECHANISM_STD[self.mechanism](self.noise_scale))


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
    """Holds encoded private rows; every public method is a charged DP mechanism.

    ``domain`` names the columns of ``codes`` and their numbers of codes. ``compressed`` gives a
    view whose codes are merged by public maps (the same rows, the same accountant).
    """

    ANSWER_CACHE_CELLS = 50_000_000  # exact marginals kept for repeated scoring (4 bytes a cell)

    def __init__(self, codes: np.ndarray, domain: Domain, counts: CountRelease) -> None:
        if codes.ndim != 2 or codes.shape[1] != len(domain.names):
            raise ValueError("codes must be a (rows, columns) matrix matching the domain")
        self._codes = np.asfortranarray(codes)  # columns contiguous: marginals read a few columns
        self._counts = counts
        self._answers: dict[tuple[str, ...], np.ndarray] = {}
        self._cached_cells = 0
        self.domain = domain

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

    def compressed(self, maps: Mapping[str, np.ndarray]) -> "Curator":
        """A curator over the same rows with the codes of some columns merged by public ``maps``.

        ``maps[name][old_code]`` is the new code; new codes must be 0..k-1. The view shares the
        accountant: what it spends is spent.
        """
        codes = self._codes.copy()
        sizes = list(self.domain.sizes)
        for name, mapping in maps.items():
            j = self.domain.names.index(name)
            mapping = np.asarray(mapping, dtype=np.int64)
            if mapping.shape != (sizes[j],) or mapping.min() < 0:
                raise EngineError(f"the compression map of {name!r} must give a code for each of its codes")
            codes[:, j] = mapping[codes[:, j]]
            sizes[j] = int(mapping.max()) + 1
        return Curator(codes, Domain(self.domain.names, tuple(sizes)), self._counts)

    def _check(self, attrs: Sequence[str]) -> tuple[str, ...]:
        attrs = tuple(attrs)
        missing = [a for a in attrs if a not in self.domain.names]
        if missing or len(set(attrs)) != len(attrs) or not attrs:
            raise EngineError(
                f"cannot use the marginal {list(attrs)}: columns must be distinct names of the "
                f"domain ({list(self.domain.names)})."
            )
        return attrs

    def _exact(self, attrs: tuple[str, ...]) -> np.ndarray:
        """The exact histogram over ``attrs`` (private: never returned to a caller)."""
        cached = self._answers.get(attrs)
        if cached is not None:
            return cached
        positions = [self.domain.names.index(a) for a in attrs]
        sizes = [self.domain.sizes[i] for i in positions]
        flat = np.ravel_multi_index(tuple(self._codes[:, i] for i in positions), sizes)
        exact = np.bincount(flat, minlength=int(np.prod(sizes))).astype(np.int32 if len(flat) < 2**31 else np.int64)
        if self._cached_cells + exact.size <= self.ANSWER_CACHE_CELLS:
            self._answers[attrs] = exact
            self._cached_cells += exact.size
        return exact

    def measure_marginal(self, attrs: Sequence[str], budget: float) -> Measurement:
        """The noisy histogram of the columns ``attrs``, spending ``budget``."""
        attrs = self._check(attrs)
        released = self._counts.release(self._exact(attrs), budget, query=f"marginal({', '.join(attrs)})")
        return Measurement(attrs, released.values.astype(float), released.mechanism, released.noise_scale)

    def select_marginal(self, candidates: Sequence[Sequence[str]], estimates: Sequence[np.ndarray],
                        budget: float, weights: Sequence[float] | None = None,
                        penalties: Sequence[float] | None = None) -> int:
        """Index of the candidate marginal an estimate gets most wrong, chosen under DP.

        The score of candidate r is ``weights[r] * (‖x_r − estimates[r]‖₁ − penalties[r])`` where
        x_r is the exact marginal; one row changes ‖x_r − ·‖₁ by at most the histogram L1
        sensitivity, so the scores' sensitivity is that times max |weight|. The choice is made by
        the exponential mechanism (Gumbel report-noisy-max), charged first.
        """
        candidates = [self._check(c) for c in candidates]
        if not candidates or len(estimates) != len(candidates):
            raise EngineError("select_marginal needs one estimate for each of at least one candidate")
        w = np.ones(len(candidates)) if weights is None else np.asarray(weights, dtype=float)
        b = np.zeros(len(candidates)) if penalties is None else np.asarray(penalties, dtype=float)
        scores = np.array([
            w[r] * (np.abs(self._exact(c) - np.ravel(estimates[r])).sum() - b[r])
            for r, c in enumerate(candidates)
        ])
        sensitivity = float(np.max(np.abs(w))) * self.neighbouring.histogram_l1
        notion = self.accountant.notion
        if notion == Notion.ZCDP:
            scale = exponential_scale(sensitivity, rho=budget)
        else:
            scale = exponential_scale(sensitivity, epsilon=budget)
        self.accountant.charge(exponential_cost(sensitivity, scale, notion=notion),
                               mechanism="exponential", sensitivity=sensitivity, noise_scale=scale,
                               query=f"select the worst-estimated of {len(candidates)} marginals")
        return int(self._counts.noise.noisy_max(scores, scale))

    def noisy_count(self, budget: float) -> Measurement:
        """The noisy number of rows (the empty marginal), spending ``budget``.

        Under the replace-one relation the count is public by definition and is not measured;
        asking for it is an engine bug.
        """
        if self.neighbouring.count_is_public:
            raise EngineError("under the replace-one relation the row count is not measured")
        released = self._counts.release(np.array([self._codes.shape[0]]), budget, query="count(*)")
        return Measurement((), released.values.astype(float), released.mechanism, released.noise_scale)

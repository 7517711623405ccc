"""The privacy boundary: holds the encoded private rows and answers only through DP mechanisms.

``Curator`` is the only object that sees private codes after encoding. Its public methods are
mechanisms: each computes the exact answer privately, charges the accountant *before* any noise
is drawn (a refused charge draws nothing and changes nothing), draws the noise, appends a ledger
entry, and returns only the noisy answer. Engines talk to a Curator; they never see rows. (The
one exception, ``public_count``, answers only under the replace-one relation, where the row
count is public by definition.)

Selections are one generic mechanism: report-noisy-max over the scores of a ``Score``
(``synth.privacy.selection_scores``: each score beside its sensitivity and proof), computed from exact
counts the curator hands it, charged first. The public ``select_*`` methods check their
arguments against the public domain and build the score.

``CountRelease`` is the one place where noisy counts are made, shared by the curator and by domain
discovery: the notion's count noise (``synth.privacy.count_noise``: discrete Gaussian under zCDP,
discrete Laplace under pure or approximate DP).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from synth.columns.cells import weighted_bincount
from synth.columns.domain import Domain
from synth.errors import EngineError
from synth.privacy import (
    COUNT_NOISE,
    Accountant,
    Cost,
    CountNoise,
    NoiseSource,
    Notion,
    exponential_cost,
    exponential_scale,
)
from synth.privacy.measurement import Measurement, is_group_map, table_cells
from synth.privacy.neighbours import Neighbouring
from synth.privacy.selection_scores import DEPENDENCE_SCORES, Dependence, MarginalError, Score, SmallDatabaseError


@dataclass(frozen=True)
class NoisyCounts:
    """A noisy count vector with the noise that produced it."""

    values: np.ndarray
    noise: CountNoise

    @property
    def mechanism(self) -> str:
        """The mechanism's name, as the ledger and the Description spell it."""
        return self.noise.name

    @property
    def noise_scale(self) -> float:
        return self.noise.scale

    @property
    def std(self) -> float:
        """Standard deviation of the noise added to each count."""
        return self.noise.std


class CountRelease:
    """Releases count vectors (histograms) with noise calibrated to a share of the budget."""

    def __init__(self, accountant: Accountant, noise: NoiseSource, neighbouring: Neighbouring) -> None:
        self.accountant = accountant
        self.noise = noise
        self.neighbouring = neighbouring

    @property
    def notion(self) -> Notion:
        """The accountant's notion: engines split ρ under zCDP, ε otherwise."""
        return self.accountant.notion

    def calibrate(self, budget: float, l1: float, l2: float) -> CountNoise:
        """The noise (discrete Gaussian under zCDP, discrete Laplace otherwise) that spends
        ``budget`` on one histogram of L1 and L2 sensitivities ``l1``, ``l2``."""
        if not budget > 0:
            raise EngineError(f"a measurement was given a budget of {budget}; it must be positive.")
        return COUNT_NOISE[self.notion].calibrate(budget, l1, l2)

    def budget_for_std(self, std: float) -> float:
        """The budget at which each cell of a histogram gets noise of standard deviation ``std``
        (the inverse of ``calibrate``: σ = std under zCDP, b = std/√2 for the Laplace)."""
        if not std > 0:
            raise EngineError(f"a noise deviation of {std} was asked for; it must be positive.")
        return COUNT_NOISE[self.notion].budget_for_std(std, self.neighbouring.histogram_l1,
                                                       self.neighbouring.histogram_l2)

    def _histogram_noise(self, budget: float) -> CountNoise:
        return self.calibrate(budget, self.neighbouring.histogram_l1, self.neighbouring.histogram_l2)

    def noise_scale(self, budget: float) -> float:
        """The noise scale (Gaussian σ or Laplace b) per cell of a histogram released with ``budget``."""
        return self._histogram_noise(budget).scale

    def expected_absolute_noise(self, budget: float) -> float:
        """The mean absolute noise per cell of a histogram released with ``budget``: √(2/π)·σ for
        the Gaussian, b for the Laplace (the continuous laws' means; the discrete ones' are within
        a few per cent once the scale exceeds 1)."""
        return self._histogram_noise(budget).mean_absolute

    def release(self, counts: np.ndarray, budget: float, query: str, extra_delta: float = 0.0,
                note: str = "") -> NoisyCounts:
        """Charge, then add noise to ``counts`` (a histogram: one row moves one cell by one).

        ``extra_delta`` is added to the charged δ by mechanisms that also reveal which cells are
        non-empty (thresholded histograms).
        """
        noise = self._histogram_noise(budget)
        cost = noise.cost
        if extra_delta:
            cost = Cost(epsilon=cost.epsilon, delta=cost.delta + extra_delta, rho=cost.rho)
        self.accountant.charge(cost, mechanism=noise.name, query=query, sensitivity=noise.sensitivity,
                               noise_scale=noise.scale, note=note)
        noisy = noise.draw(self.noise, np.asarray(counts, dtype=np.int64))
        return NoisyCounts(np.asarray(noisy, dtype=np.int64), noise)


class Curator:
    """Holds encoded private rows; every public method is a charged DP mechanism.

    ``domain`` names the columns of ``codes`` and their numbers of codes. ``weights`` (from a
    counting backend, ``synth.tables``) makes each row of ``codes`` stand for that many rows:
    distinct code rows with their counts give the same exact answers as the rows themselves.
    ``compressed`` gives a view whose codes are merged by public maps (the same rows, the same
    accountant).
    """

    ANSWER_CACHE_CELLS = 50_000_000  # exact marginals kept for repeated scoring (4 bytes a cell)

    def __init__(self, codes: np.ndarray, domain: Domain, counts: CountRelease,
                 weights: np.ndarray | None = None) -> None:
        if codes.ndim != 2 or codes.shape[1] != len(domain.names):
            raise ValueError("codes must be a (rows, columns) matrix matching the domain")
        if weights is not None and (weights.shape != (codes.shape[0],) or (weights.size and weights.min() < 0)):
            raise ValueError("weights must give a count of at least 0 for each row of codes")
        self._codes = np.asfortranarray(codes)  # columns contiguous: marginals read a few columns
        self._weights = None if weights is None else np.asarray(weights, dtype=np.int64)
        self._rows = codes.shape[0] if self._weights is None else int(self._weights.sum())
        self._counts = counts
        self._answers: dict[tuple[Any, ...], np.ndarray] = {}
        self._cached_cells = 0
        self.domain = domain

    @property
    def accountant(self) -> Accountant:
        return self._counts.accountant

    @property
    def neighbouring(self) -> Neighbouring:
        return self._counts.neighbouring

    @property
    def notion(self) -> Notion:
        return self._counts.notion

    def noise_scale(self, budget: float) -> float:
        """The noise scale per cell of a marginal measured with ``budget`` (public: no data involved)."""
        return self._counts.noise_scale(budget)

    def expected_absolute_noise(self, budget: float) -> float:
        """The mean absolute noise per cell of a marginal measured with ``budget`` (public)."""
        return self._counts.expected_absolute_noise(budget)

    def remaining(self) -> float:
        """What is left of the budget, in the notion's unit (ρ under zCDP, else ε), rounded down
        (safe to spend)."""
        return self.notion.unit_of(self.accountant.remaining())

    def compressed(self, maps: Mapping[str, np.ndarray]) -> Curator:
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
        return Curator(codes, Domain(self.domain.names, tuple(sizes)), self._counts, self._weights)

    def _check(self, attrs: Sequence[str]) -> tuple[str, ...]:
        attrs = tuple(attrs)
        missing = [a for a in attrs if a not in self.domain.names]
        if missing or len(set(attrs)) != len(attrs) or not attrs:
            raise EngineError(
                f"cannot use the marginal {list(attrs)}: columns must be distinct names of the "
                f"domain ({list(self.domain.names)})."
            )
        return attrs

    def _check_coarsening(self, coarsening: Mapping[str, np.ndarray] | None, attrs: Collection[str]) -> dict[str, np.ndarray]:
        """The maps of ``coarsening`` (each for a column in ``attrs``), checked against the domain."""
        maps = {a: np.asarray(m) for a, m in (coarsening or {}).items()}
        for a, mapping in maps.items():
            if a not in attrs or mapping.shape != (self.domain.size((a,)),) or not is_group_map(mapping):
                raise EngineError(
                    f"the coarsening map of {a!r} must belong to a measured column and give a group "
                    "0..k-1 (every group used) for each of its codes."
                )
        return maps

    def _exact(self, attrs: tuple[str, ...], coarsening: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
        """The exact histogram over ``attrs``, on the groups of ``coarsening`` for the columns it
        maps (private: never returned to a caller)."""
        maps = coarsening or {}
        key = (attrs, tuple((a, maps[a].tobytes()) for a in attrs if a in maps))
        cached = self._answers.get(key)
        if cached is not None:
            return cached
        flat, sizes = table_cells(self._codes, self.domain, attrs, maps)
        exact = weighted_bincount(flat, self._weights, int(np.prod(sizes)))
        exact = exact.astype(np.int32 if self._rows < 2**31 else np.int64)
        if self._cached_cells + exact.size <= self.ANSWER_CACHE_CELLS:
            self._answers[key] = exact
            self._cached_cells += exact.size
        return exact

    def measure_marginal(self, attrs: Sequence[str], budget: float,
                         coarsening: Mapping[str, np.ndarray] | None = None, *, note: str = "") -> Measurement:
        """The noisy histogram of the columns ``attrs``, spending ``budget``.

        ``coarsening[a][code]`` (public maps, for some of ``attrs``) measures column a on groups
        of its codes; the Measurement records the maps. ``note`` goes to the ledger entry (public:
        why the caller measured it).
        """
        attrs = self._check(attrs)
        maps = self._check_coarsening(coarsening, attrs)
        coarse = "".join(f", {a} in {int(m.max()) + 1} groups" for a, m in maps.items())
        released = self._counts.release(self._exact(attrs, maps), budget,
                                        query=f"marginal({', '.join(attrs)}{coarse})", note=note)
        return Measurement(attrs, released.values.astype(float), released.mechanism, released.noise_scale,
                           coarsening=maps)

    def _select(self, score: Score, budget: float) -> int:
        """The exponential mechanism on the scores of ``score`` as Gumbel report-noisy-max,
        spending ``budget``: the sensitivity first (it may refuse), then the scores, charged, then
        drawn."""
        sensitivity = score.sensitivity(self.neighbouring, self._rows)
        scores = score.values(self._exact, self._rows)
        notion = self.accountant.notion
        if notion == Notion.ZCDP:
            scale = exponential_scale(sensitivity, rho=budget)
        else:
            scale = exponential_scale(sensitivity, epsilon=budget)
        self.accountant.charge(exponential_cost(sensitivity, scale, notion=notion), mechanism="exponential",
                               sensitivity=sensitivity, noise_scale=scale, query=score.query)
        return int(self._counts.noise.noisy_max(scores, scale))

    def select_marginal(self, candidates: Sequence[tuple[str, ...]], estimates: Sequence[np.ndarray],
                        budget: float, weights: Sequence[float] | None = None,
                        penalties: Sequence[float] | None = None,
                        coarsenings: Sequence[Mapping[str, np.ndarray] | None] | None = None) -> int:
        """Index of the candidate marginal an estimate gets most wrong, chosen under DP.

        The score of candidate r is ``weights[r] * (‖x_r − estimates[r]‖₁ − penalties[r])`` where
        x_r is the exact marginal, on the groups of ``coarsenings[r]`` for the columns it maps (as
        in ``measure_marginal``); its sensitivity is the histogram L1 sensitivity times
        max |weight| (``MarginalError``). The choice is made by the exponential mechanism (Gumbel
        report-noisy-max), charged first.
        """
        candidates = [self._check(c) for c in candidates]
        if not candidates or len(estimates) != len(candidates):
            raise EngineError("select_marginal needs one estimate for each of at least one candidate")
        maps = [self._check_coarsening(m, c) for c, m in zip(candidates, coarsenings or [None] * len(candidates),
                                                               strict=True)]
        w = np.ones(len(candidates)) if weights is None else np.asarray(weights, dtype=float)
        b = np.zeros(len(candidates)) if penalties is None else np.asarray(penalties, dtype=float)
        return self._select(MarginalError(candidates, estimates, w, b, maps), budget)

    def select_small_database(self, databases: np.ndarray,
                              tables: Sequence[tuple[Sequence[str], Mapping[str, np.ndarray] | None]],
                              budget: float) -> int:
        """Index of the small database that best answers the workload, chosen under DP (SmallDB).

        ``databases`` is an (N, m) matrix: each row is a multiset of m cells of the full domain
        (C-order indices over every column of ``domain``), public (enumerated from the domain).
        ``tables`` are the workload's tables (columns, and groups of codes as in
        ``measure_marginal``); each cell of each table is a counting query q. The score of a
        candidate is minus its largest error, in rows, scaled to the table's row count
        (``SmallDatabaseError``: sensitivity 1 under both relations). The candidate is drawn by
        the exponential mechanism (Gumbel report-noisy-max: P(y) ∝ exp(u(x, y)/β), u the score),
        charged first.
        """
        databases = np.asarray(databases)
        cells = self.domain.size()
        if (databases.ndim != 2 or databases.shape[0] == 0 or databases.shape[1] == 0
                or databases.dtype.kind not in "iu" or databases.min() < 0 or databases.max() >= cells):
            raise EngineError("select_small_database needs an (N, m) matrix of cell indices of the domain, N, m ≥ 1")
        if not tables:
            raise EngineError("select_small_database needs at least one workload table")
        checked = []
        for attrs, coarsening in tables:
            columns = self._check(attrs)
            checked.append((columns, self._check_coarsening(coarsening, columns)))
        return self._select(SmallDatabaseError(databases, checked, self.domain), budget)

    def select_by_dependence(self, pairs: Sequence[tuple[str, Sequence[str]]], budget: float,
                             score: str = "mi", max_rows: int = 10**9,
                             coarsening: Mapping[str, np.ndarray] | None = None) -> int:
        """Index of the (child, parents) pair whose columns depend most on each other, under DP.

        ``score`` is ``"mi"`` (n·I(child; parents), nats) or ``"r"`` (n·R, the L1 distance from
        independence), from exact counts, parents on the groups of ``coarsening`` where it maps
        them; the exponential mechanism (Gumbel report-noisy-max) picks one, charged first.
        Sensitivities (``synth.privacy.selection_scores``): for ``mi`` log(max_rows + 1) + 1 + L under
        add/remove (L the largest log min(|child|, |parents|): public), the scores of a table of
        more than ``max_rows`` rows being scaled to ``max_rows`` rows (nothing reads the row count
        to decide), and 2 (log(n + 1) + 1) under replace-one (scaled alike); for ``r`` 2 under add/remove and
        3 + 2/n under replace-one. When the choice cannot depend on the data (one pair, or no
        pair with parents: every score is 0), nothing is charged and the pair is drawn uniformly
        (from the noise source: public randomness).
        """
        if score not in DEPENDENCE_SCORES:
            raise EngineError(f"unknown dependence score {score!r}; choose one of {', '.join(DEPENDENCE_SCORES)}.")
        if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
            raise EngineError(f"max_rows must be a whole number of at least 1; got {max_rows!r}.")
        checked = [(self._check((child, *parents)), tuple(parents)) for child, parents in pairs]
        if not checked:
            raise EngineError("select_by_dependence needs at least one (child, parents) pair")
        if len(checked) == 1:
            return 0
        if not any(parents for _, parents in checked):
            return int(self._counts.noise.noisy_max(np.zeros(len(checked)), 1.0))
        used = {p for _, parents in checked for p in parents}
        maps = self._check_coarsening({p: m for p, m in (coarsening or {}).items() if p in used}, used)
        return self._select(Dependence(score, [attrs for attrs, _ in checked], maps, max_rows, self.domain), budget)

    def public_count(self) -> int:
        """The number of rows, public by definition under the replace-one relation only.

        Under add/remove the row count is private: use ``noisy_count``.
        """
        if not self.neighbouring.count_is_public:
            raise EngineError("under the add/remove relation the row count is private; use noisy_count")
        return self._rows

    def noisy_count(self, budget: float) -> Measurement:
        """The noisy number of rows (the empty marginal), spending ``budget``.

        Under the replace-one relation the count is public by definition and is not measured;
        asking for it is an engine bug.
        """
        if self.neighbouring.count_is_public:
            raise EngineError("under the replace-one relation the row count is not measured")
        released = self._counts.release(np.array([self._rows]), budget, query="count(*)")
        return Measurement((), released.values.astype(float), released.mechanism, released.noise_scale)

"""Explicit histograms over the whole domain: MWEM's multiplicative-weights estimate and SmallDB's
small database, as models that give marginals and sample rows.

``HistogramModel`` holds one number per cell of the full domain (counts summing to ``total``).
``MultiplicativeWeights`` is the estimate of MWEM (Hardt, Ligett & McSherry, NeurIPS 2012) as a
pure function of noisy measurements: it starts uniform, and each measurement of a (possibly
grouped) marginal with noisy table y reweights every cell x by

    A(x) ← A(x) · exp(q(x) · (y_q − q(A)) / (2 n))

for each cell q of the measured table (q(x) = 1 for the cells in q), then rescales A to n rows.
With the paper's improvements: after each new measurement, ``passes`` sweeps of this update over
every measurement so far (oldest first), and the released estimate is the average of the
estimates after each round (or, on request, the last estimate: on our tests far more accurate
at large ε, as early rounds' estimates weigh on the average). The engine and the generator both build it with this class, so
``synth generate`` reproduces the engine's estimate exactly from the Description.

Post-processing only: this module never sees private rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from synth.columns.domain import Domain
from synth.model.factor import align
from synth.model.graphical import marginalise
from synth.model.interface import Evidence, check_evidence, conditioned_total
from synth.model.sampling import DEFAULT_DRAWS, Draws, draw
from synth.privacy.measurement import Measurement, group_table, spread_groups


class HistogramModel:
    """Counts over every cell of ``domain`` (an array of shape ``domain.sizes``)."""

    def __init__(self, domain: Domain, counts: np.ndarray) -> None:
        counts = np.asarray(counts, dtype=float)
        if counts.shape != domain.sizes or not np.all(counts >= 0) or not counts.sum() > 0:
            raise ValueError(f"a histogram over {domain.names} needs non-negative counts of shape "
                             f"{domain.sizes} with a positive sum")
        self.domain = domain
        self.counts = counts
        self.total = float(counts.sum())

    def marginal(self, attrs: Sequence[str]) -> np.ndarray:
        """The marginal over ``attrs`` (counts summing to ``total``), axes in the order given."""
        return marginalise(self.counts, self.domain.names, tuple(attrs))

    def given(self, evidence: Evidence) -> HistogramModel:
        """The histogram conditioned on ``evidence``: every cell times its codes' weights."""
        check_evidence(self.domain, evidence)
        counts = self.counts.copy()
        for name, weights in evidence.items():
            counts *= align(np.asarray(weights, dtype=float), (name,), self.domain.names)
        conditioned_total(self.total, float(counts.sum()) / self.total)  # refuses an impossible condition
        return HistogramModel(self.domain, counts)

    def sample(self, n: int, rng: np.random.Generator, sampling: Draws = DEFAULT_DRAWS) -> np.ndarray:
        """``n`` rows of codes drawn from the normalised histogram under ``sampling``
        (``synth.model.sampling``: rounded, every cell within 1 of its share of ``n``), shape (n, columns)."""
        cells = draw(n, np.ravel(self.counts), rng, sampling)
        return np.column_stack(np.unravel_index(cells, self.domain.sizes)).astype(np.int64).reshape(n, -1)


def database_model(domain: Domain, rows: np.ndarray, total: float) -> HistogramModel:
    """The histogram of a small database (``rows``: codes, one row each), scaled to ``total`` rows:
    sampling from it resamples the database's rows."""
    cells = np.ravel_multi_index(tuple(np.asarray(rows, dtype=np.int64).T), domain.sizes)
    counts = np.bincount(cells, minlength=domain.size()).astype(float)
    return HistogramModel(domain, counts.reshape(domain.sizes) * (total / len(cells)))


class MultiplicativeWeights:
    """MWEM's estimate, built from measurements one round at a time (see the module docstring)."""

    def __init__(self, domain: Domain, total: float, passes: int) -> None:
        if not (np.isfinite(total) and total > 0) or passes < 1:
            raise ValueError("multiplicative weights need a positive total and at least one pass")
        self.domain, self.total, self.passes = domain, float(total), passes
        self.current = np.full(domain.sizes, self.total / domain.size())
        self._sum = np.zeros(domain.sizes)
        self._measured: list[Measurement] = []

    @property
    def rounds(self) -> int:
        return len(self._measured)

    def marginal(self, attrs: Sequence[str]) -> np.ndarray:
        """The current estimate's marginal over ``attrs`` (axes in the order given)."""
        return marginalise(self.current, self.domain.names, tuple(attrs))

    def add(self, measurement: Measurement) -> None:
        """One round: take in a new measurement, sweep the update over all so far, and average."""
        if not measurement.attrs or measurement.weights is not None:
            raise ValueError("multiplicative weights take measurements of marginals without weights")
        self._measured.append(measurement)
        for _ in range(self.passes):
            for past in self._measured:
                self._update(past)
        self._sum += self.current

    def _update(self, m: Measurement) -> None:
        maps = [m.coarsening.get(a) for a in m.attrs]
        estimate = group_table(self.marginal(m.attrs), maps)
        factor = np.exp((m.values.reshape(estimate.shape) - estimate) / (2 * self.total))
        self.current *= align(spread_groups(factor, maps), m.attrs, self.domain.names)
        self.current *= self.total / self.current.sum()

    def estimate(self, average: bool) -> HistogramModel:
        """The average of the estimates after each round (the paper's output), or the last one."""
        if not self._measured:
            raise ValueError("no round was run: no estimate to release")
        return HistogramModel(self.domain, self._sum / self.rounds if average else self.current.copy())


def replay_multiplicative_weights(domain: Domain, measurements: Sequence[Measurement], total: float,
                                  passes: int, average: bool) -> HistogramModel:
    """MWEM's released estimate from its measurements, in the order they were made (the row count,
    a measurement over no columns, is skipped: ``total`` says it)."""
    weights = MultiplicativeWeights(domain, total, passes)
    for m in measurements:
        if m.attrs:
            weights.add(m)
    return weights.estimate(average)

"""Post-processing of noisy counts: the total row count and non-negative, normalised marginals.

Only public inputs (measurements from a Description) come here. The total is estimated from all
measurements together, never taken from the data: each marginal's sum is an unbiased estimate of
the row count with variance (cells × noise variance), and the noisy count's own variance is its
noise variance; they are combined by inverse-variance weighting. A measurement with per-cell
weights measures ``weights * counts``, so its values are divided by the weights first.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from synth.privacy.measurement import Measurement


def estimate_total(measurements: Iterable[Measurement]) -> float:
    """Inverse-variance weighted estimate of the number of rows (at least 1)."""
    weights, estimates = [], []
    for m in measurements:
        cell_scale = np.ones(m.values.size) if m.weights is None else 1.0 / m.weights
        variance = float(np.sum(cell_scale**2)) * m.std**2  # cells re-expressed by weights count in full
        weights.append(1.0 / variance)
        estimates.append(float(np.sum(m.values * cell_scale)))
    if not weights:
        raise ValueError("no measurements to estimate the total from")
    total = float(np.dot(weights, estimates) / np.sum(weights))
    return max(total, 1.0)


def project_to_simplex(values: np.ndarray, total: float = 1.0) -> np.ndarray:
    """Euclidean projection of ``values`` onto {x ≥ 0, sum(x) = total}.

    This is the least-squares non-negative fit of noisy counts with a known total; unlike
    clamping negatives to zero and renormalising, it does not inflate empty cells.
    """
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        raise ValueError("cannot project an empty vector")
    u = np.sort(v)[::-1]
    cumulative = np.cumsum(u) - total
    ranks = np.arange(1, v.size + 1)
    last = np.nonzero(u - cumulative / ranks > 0)[0][-1]
    threshold = cumulative[last] / (last + 1)
    return np.maximum(v - threshold, 0.0)


def combine_measurements(measurements: Iterable[Measurement]) -> tuple[np.ndarray, float]:
    """Inverse-variance average of several noisy measurements of the same marginal, and its std."""
    items = list(measurements)
    weights = np.array([1.0 / m.std**2 for m in items])
    stacked = np.stack([m.values for m in items])
    combined = (weights[:, None] * stacked).sum(axis=0) / weights.sum()
    return combined, float(1.0 / np.sqrt(weights.sum()))

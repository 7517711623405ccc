"""Fidelity metrics: total-variation distance of k-way marginals, Kolmogorov–Smirnov statistics.

Marginal inputs are code matrices of the original and the synthetic table under one schema. These metrics
read the original data: their results are NOT differentially private and are for the data owner.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np


def marginal(codes: np.ndarray, sizes: Sequence[int], positions: Sequence[int]) -> np.ndarray:
    """Normalised histogram of the columns at ``positions`` (flattened, C order)."""
    dims = [sizes[p] for p in positions]
    flat = np.ravel_multi_index(tuple(codes[:, p] for p in positions), dims)
    counts = np.bincount(flat, minlength=int(np.prod(dims))).astype(float)
    return counts / max(counts.sum(), 1.0)


def marginal_tvd(original: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int],
                 positions: Sequence[int]) -> float:
    """Total-variation distance (half the L1 distance) between the two normalised marginals."""
    return 0.5 * float(np.abs(marginal(original, sizes, positions) - marginal(synthetic, sizes, positions)).sum())


def kway_tvds(original: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int], k: int) -> np.ndarray:
    """TVD of every k-way marginal, in itertools.combinations order."""
    return np.array([
        marginal_tvd(original, synthetic, sizes, positions)
        for positions in itertools.combinations(range(len(sizes)), k)
    ])


def ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample Kolmogorov–Smirnov statistic: the largest gap between the empirical CDFs."""
    a, b = np.sort(a), np.sort(b)
    points = np.concatenate([a, b])
    gap = np.searchsorted(a, points, side="right") / a.size - np.searchsorted(b, points, side="right") / b.size
    return float(np.abs(gap).max())

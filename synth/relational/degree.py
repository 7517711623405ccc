"""Choosing a child table's ``max_children`` under DP, when the profile says ``max_children = "dp"``.

The number of children per parent (among parents with at least one) is counted in public buckets
(1, 2, 3, 4, 5-6, 7-8, 9-12, ..., 65 and more: ``EDGES``) and released as a noisy histogram, charged
on the child table's share of the budget. Each person is one parent, in one bucket, so one unit added
or removed moves one cell by one: sensitivity 1. The bound is the top of the bucket where the noisy
counts (negatives read as 0) reach ``QUANTILE`` of their total: post-processing of the release.
Buckets keep the noise of empty tail cells from pushing the quantile up. Nothing is read here but the
per-parent counts handed in; the histogram leaves only through ``CountRelease``.
"""

from __future__ import annotations

import numpy as np

from synth.privacy.curator import CountRelease

EDGES = (1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 101)  # bucket i holds edges[i] .. edges[i+1] - 1
QUANTILE = 0.95  # share of parents (with children) that keep all of theirs, on the noisy counts
SHARE = 0.05  # of a child table's part


def dp_bound(degrees: np.ndarray, counts: CountRelease, budget: float, child: str, root: str) -> int:
    """``max_children`` for ``child``: the noisy ``QUANTILE`` of ``degrees`` (each root row's number of
    ``child`` rows, capped at the last edge), from a histogram released with ``budget`` through ``counts``."""
    capped = np.minimum(np.asarray(degrees, dtype=np.int64), EDGES[-1] - 1)
    bucket = np.searchsorted(np.array(EDGES), capped, side="right") - 1
    histogram = np.bincount(bucket[capped >= 1], minlength=len(EDGES) - 1)
    noisy = counts.release(histogram, budget, query=f"histogram of {child} rows per {root} row (buckets "
                           f"{', '.join(map(str, EDGES[:-1]))} and more), to choose max_children")
    mass = np.clip(noisy.values, 0, None).astype(float)
    if not mass.sum() > 0:
        return 1
    reached = int(np.searchsorted(np.cumsum(mass) / mass.sum(), QUANTILE))
    return EDGES[min(reached, len(EDGES) - 2) + 1] - 1

"""Choosing a child table's ``max_children`` and the cap of its parents' counts under DP.

``max_children = "dp"`` in the profile, or no ``max_count`` beside a bound the profile does not give
(a release without a profile), has them read from the data under DP: the number of children per
parent (among parents with at least one) is counted in the public buckets of the count column (1, 2,
3, 4, 5-6, 7-8, 9-12, ..., 10,001 and more: ``COUNT_CUTS``) and released as one noisy histogram,
charged on the child table's share of the budget. Each person is one parent, in one bucket, so one
unit added or removed moves one cell by one: sensitivity 1 (times the parent's rows per unit). The
quantiles are read on the buckets whose noisy count stands ``CLEAR_DEVIATIONS`` noise deviations
clear of 0 (the others read as 0: the long tail of empty buckets up to 10,001 would otherwise add
noise enough to push the quantiles to the last bucket): the bound is the top of the bucket where
they reach ``QUANTILE`` of their total, at most ``MOST_CHILDREN``; the cap, where they reach
``CAP_QUANTILE``. Both are post-processing of the one release.
Nothing is read here but the per-parent counts handed in; the histogram leaves only through
``CountRelease``.
"""

from __future__ import annotations

import numpy as np

from synth.privacy.curator import CountRelease

#: the public buckets of a count of children: bucket i holds COUNT_CUTS[i-1] .. COUNT_CUTS[i] - 1
#: (bucket 0 holds 0), each about 1.5 times the last; the last holds 10,001 and more
COUNT_CUTS = (1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 101, 151, 201, 301, 501, 1001, 2001, 5001, 10001)
QUANTILE = 0.95  # share of parents (with children) that keep all of theirs, on the noisy counts
MOST_CHILDREN = 100  # a chosen max_children is at most this (each kept row costs noise in every child marginal)
CAP_QUANTILE = 0.99  # share of parents (with children) whose count is kept whole, on the noisy counts
CLEAR_DEVIATIONS = 3.0  # the quantiles read only buckets whose noisy count stands this many deviations clear of 0
SHARE = 0.05  # of a child table's part


def dp_choice(degrees: np.ndarray, counts: CountRelease, budget: float, child: str, root: str,
              choosing: str = "max_children and max_count") -> tuple[int, int]:
    """``max_children`` and the count cap for ``child``: the noisy ``QUANTILE`` (at most
    ``MOST_CHILDREN``) and ``CAP_QUANTILE`` (at least the bound) of ``degrees`` (each parent row's
    number of ``child`` rows), from one histogram released with ``budget`` through ``counts``.
    ``choosing``: what the caller will take from it, as the ledger's query states it."""
    degrees = np.asarray(degrees, dtype=np.int64)
    bucket = np.searchsorted(np.array(COUNT_CUTS), degrees, side="right")  # 0 holds no children
    histogram = np.bincount(bucket[degrees >= 1] - 1, minlength=len(COUNT_CUTS))
    noisy = counts.release(histogram, budget, query=f"histogram of {child} rows per {root} row (buckets "
                           f"{', '.join(map(str, COUNT_CUTS))} and more), to choose {choosing}")
    clear = np.where(noisy.values >= CLEAR_DEVIATIONS * noisy.std, noisy.values, 0.0).astype(float)
    if not clear.sum() > 0:  # no bucket stands clear of the noise: nothing to read
        return 1, 1
    share = np.cumsum(clear) / clear.sum()
    bound = min(_top(int(np.searchsorted(share, QUANTILE))), MOST_CHILDREN)
    return bound, max(bound, _top(int(np.searchsorted(share, CAP_QUANTILE))))


def _top(bucket: int) -> int:
    """The largest count in histogram bucket ``bucket`` (bucket i: COUNT_CUTS[i] .. COUNT_CUTS[i+1] - 1);
    the open last bucket counts as its first value."""
    return COUNT_CUTS[bucket + 1] - 1 if bucket + 1 < len(COUNT_CUTS) else COUNT_CUTS[-1]

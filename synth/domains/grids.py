"""The public grids discovery counts a numeric or date column over, and the noise test on them.

Public: nothing here reads data. The coarse grids are fixed (octaves of magnitude for numbers,
calendar years for dates); the fine grid is set by a range already found under DP and by how the
column is written (its decimals, from the kind vote's noisy shape). ``noise_threshold`` is what a
sum of noise draws exceeds with a given small probability, the test every "this bucket holds
mass" decision of ``synth.domains.bounds`` is made with.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from synth.columns.cells import datetime_to_seconds
from synth.columns.kinds import Kind
from synth.privacy.curator import NoisyCounts

FINE_BUCKETS = 256
DAY = 86_400  # seconds
_POSITIVE_EDGES = 2.0 ** np.arange(-10, 51)  # 2^-10 ... 2^50, one bucket per octave
NUMERIC_EDGES = np.concatenate([-_POSITIVE_EDGES[::-1], _POSITIVE_EDGES])
# whole numbers: no octaves between -1 and 1 (they hold none), so 0 is a bucket [0, 1) beside [1, 2)
INTEGER_EDGES = np.concatenate([-_POSITIVE_EDGES[10:][::-1], [0.0], _POSITIVE_EDGES[10:]])
YEAR_EDGES = np.array([datetime_to_seconds(f"{year}-01-01") for year in range(1700, 2301)])


def coarse_grid(kind: Kind) -> np.ndarray:
    """The public coarse grid of a kind: calendar years for dates, octaves for numbers."""
    return {Kind.DATETIME: YEAR_EDGES, Kind.INTEGER: INTEGER_EDGES}.get(kind, NUMERIC_EDGES)


def zero_bucket(kind: Kind) -> int:
    """The coarse bucket holding 0: [-2^-10, 2^-10) for floats, [0, 1) for whole numbers."""
    return int(np.searchsorted(coarse_grid(kind), 0.0, side="right") - 1)


def noise_threshold(alpha: float, count: int, std: float, laplace_scale: float | None = None) -> float:
    """A value that the sum of ``count`` independent noise draws exceeds with probability at most
    ``alpha``: the Gaussian quantile times std·√count for Gaussian noise (zCDP); for discrete
    Laplace noise of scale b (pure DP), whose tails are heavier, its exact tail for one draw and
    for a sum the Chernoff bound min over 0 < λ < 1/b of (count·ln M(λ) − ln α) / λ, M the discrete Laplace's moment generating
    function (1 − p)² / ((1 − p e^λ)(1 − p e^−λ)), p = e^(−1/b). (A Gaussian threshold over the
    coarse grid let pure Laplace noise look like mass in about one histogram in five.)"""
    if laplace_scale is None:
        return NormalDist().inv_cdf(1 - alpha) * std * math.sqrt(count)
    p = math.exp(-1.0 / laplace_scale)
    if count == 1:  # exact: P(X > t) ≤ p^t / (1 + p)
        return math.log(alpha * (1 + p)) / math.log(p)

    def bound(lam: float) -> float:
        log_m = 2 * math.log1p(-p) - math.log1p(-p * math.exp(lam)) - math.log1p(-p * math.exp(-lam))
        return (count * log_m - math.log(alpha)) / lam

    from scipy.optimize import minimize_scalar  # here, not at the top: importing it cost every run 0.25-0.4 s

    best = minimize_scalar(bound, bounds=(1e-6 / laplace_scale, (1 - 1e-6) / laplace_scale), method="bounded")
    return float(best.fun)


def laplace_scale_of(released: NoisyCounts) -> float | None:
    """The scale of a release's noise when it is discrete Laplace (pure DP), else None (Gaussian)."""
    return released.noise_scale if released.mechanism == "discrete_laplace" else None


def lattice_decimals(lower: float, upper: float, kind: Kind, decimals: int | None) -> int | None:
    """``decimals`` when a float column written with that many decimals (the kind vote's, released)
    has at most ``FINE_BUCKETS`` numbers of them in [lower, upper), so that its fine buckets are one
    number each, centred on it; else None. Equal-width buckets narrower than the step leave most
    buckets empty, their noise summed with the few that hold the values: a lab value written as
    0.5, 0.6, ... 2.0 fell in 1 bucket of 17, and the range found around its busiest numbers clipped
    up to a third of them. (Buckets of several numbers each, where there are more, spread a value
    written only as 4.5 over 4.4 and 4.5 as much as equal-width buckets do.)"""
    if kind != Kind.FLOAT or decimals is None or (upper - lower) * 10.0**decimals > FINE_BUCKETS:
        return None
    return decimals


def fine_edges(lower: float, upper: float, kind: Kind, lattice: int | None = None) -> np.ndarray:
    """About ``FINE_BUCKETS`` equal-width buckets over [lower, upper): whole numbers for integers
    (at least 1 wide), whole days from midnight for dates spanning more than ``FINE_BUCKETS`` days
    (whole seconds below that), one bucket per number of ``lattice`` decimals in [lower, upper] for
    a float written with them (``lattice_decimals``), else any width for floats."""
    if lattice is not None:
        step = 10.0**-lattice
        first, last = math.ceil(round(lower / step, 6)), math.floor(round(upper / step, 6))  # its numbers in [lower, upper]
        return np.round((np.arange(first, last + 2) - 0.5) * step, lattice + 1)
    if kind == Kind.FLOAT:
        return np.linspace(lower, upper, FINE_BUCKETS + 1)
    start, stop = math.ceil(lower), math.ceil(upper)
    width = max(1, math.ceil((stop - start) / FINE_BUCKETS))
    if kind == Kind.DATETIME and width >= DAY:
        width = math.ceil(width / DAY) * DAY
        start = math.floor(start / DAY) * DAY
    return np.arange(start, stop + width, width, dtype=float)

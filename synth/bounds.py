"""Bounds and bins of a numeric or datetime column, located under DP in two stages.

Inside the privacy boundary (it reads private values, beside ``discovery``); it releases only
noisy, charged histograms over public grids, and everything it decides is post-processing of
those:

1. **coarse**: a noisy histogram over a fixed public grid (octaves of magnitude for numbers, one
   bucket per calendar year for dates) locates the range: the outermost runs of buckets whose
   noisy count clears a threshold set from the noise alone (``detect_range``), so a lone outlier
   does not move it, then grown over neighbour buckets that show mass next to it (``widen_range``:
   a thin tail beside the bulk is kept);
2. **fine**: a noisy histogram over ``FINE_BUCKETS`` equal-width buckets inside that range (whole
   numbers for integers, whole days for dates) locates the bounds again, finer than an octave or
   a year: a 16-year span gets its 16 years, not 1024–2047. Runs of up to 64 buckets are tested,
   so mass spread thinly is still seen, and a bound moves inward only inside the outermost coarse
   bucket that showed mass and past fine buckets whose noisy mass, together, is not real.

Bins follow the mass: cut points at noisy quantiles of the fine histogram (``quantile_cuts``),
an integer column with at most ``EXACT_INTEGERS`` values keeps one bin per value (ratings, 0/1
flags, months), and a heavy zero gets a bin of its own (a count column that is mostly zeros keeps
its zeros). A float range whose lowest bucket is the zero bucket [-2^-10, 2^-10) (the range did
not grow below it: no noisy mass there) starts at 0, so a non-negative column gains no tiny
negatives. Bounds are only ever placed where a noisy count showed mass: when the coarse stage
finds nothing, the column is *lost* (no bounds are invented); when only the coarse stage does,
its bounds are *rough*.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from scipy.optimize import minimize_scalar

from synth.cells import datetime_to_seconds, seconds_to_iso, weighted_bincount
from synth.column import Column, number_text
from synth.curator import CountRelease, NoisyCounts
from synth.kinds import DomainSource, Kind
from synth.privacy import split_budget

FINE_BUCKETS = 256
COARSE_WINDOWS = (1, 2, 4)  # runs of buckets tested for mass in the coarse histogram
FINE_WINDOWS = (1, 2, 4, 8, 16, 32, 64)  # and in the fine one, where thin mass spreads over many buckets
DISCOVERED_BINS = 32
EXACT_INTEGERS = 32  # integer columns with at most this many values keep one bin per value
COARSE_SHARE = 0.5  # of a column's bounds budget, for the coarse stage (the gate); the fine stage gets the rest
FALSE_ALARM = 0.01  # chance that pure noise makes a histogram look occupied somewhere
DAY = 86_400  # seconds
WIDE_OUTSIDE = 16  # fine buckets outside a detected range from which the mass check is looser
KEEP_ALARM = 0.1  # its chance that noise alone keeps a bound at the coarse edge
MIN_COVERAGE = 0.5  # a range holding less of the column's noisy cell count is lost
HOLD_MARGIN = 3.0  # deviations below its noisy mass at which a fine range must still hold MIN_COVERAGE (the
# range was chosen for its noisy mass, so that mass runs high: at 2, 1 % of noise-dominated runs
# kept a range holding under half of the values)
WIDEN_STEPS = 8  # coarse buckets a detected range may grow by on each side (``widen_range``)
WIDEN_REACH = 4  # coarse buckets next to the range whose mass the widening test sums

_POSITIVE_EDGES = 2.0 ** np.arange(-10, 51)  # 2^-10 ... 2^50, one bucket per octave
NUMERIC_EDGES = np.concatenate([-_POSITIVE_EDGES[::-1], _POSITIVE_EDGES])
YEAR_EDGES = np.array([datetime_to_seconds(f"{year}-01-01") for year in range(1700, 2301)])
_ZERO_BUCKET = int(np.searchsorted(NUMERIC_EDGES, 0.0, side="right") - 1)  # [-2^-10, 2^-10)


@dataclass(frozen=True)
class LocatedBounds:
    """A column's discovered domain (None when lost) and how sure discovery is of it."""

    column: Column | None
    verdict: str  # "located", "rough" or "lost"
    detail: str  # what was found, or what it would take, in words for the console


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

    best = minimize_scalar(bound, bounds=(1e-6 / laplace_scale, (1 - 1e-6) / laplace_scale), method="bounded")
    return float(best.fun)


def laplace_scale_of(released: NoisyCounts) -> float | None:
    """The scale of a release's noise when it is discrete Laplace (pure DP), else None (Gaussian)."""
    return released.noise_scale if released.mechanism == "discrete_laplace" else None


def detect_range(noisy: np.ndarray, std: float, widths: tuple[int, ...] = COARSE_WINDOWS,
                 laplace_scale: float | None = None) -> tuple[int, int] | None:
    """First and last bucket holding mass in a noisy histogram, or None when none clears the noise.

    Windows of ``widths`` adjacent buckets are tested, narrowest first; a window is occupied when
    the noisy sum of its buckets not yet found occupied clears a threshold that pure noise crosses
    with probability at most about ``FALSE_ALARM`` over all windows (``noise_threshold``: Gaussian,
    or discrete Laplace of ``laplace_scale``). Wider windows so find tails spread thinly over several
    buckets, without being triggered by a heavy bucket found already. The range spans every
    occupied bucket. Only noisy values are used.
    """
    widths = tuple(w for w in widths if w <= noisy.size)
    alpha = FALSE_ALARM / (len(widths) * noisy.size)
    found = np.zeros(noisy.size, dtype=bool)
    for w in widths:
        sums = np.convolve(np.where(found, 0.0, noisy), np.ones(w), mode="valid")
        for start in np.nonzero(sums > noise_threshold(alpha, w, std, laplace_scale))[0]:  # buckets start .. start + w - 1
            found[start:start + w] = True
    if not found.any():
        return None
    occupied = np.nonzero(found)[0]
    return int(occupied[0]), int(occupied[-1])


def widen_range(noisy: np.ndarray, std: float, found: tuple[int, int],
                laplace_scale: float | None = None) -> tuple[int, int]:
    """``found`` grown bucket by bucket (at most ``WIDEN_STEPS`` a side) while the buckets next
    to it (the first 1, 2 or 4, up to ``WIDEN_REACH``) show mass (``_shows_mass``, at
    ``FALSE_ALARM``). ``detect_range`` guards against noise anywhere on the grid, so a neighbour
    octave holding a third of a small table's rows can fail it; tested right next to a range
    already found, the same mass clears a test of three sums only. The fine stage may still trim
    a bucket added here when it shows no mass."""
    first, last = found
    for _ in range(WIDEN_STEPS):
        if first > 0 and _shows_mass(noisy[max(first - WIDEN_REACH, 0):first][::-1], std, laplace_scale):
            first -= 1
        else:
            break
    for _ in range(WIDEN_STEPS):
        if last < noisy.size - 1 and _shows_mass(noisy[last + 1:last + 1 + WIDEN_REACH], std, laplace_scale):
            last += 1
        else:
            break
    return first, last


def _histogram(values: np.ndarray, edges: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Exact counts of ``values`` (each ``weights[i]`` times when given) in the buckets
    [edges[j], edges[j + 1]); values outside the buckets are not counted (clipping them into the
    end buckets would show mass that is not there). Each row still moves at most one bucket by one."""
    held = (values >= edges[0]) & (values < edges[-1])
    buckets = np.searchsorted(edges, values[held], side="right") - 1
    return weighted_bincount(buckets, None if weights is None else weights[held], edges.size - 1)


def fine_edges(lower: float, upper: float, kind: Kind) -> np.ndarray:
    """About ``FINE_BUCKETS`` equal-width buckets over [lower, upper): whole numbers for integers
    (at least 1 wide), whole days from midnight for dates spanning more than ``FINE_BUCKETS`` days
    (whole seconds below that), any width for floats."""
    if kind == Kind.FLOAT:
        return np.linspace(lower, upper, FINE_BUCKETS + 1)
    start, stop = math.ceil(lower), math.ceil(upper)
    width = max(1, math.ceil((stop - start) / FINE_BUCKETS))
    if kind == Kind.DATETIME and width >= DAY:
        width = math.ceil(width / DAY) * DAY
        start = math.floor(start / DAY) * DAY
    return np.arange(start, stop + width, width, dtype=float)


def quantile_cuts(noisy: np.ndarray, edges: np.ndarray, bins: int) -> list[float]:
    """Inner bin edges, taken from ``edges``, that split the (clipped) noisy mass into about
    ``bins`` equal parts; a bucket heavier than one part becomes a bin of its own."""
    mass = np.maximum(noisy.astype(float), 0.0)
    total = mass.sum()
    if total <= 0:
        return []
    cumulative = np.cumsum(mass) / total
    cuts = {float(edges[int(np.searchsorted(cumulative, k / bins)) + 1]) for k in range(1, bins)}
    heavy = np.nonzero(mass > total / bins)[0]  # each its own bin
    cuts |= {float(edges[j]) for j in heavy} | {float(edges[j + 1]) for j in heavy}
    return sorted(c for c in cuts if edges[0] < c < edges[-1])


def _bounds_column(name: str, kind: Kind, lower: float, upper: float, cuts: list[float]) -> Column:
    """The discovered column over [lower, upper] with the given inner cuts (whole numbers for
    integers, one bin per value when few), marked DP-estimated."""
    if kind == Kind.INTEGER:
        values = int(upper - lower) + 1
        if values <= EXACT_INTEGERS:
            cuts = [lower + k for k in range(1, values)]
        cuts = sorted({c for c in cuts if lower < c <= upper})
    else:
        cuts = sorted({c for c in cuts if lower < c < upper})
    if not cuts:
        return Column(name=name, kind=kind, lower=lower, upper=upper, bins=1, source=DomainSource.DP_ESTIMATED)
    return Column(name=name, kind=kind, lower=lower, upper=upper, cuts=tuple(cuts), source=DomainSource.DP_ESTIMATED)


def _zero_cuts(kind: Kind, coarse: NoisyCounts, lower: float, upper: float, threshold: float) -> list[float]:
    """Cuts that give zero a bin of its own when the coarse zero bucket is heavy (it holds exactly
    the zeros of an integer column, and the values within 2^-10 of zero of a float one)."""
    if kind == Kind.DATETIME or not lower <= 0.0 <= upper or coarse.values[_ZERO_BUCKET] < threshold:
        return []
    if kind == Kind.INTEGER:
        return [0.0, 1.0]
    return [0.0, float(NUMERIC_EDGES[_ZERO_BUCKET + 1])]


def _shows_mass(outside: np.ndarray, std: float, laplace_scale: float | None = None) -> bool:
    """Whether the buckets just outside a detected range (``outside``, ordered from the range's
    edge outward) hold real mass: the noisy sum of the first k of them clears the noise of that
    sum for some k in 1, 2, 4, ... or all of them (so cutting them off would clip real values).
    Over a wide outside (``WIDE_OUTSIDE`` buckets or more) the test is looser (``KEEP_ALARM``):
    keeping a coarse bound by mistake there only widens the end bin, while clipping a thin tail
    loses real values; over a few buckets (a rating's 6 and 7) a mistake would invent values."""
    spans = sorted({2**i for i in range(int(math.log2(outside.size)) + 1)} | {outside.size}) if outside.size else []
    if not spans:
        return False
    alarm = FALSE_ALARM if outside.size < WIDE_OUTSIDE else KEEP_ALARM
    sums = np.cumsum(outside.astype(float))
    return any(sums[k - 1] > noise_threshold(alarm / len(spans), k, std, laplace_scale) for k in spans)


def _misses_mass(coarse: NoisyCounts, found: tuple[int, int], fine: NoisyCounts, located: tuple[int, int]) -> bool:
    """Whether the fine stage's detected range holds clearly less noisy mass than the coarse
    range it refines (so refining to it would clip real values spread too thinly to detect).
    Asked only when many fine buckets lie outside the detected range: over a few (a rating's 6
    and 7) the buckets are checked one by one, and keeping them would invent values."""
    coarse_part, fine_part = coarse.values[found[0]:found[1] + 1], fine.values[located[0]:located[1] + 1]
    scales = [laplace_scale_of(coarse), laplace_scale_of(fine)]
    if None in scales:  # Gaussian: the difference's deviation
        spread = math.sqrt(coarse_part.size * coarse.std**2 + fine_part.size * fine.std**2)
        threshold = noise_threshold(FALSE_ALARM, 1, spread)
    else:  # Laplace (symmetric): as many draws of the larger scale bound the difference's tail
        threshold = noise_threshold(FALSE_ALARM, coarse_part.size + fine_part.size, 0.0, max(s for s in scales if s))
    return float(coarse_part.sum()) - float(fine_part.sum()) > threshold


def _holds_most(fine: NoisyCounts, located: tuple[int, int], cells: float) -> bool:
    """Whether the fine buckets ``located`` hold ``MIN_COVERAGE`` of the column's ``cells`` even
    ``HOLD_MARGIN`` noise deviations (of their noisy sum) below what they show: a range of many thin buckets
    can look full by noise alone."""
    part = fine.values[located[0]:located[1] + 1].astype(float)
    return float(part.sum()) - HOLD_MARGIN * fine.std * math.sqrt(part.size) >= MIN_COVERAGE * cells


def _integer_range(lower: float, upper: float) -> tuple[float, float]:
    """The whole numbers inside [lower, upper) (at least two of them)."""
    low = float(math.ceil(lower))
    return low, float(max(math.ceil(upper) - 1, low + 1))


def locate_bounds(name: str, values: np.ndarray, kind: Kind, counts: CountRelease, budget: float,
                  cells: float | None = None, weights: np.ndarray | None = None) -> LocatedBounds:
    """Bounds and bins of a numeric or datetime column from ``values`` (its readable cells, as
    floats; datetimes in seconds), spending ``budget`` on two noisy histograms.

    ``cells`` is the kind vote's noisy count of the column's cells, when it was voted: a coarse
    range whose noisy mass holds less than ``MIN_COVERAGE`` of it is lost (most values would be
    clipped into its end bins), and said so; a fine range holding less is not used (the coarse
    bounds stay). ``weights``: the rows each value stands for (distinct values from a backend)."""
    coarse_edges = YEAR_EDGES if kind == Kind.DATETIME else NUMERIC_EDGES
    finite = np.isfinite(values)
    values, weights = values[finite], None if weights is None else weights[finite]
    coarse_budget, fine_budget = split_budget(budget, [COARSE_SHARE, 1 - COARSE_SHARE])
    coarse = counts.release(_histogram(values, coarse_edges, weights), coarse_budget,
                            query=f"bounds({name}): histogram over public buckets")
    coarse_laplace = laplace_scale_of(coarse)
    found = detect_range(coarse.values.astype(float), coarse.std, laplace_scale=coarse_laplace)
    grid = "calendar years" if kind == Kind.DATETIME else "octaves of magnitude"
    if found is None:
        need = noise_threshold(FALSE_ALARM / (len(COARSE_WINDOWS) * coarse.values.size), 1, coarse.std, coarse_laplace)
        return LocatedBounds(None, "lost", f"no range of values stood clear of the noise over {grid}: a range "
                             f"needs roughly {need:.0f} rows at this budget. Give lower and upper in a profile.")
    detected, found = found, widen_range(coarse.values.astype(float), coarse.std, found, coarse_laplace)
    lower, upper = float(coarse_edges[found[0]]), float(coarse_edges[found[1] + 1])
    if kind == Kind.FLOAT and found[0] == _ZERO_BUCKET:
        lower = 0.0  # no noisy mass below the zero bucket: its edge -2^-10 would write tiny negatives
    held = float(np.maximum(coarse.values[found[0]:found[1] + 1], 0).sum())
    if cells is not None and cells > 0 and held < MIN_COVERAGE * cells:
        text = seconds_to_iso if kind == Kind.DATETIME else number_text
        return LocatedBounds(None, "lost", (
            f"the range that stood clear of the noise, [{text(lower)}, {text(upper)}), holds about {held / cells:.0%} "
            f"of its values (noisy); the rest are spread too thinly for this budget. Give lower and upper in a "
            "profile, or spend more (--epsilon, discovery_share)."))
    if kind == Kind.INTEGER:
        lower, upper = _integer_range(lower, upper)
    edges = fine_edges(lower, upper + 1 if kind == Kind.INTEGER else upper, kind)
    fine = counts.release(_histogram(values, edges, weights), fine_budget,
                          query=f"bounds({name}): histogram over {edges.size - 1} buckets inside the range")
    fine_laplace = laplace_scale_of(fine)
    located = detect_range(fine.values.astype(float), fine.std, FINE_WINDOWS, fine_laplace)
    if (located is not None and fine.values.size - (located[1] - located[0] + 1) >= WIDE_OUTSIDE
            and _misses_mass(coarse, found, fine, located)):
        located = None  # the fine range does not hold what the coarse one did: refine nothing
    if located is not None and cells is not None and not _holds_most(fine, located, cells):
        located = None  # refining might keep less than half of the column's values: refine nothing
    # the fine stage only moves a bound inside the outermost coarse bucket that showed mass: a tail
    # too thin for the fine buckets is still in the range (capital gains of 100-99,999 beside zeros)
    first_end, last_start = float(coarse_edges[detected[0] + 1]), float(coarse_edges[detected[1]])
    refined = []
    if located is not None:
        low, high = float(edges[located[0]]), float(edges[located[1] + 1])
        if _shows_mass(fine.values[:located[0]][::-1], fine.std, fine_laplace):  # mass the detection missed: keep the coarse bound
            low = lower
        if _shows_mass(fine.values[located[1] + 1:], fine.std, fine_laplace):
            high = upper + 1 if kind == Kind.INTEGER else upper
        if low < first_end:
            lower = float(math.ceil(low)) if kind == Kind.INTEGER else low
            refined.append("lower")
        if high > last_start:
            upper = float(math.ceil(high) - 1) if kind == Kind.INTEGER else high
            refined.append("upper")
        if kind == Kind.INTEGER:
            upper = max(upper, lower + 1)
    verdict = "located" if refined else "rough"
    detail = (f"{' and '.join(refined)} bound located inside the range" if refined
              else f"bounds located only to the {grid}")
    first, stop = np.searchsorted(edges[:-1], lower, side="left"), np.searchsorted(edges[:-1], upper, side="right")
    window, window_edges = fine.values[first:stop], edges[first:stop + 1]  # the fine buckets starting in [lower, upper]
    cuts = quantile_cuts(window, window_edges, DISCOVERED_BINS) if window.size else []
    if kind != Kind.FLOAT:
        cuts = [float(math.floor(c)) for c in cuts]
    mass = float(np.maximum(window, 0).sum())
    cuts += _zero_cuts(kind, coarse, lower, upper, max(mass / DISCOVERED_BINS, 3 * coarse.std))
    return LocatedBounds(_bounds_column(name, kind, lower, upper, cuts), verdict, detail)


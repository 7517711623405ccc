"""Bounds and bins of a numeric or datetime column, located under DP in two stages.

Inside the privacy boundary (it reads private values, beside ``discovery``); it releases only
noisy, charged histograms over public grids, and everything it decides is post-processing of
those:

1. **coarse**: a noisy histogram over a fixed public grid (octaves of magnitude for numbers, with
   no octaves between -1 and 1 for whole numbers, so 0 sits beside [1, 2); one bucket per
   calendar year for dates) locates the range: the run of buckets with the most noisy mass
   whose windows clear a threshold set from the noise alone (``detect_range``); a run set apart
   from it by empty buckets must clear a far stricter one, so one noisy bucket octaves away does
   not stretch the range. The range then grows over neighbour buckets that show mass
   (``widen_range``), and while it holds clearly fewer values than the kind vote counted
   (``cover_cells``). A column is taken as non-negative unless its negatives clear the strict
   threshold (``_shows_negatives``): a sign is a claim about every value;
2. **fine**: a noisy histogram over ``FINE_BUCKETS`` equal-width buckets inside that range (whole
   numbers for integers, whole days for dates, whole steps of the numbers a float is written with
   when they are few: tenths of a lab value written as 0.8, 1.2) locates the bulk again, finer than an octave or a
   year (a 16-year span gets its 16 years, not 1024-2047). Beside the bulk, a tail is kept as far
   as its summed noisy mass reaches (``_tail_reach``: loosely within the bulk's own width,
   strictly beyond; past an abrupt end, as far as the bulk most likely continues), or by the
   bulk's width when the range holds clearly fewer values than the vote counted
   (``_keep_what_is_missed``). Where the bulk does not end abruptly
   (``_is_abrupt``: a thinning tail, not a year column or a rating), room of ``GUARD`` times the
   bulk's width is kept beyond the last mass seen, as an end bin of its own: at a budget where
   each bucket's noise is a hundred rows, a tail holding 1 % of the values is invisible, and
   cutting it would clip those values. The verdict says when such room was kept. A bound moves
   inward only inside the outermost coarse bucket that showed mass.

Bins follow the mass: cut points at noisy quantiles of the fine buckets that saw mass
(``quantile_cuts``), and at the octaves inside a heavy fine bucket that spans many of them
(``_octave_cuts``: votes 4-131 of a column reaching 30,000); an integer column with at most
``EXACT_INTEGERS`` values keeps one bin per value (ratings, 0/1 flags, months), and a heavy zero
gets a bin of its own (a count column that is mostly zeros keeps its zeros). Bounds are only ever
placed where a noisy count showed mass or beside it: when the coarse stage finds nothing, the
column is *lost* (no bounds are invented); when only the coarse stage does, its bounds are *rough*.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from synth.columns.cells import seconds_to_iso, weighted_bincount
from synth.columns.column import Column, number_text
from synth.columns.kinds import DomainSource, Kind
from synth.domains.grids import (
    coarse_grid,
    fine_edges,
    laplace_scale_of,
    lattice_decimals,
    noise_threshold,
    zero_bucket,
)
from synth.privacy import split_budget
from synth.privacy.curator import CountRelease, NoisyCounts

COARSE_WINDOWS = (1, 2, 4)  # runs of buckets tested for mass in the coarse histogram
FINE_WINDOWS = (1, 2, 4, 8, 16, 32, 64)  # and in the fine one, where thin mass spreads over many buckets
DISCOVERED_BINS = 32
EXACT_INTEGERS = 32  # integer columns with at most this many values keep one bin per value
COARSE_SHARE = 0.5  # of a column's bounds budget, for the coarse stage (the gate); the fine stage gets the rest
FALSE_ALARM = 0.01  # chance that pure noise makes a histogram look occupied somewhere
ISOLATED_ALARM = 1e-5  # ... and occupied somewhere set apart from the bulk
WIDE_OUTSIDE = 16  # fine buckets outside a detected range from which the mass it misses is checked
MIN_COVERAGE = 0.5  # a range holding less of the column's noisy cell count is lost
HOLD_MARGIN = 3.0  # deviations below its noisy mass at which a fine range must still hold MIN_COVERAGE (the
# range was chosen for its noisy mass, so that mass runs high: at 2, 1 % of noise-dominated runs
# kept a range holding under half of the values)
WIDEN_STEPS = 8  # coarse buckets a detected range may grow by on each side (``widen_range``)
WIDEN_REACH = 4  # coarse buckets next to the range whose mass the widening test sums
COVER_MARGIN = 1.5  # deviations by which a range's noisy mass must fall short of the vote's cells to grow
SHORT_MARGIN = 3.0  # ... and to be called rough for it, with the share it holds (a claim, so surer)
TAIL_ALARM = 0.05  # chance that noise alone grows a fine range over empty buckets, within its own width a side
FAR_ALARM = 1e-3  # ... and farther out
EDGE_SHARE = 0.05  # the outermost share of a range's fine buckets, tested for an abrupt end (``_is_abrupt``)
ABRUPT_SHARE = 0.5  # an abrupt end holds at least this share of the range's mean mass per bucket ...
ABRUPT_MARGIN = 3.0  # ... and clears this many deviations of the noise
GUARD = 1.0  # room kept beyond a range's last mass seen, where it thins out, as a share of its bulk's width
GUARD_BUCKETS = 8  # ... when the mass seen spans at least this many fine buckets (fewer: the grid is too coarse to tell)
OCTAVE_SPAN = 3.0  # a heavy fine bucket wider than this many times its smaller end is split by octave (_octave_cuts)

@dataclass(frozen=True)
class LocatedBounds:
    """A column's discovered domain (None when lost) and how sure discovery is of it."""

    column: Column | None
    verdict: str  # "located", "rough" or "lost"
    detail: str  # what was found, or what it would take, in words for the console
    short: float | None = None  # the noisy share of the vote's cells it holds, when clearly short of them


def _falls_short(part: np.ndarray, std: float, cells: float, cells_std: float, margin: float) -> bool:
    """Whether the noisy buckets ``part`` (each of deviation ``std``) hold fewer values than the
    vote's ``cells`` (of deviation ``cells_std``) by more than ``margin`` deviations of the
    difference."""
    return cells - float(part.sum()) > margin * math.sqrt(cells_std**2 + part.size * std**2)


def _short_of(part: np.ndarray, std: float, cells: float | None, cells_std: float) -> float | None:
    """The share of the vote's ``cells`` that the noisy buckets ``part`` hold, when surely short
    of them (by ``SHORT_MARGIN`` deviations of the difference), else None."""
    if cells is None or cells <= 0 or not _falls_short(part, std, cells, cells_std, SHORT_MARGIN):
        return None
    return max(float(part.sum()), 0.0) / cells


def detect_range(noisy: np.ndarray, std: float, widths: tuple[int, ...] = COARSE_WINDOWS,
                 laplace_scale: float | None = None, alarm: float = FALSE_ALARM) -> tuple[int, int] | None:
    """First and last bucket holding mass in a noisy histogram, or None when none clears the noise.

    Windows of ``widths`` adjacent buckets are tested, narrowest first; a window is occupied when
    the noisy sum of its buckets not yet found occupied clears a threshold that pure noise crosses
    with probability at most about ``alarm`` (``FALSE_ALARM`` unless given) over all windows (``noise_threshold``: Gaussian,
    or discrete Laplace of ``laplace_scale``). Wider windows so find tails spread thinly over several
    buckets, without being triggered by a heavy bucket found already. The range spans the run of
    occupied buckets with the most noisy mass and every other run that clears a far stricter
    threshold (``ISOLATED_ALARM``): a run set apart from the bulk by empty buckets is where one
    noisy bucket would otherwise stretch the range by many octaves, one histogram in a hundred.
    Only noisy values are used.
    """
    widths = tuple(w for w in widths if w <= noisy.size)
    alpha = alarm / (len(widths) * noisy.size)
    found = np.zeros(noisy.size, dtype=bool)
    for w in widths:
        sums = np.convolve(np.where(found, 0.0, noisy), np.ones(w), mode="valid")
        for start in np.nonzero(sums > noise_threshold(alpha, w, std, laplace_scale))[0]:  # buckets start .. start + w - 1
            found[start:start + w] = True
    if not found.any():
        return None
    runs = _runs(found)
    bulk = max(runs, key=lambda run: float(noisy[run[0]:run[1] + 1].sum()))
    strict = ISOLATED_ALARM / (len(widths) * noisy.size)
    kept = [run for run in runs if run == bulk or float(noisy[run[0]:run[1] + 1].sum())
            > noise_threshold(strict, run[1] - run[0] + 1, std, laplace_scale)]
    return kept[0][0], kept[-1][1]


def _runs(found: np.ndarray) -> list[tuple[int, int]]:
    """The runs of occupied buckets (first, last), joined across a gap no wider than two buckets or
    the run before it (thin stretches inside a bulk are not gaps)."""
    occupied = np.nonzero(found)[0]
    runs = [[int(occupied[0]), int(occupied[0])]]
    for index in occupied[1:]:
        if index - runs[-1][1] - 1 <= max(2, runs[-1][1] - runs[-1][0] + 1):
            runs[-1][1] = int(index)
        else:
            runs.append([int(index), int(index)])
    return [(first, last) for first, last in runs]


def _shows_negatives(below: np.ndarray, std: float, laplace_scale: float | None = None) -> bool:
    """Whether the coarse buckets below zero hold real mass: ``detect_range`` finds some at the
    strict ``ISOLATED_ALARM``. A sign is a claim about every value, so a bucket of negatives found
    at the usual rate of noise (one histogram in a hundred) beside the zeros of a count column must
    not give it negative values."""
    return below.size > 0 and detect_range(below.astype(float), std, laplace_scale=laplace_scale,
                                           alarm=ISOLATED_ALARM) is not None


def widen_range(noisy: np.ndarray, std: float, found: tuple[int, int],
                laplace_scale: float | None = None, floor: int = 0) -> tuple[int, int]:
    """``found`` grown bucket by bucket (at most ``WIDEN_STEPS`` a side) while the buckets next
    to it (the first 1, 2 or 4, up to ``WIDEN_REACH``) show mass (``_tail_reach``, at
    ``FALSE_ALARM``). ``detect_range`` guards against noise anywhere on the grid, so a neighbour
    octave holding a third of a small table's rows can fail it; tested right next to a range
    already found, the same mass clears a test of three sums only. The fine stage may still trim
    a bucket added here when it shows no mass. It does not grow below bucket ``floor``."""
    first, last = found
    for _ in range(WIDEN_STEPS):
        if first > floor and _tail_reach(noisy[max(first - WIDEN_REACH, floor):first][::-1], std, WIDEN_REACH,
                                     laplace_scale, FALSE_ALARM):
            first -= 1
        else:
            break
    for _ in range(WIDEN_STEPS):
        if last < noisy.size - 1 and _tail_reach(noisy[last + 1:last + 1 + WIDEN_REACH], std, WIDEN_REACH,
                                                 laplace_scale, FALSE_ALARM):
            last += 1
        else:
            break
    return first, last


def cover_cells(noisy: np.ndarray, std: float, found: tuple[int, int], cells: float, cells_std: float,
                floor: int = 0) -> tuple[int, int]:
    """``found`` grown bucket by bucket (at most ``WIDEN_STEPS`` in all) while it holds clearly
    fewer values than the kind vote counted (``cells``, of noise deviation ``cells_std``): what it
    misses exceeds ``COVER_MARGIN`` deviations of the difference. Each step takes the side whose
    next ``WIDEN_REACH`` buckets hold more noisy mass, and stops when neither holds any. A count
    column that is mostly zeros, with a tenth of its values spread over 1-14, so keeps its tail:
    no octave of it clears the noise alone, but the vote says the values are there. It does not
    grow below bucket ``floor``."""
    first, last = found
    for _ in range(WIDEN_STEPS):
        if not _falls_short(noisy[first:last + 1], std, cells, cells_std, COVER_MARGIN):
            break
        below = float(noisy[max(first - WIDEN_REACH, floor):first].sum()) if first > floor else -math.inf
        above = float(noisy[last + 1:last + 1 + WIDEN_REACH].sum()) if last < noisy.size - 1 else -math.inf
        if max(below, above) <= 0:
            break
        first, last = (first - 1, last) if below > above else (first, last + 1)
    return first, last


def bucket_counts(values: np.ndarray, edges: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Exact counts of ``values`` (each ``weights[i]`` times when given) in the buckets
    [edges[j], edges[j + 1]); values outside the buckets are not counted (clipping them into the
    end buckets would show mass that is not there). Each row still moves at most one bucket by one."""
    held = (values >= edges[0]) & (values < edges[-1])
    buckets = np.searchsorted(edges, values[held], side="right") - 1
    return weighted_bincount(buckets, None if weights is None else weights[held], edges.size - 1)


def heavy_buckets(noisy: np.ndarray, bins: int) -> np.ndarray:
    """The buckets of a noisy histogram (clipped at zero) that each hold more than one of ``bins``
    equal parts of its mass; none when it holds no mass."""
    mass = np.maximum(noisy.astype(float), 0.0)
    return np.nonzero(mass > mass.sum() / bins)[0]


def quantile_cuts(noisy: np.ndarray, edges: np.ndarray, bins: int) -> list[float]:
    """Inner bin edges, taken from ``edges``, that split the (clipped) noisy mass into about
    ``bins`` equal parts; a bucket heavier than one part becomes a bin of its own."""
    mass = np.maximum(noisy.astype(float), 0.0)
    total = mass.sum()
    if total <= 0:
        return []
    cumulative = np.cumsum(mass) / total
    cuts = {float(edges[int(np.searchsorted(cumulative, k / bins)) + 1]) for k in range(1, bins)}
    heavy = heavy_buckets(noisy, bins)  # each its own bin
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
    if kind == Kind.DATETIME or not lower <= 0.0 <= upper or coarse.values[zero_bucket(kind)] < threshold:
        return []
    return [0.0, float(coarse_grid(kind)[zero_bucket(kind) + 1])]


def _tail_reach(outside: np.ndarray, std: float, near: int, laplace_scale: float | None = None,
                near_alarm: float = TAIL_ALARM, continues_at: float | None = None) -> int:
    """How many of the buckets just outside a detected range (``outside``, ordered from the range's
    edge outward) a tail of real mass reaches: the largest k among 1, 2, 4, ... and all of them
    whose noisy sum over the first k clears the noise of that sum (0 when none does).

    A tail beside the bulk is expected, and clipping it loses real values, so within ``near``
    buckets (the bulk's own width: the range then at most triples) the test is loose
    (``near_alarm``, ``TAIL_ALARM`` unless given); farther out it is strict (``FAR_ALARM``), so noise
    alone seldom stretches a 16-year range over a whole octave of years.

    Where the range ends abruptly at ``continues_at`` noisy values per bucket, the reach is also at
    least where the bulk most likely ends within ``near``: each bucket beyond the end holds either
    that density or nothing, so an end after k buckets is likelier than an end at the edge by the
    sum over those k of (noisy mass − half the density), and the k that maximises it is taken. Where
    each bucket's noise is as large as its mass (a year of hourly dates at the zero-config budget),
    the last days of the year seldom clear the noise test, yet they continue the bulk."""
    if not outside.size:
        return 0
    spans = sorted({2**i for i in range(int(math.log2(outside.size)) + 1)} | {outside.size})
    near_spans = [k for k in spans if k <= near]
    far_spans = [k for k in spans if k > near]
    sums = np.cumsum(outside.astype(float))
    reach = 0
    for group, alarm in ((near_spans, near_alarm), (far_spans, FAR_ALARM)):
        for k in group:
            if sums[k - 1] > noise_threshold(alarm / len(group), k, std, laplace_scale):
                reach = k
    if continues_at is not None and continues_at > 0:
        likelier = sums[:near] - 0.5 * continues_at * np.arange(1, min(near, sums.size) + 1)
        if likelier.max() > 0:
            reach = max(reach, int(np.argmax(likelier)) + 1)
    return reach


def _typical(bulk: np.ndarray) -> float:
    """A detected range's mean noisy mass per bucket without its heaviest bucket (a spike of zeros
    does not set it)."""
    return (float(bulk.sum()) - float(bulk.max())) / (bulk.size - 1) if bulk.size > 1 else float(bulk.sum())


def _is_abrupt(edge: np.ndarray, bulk: np.ndarray, std: float) -> bool:
    """Whether the outermost buckets of a detected range (``edge``) end the bulk abruptly: they
    hold, noisily, at least ``ABRUPT_SHARE`` of the bulk's ``_typical`` mass per bucket and clear
    ``ABRUPT_MARGIN`` deviations (a year column, a rating, ages from 50),
    rather than a tail thinning out below what the noise lets the histogram see (lab values,
    prices, waiting times)."""
    mass = float(edge.sum())
    return (mass >= ABRUPT_SHARE * _typical(bulk) * edge.size
            and mass >= ABRUPT_MARGIN * std * math.sqrt(edge.size))


def _edge_density(edge: np.ndarray, bulk: np.ndarray) -> float:
    """The noisy values per bucket at an abrupt end of a range (``edge``, its outermost buckets):
    their mean, or the bulk's ``_typical`` one when that is lower: the range was cut where the
    noise ran high, so its edge's mean runs high too."""
    return min(float(edge.sum()) / edge.size, _typical(bulk))


def _keep_what_is_missed(noisy: np.ndarray, std: float, located: tuple[int, int], cells: float,
                         cells_std: float) -> tuple[int, int]:
    """``located`` grown once on a side by its own width (at most to the grid's end) when the range
    holds clearly fewer values than the vote counted (short by ``COVER_MARGIN`` deviations of the
    difference) and the buckets beyond that side hold more positive noisy mass than the other's: a
    thin tail that no window cleared stays in, and a mistake at most triples the range."""
    first, last = located
    if not _falls_short(noisy[first:last + 1], std, cells, cells_std, COVER_MARGIN):
        return located
    below, above = float(noisy[:first].sum()), float(noisy[last + 1:].sum())
    if max(below, above) <= 0:
        return located
    reach = last - first + 1
    return (max(first - reach, 0), last) if below > above else (first, min(last + reach, noisy.size - 1))


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
                  cells: float | None = None, weights: np.ndarray | None = None,
                  cells_std: float = 0.0, decimals: int | None = None) -> LocatedBounds:
    """Bounds and bins of a numeric or datetime column from ``values`` (its readable cells, as
    floats; datetimes in seconds), spending ``budget`` on two noisy histograms.

    ``cells`` is the kind vote's noisy count of the column's cells, when it was voted: a coarse
    range whose noisy mass holds less than ``MIN_COVERAGE`` of it is lost (most values would be
    clipped into its end bins), and said so; a fine range holding less is not used (the coarse
    bounds stay). ``weights``: the rows each value stands for (distinct values from a backend).
    ``decimals``: how many decimals a float column is written with (the kind vote's shape), whose
    numbers the fine buckets then follow (``lattice_decimals``); the range is then the coarse one's
    numbers, each in a bucket of its own."""
    coarse_edges = coarse_grid(kind)
    finite = np.isfinite(values)
    values, weights = values[finite], None if weights is None else weights[finite]
    coarse_budget, fine_budget = split_budget(budget, [COARSE_SHARE, 1 - COARSE_SHARE])
    coarse = counts.release(bucket_counts(values, coarse_edges, weights), coarse_budget,
                            query=f"bounds({name}): histogram over public buckets")
    coarse_laplace = laplace_scale_of(coarse)
    found = detect_range(coarse.values.astype(float), coarse.std, laplace_scale=coarse_laplace)
    grid = "calendar years" if kind == Kind.DATETIME else "octaves of magnitude"
    text = seconds_to_iso if kind == Kind.DATETIME else number_text
    if found is None:
        need = noise_threshold(FALSE_ALARM / (len(COARSE_WINDOWS) * coarse.values.size), 1, coarse.std, coarse_laplace)
        return LocatedBounds(None, "lost", f"no range of values stood clear of the noise over {grid}: a range "
                             f"needs roughly {need:.0f} rows at this budget. Give lower and upper in a profile.")
    # no noisy mass found below the bucket of zero: the column is taken as non-negative, and the
    # range does not grow below zero (a float's zero bucket starts at -2^-10: no tiny negatives)
    non_negative = kind != Kind.DATETIME and not _shows_negatives(coarse.values[:zero_bucket(kind)], coarse.std,
                                                                   coarse_laplace)
    floor = zero_bucket(kind) if non_negative else 0
    if non_negative:
        found = max(found[0], floor), max(found[1], floor)
    detected, found = found, widen_range(coarse.values.astype(float), coarse.std, found, coarse_laplace, floor)
    if cells is not None:
        found = cover_cells(coarse.values.astype(float), coarse.std, found, cells, cells_std, floor)
    lower, upper = float(coarse_edges[found[0]]), float(coarse_edges[found[1] + 1])
    if non_negative:
        lower = max(lower, 0.0)
    held = float(np.maximum(coarse.values[found[0]:found[1] + 1], 0).sum())
    if cells is not None and cells > 0 and held < MIN_COVERAGE * cells:
        return LocatedBounds(None, "lost", (
            f"the range that stood clear of the noise, [{text(lower)}, {text(upper)}), holds about {held / cells:.0%} "
            f"of its values (noisy); the rest are spread too thinly for this budget. Give lower and upper in a "
            "profile, or spend more (--epsilon, discovery_share)."))
    if kind == Kind.INTEGER:
        lower, upper = _integer_range(lower, upper)
    lattice = lattice_decimals(lower, upper, kind, decimals)
    edges = fine_edges(lower, upper + 1 if kind == Kind.INTEGER else upper, kind, lattice)
    if lattice is not None:  # the range's numbers, each in a bucket of its own
        lower, upper = max(float(edges[0]), 0.0) if non_negative else float(edges[0]), float(edges[-1])
    fine = counts.release(bucket_counts(values, edges, weights), fine_budget,
                          query=f"bounds({name}): histogram over {edges.size - 1} buckets inside the range")
    fine_laplace = laplace_scale_of(fine)
    located = detect_range(fine.values.astype(float), fine.std, FINE_WINDOWS, fine_laplace)
    room: list[str] = []
    if located is not None:
        first, last = located
        strict = fine.values[first:last + 1].astype(float)
        edge = max(1, round(EDGE_SHARE * strict.size))
        guarded = strict.size >= GUARD_BUCKETS
        strict_width = float(edges[last + 1] - edges[first])
        ends = {"lower": strict[:edge], "upper": strict[-edge:]}
        abrupt = {side: _is_abrupt(part, strict, fine.std) for side, part in ends.items()}
        room += [side for side in ends if guarded and not abrupt[side]]
        density = {side: _edge_density(part, strict) if abrupt[side] else None for side, part in ends.items()}
        first -= _tail_reach(fine.values[:first][::-1], fine.std, strict.size, fine_laplace,
                             continues_at=density["lower"])
        last += _tail_reach(fine.values[last + 1:], fine.std, strict.size, fine_laplace, continues_at=density["upper"])
        located = first, last
        if cells is not None:
            located = _keep_what_is_missed(fine.values.astype(float), fine.std, located, cells, cells_std)
    if (located is not None and fine.values.size - (located[1] - located[0] + 1) >= WIDE_OUTSIDE
            and _misses_mass(coarse, found, fine, located)):
        located = None  # the fine range does not hold what the coarse one did: refine nothing
    if located is not None and cells is not None and not _holds_most(fine, located, cells):
        located = None  # refining might keep less than half of the column's values: refine nothing
    if located is None:
        return _rough(name, kind, lower, upper, edges, fine, coarse, grid, cells, cells_std)
    first, last = located
    seen_low, seen_high = float(edges[first]), float(edges[last + 1])  # where the fine buckets saw mass
    low = seen_low - GUARD * strict_width if "lower" in room and first > 0 else seen_low
    high = seen_high + GUARD * strict_width if "upper" in room and last < fine.values.size - 1 else seen_high
    bulk = fine.values[first:last + 1].astype(float)
    if non_negative:
        low = max(low, 0.0)
    # the fine stage only moves a bound inside the outermost coarse bucket that showed mass: a tail
    # too thin for the fine buckets is still in the range (capital gains of 100-99,999 beside zeros)
    first_end, last_start = float(coarse_edges[detected[0] + 1]), float(coarse_edges[detected[1]])
    refined = []
    if low < first_end:
        lower = float(math.floor(low)) if kind == Kind.INTEGER else low
        refined.append("lower")
    if high > last_start:
        upper = float(math.ceil(high) - 1) if kind == Kind.INTEGER else high
        refined.append("upper")
    if kind == Kind.INTEGER:
        upper = max(upper, lower + 1)
    if lattice is not None:  # halfway between two of its numbers, as written
        lower, upper = round(lower, lattice + 1), round(upper, lattice + 1)
    if not refined:
        return _rough(name, kind, lower, upper, edges, fine, coarse, grid, cells, cells_std)
    # bins follow the mass seen; the room kept for a thin tail beyond it is an end bin of its own
    cuts = _cuts(kind, bulk, edges[first:last + 2], coarse, lower, upper)
    cuts += [c for c in (seen_low, seen_high) if lower < c < upper]
    detail = f"{' and '.join(refined)} bound located inside the range"
    kept = [side for side in room if side in refined]
    if kept:
        tails = "lower and upper tails" if len(kept) == 2 else f"a {kept[0]} tail"
        detail += (f"; mass seen over [{text(seen_low)}, {text(seen_high)}), with room kept beyond it for {tails} "
                   "thinner than the noise")
    short = _short_of(fine.values[_starting_in(edges, lower, upper)].astype(float), fine.std, cells, cells_std)
    if short is not None:  # the vote says values lie outside: they are clipped into the end bins
        return LocatedBounds(_bounds_column(name, kind, lower, upper, cuts), "rough", (
            f"{detail}; it holds about {short:.0%} of the column's values (noisy): the rest, spread too thinly "
            "to be seen, are written into its end bins"), short)
    return LocatedBounds(_bounds_column(name, kind, lower, upper, cuts), "located", detail)


def _rough(name: str, kind: Kind, lower: float, upper: float, edges: np.ndarray, fine: NoisyCounts,
           coarse: NoisyCounts, grid: str, cells: float | None, cells_std: float) -> LocatedBounds:
    """The coarse range [lower, upper] when the fine stage refined nothing, binned by the fine
    buckets inside it, with the share of the vote's cells it holds when clearly short of them."""
    inside = _starting_in(edges, lower, upper)
    window = fine.values[inside]
    cuts = _cuts(kind, window, edges[inside.start:inside.stop + 1], coarse, lower, upper)
    short = _short_of(window.astype(float), fine.std, cells, cells_std)
    detail = f"bounds located only to the {grid}"
    if short is not None:
        detail += (f"; they hold about {short:.0%} of the column's values (noisy): the rest, spread too thinly to "
                   "be seen, are written into the end bins")
    return LocatedBounds(_bounds_column(name, kind, lower, upper, cuts), "rough", detail, short)


def _starting_in(edges: np.ndarray, lower: float, upper: float) -> slice:
    """The fine buckets of ``edges`` that reach inside [lower, upper] (a bucket centred on a
    float's 0 below a lower bound of 0 too)."""
    return slice(int(np.searchsorted(edges[1:], lower, side="right")), int(np.searchsorted(edges[:-1], upper, side="right")))


def _cuts(kind: Kind, window: np.ndarray, window_edges: np.ndarray, coarse: NoisyCounts, lower: float,
          upper: float) -> list[float]:
    """Inner bin edges from the noisy fine buckets of ``window`` (``quantile_cuts``; whole numbers
    unless float), with a bin of its own for a heavy zero (``_zero_cuts``)."""
    cuts = quantile_cuts(window, window_edges, DISCOVERED_BINS) if window.size else []
    if kind != Kind.FLOAT:
        cuts = [float(math.floor(c)) for c in cuts]
    mass = float(np.maximum(window, 0).sum())
    return (cuts + _zero_cuts(kind, coarse, lower, upper, max(mass / DISCOVERED_BINS, 3 * coarse.std))
            + _octave_cuts(kind, window, window_edges, coarse))


def _octave_cuts(kind: Kind, window: np.ndarray, window_edges: np.ndarray, coarse: NoisyCounts) -> list[float]:
    """The coarse grid's octave edges (numbers only) inside a fine bucket that is heavier than
    one bin's share of the mass and spans two octaves or more (its end at least four times
    its start), beside a coarse bucket that shows mass (``noise_threshold`` at ``FALSE_ALARM``).

    Where a column spans many octaves its equal-width fine buckets are too wide for its low values
    (movie votes of 4 to 30,000: the first bucket, 4-131, held 76 % of them, drawn evenly across
    it), and the coarse histogram, already released, splits them by octave. An edge that would cut
    a sliver off the bucket's end (under a quarter of the octave below it: 128 in 4-131), where a
    quantile cut already is, is left out. A bucket of under two octaves is not split: on
    txhousing (sales 16-47, volume 2.1-6.3 million) the one bin each split added cost its 2-way
    marginals more noise than it resolved (benchmarks/RESULTS.md, 2026-11-29). Post-processing
    of the two histograms."""
    if kind == Kind.DATETIME:
        return []
    grid = coarse_grid(kind)
    shows = coarse.values.astype(float) > noise_threshold(FALSE_ALARM, 1, coarse.std, laplace_scale_of(coarse))
    cuts: list[float] = []
    for j in heavy_buckets(window, DISCOVERED_BINS):  # the buckets quantile_cuts makes bins of their own
        start, end = float(window_edges[j]), float(window_edges[j + 1])
        if end - start < OCTAVE_SPAN * min(abs(start), abs(end)):
            continue  # under two octaves: the bins a split adds cost more noise than they resolve
        for i in np.nonzero((grid > start) & (grid < end))[0]:
            edge = float(grid[i])  # between coarse buckets i - 1 and i
            sliver = min(edge - start, end - edge) < (edge - float(grid[i - 1])) / 4  # beside a quantile cut
            if (shows[i - 1] or shows[i]) and not sliver:
                cuts.append(edge)
    return cuts

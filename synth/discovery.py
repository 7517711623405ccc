"""Domains estimated under DP, for columns whose public domain the profile does not give.

This module reads private values (it is inside the privacy boundary, beside the curator) and
releases only noisy, charged answers:

* numeric and datetime columns: a noisy histogram over a fixed public grid of buckets (log-scale
  for numbers, one bucket per calendar year for dates); the bounds are the outermost buckets (or
  runs of up to 4 buckets) whose noisy count clears a threshold set from the noise alone, so a
  lone outlier does not move them; when nothing clears it (tiny tables), a note says the bounds
  are a rough guess;
* text columns: a thresholded noisy histogram of the values present (the "stability-based"
  histogram): a value is kept only if its noisy count clears a threshold chosen so that a value
  held by a single person appears with probability at most δ₀, charged as δ₀ on top of the noise.
  This needs δ > 0; under pure DP it is refused with a clear message;
* boolean columns have a public domain and cost nothing;
* a text column's kind (number, date, boolean or text) is itself decided from a noisy count of
  what its cells read as, so one person's odd cell cannot flip it.

It never reads a minimum, maximum, count or category list for free.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from statistics import NormalDist

from synth.curator import CountRelease
from synth.errors import BudgetError
from synth.privacy import split_budget
from synth.progress import Progress
from synth.schema import (
    CELL_CLASSES,
    DEFAULT_OTHER_LABEL,
    Column,
    DomainSource,
    Kind,
    classify_cells,
    datetime_to_seconds,
    parse_values,
    text_counts,
)

DISCOVERED_BINS = 32
MAX_DISCOVERED_CATEGORIES = 1000
VOTE_MARGIN = 3.0  # the winning kind's noisy count must clear this many noise deviations
LEAD_MARGIN = 2.0  # ... and lead the runner-up by this many deviations of the difference
FLOAT_MARGIN = 4.0  # numbers are float only when the non-integral count clears this many deviations
TAIL_MARGIN = 1e-6  # the threshold's computed tail must sit this far (relative) below δ₀

_POSITIVE_EDGES = 2.0 ** np.arange(-10, 51)  # 2^-10 ... 2^50, one bucket per octave
NUMERIC_EDGES = np.concatenate([-_POSITIVE_EDGES[::-1], _POSITIVE_EDGES])
YEAR_EDGES = np.array([datetime_to_seconds(f"{year}-01-01") for year in range(1700, 2301)])


def needs_delta(kinds: Mapping[str, Kind | None]) -> bool:
    """True when some column's categories may have to be discovered (only possible with δ > 0)."""
    return any(kind in (None, Kind.CATEGORICAL) for kind in kinds.values())


def discrete_gaussian_tail(sigma: float, t: int) -> float:
    """P[Z ≥ t] for the discrete Gaussian with parameter sigma (exact up to float rounding)."""
    reach = int(math.ceil(40 * sigma)) + abs(t) + 1
    k = np.arange(-reach, reach + 1)
    weights = np.exp(-(k.astype(float) ** 2) / (2 * sigma**2))  # the largest weight is exactly 1
    return float(weights[k >= t].sum() / weights.sum())


def discrete_laplace_tail(scale: float, t: int) -> float:
    """P[L ≥ t] for the discrete Laplace with scale b and t ≥ 1: q^t / (1 + q), q = e^(-1/b)."""
    q = math.exp(-1.0 / scale)
    return q**t / (1.0 + q)


@functools.lru_cache(maxsize=256)  # every column of a table asks with the same arguments
def appearance_threshold(mechanism: str, scale: float, delta: float) -> tuple[int, float]:
    """Smallest integer threshold τ with P[1 + noise ≥ τ] ≤ delta·(1 − TAIL_MARGIN), and that
    probability. The margin covers the float rounding of the computed tail, so the true tail is
    below ``delta`` and charging ``delta`` itself never understates the privacy loss."""
    tail = discrete_gaussian_tail if mechanism == "discrete_gaussian" else discrete_laplace_tail
    delta = delta * (1.0 - TAIL_MARGIN)
    tau = 2
    while tail(scale, tau - 1) > delta:
        tau *= 2
    low, high = tau // 2, tau  # tail(high - 1) ≤ delta; search the smallest such threshold
    while high - low > 1:
        mid = (low + high) // 2
        if tail(scale, mid - 1) <= delta:
            high = mid
        else:
            low = mid
    return high, tail(scale, high - 1)


def detect_range(noisy: np.ndarray, std: float) -> tuple[int, int, bool]:
    """First and last inner bucket holding mass, from a noisy histogram over buckets.

    Windows of 1, 2 and 4 adjacent buckets are tested, narrowest first; a window is occupied when
    the noisy sum of its buckets not yet found occupied clears a threshold that pure noise crosses
    with probability about 0.01 over all windows. Wider windows so find tails spread thinly over
    several buckets, without being triggered by a heavy bucket found already. The range spans
    every occupied bucket. Returns ``(first, last, detected)``; when nothing is occupied, the
    widest window with the largest noisy sum stands in, with ``detected`` False. Only noisy values
    are used.
    """
    widths = (1, 2, 4)
    z = NormalDist().inv_cdf(1 - 0.01 / (len(widths) * noisy.size))
    found = np.zeros(noisy.size, dtype=bool)
    for w in widths:
        sums = np.convolve(np.where(found, 0.0, noisy), np.ones(w), mode="valid")
        for start in np.nonzero(sums > z * std * math.sqrt(w))[0]:  # sums[i]: buckets i .. i + w - 1
            found[start:start + w] = True
    if found.any():
        occupied = np.nonzero(found)[0]
        return int(occupied[0]), int(occupied[-1]), True
    start = int(np.argmax(sums))
    return start, start + widths[-1] - 1, False


def discover_numeric(name: str, series: pd.Series, kind: Kind, counts: CountRelease, budget: float,
                     missing_markers: Sequence[str] = ("",), notes: list[str] | None = None) -> Column:
    """Bounds of a numeric or datetime column from a noisy histogram over public buckets."""
    edges = YEAR_EDGES if kind == Kind.DATETIME else NUMERIC_EDGES
    values, _ = parse_values(series, kind, missing_markers)
    values = values[np.isfinite(values) & (values >= edges[0]) & (values < edges[-1])]
    # inner bucket j holds [edges[j], edges[j + 1]); values beyond the grid are clipped when encoded
    exact = np.bincount(np.searchsorted(edges, values, side="right") - 1, minlength=edges.size - 1)
    noisy = counts.release(exact, budget, query=f"bounds({name}): histogram over public buckets")
    first, last, detected = detect_range(noisy.values.astype(float), noisy.std)
    if not detected and notes is not None:
        notes.append(
            f"column {name!r}: the noisy histogram was too weak to locate its values (few rows for "
            "this budget), so its bounds are a rough guess; give them in a profile for a useful release."
        )
    lower, upper = float(edges[first]), float(edges[last + 1])
    if kind == Kind.INTEGER:  # the integers inside [lower, upper), at least two of them
        lower = float(math.ceil(lower))
        upper = float(max(math.ceil(upper) - 1, lower + 1))
        bins = int(min(upper - lower + 1, DISCOVERED_BINS))
    else:
        bins = DISCOVERED_BINS
    return Column(name=name, kind=kind, categories=None, lower=lower, upper=upper, bins=bins,
                  source=DomainSource.DP_ESTIMATED)


def discover_categories(name: str, series: pd.Series, counts: CountRelease, budget: float,
                        delta: float, missing_markers: Sequence[str] = ("",)) -> Column:
    """Categories of a text column from a thresholded noisy histogram of its values.

    Each of the cells that can appear between neighbours gets an equal share of ``delta`` (δ₀);
    the charge is δ₀ itself, not the computed tail below it.
    """
    exact = text_counts(series, missing_markers)
    l1, l2 = counts.neighbouring.histogram_l1, counts.neighbouring.histogram_l2
    mechanism, scale, _ = counts.calibrate(budget, l1, l2)
    per_cell = delta / counts.neighbouring.cells_that_appear  # exact: 1 or 2 cells
    tau, tail = appearance_threshold(mechanism, scale, per_cell)
    noisy = counts.release(
        exact.to_numpy(), budget, extra_delta=delta,
        query=f"categories({name}): thresholded histogram",
        note=f"threshold {tau}; a value held by one person appears with probability {tail:.3g} per cell",
    )
    kept = np.nonzero(noisy.values >= tau)[0]
    kept = kept[np.argsort(-noisy.values[kept], kind="stable")][:MAX_DISCOVERED_CATEGORIES]
    # a value spelled like the "other" label is left to map to OTHER, as it would when encoded
    categories = tuple(sorted(c for c in exact.index[kept].astype(str) if c != DEFAULT_OTHER_LABEL))
    return Column(name=name, kind=Kind.CATEGORICAL, categories=categories or ("<none found>",),
                  lower=None, upper=None, bins=None, source=DomainSource.DP_ESTIMATED)


def vote_kind(name: str, series: pd.Series, counts: CountRelease, budget: float,
              missing_markers: Sequence[str] = ("",), notes: list[str] | None = None) -> Kind:
    """The kind of a column, from a noisy count of what its cells read as.

    Each non-missing cell is classed as a boolean word, an integer, a non-integral number, a date
    or other text (``classify_cells``), and the 5-cell histogram is released with noise. Deciding
    from exact counts would let one person's odd cell flip the kind. Every decision must clear the
    noise:

    * the winning class (numbers: integers and non-integral ones together) must clear
      ``VOTE_MARGIN`` deviations of its noise and lead the runner-up by ``LEAD_MARGIN`` deviations
      of the difference's noise; when it does not (too few rows for this budget, or a close split
      between kinds), the column is taken as text and a note says so;
    * numbers are float only when the non-integral count alone clears ``FLOAT_MARGIN`` deviations
      (they are then certainly there, however few: 1 % of a large column is enough); otherwise
      integer, so a whole-number column becomes float by noise alone with probability about 3e-5
      (stray decimals are rounded, and counted on the console).
    """
    classes = classify_cells(series, missing_markers)
    exact = np.bincount(classes[classes >= 0], minlength=len(CELL_CLASSES))
    released = counts.release(exact, budget, query=f"kind({name}): what the cells read as")
    noisy = released.values.astype(float)
    std = released.std
    index = {kind: CELL_CLASSES.index(kind) for kind in CELL_CLASSES}
    votes = {Kind.BOOLEAN: [index[Kind.BOOLEAN]], Kind.INTEGER: [index[Kind.INTEGER], index[Kind.FLOAT]],
             Kind.DATETIME: [index[Kind.DATETIME]], Kind.CATEGORICAL: [index[Kind.CATEGORICAL]]}
    total = {kind: float(noisy[cells].sum()) for kind, cells in votes.items()}
    first, second = sorted(total, key=lambda k: (total[k], k == Kind.CATEGORICAL), reverse=True)[:2]
    lead = total[first] - max(total[second], 0.0)
    if (total[first] < VOTE_MARGIN * std * math.sqrt(len(votes[first]))
            or lead < LEAD_MARGIN * std * math.sqrt(len(votes[first]) + len(votes[second]))):
        if notes is not None:
            notes.append(f"column {name!r}: what its cells read as does not stand clear of the noise (too few "
                         "rows for this budget, or a mix of kinds); treated as text. Give its kind in a profile.")
        return Kind.CATEGORICAL
    if first == Kind.INTEGER and noisy[index[Kind.FLOAT]] >= FLOAT_MARGIN * std:
        return Kind.FLOAT
    return first


def discover_columns(df: pd.DataFrame, kinds: Mapping[str, Kind | None], counts: CountRelease,
                     budget: float, delta: float, progress: Progress,
                     missing_markers: Sequence[str] = ("",), notes: list[str] | None = None,
                     ) -> dict[str, Column]:
    """DP kinds and domains for the columns in ``kinds``, spending ``budget`` (and ``delta``).

    A kind of None (a text column whose type is not declared) is first decided by ``vote_kind``.
    The budget is split equally over the queries: one vote per undeclared column and one domain
    measurement per non-boolean column (a column voted boolean leaves its share unspent).
    """
    queries = [(n, "kind") for n, k in kinds.items() if k is None]
    queries += [(n, "domain") for n, k in kinds.items() if k != Kind.BOOLEAN]
    shares = dict(zip(queries, split_budget(budget, [1.0] * len(queries)))) if queries else {}
    might_need_delta = [n for n, k in kinds.items() if k in (None, Kind.CATEGORICAL)]
    deltas = dict(zip(might_need_delta, split_budget(delta, [1.0] * len(might_need_delta)))) if delta > 0 else {}
    columns: dict[str, Column] = {}
    for name in progress.track(list(kinds), "estimating kinds and domains under DP", len(kinds)):
        kind = kinds[name]
        if kind is None:
            kind = vote_kind(name, df[name], counts, shares[(name, "kind")], missing_markers, notes)
        if kind == Kind.BOOLEAN:
            columns[name] = Column(name=name, kind=kind, source=DomainSource.PUBLIC)
        elif kind == Kind.CATEGORICAL:
            if name not in deltas:
                raise BudgetError(
                    f"column {name!r} holds text whose categories are not in a profile, and "
                    "discovering them under DP needs delta > 0. Pass --delta (e.g. 1e-9), or write a "
                    "profile that lists them (`synth profile DATA -o profile.toml`, then review it)."
                )
            columns[name] = discover_categories(name, df[name], counts, shares[(name, "domain")],
                                                deltas[name], missing_markers)
        else:
            columns[name] = discover_numeric(name, df[name], kind, counts, shares[(name, "domain")],
                                             missing_markers, notes)
    return columns

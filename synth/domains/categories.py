"""Category lists of text columns, found under DP (inside the privacy boundary, beside the curator).

A text column's values come from a thresholded noisy histogram of the values present (the
"stability-based" histogram): a value is kept only if its noisy count clears a threshold chosen so
that a value held by a single person appears with probability at most δ₀, charged as δ₀ itself on
top of the noise (the computed tail sits a margin below δ₀, so float rounding in it cannot
understate δ). Only the kept values' noisy counts leave. A list is complete (no OTHER code) when the
cells it leaves are surely below 3 % of the column's: first judged from counts already released
(``free_left_over``, ``text_left_over``), and where they leave it undecided from one more noisy count
of the cells outside the list (``count_left_over``), priced by ``left_over_std_to_buy``. The
describer's side of it (which columns, what budget, the second pass) is in ``synth.domains.discovery``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synth.columns.cells import text_counts
from synth.columns.column import DEFAULT_OTHER_LABEL, Column
from synth.columns.kinds import DomainSource, Kind
from synth.domains.verdict import Finding
from synth.domains.votes import Vote
from synth.privacy import CountNoise
from synth.privacy.curator import CountRelease

MAX_DISCOVERED_CATEGORIES = 1000
TAIL_MARGIN = 1e-6  # the threshold's computed tail must sit this far (relative) below δ₀
ROUGH_COVERAGE = 0.5  # found categories holding less of a voted text column's cells: rough
COMPLETE_SHARE = 0.03  # a category list is complete when what it leaves is surely below this share of cells ...
COMPLETE_MARGIN = 2.0  # ... by this many deviations of the left-over estimate (see ``complete_list``)


@functools.lru_cache(maxsize=256)  # every column of a table asks with the same arguments
def appearance_threshold(noise: CountNoise, delta: float, height: int = 1) -> tuple[int, float]:
    """Smallest integer threshold τ with P[height + noise ≥ τ] ≤ delta·(1 − TAIL_MARGIN), and that
    probability (``height``: the most rows a cell that appears between neighbours holds: 1, or a
    unit's bound in a relational release). The margin covers the float rounding of the computed
    tail, so the true tail is below ``delta`` and charging ``delta`` itself never understates the
    privacy loss."""
    delta = delta * (1.0 - TAIL_MARGIN)
    tau = 2 * height
    while noise.tail(tau - height) > delta:
        tau *= 2
    low, high = tau // 2, tau  # tail(high - height) ≤ delta; search the smallest such threshold
    while high - low > 1:
        mid = (low + high) // 2
        if noise.tail(mid - height) <= delta:
            high = mid
        else:
            low = mid
    return high, noise.tail(high - height)


@dataclass(frozen=True)
class Found:
    """Values kept by a thresholded histogram: their noisy counts (largest first), the threshold
    they cleared and the noise deviation of each count."""

    counts: pd.Series
    threshold: int
    std: float

    def merged(self, later: Found) -> Found:
        """Both searches' values: a value found by both gets the inverse-variance mean of its two
        noisy counts (post-processing); the threshold is the lower one, and the deviation the
        larger (a bound for every count)."""
        first, second = self.counts, later.counts
        index = first.index.union(second.index, sort=False)
        weights = 1 / self.std**2, 1 / later.std**2
        total = first.reindex(index, fill_value=0.0) * weights[0] + second.reindex(index, fill_value=0.0) * weights[1]
        weight = index.isin(first.index) * weights[0] + index.isin(second.index) * weights[1]
        mean = (total / weight).sort_values(ascending=False, kind="stable")
        return Found(mean, min(self.threshold, later.threshold), max(self.std, later.std))


def thresholded(name: str, exact: pd.Series, counts: CountRelease, budget: float, delta: float,
                 what: str) -> Found:
    """The values of ``exact`` (value -> count) whose noisy count clears the appearance threshold,
    with those noisy counts (``Found``). Each of the cells that can appear between neighbours gets
    an equal share of ``delta`` (δ₀); the charge is δ₀ itself, not the computed tail below it.
    Only the kept values' noisy counts may be used: the others' very existence is private."""
    l1, l2 = counts.neighbouring.histogram_l1, counts.neighbouring.histogram_l2
    per_cell = delta / counts.neighbouring.cells_that_appear  # exact: 1, 2 or a unit's k cells
    tau, tail = appearance_threshold(counts.calibrate(budget, l1, l2), per_cell, counts.neighbouring.rows_in_new_cell)
    noisy = counts.release(
        exact.to_numpy(), budget, extra_delta=delta, query=f"{what}({name}): thresholded histogram",
        note=f"threshold {tau}; a value held by one person appears with probability {tail:.3g} per cell",
    )
    kept = np.nonzero(noisy.values >= tau)[0]
    kept = kept[np.argsort(-noisy.values[kept], kind="stable")]
    return Found(pd.Series(noisy.values[kept].astype(float), index=exact.index[kept].astype(str)), tau, noisy.std)


@dataclass(frozen=True)
class LeftOver:
    """An estimate of how many of a text column's present cells hold none of the values found
    (noisy: post-processing of released counts), with its noise deviation."""

    count: float
    std: float

    def combined(self, other: LeftOver) -> LeftOver:
        """Two independent unbiased estimates of the same count, weighted by inverse variance."""
        weights = 1 / self.std**2, 1 / other.std**2
        return LeftOver((self.count * weights[0] + other.count * weights[1]) / sum(weights), 1 / math.sqrt(sum(weights)))


def _left_of(total: float, total_std: float, found: Found) -> LeftOver:
    """What the values found leave of a noisy ``total`` of cells, with the deviation of that difference
    (the total's and each found value's noise, independent)."""
    values = found.counts
    return LeftOver(total - float(values.sum()), math.hypot(total_std, found.std * math.sqrt(len(values))))


def free_left_over(vote: Vote | None, found: Found, listed: int) -> LeftOver | None:
    """What the values found leave of the vote's noisy count of present cells (its five classes),
    with the deviation of that difference; None without a vote, or when some found value is not
    listed (``listed`` < values found: the list was capped, or a value is spelled like the other
    label), since the list then cannot be complete. Costs nothing: both are released already."""
    if vote is None or vote.present is None or listed != len(found.counts):
        return None
    return _left_of(vote.present, vote.present_std, found)


def text_left_over(vote: Vote | None, found: Found, listed: int) -> LeftOver | None:
    """What the values found leave of the vote's noisy count of the cells that read as text (one
    cell of the vote, so a smaller deviation than ``free_left_over``'s). In expectation it is at
    most the left-over (cells reading as numbers or dates that no value found holds are not in
    it): a one-sided check only, that a list surely misses too much to be complete."""
    if vote is None or vote.cells is None or not vote.cells_std > 0 or listed != len(found.counts):
        return None
    return _left_of(vote.cells, vote.cells_std, found)


def complete_list(left: LeftOver, present: float) -> bool:
    """True when what a list leaves is surely (``COMPLETE_MARGIN`` deviations) below
    ``COMPLETE_SHARE`` of the present cells: a list that misses that share or more is called
    complete with probability at most Φ(−2) ≈ 2.3 % (one-sided), whatever the noise."""
    return left.count + COMPLETE_MARGIN * left.std < COMPLETE_SHARE * present


def surely_open(left: LeftOver, present: float) -> bool:
    """True when ``left`` (or a lower estimate of it) is surely above ``COMPLETE_SHARE`` of the cells."""
    return left.count - COMPLETE_MARGIN * left.std >= COMPLETE_SHARE * present


def left_over_std_to_buy(left: LeftOver, present: float, lower: LeftOver | None = None) -> float | None:
    """The noise deviation a direct count of the left-over cells needs so that, combined with
    ``left``, the estimate has deviation COMPLETE_SHARE·present / (2·COMPLETE_MARGIN): a list that
    misses nothing is then complete with probability Φ(2) ≈ 97.7 %. None when ``left`` decides
    already: surely below (complete) or surely above the share, or as precise as that; or when
    ``lower`` (``text_left_over``) is surely above the share."""
    if not present > 0:
        return None
    target = COMPLETE_SHARE * present / (2 * COMPLETE_MARGIN)
    if (complete_list(left, present) or surely_open(left, present) or left.std <= target
            or (lower is not None and surely_open(lower, present))):
        return None
    return 1 / math.sqrt(1 / target**2 - 1 / left.std**2)


def count_left_over(name: str, series: pd.Series, categories: Sequence[str], counts: CountRelease, budget: float,
                    missing_markers: Sequence[str] = ("",), weights: np.ndarray | None = None) -> LeftOver:
    """A noisy count of the present cells of ``series`` that hold none of ``categories`` (a public
    list, found earlier): one count, released through ``counts`` and charged as a histogram
    (one row moves it by at most one; under replace-one the histogram's sensitivity overstates it)."""
    exact = text_counts(series, missing_markers, weights)
    outside = int(exact[~exact.index.isin(list(categories))].sum())
    released = counts.release(np.array([outside]), budget,
                              query=f"left over({name}): cells outside the {len(categories)} values found",
                              note="decides whether the category list is complete (no OTHER code)")
    return LeftOver(float(released.values[0]), released.std)


def located_finding(name: str, categories: int, complete: bool) -> Finding:
    listed = "; they hold every cell (noisy), so the list is taken as complete" if complete else ""
    return Finding(name, Kind.CATEGORICAL, "located", f"{categories} values found{listed}")


def discover_categories(name: str, series: pd.Series, counts: CountRelease, budget: float,
                        delta: float, missing_markers: Sequence[str] = ("",),
                        vote: Vote | None = None, distinct: float | None = None,
                        earlier: Found | None = None,
                        weights: np.ndarray | None = None) -> tuple[Column | None, Finding, Found]:
    """Categories of a text column from a thresholded noisy histogram of its values (``thresholded``),
    with what was found (for a second pass, which passes it back as ``earlier`` to be merged in).

    Lost (None) when no value clears the threshold; rough when the values found hold less than
    ``ROUGH_COVERAGE`` of the vote's noisy count of the column's text cells (when it was voted).
    ``distinct``, a noisy count of its values, tells the console how many rows a value has on
    average, beside how many it would need.

    **Complete lists.** A list is complete (no OTHER code, so no synthetic cell is written as the
    other label; a rare cell left goes to the fallback code) when the cells it leaves, L, are
    surely below ``COMPLETE_SHARE`` (3 %) of the vote's noisy count of present cells P:
    L̂ + ``COMPLETE_MARGIN``·σ < 3 %·P (``complete_list``). Whatever σ, a list that misses 3 % of
    the cells or more is then called complete with probability at most Φ(−2) ≈ 2.3 %: the rule
    stays honest when the budget is thin, and only loses the power to close lists. Here L̂ is
    P − Σ (the found values' noisy counts), free (post-processing) but noisy: σ = √(5σ_vote² +
    k·σ_found²), 240–400 rows at ε = 1 with no profile (σ ≈ 80–140 per count), so on its own it
    closes most lists only above ~30,000 rows. Nothing else released narrows it enough: the vote's
    text cell alone (σ_vote) leaves out values that read as numbers or dates; the threshold τ
    bounds each missed value, not their sum; the distinct count's noise (2.5 % of the cells)
    swamps a handful of values. So ``discover_columns`` buys, from the reserve, a direct noisy count of the
    cells outside the list (``count_left_over``: one count, charged in the ledger) for each list
    these counts leave undecided (and that the vote's text cell, a lower estimate of L with a
    smaller σ, does not show surely missing more than 3 %: ``text_left_over``; without that check a
    list missing 40 % of 2,200 cells bought a count at half the reserve in 2 runs of 30), priced
    so that the combined estimate has σ = 3 %·P / 4
    (``left_over_std_to_buy``): P[complete] is then Φ(2) ≈ 97.7 % when nothing was missed, 75 %
    at 1 % missed, 25 % at 2 %, 2.3 % at 3 % and 0.02 % at 4 % (200 seeded 5,000-row trials:
    98.5 %, 77 %, 32 %, 2.5 %, 0.5 % at 5 %). At ε = 1 (ρ ≈ 0.0144) such a count costs about
    ρ = 3.5e-4 (2.5 % of the whole budget) at 5,000 rows, 1.3e-4 at 8,000, 2e-5 at 20,000, and is not
    bought once the free estimate is precise enough (about 30,000 rows and up).
    """
    cells = vote.cells if vote is not None else None
    what = "categories" if earlier is None else "categories, second pass"
    found = thresholded(name, text_counts(series, missing_markers, weights), counts, budget, delta, what)
    if earlier is not None:
        found = earlier.merged(found)
    values, tau = found.counts.iloc[:MAX_DISCOVERED_CATEGORIES], found.threshold
    # a value spelled like the "other" label is left to map to OTHER, as it would when encoded
    categories = tuple(sorted(c for c in values.index if c != DEFAULT_OTHER_LABEL))
    spread = ""
    if distinct is not None and cells is not None and distinct >= 1 and cells > 0:
        spread = f" (it holds about {distinct:.0f} values, about {cells / distinct:.0f} rows each: noisy)"
    if not categories:
        return None, Finding(name, Kind.CATEGORICAL, "lost", (
            f"no value reached the threshold of {tau} noisy rows: at this budget a value needs about {tau} rows "
            f"to be found{spread}. List its categories in a profile, or spend more (--epsilon, or "
            "discovery_share and discovery_reserve in the profile).")), found
    held = float(np.maximum(values.to_numpy(), 0).sum())
    left = free_left_over(vote, found, len(categories))
    complete = left is not None and vote is not None and vote.present is not None and complete_list(left, vote.present)
    column = Column(name=name, kind=Kind.CATEGORICAL, categories=categories, complete=complete,
                    source=DomainSource.DP_ESTIMATED)
    if cells is not None and cells > 0 and held < ROUGH_COVERAGE * cells:
        return column, Finding(name, Kind.CATEGORICAL, "rough", (
            f"{len(categories)} values found, holding about {min(held / cells, 1):.0%} of its cells (noisy); the "
            f"rest are written as {DEFAULT_OTHER_LABEL}: rarer values need about {tau} rows each at this budget"
            f"{spread}")), found
    return column, located_finding(name, len(categories), complete), found

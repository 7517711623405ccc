"""Domains estimated under DP, for columns whose public domain the profile does not give.

This module reads private values (it is inside the privacy boundary, beside the curator) and
releases only noisy, charged answers:

* a column's kind (number, date, boolean or text), unless declared in public, is decided from a
  noisy count of what its cells read as, with a margin over the noise, so one person's odd cell
  cannot flip it (``vote_kind``);
* numeric and datetime columns: bounds and bins from two noisy histograms over public grids
  (``synth.domains.bounds``);
* text columns: a thresholded noisy histogram of the values present (the "stability-based"
  histogram): a value is kept only if its noisy count clears a threshold chosen so that a value
  held by a single person appears with probability at most δ₀, charged as δ₀ itself on top of the
  noise (the computed tail sits a margin below δ₀, so float rounding in it cannot understate δ).
  This needs δ > 0; under pure DP it is refused with a clear message. A text column left rough or
  lost gets a second pass from a reserve, at a lower threshold. A list is complete (no OTHER code)
  when the cells it leaves are surely below 3 % of the column's; when the counts released leave
  that undecided, part of the reserve buys a noisy count of those cells (``discover_categories``);
* a column voted text, or whole numbers under a key-like name, is first checked for being (nearly)
  unique per row, from a noisy distinct count against the vote's noisy cell count; a unique one is
  an identifier (written as fresh keys shaped like the input's, from a thresholded histogram of
  key shapes) or free text (left out of the model), and no domain is measured for it
  (``detect_identifier``);
* boolean columns have a public domain; float, datetime and boolean columns get a noisy vote on
  how their values are written (decimals, date only or with time and day order, true/false or
  yes/no: ``vote_shape``), so the synthetic table reads like the input;
* a voted column gets a missing code only when the vote's noisy count of missing cells clears the
  noise (a column not voted keeps it); one whose present cells do not clear it is all missing,
  written empty.

The budget goes where the noise hides most: the votes first (weight ``VOTE_WEIGHT`` each, with the
domains to come counted at ``UNDECIDED_WEIGHT``), then what is left over the domains by need
(``DOMAIN_WEIGHTS``: a category list must clear a δ-threshold per value, bounds a detection
threshold twice, a boolean only its spelling). The threshold a category must clear falls only as the
square root of its budget, so a category list costs far more than the rest; rather than give
every text column that much up front, a reserve (``discovery_reserve``) pays a second pass for
the text columns whose first pass found too little. Each column is then judged from noisy values
only: located, rough or lost (``Finding``); the describer stops before anything else is spent
when a column is lost. It never reads a minimum, maximum, count or category list for free.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np
import pandas as pd

from synth.columns.cells import (
    SHAPE_CELLS,
    parse_values,
    text_counts,
)
from synth.columns.column import DEFAULT_OTHER_LABEL, Column, number_text
from synth.columns.kinds import UNMODELLED_KINDS, DomainSource, Kind
from synth.columns.textshape import TextShape, numbers_inside
from synth.columns.unmodelled import (
    UNIQUE_SHARE,
    UnmodelledColumn,
    judge_unique,
    looks_like_identifier,
    template_counts,
)
from synth.domains.bounds import locate_bounds
from synth.domains.votes import LEAD_MARGIN, Vote, vote_kind, vote_shape
from synth.errors import BudgetError
from synth.privacy import CountNoise, split_budget
from synth.privacy.curator import CountRelease
from synth.privacy.exact import floor_float
from synth.progress import Progress
from synth.tables.counting import CountingTable, as_table

MAX_DISCOVERED_CATEGORIES = 1000
TAIL_MARGIN = 1e-6  # the threshold's computed tail must sit this far (relative) below δ₀
ROUGH_COVERAGE = 0.5  # found categories holding less of a voted text column's cells: rough
COMPLETE_SHARE = 0.03  # a category list is complete when what it leaves is surely below this share of cells ...
COMPLETE_MARGIN = 2.0  # ... by this many deviations of the left-over estimate (see ``complete_list``)
LEFT_OVER_RESERVE = 0.5  # at most this share of the reserve buys direct counts of the cells a list leaves
PRICE_STEPS = 4  # ... each priced at a power of 2^(1/PRICE_STEPS) (at most 19 % above its need)
VOTE_WEIGHT = 1.0
UNDECIDED_WEIGHT = 1.5  # a column's domain, counted before its vote tells what it needs
DOMAIN_WEIGHTS = {Kind.CATEGORICAL: 2.0, Kind.INTEGER: 1.5, Kind.FLOAT: 1.5, Kind.DATETIME: 1.5, Kind.BOOLEAN: 0.25,
                  Kind.ID: 0.0, Kind.TEXT: 0.0}
SHAPE_SHARE = 0.1  # of a float or datetime column's domain budget, for the vote on how its values are written
MIXED_LIST_SHARE = 0.8  # of a mixed column's domain budget (votes.Vote), for listing its values; the rest reads numbers
ID_DETECTION_SHARE = 0.2  # at most this share of a candidate column's domain budget buys its noisy distinct count
DISTINCT_PRECISION = 0.025  # ... and no more than gives it noise of this deviation per noisy cell of the column
SPREAD_CLEARANCE = 3.0  # a noisy distinct count is quoted (values, rows each) only when it clears this many deviations
ALLOCATION = {"kind vote": VOTE_WEIGHT, "undecided domain": UNDECIDED_WEIGHT,
              **{f"{kind.value} domain": weight for kind, weight in DOMAIN_WEIGHTS.items()}}


@dataclass(frozen=True)
class Finding:
    """What discovery found for one column, judged from noisy values only (safe to print)."""

    name: str
    kind: Kind
    verdict: str  # "located", "rough" or "lost"
    detail: str


@dataclass(frozen=True)
class Discovery:
    """The columns found (lost ones are absent), a finding per column, and the text columns that
    the reserve paid a second pass for."""

    columns: dict[str, Column | UnmodelledColumn]
    findings: tuple[Finding, ...]
    second_pass: tuple[str, ...] = ()  # text columns that were looked at again with the reserve

    @property
    def lost(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.verdict == "lost")

    def table(self) -> str:
        """One line per column: name, kind, verdict and detail (noisy facts only: safe to print)."""
        width = max(len(f.name) for f in self.findings)
        return "\n".join(f"  {f.name:<{width}}  {f.kind.value:<11}  {f.verdict:<7}  {f.detail}" for f in self.findings)

    def verdict_line(self) -> str:
        """How many columns were located, rough or lost, in one line."""
        counts = {v: sum(f.verdict == v for f in self.findings) for v in ("located", "rough", "lost")}
        return (f"domains found under DP: {counts['located']} located, {counts['rough']} rough, "
                f"{counts['lost']} lost (of {len(self.findings)} columns)")


def needs_delta(kinds: Mapping[str, Kind | None]) -> bool:
    """True when some column's categories may have to be discovered (only possible with δ > 0)."""
    return any(kind in (None, Kind.CATEGORICAL) for kind in kinds.values())


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


def _thresholded(name: str, exact: pd.Series, counts: CountRelease, budget: float, delta: float,
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


def free_left_over(vote: Vote | None, found: Found, listed: int) -> LeftOver | None:
    """What the values found leave of the vote's noisy count of present cells (its five classes),
    with the deviation of that difference; None without a vote, or when some found value is not
    listed (``listed`` < values found: the list was capped, or a value is spelled like the other
    label), since the list then cannot be complete. Costs nothing: both are released already."""
    values = found.counts
    if vote is None or vote.present is None or listed != len(values):
        return None
    return LeftOver(vote.present - float(values.sum()), math.hypot(vote.present_std, found.std * math.sqrt(len(values))))


def text_left_over(vote: Vote | None, found: Found, listed: int) -> LeftOver | None:
    """What the values found leave of the vote's noisy count of the cells that read as text (one
    cell of the vote, so a smaller deviation than ``free_left_over``'s). In expectation it is at
    most the left-over (cells reading as numbers or dates that no value found holds are not in
    it): a one-sided check only, that a list surely misses too much to be complete."""
    values = found.counts
    if vote is None or vote.cells is None or not vote.cells_std > 0 or listed != len(values):
        return None
    return LeftOver(vote.cells - float(values.sum()), math.hypot(vote.cells_std, found.std * math.sqrt(len(values))))


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


def _located(name: str, categories: int, complete: bool) -> Finding:
    listed = "; they hold every cell (noisy), so the list is taken as complete" if complete else ""
    return Finding(name, Kind.CATEGORICAL, "located", f"{categories} values found{listed}")


def discover_categories(name: str, series: pd.Series, counts: CountRelease, budget: float,
                        delta: float, missing_markers: Sequence[str] = ("",),
                        vote: Vote | None = None, distinct: float | None = None,
                        earlier: Found | None = None,
                        weights: np.ndarray | None = None) -> tuple[Column | None, Finding, Found]:
    """Categories of a text column from a thresholded noisy histogram of its values (``_thresholded``),
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
    found = _thresholded(name, text_counts(series, missing_markers, weights), counts, budget, delta, what)
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
    return column, _located(name, len(categories), complete), found


@dataclass(frozen=True)
class Detection:
    """What ``detect_identifier`` found: an id or text column (else None) with its finding, the
    budget left for the column's domain, and the noisy count of distinct values with its noise
    deviation."""

    column: UnmodelledColumn | None
    finding: Finding | None
    left: float
    distinct: float
    distinct_std: float


def detect_identifier(name: str, series: pd.Series, text_like: bool, counts: CountRelease, budget: float,
                      delta: float, cells: float, missing_markers: Sequence[str] = ("",),
                      weights: np.ndarray | None = None) -> Detection:
    """An id or free-text column, when the column is (nearly) unique per row (``Detection``).

    A noisy count of the distinct values costs what gives it a noise deviation of
    ``DISTINCT_PRECISION`` times ``cells`` (ample for the decision below: a large column pays
    almost nothing), at most ``ID_DETECTION_SHARE`` of ``budget``. One person changes the count
    by at most one, under either relation; it is charged as a histogram cell, which is never
    less. It must clear ``UNIQUE_SHARE`` of the vote's noisy count of cells (``cells``) by
    ``LEAD_MARGIN`` deviations. Only then is the rest spent, on a thresholded histogram of the
    values' key shapes (``synth.columns.unmodelled``), which shapes the fresh keys (or, for text with no
    dominant shape, says free text); otherwise the rest is left for the column's domain.
    """
    exact = text_counts(series, missing_markers, weights)
    share = min(budget * ID_DETECTION_SHARE, counts.budget_for_std(DISTINCT_PRECISION * cells))
    released = counts.release(np.array([exact.size]), share, query=f"distinct({name}): count of distinct values")
    distinct = float(released.values[0])
    unique_enough = distinct - LEAD_MARGIN * released.std
    if unique_enough < UNIQUE_SHARE * cells:
        return Detection(None, None, budget - share, distinct, released.std)
    shapes = _thresholded(name, template_counts(exact), counts, budget - share, delta, "key shapes").counts
    column = judge_unique(name, unique_enough, cells, shapes.to_dict(), text_like, DomainSource.DP_ESTIMATED)
    assert column is not None  # uniqueness was checked above with the same numbers
    kind = column.kind
    if kind == Kind.TEXT:
        return Detection(column, Finding(name, kind, "rough", (
            f"free text: about {distinct:.0f} distinct values in {cells:.0f} cells (noisy), with no shared "
            "shape; left out of the model, its output column is empty")), 0.0, distinct, released.std)
    keys = f"shaped {column.template}" if column.template else "1, 2, 3, ..."
    return Detection(column, Finding(name, kind, "located", (
        f"an identifier: about {distinct:.0f} distinct values in {cells:.0f} cells (noisy); written as "
        f"fresh keys {keys}")), 0.0, distinct, released.std)


def _domain_budgets(kinds: Mapping[str, Kind], budget: float) -> dict[str, float]:
    """Each column's share of ``budget`` for its domain, by ``DOMAIN_WEIGHTS``."""
    weighted = {name: DOMAIN_WEIGHTS[kind] for name, kind in kinds.items() if DOMAIN_WEIGHTS[kind] > 0}
    if not weighted:
        return {}
    return dict(zip(weighted, split_budget(budget, list(weighted.values()))))


def discover_columns(data: pd.DataFrame | CountingTable, kinds: Mapping[str, Kind | None], counts: CountRelease,
                     budget: float, delta: float, progress: Progress,
                     missing_markers: Sequence[str] = ("",), notes: list[str] | None = None,
                     reserve: float = 0.0) -> Discovery:
    """DP kinds and domains for the columns in ``kinds``, spending at most ``budget + reserve`` (and ``delta``).

    A kind of None (not declared in public) is first decided by ``vote_kind``. The votes get
    ``VOTE_WEIGHT`` each against the domains to come (``UNDECIDED_WEIGHT`` for an undecided
    column, ``DOMAIN_WEIGHTS`` for a declared one); what the votes leave is then split over the
    domains by ``DOMAIN_WEIGHTS`` of the kinds decided. ``delta`` is shared equally, after the
    votes, by the columns that need it: text, and whole numbers that may be keys.

    ``reserve`` is spent only on text columns: first, at most ``LEFT_OVER_RESERVE`` of it on a
    noisy count of the cells left over by each located list whose completeness the counts released
    leave undecided, priced to what the decision needs (``_settle_open_lists``; see
    ``discover_categories``); then what is left on a second pass over the text columns whose first
    pass left them rough or lost (shared equally between them, each with half of its δ): values of
    about the same size, too small for the first pass's threshold, are then found at the lower
    threshold of a larger budget, and merged with the first pass's (``Found.merged``).

    ``data`` is a DataFrame or a counting backend's table: each column is read as its cells, or
    its distinct cells with the rows holding each (``column_cells``), and gives the same counts.
    """
    table = as_table(data)
    undecided = [n for n, k in kinds.items() if k is None]
    domain_weight = sum(UNDECIDED_WEIGHT if k is None else DOMAIN_WEIGHTS[k] for k in kinds.values())
    vote_budget = 0.0
    if undecided:
        if domain_weight > 0:
            vote_budget, budget = split_budget(budget, [VOTE_WEIGHT * len(undecided), domain_weight])
        else:
            vote_budget, budget = budget, 0.0
    votes = {name: Vote(kind) for name, kind in kinds.items() if kind is not None}
    if undecided:
        shares = split_budget(vote_budget, [1.0] * len(undecided))
        for name, share in progress.track(list(zip(undecided, shares)), "deciding column kinds under DP", len(undecided)):
            cells = table.column_cells(name)
            votes[name] = vote_kind(name, cells.values, counts, share, missing_markers, notes, cells.weights)
    if delta <= 0:  # without δ a mixed column's values cannot be listed: it reads as its numbers or dates
        votes = {name: vote.as_mixed_kind() if vote.mixed is not None else vote for name, vote in votes.items()}
    decided = {name: votes[name].kind for name in kinds}
    # δ goes only to the columns the votes left needing it: text, and whole numbers that may be keys
    need_delta = [n for n in kinds if decided[n] == Kind.CATEGORICAL or _may_be_identifier(n, decided[n], votes[n])]
    deltas = dict(zip(need_delta, split_budget(delta, [1.0] * len(need_delta)))) if delta > 0 and need_delta else {}
    text = [n for n, k in decided.items() if k == Kind.CATEGORICAL and n not in deltas]
    if text:
        raise BudgetError(
            f"column(s) {text} hold text whose categories are not in a profile, and discovering them under "
            "DP needs delta > 0. Pass --delta (e.g. 1e-9), or write a profile that lists them (`synth "
            "profile DATA -o profile.toml`, then review it)."
        )
    passes = 2 if reserve > 0 else 1  # each pass over a text column's values gets this share of its δ
    budgets = _domain_budgets(decided, budget) if budget > 0 else {}
    columns: dict[str, Column | UnmodelledColumn] = {}
    findings: dict[str, Finding] = {}
    first_pass: dict[str, tuple[Found, float | None]] = {}  # text columns left rough or lost
    open_lists: dict[str, Found] = {}  # text columns located with a list not (yet) taken as complete
    for name in progress.track(list(kinds), "estimating domains under DP", len(kinds)):
        kind, vote = decided[name], votes[name]
        if kind in UNMODELLED_KINDS and vote.present is not None:  # voted all missing: written empty
            columns[name] = UnmodelledColumn(name, kind, None, DomainSource.DP_ESTIMATED)
            findings[name] = Finding(name, kind, "located", (
                f"all missing: about {max(vote.present, 0.0):.0f} present cells (noisy), which do not clear the noise; "
                "left out of the model, written empty"))
            continue
        if kind in UNMODELLED_KINDS:  # declared in public: nothing to measure
            columns[name] = UnmodelledColumn(name, kind, None, DomainSource.PUBLIC)
            findings[name] = Finding(name, kind, "located", "declared; " + (
                "written as fresh keys 1, 2, 3, ..." if kind == Kind.ID else "left out of the model, written empty"))
            continue
        cells = table.column_cells(name)
        if kind == Kind.BOOLEAN:
            shape = vote_shape(name, cells.values, kind, counts, budgets[name], missing_markers, cells.weights)
            columns[name] = Column(name=name, kind=kind, missing=vote.missing, source=DomainSource.PUBLIC, shape=shape)
            findings[name] = Finding(name, kind, "located", "/".join(shape.labels or ("True", "False")))
            continue
        left, distinct = budgets[name], None
        if name in deltas and _may_be_identifier(name, kind, vote):
            assert vote.cells is not None
            detection = detect_identifier(name, cells.values, kind == Kind.CATEGORICAL, counts, left,
                                          deltas[name], vote.cells, missing_markers, cells.weights)
            if detection.column is not None and detection.finding is not None:
                columns[name] = detection.column
                findings[name] = detection.finding
                continue
            left = detection.left
            if detection.distinct >= SPREAD_CLEARANCE * detection.distinct_std:  # else too noisy to tell
                distinct = detection.distinct
        shape, read_as = TextShape(), ""
        if kind == Kind.CATEGORICAL:
            listing = left * MIXED_LIST_SHARE if vote.mixed is not None else left
            column, finding, found = discover_categories(name, cells.values, counts, listing, deltas[name] / passes,
                                                         missing_markers, vote, distinct, weights=cells.weights)
            if vote.mixed is not None and finding.verdict != "located":  # too many values to list
                read_as = (f"too many values to list as categories (those found hold under {ROUGH_COVERAGE:.0%} of "
                           f"its cells), so read as {vote.mixed.value} values, its text cells written as missing; ")
                kind, vote, left = vote.mixed, vote.as_mixed_kind(), left - listing
            elif finding.verdict != "located":
                first_pass[name] = found, distinct
            elif column is not None and not column.complete:
                open_lists[name] = found
        if kind != Kind.CATEGORICAL:
            if kind in SHAPE_CELLS:
                shape = vote_shape(name, cells.values, kind, counts, left * SHAPE_SHARE, missing_markers,
                                   cells.weights)
                left -= left * SHAPE_SHARE
            values, _ = parse_values(cells.values, kind, missing_markers, shape)
            located = locate_bounds(name, values, kind, counts, left, vote.cells, cells.weights, vote.cells_std)
            column, finding = located.column, Finding(name, kind, located.verdict, read_as + located.detail)
            if column is not None and _writes_one_value(column, shape) and (
                    located.short is not None or (vote.cells is not None and _whole(column))):
                held = f", about {located.short:.0%} of its cells (noisy)" if located.short is not None else ""
                near = number_text(column.lower or 0.0)
                column, finding = None, Finding(name, kind, "lost", (
                    f"only values near {near} stood clear of the noise{held}; written alone "
                    "they would make a constant of a column that is not one (its other values are too thin to see "
                    "at this budget). Give lower and upper in a profile, or spend more (--epsilon, "
                    "discovery_share)."))
        if column is not None:
            columns[name] = replace(column, missing=vote.missing, shape=shape)
        findings[name] = finding
    if reserve > 0 and open_lists:
        spent = _settle_open_lists(table, open_lists, votes, columns, findings, counts, reserve * LEFT_OVER_RESERVE,
                                   missing_markers)
        reserve = floor_float(Fraction(reserve) - sum(map(Fraction, spent), Fraction(0)))  # exact: never over
    if reserve > 0 and first_pass:
        again = dict(zip(first_pass, split_budget(reserve, [1.0] * len(first_pass))))
        for name in progress.track(list(first_pass), "looking again for text values under DP", len(first_pass)):
            earlier, distinct = first_pass[name]
            cells = table.column_cells(name)
            column, findings[name], _ = discover_categories(name, cells.values, counts, again[name],
                                                            deltas[name] / passes, missing_markers, votes[name],
                                                            distinct, earlier, cells.weights)
            if column is not None:
                columns[name] = replace(column, missing=votes[name].missing)
    ordered = {name: columns[name] for name in kinds if name in columns}
    return Discovery(ordered, tuple(findings[name] for name in kinds), tuple(first_pass) if reserve > 0 else ())


def _writes_one_value(column: Column, shape: TextShape) -> bool:
    """Whether a float column's range holds a single number of the decimals it is written with
    (a range found only around the zeros of a column whose other values were too thin to see).
    Such a range is lost when it is clearly short of the vote's cells, or when its one number is
    whole while the vote found numbers with decimals (a column of one value 0.7 may be real)."""
    if column.kind != Kind.FLOAT or shape.decimals is None or column.lower is None or column.upper is None:
        return False
    return numbers_inside(column.lower, column.upper, shape.decimals) <= 1


def _whole(column: Column) -> bool:
    """Whether a float column's range holds only a whole number: the vote found numbers with
    decimals in it, so a range around one whole number missed them."""
    return column.lower is not None and column.upper is not None and math.ceil(column.lower) <= column.upper


def _settle_open_lists(table: CountingTable, open_lists: Mapping[str, Found], votes: Mapping[str, Vote],
                       columns: dict[str, Column | UnmodelledColumn], findings: dict[str, Finding],
                       counts: CountRelease, budget: float, missing_markers: Sequence[str]) -> list[float]:
    """Buy a direct noisy count of the cells left over (``count_left_over``) for each located list
    whose completeness the released counts leave undecided (``left_over_std_to_buy``), priced to
    the deviation it needs (rounded up to a power of 2^(1/4), so that one person's cell does not
    move the price), all together at most ``budget`` (scaled down alike when they need
    more; a count that could then no longer make its list complete is not bought). Each list is
    judged again on both estimates combined; ``columns`` and ``findings`` are updated. Returns
    the budgets spent."""
    wanted: dict[str, tuple[LeftOver, float, float]] = {}  # name -> (free estimate, deviation bought, its budget)
    for name, found in open_lists.items():
        column, vote = columns[name], votes[name]
        assert isinstance(column, Column) and column.categories is not None
        left = free_left_over(vote, found, len(column.categories))
        if left is None or vote.present is None:
            continue
        std = left_over_std_to_buy(left, vote.present, text_left_over(vote, found, len(column.categories)))
        if std is not None:
            need = counts.budget_for_std(std)
            # rounded up to a power of 2^(1/4): a neighbour's noisy counts, one apart, give the same price
            price = 2.0 ** (math.ceil(math.log2(need) * PRICE_STEPS) / PRICE_STEPS)
            wanted[name] = left, std * math.sqrt(need / price), price
    if not wanted or not budget > 0:
        return []
    costs = [cost for _, _, cost in wanted.values()]
    if sum(costs) > budget:  # all scaled down alike, in parts that provably add up to the budget
        costs = split_budget(budget, costs)
    spent = []
    for (name, (left, std, cost)), share in zip(wanted.items(), costs, strict=True):
        column, vote = columns[name], votes[name]
        assert isinstance(column, Column) and column.categories is not None and vote.present is not None
        reachable = left.combined(LeftOver(0.0, std * math.sqrt(cost / share)))
        if COMPLETE_MARGIN * reachable.std >= COMPLETE_SHARE * vote.present:
            continue  # even a left-over count of zero could not make the list complete
        cells = table.column_cells(name)
        left = left.combined(count_left_over(name, cells.values, column.categories, counts, share,
                                             missing_markers, cells.weights))
        spent.append(share)
        if complete_list(left, vote.present):
            columns[name] = replace(column, complete=True)
            findings[name] = _located(name, len(column.categories), True)
    return spent


def _may_be_identifier(name: str, kind: Kind, vote: Vote) -> bool:
    """Voted text, or voted whole numbers under a key-like name (``looks_like_identifier``: a
    public fact): worth a noisy distinct count (and δ to find the keys' shape)."""
    if vote.cells is None or not vote.cells > 0:
        return False
    return kind == Kind.CATEGORICAL or (kind == Kind.INTEGER and looks_like_identifier(name))

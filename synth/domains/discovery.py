"""Domains estimated under DP, for columns whose public domain the profile does not give.

This module reads private values (it is inside the privacy boundary, beside the curator) and
releases only noisy, charged answers:

* a column's kind (number, date, boolean or text), unless declared in public, is decided from a
  noisy count of what its cells read as, with a margin over the noise, so one person's odd cell
  cannot flip it (``vote_kind``);
* numeric and datetime columns: bounds and bins from two noisy histograms over public grids
  (``synth.domains.bounds``);
* text columns: a thresholded noisy histogram of the values present, a value kept only when a
  value held by a single person would clear its threshold with probability δ₀ at most (so this needs
  δ > 0; under pure DP it is refused with a clear message), and a list complete (no OTHER code)
  when the cells it leaves are surely below 3 % of the column's (``synth.domains.categories``). A
  text column left rough or lost gets a second pass from a reserve, at a lower threshold; a list the
  counts released leave undecided gets, from the reserve, a noisy count of the cells it leaves;
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
from synth.columns.column import Column, number_text
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
from synth.domains.categories import (
    COMPLETE_MARGIN,
    COMPLETE_SHARE,
    ROUGH_COVERAGE,
    Found,
    LeftOver,
    complete_list,
    count_left_over,
    discover_categories,
    free_left_over,
    left_over_std_to_buy,
    located_finding,
    text_left_over,
    thresholded,
)
from synth.domains.verdict import Finding
from synth.domains.votes import LEAD_MARGIN, Vote, vote_kind, vote_shape
from synth.errors import BudgetError
from synth.privacy import split_budget
from synth.privacy.curator import CountRelease
from synth.privacy.exact import floor_float
from synth.progress import Progress
from synth.tables.counting import CountingTable, as_table

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
    shapes = thresholded(name, template_counts(exact), counts, budget - share, delta, "key shapes").counts
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
            located = locate_bounds(name, values, kind, counts, left, vote.cells, cells.weights, vote.cells_std,
                                    shape.decimals if kind == Kind.FLOAT else None)
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
            findings[name] = located_finding(name, len(column.categories), True)
    return spent


def _may_be_identifier(name: str, kind: Kind, vote: Vote) -> bool:
    """Voted text, or voted whole numbers under a key-like name (``looks_like_identifier``: a
    public fact): worth a noisy distinct count (and δ to find the keys' shape)."""
    if vote.cells is None or not vote.cells > 0:
        return False
    return kind == Kind.CATEGORICAL or (kind == Kind.INTEGER and looks_like_identifier(name))

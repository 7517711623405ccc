"""Before discovery spends anything: can it find the columns at this budget? One cheap noisy check.

Inside the privacy boundary, beside ``discovery`` (it reads the private cells), and it releases one
number only, with noise, charged and ledgered through ``CountRelease``: nothing else it computes
leaves it. It never decides a kind or a domain; it only stops a run that discovery would surely
refuse, before discovery spends its share of the budget (about ε = 0.43 of ε = 1 under zCDP).

Discovery finds a column only when something it looks for clears a threshold set by its noise at
the budget it gives the column: enough cells of one kind for the kind vote, then one run of up to
four octaves of numbers or calendar years holding enough rows (the coarse bounds histogram), or one
text value holding enough rows (the thresholded histogram: its first look, or the second look paid
from the reserve, which the text columns that the first look missed share); or it finds that the
column needs no domain (all missing, or about one value per row: an identifier or free text).
``plan_needs`` works out those thresholds from public facts only (the budget, the columns, their
declared kinds) with the budgets ``discover_columns`` plans (every undecided column weighed
alike). ``column_room`` measures, for one column, by how many rows its exact counts clear them
(``Room``): on a way to a domain that is not a text value, on a way that needs none, on a vote for
a kind other than text, and the rows of its most common value.

What is released is a certificate that discovery cannot find what the run needs, or not. A column
is lost when every way falls short; the text way falls shorter the more columns share the reserve
(and δ), and every column voted text whose top value misses the first look does share it. So when,
for some k, k columns each fall short on every way but text, and of a value that shares the
reserve k ways, they are all lost: any of them voted text shares it at least k ways
(``certificate``; k in 1, 2, 4, ... and all, ``sharings``). The check releases the least such
margin (or, when rough domains are accepted and one modelled column is enough, a margin that is
below zero only when every column is lost), with noise of ``PRECHECK_SHARE`` of the budget, and
refuses when the noisy value plus a margin that the noise exceeds with probability
``FALSE_REFUSAL`` is still below zero.

It takes discovery's thresholds as sharp and its budgets as planned: a column a few rows short is
taken as lost, though discovery's own noise lifts such a count over its threshold now and then; and
an undecided column gets more than planned when others turn out yes/no or all missing (they weigh
less), so a table of many yes/no columns beside one short numeric column could be refused here that
discovery would have served. What it leaves out only lets through runs that discovery then refuses:
the lead a vote needs, the coverage and coarse-to-fine checks of ``synth.domains.bounds``, and an
identifier's noisy cell count.

Privacy: each count above (cells of a class, rows in a value or in a run of buckets, distinct
values, present or missing cells) moves by at most one between neighbours, under either relation;
so does a count less a constant, a maximum, minimum or order statistic of such terms, and its floor.
Distinct values less 0.8 times the cells read as text move by at most one when a row is added or
removed, and by 1.8 when one is replaced, so under the replace relation they are scaled by 1/1.8.
The released value has sensitivity 1; it is released as a one-cell histogram, charged at the
histogram's sensitivity (2 under the replace relation: conservative).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from synth.columns.cells import CELL_CLASSES, classify_cells, parse_values, text_counts, weighted_bincount
from synth.columns.kinds import Kind
from synth.columns.textshape import TextShape
from synth.columns.unmodelled import UNIQUE_SHARE
from synth.domains.bounds import COARSE_SHARE, COARSE_WINDOWS, FALSE_ALARM, bucket_counts
from synth.domains.categories import appearance_threshold
from synth.domains.discovery import (
    DOMAIN_WEIGHTS,
    ID_DETECTION_SHARE,
    UNDECIDED_WEIGHT,
    VOTE_WEIGHT,
)
from synth.domains.grids import NUMERIC_EDGES, YEAR_EDGES, noise_threshold
from synth.domains.votes import LEAD_MARGIN, VOTE_MARGIN
from synth.errors import DiscoveryError
from synth.privacy import Notion, split_budget
from synth.privacy.composition import zcdp_to_approx_epsilon
from synth.privacy.curator import CountRelease
from synth.privacy.neighbours import Relation
from synth.progress import SILENT, Progress
from synth.tables.counting import CountingTable

PRECHECK_SHARE = 0.008  # of the budget (of ρ under zCDP: ε of about 8 % of the budget's; of ε under pure DP)
FALSE_REFUSAL = 0.01  # chance that the check's noise alone refuses a table whose certificate is at 0
_LIMIT = 2**40  # what is released is clipped here (a count of rows never comes near it)
_NUMBERS = (Kind.INTEGER, Kind.FLOAT)


@dataclass(frozen=True)
class Needs:
    """What discovery needs to find one column at its planned budget (public: no data).

    ``vote``: cells of one class its kind vote needs (√2 times more for numbers, which take two
    classes; None: the kind is declared); ``numbers``, ``dates``: the coarse histogram's thresholds
    for runs of 1, 2 and 4 octaves or years (None: ruled out by a declared kind); ``text``: for k
    text columns sharing the reserve and δ, k in ``sharings``, the rows one value needs (empty: no
    text search, under δ = 0 or a declared kind); ``all_missing``: whether it may be found all missing (an
    undecided column); ``unique``: the least noise deviation of its noisy count of distinct values,
    when it may be found an identifier or free text (None: it may not, as a declared column or
    under δ = 0), and what its margin is scaled by so that one row moves it by at most one."""

    vote: float | None
    numbers: tuple[float, ...] | None
    dates: tuple[float, ...] | None
    text: Mapping[int, float]
    all_missing: bool
    unique: float | None
    unique_scale: float = 1.0


@dataclass(frozen=True)
class Room:
    """One column's margins in rows (exact, private), each the best over some of the ways
    discovery could find it (-inf: none): ``modelled``, a domain that is not a text value (yes/no,
    numbers, dates); ``unmodelled``, none needed (all missing, identifier or free text); ``vote``,
    a kind other than text winning the vote (then it is not text); ``top``, the rows of its most
    common value (None: no text way)."""

    modelled: float
    unmodelled: float
    vote: float
    top: float | None

    def lost(self, need: Needs, sharing: int, modelled_only: bool = False) -> float:
        """Its margin when ``sharing`` text columns share the reserve: below zero, it is lost
        (``modelled_only``: it is lost or found without a domain)."""
        other = self.modelled if modelled_only else max(self.modelled, self.unmodelled)
        if self.top is None or not need.text:
            return other
        return max(other, self.top - need.text[sharing])

    def shares(self, need: Needs, sharing: int) -> float:
        """Below zero, it is surely voted text, neither all missing nor an identifier, and its
        top value misses the first look's threshold and ``sharing`` columns' second look: it is
        lost, and one of those that share the reserve."""
        if self.top is None or not need.text:
            return math.inf
        return max(self.vote, self.unmodelled, self.top - need.text[sharing])


@dataclass(frozen=True)
class Feasibility:
    """The check's noisy value (rows), its noise deviation, its share of the budget, and which
    certificate it was: "every column" must be found, or "one column" is enough."""

    room: float
    std: float
    share: float
    needed: str

    def to_dict(self) -> dict[str, Any]:
        return {"share": self.share, "needed": self.needed, "noisy_room": self.room, "noise_std": self.std}


def _coarse_thresholds(counts: CountRelease, budget: float, edges: np.ndarray) -> tuple[float, ...]:
    """``detect_range``'s thresholds for runs of 1, 2, 4 buckets of the coarse histogram that
    ``locate_bounds`` releases from a bounds budget of ``budget``."""
    noise = counts.calibrate(budget * COARSE_SHARE, counts.neighbouring.histogram_l1, counts.neighbouring.histogram_l2)
    laplace = noise.scale if noise.name == "discrete_laplace" else None
    alpha = FALSE_ALARM / (len(COARSE_WINDOWS) * (edges.size - 1))
    return tuple(noise_threshold(alpha, w, noise.std, laplace) for w in COARSE_WINDOWS)


def sharings(columns: int) -> tuple[int, ...]:
    """How many text columns share the reserve in the certificates tried: 1, 2, 4, ... and all
    ``columns`` (a few thresholds, even for thousands of columns; fewer certificates only make the
    check refuse less)."""
    return tuple(sorted({*(2**i for i in range(columns.bit_length()) if 2**i <= columns), columns})) if columns else ()


def _share(domains: float, kind: Kind, others: float) -> float:
    """A column's planned share of the domains' budget as ``kind``, against ``others``' weights."""
    weight = DOMAIN_WEIGHTS[kind]
    return domains * weight / (others + weight)


def plan_needs(kinds: Mapping[str, Kind | None], counts: CountRelease, budget: float, delta: float,
               reserve: float = 0.0) -> dict[str, Needs | None]:
    """What ``discover_columns(kinds, counts, budget, delta, reserve=reserve)`` needs to find each
    column (None: a column found whatever its data, a declared boolean, id or text column, or one
    this check does not judge: a declared text column under δ = 0, which discovery refuses).

    The vote's share is the one discovery takes (``VOTE_WEIGHT`` per undecided column against the
    domains' weights); a column's domain share is its kind's weight against the others' planned
    weights (``UNDECIDED_WEIGHT`` for an undecided one). A text value, with k columns sharing δ and
    the reserve, needs the lower of the first look's threshold and the second look's (each look
    half of the column's δ, as discovery does)."""
    h1, h2 = counts.neighbouring.histogram_l1, counts.neighbouring.histogram_l2
    undecided = [name for name, kind in kinds.items() if kind is None]
    planned = {name: UNDECIDED_WEIGHT if kind is None else DOMAIN_WEIGHTS[kind] for name, kind in kinds.items()}
    total = sum(planned.values())
    domains, vote = budget, None
    if undecided:
        vote_budget, domains = split_budget(budget, [VOTE_WEIGHT * len(undecided), total])
        vote = VOTE_MARGIN * counts.calibrate(vote_budget / len(undecided), h1, h2).std
    texts = [name for name, kind in kinds.items() if kind in (None, Kind.CATEGORICAL)] if delta > 0 else []
    passes = 2 if reserve > 0 else 1
    # distinct values less 0.8 times the text cells: one row added or removed moves it by at most one,
    # one row replaced by up to 1.8 (a shared text turned into a new number)
    unique_scale = 1.0 if counts.neighbouring.relation == Relation.ADD_REMOVE else 1 / (1 + UNIQUE_SHARE)

    def per_cell(sharing: int) -> float:
        return delta / sharing / passes / counts.neighbouring.cells_that_appear

    second = {k: appearance_threshold(counts.calibrate(split_budget(reserve, [1.0] * k)[0], h1, h2), per_cell(k),
                                 counts.neighbouring.rows_in_new_cell)[0]
              if reserve > 0 else math.inf for k in sharings(len(texts))}
    first_looks: dict[float, dict[int, float]] = {}  # by domain share: every undecided column has the same
    needs: dict[str, Needs | None] = {}
    for name, kind in kinds.items():
        if kind in (Kind.BOOLEAN, Kind.ID, Kind.TEXT) or (kind == Kind.CATEGORICAL and not texts):
            needs[name] = None
            continue
        others = total - planned[name]  # the other columns' planned weights
        numbers = dates = None
        if kind is None or kind in _NUMBERS:
            numbers = _coarse_thresholds(counts, _share(domains, Kind.INTEGER, others), NUMERIC_EDGES)
        if kind in (None, Kind.DATETIME):
            dates = _coarse_thresholds(counts, _share(domains, Kind.DATETIME, others), YEAR_EDGES)
        text: dict[int, float] = {}
        if name in texts:
            share = _share(domains, Kind.CATEGORICAL, others)
            if share not in first_looks:
                first = counts.calibrate(share, h1, h2)
                first_looks[share] = {k: float(min(appearance_threshold(first, per_cell(k), counts.neighbouring.rows_in_new_cell)[0],
                                                            looked))
                                      for k, looked in second.items()}
            text = first_looks[share]
        unique = None
        if kind is None and delta > 0:  # the distinct count's share is at most ID_DETECTION_SHARE of its domain's
            most = _share(domains, Kind.CATEGORICAL, others) * ID_DETECTION_SHARE
            unique = counts.calibrate(most, h1, h2).std
        needs[name] = Needs(vote if kind is None else None, numbers, dates, text, kind is None, unique, unique_scale)
    return needs


def _best_run(values: np.ndarray, weights: np.ndarray | None, edges: np.ndarray, thresholds: Sequence[float]) -> float:
    """The largest margin by which the rows in a run of 1, 2 or 4 adjacent buckets of ``edges``
    exceed that run's threshold."""
    counts = bucket_counts(values, edges, weights).astype(float)
    best = -math.inf
    for width, threshold in zip(COARSE_WINDOWS, thresholds):
        if width <= counts.size:
            best = max(best, float(np.convolve(counts, np.ones(width), mode="valid").max()) - threshold)
    return best


def column_room(values: Any, weights: np.ndarray | None, kind: Kind | None, need: Needs,
                missing_markers: Sequence[str] = ("",)) -> Room:
    """By how many rows one column's exact counts clear what discovery ``need``s (``Room``).
    Exact and private: only ``check_feasible`` may release anything of it, with noise."""
    classes = weighted_bincount(classify_cells(values, missing_markers) + 1, weights, len(CELL_CLASSES) + 1)
    missing, present = float(classes[0]), float(classes[1:].sum())
    cells = {k: float(classes[1 + CELL_CLASSES.index(k)]) for k in CELL_CLASSES}
    vote = need.vote
    modelled, votes, unmodelled = [-math.inf], [-math.inf], [-math.inf]
    if vote is not None:  # undecided: yes/no words are found once their vote clears
        votes.append(cells[Kind.BOOLEAN] - vote)
        modelled.append(cells[Kind.BOOLEAN] - vote)
    if need.numbers is not None:
        readable = cells[Kind.INTEGER] + cells[Kind.FLOAT]
        if vote is not None:
            votes.append(readable - vote * math.sqrt(2))
        if vote is None or readable > 0:  # with none, this way falls shorter than the yes/no one
            numbers, _ = parse_values(values, kind if kind in _NUMBERS else Kind.FLOAT, missing_markers)
            modelled.append(min(votes[-1] if vote is not None else math.inf,
                                _best_run(numbers, weights, NUMERIC_EDGES, need.numbers)))
    if need.dates is not None:
        if vote is not None:
            votes.append(cells[Kind.DATETIME] - vote)
        if vote is None or cells[Kind.DATETIME] > 0:
            month, _ = parse_values(values, Kind.DATETIME, missing_markers)
            day, _ = parse_values(values, Kind.DATETIME, missing_markers, TextShape(dayfirst=True))
            run = _best_run(np.where(np.isnan(month), day, month), weights, YEAR_EDGES, need.dates)  # either day order
            modelled.append(min(votes[-1] if vote is not None else math.inf, run))
    found = text_counts(values, missing_markers, weights) if need.text or need.unique is not None else None
    if vote is not None and need.all_missing:
        unmodelled.append(min(missing - vote, vote * math.sqrt(len(CELL_CLASSES)) - present))
    if need.unique is not None and found is not None:  # the vote's cells are those read as text
        clear = float(found.size) - LEAD_MARGIN * need.unique - UNIQUE_SHARE * cells[Kind.CATEGORICAL]
        unmodelled.append(clear * need.unique_scale)
    top = (float(found.max()) if found.size else 0.0) if need.text and found is not None else None
    return Room(max(modelled), max(unmodelled), max(votes), top)


def _kth(values: Sequence[float], k: int) -> float:
    """The k-th least of ``values`` (k from 1); +inf when there are fewer."""
    return sorted(values)[k - 1] if len(values) >= k else math.inf


def certificate(rooms: Mapping[str, Room], needs: Mapping[str, Needs], every_column: bool = True) -> float:
    """Below zero when discovery surely cannot find what the run needs (exact: rows, floored).

    ``every_column`` (a lost column stops the run): the least, over the columns that cannot be
    text, of their margin, and over k in ``sharings``, of the k-th least margin of the columns that
    may be text, their values sharing the reserve k ways. Below zero, some column falls short on every
    way, or k of them do, and each of those is lost: voted text, it shares the reserve k ways or
    more (so do the others, which fall short on every other way and miss the first look).

    Otherwise (one modelled column found is enough): over k, the larger of the k-th least margin
    by which a column escapes sharing the reserve (``Room.shares``) and the most margin of any
    column with a value sharing it k ways. Below zero, k columns surely share it, so every column
    is lost or found without a domain."""
    texts = [name for name in rooms if rooms[name].top is not None and needs[name].text]
    fixed = [rooms[name].lost(needs[name], 1, not every_column) for name in rooms if name not in texts]
    value = min(fixed, default=math.inf) if every_column else max(fixed, default=-math.inf)
    if texts:
        ways = tuple(needs[texts[0]].text)  # the plan's: every column that may be text has the same
        if every_column:
            for k in ways:
                value = min(value, _kth([rooms[name].lost(needs[name], k) for name in texts], k))
        else:
            least = math.inf
            for k in ways:
                most = max(value, *(rooms[name].lost(needs[name], k, modelled_only=True) for name in texts))
                least = min(least, max(most, _kth([rooms[name].shares(needs[name], k) for name in texts], k)))
            value = least
    return float(np.clip(math.floor(value), -_LIMIT, _LIMIT)) if math.isfinite(value) else math.copysign(_LIMIT, value)


def check_feasible(table: CountingTable, kinds: Mapping[str, Kind | None], counts: CountRelease, whole: float,
                   budget: float, delta: float, reserve: float = 0.0, missing_markers: Sequence[str] = ("",),
                   accept_rough: bool = False, others: bool = False,
                   progress: Progress = SILENT) -> Feasibility | None:
    """Spend ``PRECHECK_SHARE`` of ``whole`` (the budget, in the notion's unit) on one noisy
    ``certificate`` and raise DiscoveryError when discovery, given ``budget``, ``delta`` and
    ``reserve`` for ``kinds``, surely cannot find what the run needs: every column, or with
    ``accept_rough`` one modelled column. Returns the check, or None when there was nothing to
    check (nothing is spent): no column can be lost, or something is released whatever discovery
    finds (rough domains accepted, with ``others``, columns whose domain is given, or a declared
    boolean)."""
    if accept_rough and (others or any(kind == Kind.BOOLEAN for kind in kinds.values())):
        return None
    planned = plan_needs(kinds, counts, budget, delta, reserve)
    needs = {name: need for name, need in planned.items() if need is not None}
    if not needs:
        return None
    rooms = {}
    for name in progress.track(list(needs), "checking whether discovery can find the columns", len(needs)):
        cells = table.column_cells(name)
        rooms[name] = column_room(cells.values, cells.weights, kinds[name], needs[name], missing_markers)
    needed = "one column" if accept_rough else "every column"
    exact = certificate(rooms, needs, every_column=not accept_rough)
    share = min(PRECHECK_SHARE, (1.0 - (budget + reserve) / whole) / 2) * whole
    released = counts.release(
        np.array([int(exact)]), share,
        query=f"feasibility: room, in rows, for discovery to find {needed} (a certificate over the columns)",
        note=f"before discovery, {share / whole:.3g} of the budget; the run stops here when it is surely below 0")
    noisy, std = float(released.values[0]), released.std
    laplace = released.noise_scale if released.mechanism == "discrete_laplace" else None
    check = Feasibility(noisy, std, share / whole, needed)
    if noisy + noise_threshold(FALSE_REFUSAL, 1, std, laplace) < 0:
        raise DiscoveryError(_refusal(check, list(needs.values()), counts))
    return check


def _needs_text(needs: Sequence[Needs]) -> str:
    """The needs at this budget, the least over the columns for each way, in words."""
    parts = []
    texts = [n.text for n in needs if n.text]
    if texts:
        most, one = min(t[max(t)] for t in texts), min(t[1] for t in texts)
        parts.append(f"{most:.0f} rows holding one text value ({one:.0f} when a single text column is left)"
                     if most > one else f"{one:.0f} rows holding one text value")
    numbers = [n.numbers[0] for n in needs if n.numbers is not None]
    if numbers:
        parts.append(f"{min(numbers):.0f} rows within one octave of numbers")
    dates = [n.dates[0] for n in needs if n.dates is not None]
    if dates:
        parts.append(f"{min(dates):.0f} rows within one calendar year")
    votes = [n.vote for n in needs if n.vote is not None]
    if votes:
        parts.append(f"and, for a column whose kind is not declared, {min(votes):.0f} cells of one kind "
                     f"({min(votes) * math.sqrt(2):.0f} numbers) to decide it")
    return ", ".join(parts)


def _more_budget(counts: CountRelease, factor: float) -> float:
    """The ε at which each count's noise, so each need, is ``factor`` times smaller."""
    budget = counts.accountant.budget_dict()
    if counts.notion == Notion.ZCDP:
        return zcdp_to_approx_epsilon(budget["rho"] * factor**2, budget["delta"] - budget["delta_reserve"])
    return float(budget["epsilon"]) * factor


def _refusal(check: Feasibility, needs: Sequence[Needs], counts: CountRelease) -> str:
    short = f"about {-check.room:.0f} rows (noisy: give or take {check.std:.0f})"
    undecided = any(n.vote is not None for n in needs)
    text = (" (and no text value can be found with delta = 0: pass --delta, e.g. 1e-9, for columns of text)"
            if undecided and counts.accountant.budget.delta == 0 else "")
    what = ("discovery cannot find the domain of any column" if check.needed == "one column"
            else "discovery cannot find the domains of every column")
    unit = "rho" if counts.notion == Notion.ZCDP else "epsilon"
    return (f"{what} at this budget, so it was not run: a noisy check of the table ({check.share:.2%} of its "
            f"{unit}) found columns with no value and no range of values holding the rows discovery needs to find "
            f"them, short by {short}. At this budget discovery needs about {_needs_text(needs)}{text}. What would "
            "work: give the columns' domains in a profile (`synth profile DATA -o profile.toml`, review it, mark "
            "them source = \"public\"), which spends nothing on finding them; or describe fewer columns at once "
            "(each gets a larger share of the budget); or spend more: the rows needed shrink with the noise, to about "
            f"half at epsilon = {_more_budget(counts, 2):.3g} and a quarter at epsilon = {_more_budget(counts, 4):.3g}.")

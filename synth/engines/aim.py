"""Engine ``aim``: adaptive, workload-aware marginal selection (McKenna et al., VLDB 2022).

Under zCDP, AIM first measures every 1-way marginal of the workload's columns, fits a graphical
model, then repeats rounds until the budget is spent. Each round

1. keeps the candidates (every marginal inside a workload marginal) whose addition keeps the
   model within a size cap that grows with the share of budget spent (``max_model_size`` MB at
   the end), or that the model already covers. The size with a candidate is first bounded by
   merging the cliques that cover it into one (microseconds); when that bound is over the cap
   and there are at most ``EXACT_SIZE_CANDIDATES`` candidates, the junction tree is also rebuilt
   with the candidate (milliseconds each: too slow for the thousands of candidates of a wide
   table, where the bound alone decides);
2. picks one with the exponential mechanism, scoring candidate r by
   ``w_r * (‖x_r − model_r‖₁ − sqrt(2/π) σ n_r)``: its L1 error minus the error that measuring
   it would leave (n_r cells, noise σ), weighted by its overlap with the workload;
3. measures it with the Gaussian mechanism and refits the model (warm start);
4. anneals: when the refit moved that marginal by less than the expected noise, the next
   rounds get four times the ρ each (σ halves, ε doubles).

A round's budget is ρ/T at first (T rounds, ``planned_rounds`` unless set: 2 to 16 per column, more
for larger budgets, where the published AIM plans 16; 90 % measurement, 10 % selection); the last
round takes exactly what is left. The fitted model is only used to choose; the Description holds
the measurements, and generation refits them.

Beyond the published AIM, the 1-way marginals of a table with a strong signal (its rows against a
round's noise deviation, ``signal_of``) get less than a round's budget each: together at most
``ONE_WAY_SIGNAL`` / signal of the budget (``one_way_share``), and what they leave goes to the
rounds. The first workload column (by name) is measured with a whole round's budget, and the rows
are the total of its noisy counts (post-processing; under replace, the public count); the other
columns then get the share. Nothing more is spent.

Coarse candidates (``coarse_groups``, beyond the published AIM): a column with many codes is also
offered on a few groups of its codes. After the 1-way measurements, each column with more than twice
``g`` codes gets, for each resolution g, a map cutting its codes in code order into at most g
stretches of about equal noisy mass (post-processing of the charged 1-way counts; left "auto", g is
``COARSE_GROUPS``, 16, on every table). Every marginal of the whole workload (before ``max_cells``
drops the large ones) then also enters the candidates with its large columns on their groups, when
that coarse table has at most ``max_cells`` cells. A coarse candidate is scored, measured and
annealed like any other, on its groups (its cells are fewer, so its noise penalty is smaller): a
relation between large columns that a full table would drown in noise can be measured where it
shows, e.g. age × hours-per-week × income on 16 groups of age and of hours. The model holds a
measured coarse column as a derived column (``synth.model.derived``), so a coarse table costs the
model what it measured, not the full table. A rule that grew the groups with the rows
(16 n / 48,842) was fitted to adult_coded's rows; on fertility (254,654 rows: 83 groups, so none for
its 54-code column) 16 groups took ε = 1 from 0.0054 to 0.0050 (seeds 0–2) and ε = 3 from 0.0025 to
0.0026 (seeds 0–1). On the accuracy suite (seeds 0–2; benchmarks/RESULTS.md, 2026-12-03 12:45), against
16 groups, 8 scored a geometric mean of 1.006 (ε = 0.3) and 1.022 (ε = 1) on the tuning half (diamonds
1.122 and 1.147; adult_coded 0.961 and 1.032) and 32 scored 1.006 and 1.023 (cpssw8 1.175 and adult_coded
1.083 at ε = 1); the checking half 1.001 / 0.993 with 8 and 1.000 / 0.994 with 32.

Dense tables (``dense_plan``, beyond the published AIM): when a workload marginal's average cell would
hold at least ``DENSE_DEVIATIONS`` noise deviations with a round for every workload marginal
(``covering_rounds``, at most 8 per column), the budget's plan of a few large rounds is replaced by
those rounds, and no coarse candidates are offered: every marginal can then be measured well, and what
the model lacks is the marginals left unmeasured (military, 1.4 million rows of 6 columns, at ε = 1: 12
rounds for 20 triples scored 0.0020, the covering 26 rounds 0.0004). A table that is not dense but whose
workload cells hold ``SPARE_DEVIATIONS`` (3) deviations or more at a budget's floor of 2 rounds per column
gets more rounds, as many as keep 2 (``graded_plan``, up to the covering plan), its coarse candidates kept
(mpls_stops at ε = 0.3: 20 → 50 rounds, 0.0430 → 0.0399).

The plan (rounds, a round's split, the 1-way share, dense and graded plans, refit iterations) is
``synth.engines.aim_plan``; this module selects, measures and refits.

With given marginals (``with_given``: a relational child's parent columns, ``synth.engines.given``),
aim fits them and measures only marginals that hold a column they do not cover.

With ``compress`` (on unless set false; the AIM authors' advice for domains with rare values), the
1-way measurements also decide, as in mst, which codes of each column are too rare to keep apart
(noisy count below three noise deviations, ``synth.model.compression``): they are merged into one
code, the workload is resolved and every later selection and measurement is made on the merged
codes, and the Description records the maps and, as ``expansion`` in the engine output, the merged
codes' noisy 1-way counts clipped at zero: generation spreads a merged code over its codes in
proportion to them (post-processing of the charged 1-way measurements), not evenly. On the accuracy suite
(benchmarks/accuracy_suite.py: 12 coded public tables, ε = 1, seeds 0–2, mean 3-way TVD through
``synth run``) it scored better than without on all 12: the geometric mean of the ratio was 0.887
on the tuning half and 0.961 on the checking half (from 0.79 on car, 70 columns, to 0.996); at
ε = 0.3 0.958 and 0.946, equal on adult_coded and worse only on fertility (1.15).
"""

from __future__ import annotations

import copy
import itertools
import math
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

import numpy as np

from synth.columns.domain import Domain
from synth.defaults import FIT_ITERATIONS
from synth.engines.aim_plan import (
    dense_plan,
    graded_plan,
    one_way_share,
    planned_iterations,
    planned_rounds,
    round_budget,
    signal_of,
)
from synth.engines.base import EngineBase, EngineResult, fit_expanded
from synth.engines.given import check_given, compress_given, given_columns, touches_own
from synth.engines.options import EngineOptions, megabytes, true_or_false, whole_number
from synth.engines.output import (
    check_keys,
    output_of,
    read_expansion,
    read_names,
    read_whole,
    reading_output,
    recorded_expansion,
    write_expansion,
)
from synth.engines.workload import ORDERS, listed_marginals
from synth.errors import EngineError
from synth.model.compression import compress_one_way, expansion_weights
from synth.model.derived import DerivedColumns, fit_derived
from synth.model.fitting import Callback, fit_graphical_model
from synth.model.graphical import GraphicalModel
from synth.model.interface import Model
from synth.model.junction_tree import BYTES_PER_CELL, JunctionTree, ModelSizes
from synth.privacy import Notion
from synth.privacy.boundary import Boundary
from synth.privacy.measurement import Measurement
from synth.progress import Progress

COARSE_GROUPS = 16  # the groups of a coarse candidate's large columns when coarse_groups is "auto"
EXACT_SIZE_CANDIDATES = 1000  # up to this many candidates, sizes over the merge bound are also triangulated
SCORED_PER_ROUND = 8000  # candidates a round scores at most, unset: a wider table's rounds score a drawn subset
SUBSET_SEED = 20221124  # public: the draws of those subsets never read the data


def resolve_workload(spec: Any, domain: Domain, max_cells: int, explicit: bool = True,
                     ) -> tuple[list[tuple[str, ...]], str | None]:
    """The workload marginals, and a note when aim chose smaller ones than asked.

    "2-way" or "3-way": every marginal of that order with at most ``max_cells`` cells (as in the
    AIM authors' script); a column in none of them (too many codes) gets the largest marginals
    that fit at a lower order, down to its own 1-way marginal, so no column drops out of the
    workload. When no marginal of the order fits at all, an ``explicit`` setting (in
    [engine_options]) is refused; the default falls back and the note says so. A list of column
    lists is taken as given.
    """
    names = domain.names
    if not isinstance(spec, str):
        return listed_marginals(spec, names), None
    order = min(ORDERS[spec], len(names))
    workload = [q for q in itertools.combinations(names, order) if domain.size(q) <= max_cells]
    if not workload and explicit:
        raise EngineError(
            f"no {spec} marginal has at most max_cells = {max_cells} cells (workload and max_cells are set in "
            "[engine_options]). Raise max_cells, choose a smaller workload (\"2-way\" or a list of column "
            "lists), or leave both unset: aim then falls back on the largest marginals that fit.")
    covered = {a for q in workload for a in q}
    fallback: list[tuple[str, ...]] = []
    for lower in range(order - 1, 0, -1):
        left = [a for a in names if a not in covered]
        if not left:
            break
        fits = [q for q in itertools.combinations(names, lower)
                if domain.size(q) <= max_cells and any(a in left for a in q)]
        fallback += fits
        covered |= {a for q in fits for a in q}
    fallback += [(a,) for a in names if a not in covered]  # a column larger than max_cells on its own
    if not fallback:
        return workload, None
    short = sorted({a for q in fallback for a in q} - {a for q in workload for a in q}, key=names.index)
    note = (f"aim: {'no' if not workload else 'not every'} {spec} marginal has at most max_cells = {max_cells} "
            f"cells, so column(s) {short} enter its workload through smaller marginals ({len(fallback)} of them). "
            "Set workload or max_cells in [engine_options] to choose otherwise.")
    return workload + fallback, note


def rows_of(curator: Boundary, first: Measurement) -> float:
    """The rows ``signal_of`` reads: the public count under replace, else the total of the first
    1-way marginal's noisy counts (post-processing of a charged measurement; its deviation is a
    cell's noise deviation times the square root of the column's codes)."""
    if curator.neighbouring.count_is_public:
        return float(curator.public_count())
    return max(float(first.values.sum()), 1.0)


def candidate_weights(workload: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], float]:
    """Every marginal inside a workload marginal, weighted by its total overlap with the workload."""
    closure = {sub for query in workload for k in range(1, len(query) + 1)
               for sub in itertools.combinations(query, k)}
    # Σ_q |c ∩ q| = Σ_{a ∈ c} (number of workload marginals holding a)
    holding = Counter(a for query in workload for a in query)
    return {c: float(sum(holding[a] for a in c)) for c in sorted(closure, key=lambda c: (len(c), c))}


def coarse_map(noisy: np.ndarray, groups: int) -> np.ndarray:
    """Codes cut, in code order, into at most ``groups`` stretches of about equal noisy mass (the
    noisy 1-way counts clipped at zero, each code placed by the middle of its mass); the groups
    numbered 0..k-1, every one used."""
    mass = np.clip(np.asarray(noisy, dtype=float), 0.0, None) + 1e-9  # a code of no mass still has a place
    middle = np.cumsum(mass) - mass / 2
    raw = np.minimum((groups * middle / mass.sum()).astype(np.int64), groups - 1)
    return np.unique(raw, return_inverse=True)[1].astype(np.int64)


Coarse = tuple[tuple[str, int], ...]  # (column, groups) pairs of a candidate's coarsened columns
Candidate = tuple[tuple[str, ...], Coarse]


def scored_subset(keys: Sequence[Candidate], draws: np.random.Generator, most: int) -> list[Candidate]:
    """The candidates a round scores: all of them up to ``most`` (0: no limit), else that many drawn
    uniformly without replacement (in their order), a new draw each round.

    Scoring a candidate means computing the model's marginal of it, and on a wide table (92 columns:
    about 100,000 candidates) that is most of a round's time. The draws come from a generator of fixed
    seed: which candidates a round may choose from is public and reads nothing of the data; the
    exponential mechanism then picks among them as among all (its sensitivity does not change)."""
    if not most or len(keys) <= most:
        return list(keys)
    return [keys[i] for i in np.sort(draws.choice(len(keys), most, replace=False))]


class RoundClock:
    """An estimate of the time aim's rounds have left: the time so far, scaled by the budget left
    against the budget spent since the rounds began (annealing spends faster later, so it errs long)."""

    def __init__(self, start_budget: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock, self._start, self._budget = clock, clock(), start_budget

    def left(self, remaining: float) -> str:
        """", about N min left" (or seconds), or "" before anything was spent and once all was."""
        spent = self._budget - remaining
        if spent <= 0 or remaining <= 0:
            return ""
        seconds = (self._clock() - self._start) * remaining / spent
        return f", about {seconds:.0f} s left" if seconds < 90 else f", about {seconds / 60:.0f} min left"


def coarse_candidates(spec: Any, domain: Domain, max_cells: int, maps: Mapping[tuple[str, int], np.ndarray],
                      resolutions: Sequence[int]) -> dict[Candidate, float]:
    """Marginals of the whole workload (``spec``, before ``max_cells`` drops any) with their large
    columns on coarse groups, one candidate per resolution, when the coarse table has at most
    ``max_cells`` cells; each weighted by its overlap with the whole workload."""
    if isinstance(spec, str):
        whole = list(itertools.combinations(domain.names, min(ORDERS[spec], len(domain.names))))
    else:
        whole = listed_marginals(spec, domain.names)
    out: dict[Candidate, float] = {}
    for c, weight in candidate_weights(whole).items():
        for groups in resolutions:
            coarse = tuple((a, groups) for a in c if (a, groups) in maps)
            cells = math.prod(int(maps[(a, groups)].max()) + 1 if (a, groups) in maps else domain.size((a,))
                              for a in c)
            if coarse and cells <= max_cells:
                out[(c, coarse)] = weight
    return out


@dataclass(frozen=True)
class AIMOptions(EngineOptions):
    """aim's options (README, Engines): the workload and its cell cap, the model-size cap, the
    planned rounds (None: ``planned_rounds``, 2 to 16 per column by the budget), the fitting
    iterations per round (None: ``planned_iterations``, 100 or fewer for many rounds), compression,
    the coarse candidates' groups ("auto": ``COARSE_GROUPS``), and the candidates a
    round scores at most (None: ``SCORED_PER_ROUND``; 0: all of them)."""

    workload: Any = "3-way"
    max_cells: int = 10_000
    max_model_size: float = 80.0
    rounds: int | None = None
    iterations: int | None = None
    compress: bool = True
    coarse_groups: Any = "auto"
    scored_per_round: int | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.workload, list) or (isinstance(self.workload, str) and self.workload in ORDERS)):
            raise EngineError(f"workload {self.workload!r} is not known; use \"1-way\", \"2-way\", \"3-way\" or a "
                              "list of column lists.")
        megabytes("max_model_size", self.max_model_size)
        if self.rounds is not None:
            whole_number("rounds", self.rounds, 1)
        if self.iterations is not None:
            whole_number("iterations", self.iterations, 1)
        whole_number("max_cells", self.max_cells, 1)
        true_or_false("compress", self.compress)
        if isinstance(self.coarse_groups, str) and self.coarse_groups != "auto":
            raise EngineError(f"coarse_groups {self.coarse_groups!r} is not known; use \"auto\" (the default), a "
                              "whole number of at least 2, a list of them, or 0 to turn coarse candidates off.")
        for groups in self.resolutions():
            whole_number("coarse_groups", groups, 2)
        if self.scored_per_round is not None:
            whole_number("scored_per_round", self.scored_per_round, 0)

    def resolutions(self) -> tuple[int, ...]:
        """The numbers of groups that coarse candidates cut a large column into (0 or []: no coarse
        candidates; "auto": ``COARSE_GROUPS``)."""
        groups = self.coarse_groups
        if groups == "auto":
            return (COARSE_GROUPS,)
        return tuple(groups) if isinstance(groups, list) else () if groups in (None, 0) else (groups,)


@dataclass(frozen=True)
class AIMOutput:
    """The workload, the marginal selected in each round, the rounds run and, with ``compress``, each
    compressed column's expansion weights (its noisy 1-way counts clipped at 0)."""

    workload: tuple[tuple[str, ...], ...]
    selected: tuple[tuple[str, ...], ...]
    rounds: int
    expansion: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"workload": [list(q) for q in self.workload],
                                "selected": [list(q) for q in self.selected], "rounds": self.rounds}
        return write_expansion(data, self.expansion)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        check_keys("aim", data, ("workload", "selected", "rounds"), ("expansion",))
        with reading_output("aim"):
            return cls(tuple(read_names(q) for q in data["workload"]), tuple(read_names(q) for q in data["selected"]),
                       read_whole(data["rounds"]), read_expansion(data))


class AIMEngine(EngineBase):
    """Workload-adaptive marginal selection with budget annealing and a model-size cap."""

    name: ClassVar[str] = "aim"
    options_type = AIMOptions
    output_type = AIMOutput
    needs_zcdp = True
    config: AIMOptions

    def __init__(self, options: Mapping[str, Any]) -> None:
        super().__init__(options)
        self._explicit = "workload" in options or "max_cells" in options
        self._given: tuple[Measurement, ...] = ()

    def with_given(self, given: Sequence[Measurement]) -> AIMEngine:
        """This engine describing with ``given`` marginals (``synth.engines.given``): fitted with its
        measurements, its budget spent only on marginals that hold a column they do not cover."""
        engine = copy.copy(self)
        engine._given = tuple(given)
        return engine

    def check(self, names: tuple[str, ...], notion: Notion) -> None:
        super().check(names, notion)
        if isinstance(self.config.workload, list):
            listed_marginals(self.config.workload, names)

    def describe(self, curator: Boundary, progress: Progress) -> EngineResult:
        self.check(curator.domain.names, curator.notion)
        check_given(self._given, curator.domain.names)
        workload, note = resolve_workload(self.config.workload, curator.domain, self.config.max_cells,
                                          self._explicit)
        # given marginals that cover every workload marginal leave nothing to measure: they are not used
        given = self._given if any(touches_own(q, given_columns(self._given)) for q in workload) else ()
        covered = given_columns(given)
        columns = [c for c in candidate_weights(workload) if len(c) == 1 and c[0] not in covered]
        rounds = self.config.rounds or planned_rounds(len(curator.domain.names), curator.remaining())
        if rounds <= len(columns):
            raise EngineError(
                f"rounds = {rounds} is too few: aim first measures the {len(columns)} workload columns one by "
                f"one, each with a round's budget, so it needs at least {len(columns) + 1} rounds. Raise rounds "
                "in [engine_options] (or leave it unset: 2 to 16 per column, by the budget).")
        rho_total = curator.remaining()
        rho_measure, rho_select = round_budget(rho_total / rounds)
        measurements: list[Measurement] = [curator.measure_marginal(columns[0], rho_measure)]
        rows = rows_of(curator, measurements[0])

        def deviation_of(plan: int) -> float:
            return curator.noise_scale(round_budget(rho_total / plan)[0])

        dense = None if self.config.rounds else dense_plan(rows, rounds, workload, len(columns), curator.domain,
                                                           deviation_of)
        more = rounds if self.config.rounds else dense if dense is not None else graded_plan(
            rows, rounds, workload, len(columns), curator.domain, deviation_of, rho_total)
        graded = dense is None and more > rounds
        if more > rounds:  # the rest of the budget in the dense or graded plan's rounds
            rounds = more
            rho_measure, rho_select = round_budget(curator.remaining() / (rounds - 1))
        signal = signal_of(rows, curator.noise_scale(rho_measure))
        rho_one_way = rho_measure * one_way_share(signal, rounds / len(columns))
        measurements += [curator.measure_marginal(c, rho_one_way) for c in columns[1:]]
        maps: dict[str, np.ndarray] = {}
        expansion: dict[str, np.ndarray] = {}
        if self.config.compress:
            maps, compressed = compress_one_way(measurements)
            expansion = expansion_weights(measurements, maps)
            if given:
                given_maps, given_expansion, given = compress_given(given, curator.domain)
                maps, expansion = {**maps, **given_maps}, {**expansion, **given_expansion}
            measurements = compressed
            curator = curator.compressed(maps)
            # the same columns, now with fewer codes: more marginals may fit max_cells
            workload, note = resolve_workload(self.config.workload, curator.domain, self.config.max_cells,
                                              self._explicit)
        measurements += given
        domain = curator.domain
        candidates: dict[Candidate, float] = {(c, ()): w for c, w in candidate_weights(workload).items()}
        resolutions = () if dense is not None and self.config.coarse_groups == "auto" else self.config.resolutions()
        coarse_maps = {(m.attrs[0], groups): coarse_map(m.values, groups)  # post-processing of the 1-way counts
                       for groups in resolutions for m in measurements
                       if len(m.attrs) == 1 and m.values.size > 2 * groups}
        candidates.update(coarse_candidates(self.config.workload, domain, self.config.max_cells, coarse_maps,
                                            resolutions))
        candidates = {key: w for key, w in candidates.items() if touches_own(key[0], covered)}
        derived = DerivedColumns.of(domain, [(a, m) for (a, _), m in coarse_maps.items()]) if coarse_maps else None
        model_domain = domain if derived is None else derived.domain
        iterations = self.config.iterations or planned_iterations(len(curator.domain.names), rounds)

        def refit(warm_start: GraphicalModel | None = None) -> GraphicalModel:
            if derived is None:
                return fit_graphical_model(domain, measurements, iterations=iterations, warm_start=warm_start)
            return fit_derived(domain, measurements, derived, iterations=iterations, warm_start=warm_start)

        def in_model(key: Candidate) -> tuple[str, ...]:
            """The candidate's columns in the model: each coarsened column as its derived column."""
            named = {a: derived.name(a, coarse_maps[(a, g)]) for a, g in key[1]} if derived else {}
            return tuple(named.get(a, a) for a in key[0])

        shown = {key: in_model(key) for key in candidates}  # fixed for the whole run
        coarsening = {key: {a: coarse_maps[(a, g)] for a, g in key[1]} for key in candidates}
        ties: list[tuple[str, ...]] = [] if derived is None else [pair for pair, _ in derived.links()]
        model = refit()
        selected: list[tuple[str, ...]] = []
        cap = self.config.max_model_size
        exact_sizes = sum(not coarse for _, coarse in candidates) <= EXACT_SIZE_CANDIDATES
        last = False
        keys = list(shown)
        draws = np.random.default_rng(SUBSET_SEED)
        most = SCORED_PER_ROUND if self.config.scored_per_round is None else self.config.scored_per_round
        progress.message(f"aim: {len(candidates)} candidate marginals, up to {rounds} rounds"
                         + (" (a dense table: enough rounds to measure every workload marginal)" if dense else "")
                         + (" (its cells hold signal to spare: more rounds than the budget's floor)" if graded else "")
                         + (f"; each round scores {most} of them, drawn at random" if 0 < most < len(keys) else ""))
        clock = RoundClock(curator.remaining())
        sizes = ModelSizes(model_domain)
        while not last:
            remaining = curator.remaining()
            if remaining < 2 * (rho_measure + rho_select):
                rho_measure, rho_select = round_budget(remaining)
                last = True
            spent_share = 1 - (remaining - rho_measure - rho_select) / rho_total
            limit = cap * spent_share
            tree = model.junction_tree
            cliques = [m.attrs for m in measurements] if derived is None else (
                [derived.rewrite(m).attrs for m in measurements] + ties)
            scored = scored_subset(keys, draws, most)
            graph = sizes.graph(cliques) if exact_sizes else ()

            def fits(key: Candidate, tree: JunctionTree = tree, limit: float = limit,
                     graph: tuple[int, ...] = graph) -> bool:
                c = shown[key]
                return tree.containing(c) is not None or (
                    model_domain.size(c) * BYTES_PER_CELL / 2**20 <= limit  # cheap tests first: c alone must fit,
                    and (tree.merged_size_mb(c) <= limit  # and merging the cliques that cover it fits,
                         or (exact_sizes and not key[1]  # or triangulating (fine candidates only: coarse ones are small)
                             and sizes.with_clique(graph, c) <= limit)))

            allowed = [key for key in scored if fits(key)] or [key for key in keys if fits(key)]
            penalty = curator.expected_absolute_noise(rho_measure)
            coarsenings = [coarsening[key] for key in allowed]
            before = [model.marginal(shown[key]) for key in allowed]
            choice = curator.select_marginal(
                [key[0] for key in allowed], before, rho_select,
                weights=[candidates[key] for key in allowed],
                penalties=[penalty * table.size for table in before],
                coarsenings=coarsenings,
            )
            chosen = allowed[choice]
            measurements.append(curator.measure_marginal(chosen[0], rho_measure, coarsening=coarsenings[choice]))
            selected.append(chosen[0])
            model = refit(model)
            moved = float(np.abs(model.marginal(shown[chosen]) - before[choice]).sum())
            progress.message(f"aim round {len(selected)}: measured {list(chosen[0])}{' (coarse)' if chosen[1] else ''} "
                             f"({curator.remaining() / rho_total:.0%} of the budget left{clock.left(curator.remaining())})")
            if not last and moved <= penalty * before[choice].size:
                rho_measure, rho_select = 4 * rho_measure, 4 * rho_select
        output = AIMOutput(tuple(workload), tuple(selected), len(selected),
                           recorded_expansion(expansion))
        return EngineResult(tuple(measurements), output, compression=maps, notes=(note,) if note else (),
                            fit_start=model)

    def build_model(self, domain: Domain, result: EngineResult, iterations: int = FIT_ITERATIONS,
                    callback: Callback | None = None) -> Model:
        """The fit of the measurements, merged codes spread by the expansion weights when there are some."""
        return fit_expanded("aim", domain, result, output_of(result.output, AIMOutput).expansion, iterations, callback)


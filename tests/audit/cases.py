"""What the privacy audit runs: synth's mechanisms and engines, and deliberately broken variants.

Each ``AuditCase`` runs one of synth's mechanisms (through the noise sources, ``CountRelease`` or
the ``Curator``) or one engine's whole pipeline (``engine.describe`` on a ``Curator`` over a tiny
table) many times on two neighbouring data sets, reduces each run to one statistic, and reads
the claimed guarantee from synth's own accounting (the accountant's ``spent()``, or the cost
functions: ``laplace_cost``, ``gaussian_cost`` with ``zcdp_to_approx_epsilon``,
``randomized_response_cost``). ``auditing.audit`` turns that into an ε lower bound.

Honest cases must stay at or below their claim. Mutation cases reproduce real bugs outside
synth's code: noise drawn at half the scale (``WeakerNoise``), replace-one neighbours given the
add/remove sensitivity (``AddRemoveSensitivity`` for histograms, ``PrivateRowCount`` for the
dependence scores), two queries charged once (``ChargesOncePerQuery``); each must break its
claim, which proves the audit can see such a bug. Selections are audited on tables where one row
moves the scores (nearly) as far apart as their sensitivity allows: the worst case.

Runs are vectorised where the mechanism allows: a release of n cells of equal counts is n
independent runs of the one-count mechanism (every cell gets its own noise at the calibrated
scale), so one call draws them all. Selections and engines are run one at a time, each with its
own seeded noise source.
"""

from __future__ import annotations

import dataclasses
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from auditing import AuditResult, Claim, audit, log_likelihood_ratio
from claims import DELTA, NoiseFactory, Sample, Sampler, largest, spent_claim, zcdp_claim
from engine_runs import EngineSetup, chosen_database, describe_runs, engine_runs, neighbour, no_rows, tiny_table

from synth.columns.domain import Domain
from synth.columns.kinds import Kind
from synth.columns.unmodelled import UnmodelledColumn
from synth.domains.bounds import LocatedBounds, locate_bounds
from synth.domains.discovery import Detection, detect_identifier
from synth.privacy import (
    Accountant,
    Budget,
    Cost,
    LedgerEntry,
    NoiseSource,
    Notion,
    SecureNoise,
    SeededNoise,
    gaussian_cost,
    gaussian_sigma,
    laplace_cost,
    laplace_scale,
    randomized_response_cost,
)
from synth.privacy.curator import CountRelease, Curator
from synth.privacy.neighbours import Neighbouring

CONFIDENCE = 0.99
UNSEEDED_CONFIDENCE = 1 - 1e-6  # OpenDP draws OS entropy: a false alarm must be negligible, not 1 %
EPSILON = 1.0  # pure ε of a mechanism run
RHO = 0.5  # ρ of a Gaussian mechanism run (σ = 1 at sensitivity 1)
COUNT = 10  # the exact count on the first data set
SELECTION_CANDIDATES = 20  # candidates of the audited exponential mechanism
SCORE_GAP = 5  # L1 error of every candidate's estimate on the first data set
RESPONSE_CATEGORIES = 4  # k of the audited randomized response

# --------------------------------------------------------------------------------------------
# Deliberately broken variants (the mutations)
# --------------------------------------------------------------------------------------------


class WeakerNoise:
    """A noise source that draws as if the budget were larger than the one charged: every scale
    and σ halved, randomized response keeping the true value as often as at twice its ε."""

    def __init__(self, inner: NoiseSource) -> None:
        self.inner = inner
        self.seeded = inner.seeded

    def description(self) -> dict[str, Any]:
        return self.inner.description()

    def discrete_laplace(self, counts: np.ndarray, scale: float) -> np.ndarray:
        return self.inner.discrete_laplace(counts, scale / 2)

    def discrete_gaussian(self, counts: np.ndarray, sigma: float) -> np.ndarray:
        return self.inner.discrete_gaussian(counts, sigma / 2)

    def laplace(self, values: np.ndarray, scale: float) -> np.ndarray:
        return self.inner.laplace(values, scale / 2)

    def gaussian(self, values: np.ndarray, sigma: float) -> np.ndarray:
        return self.inner.gaussian(values, sigma / 2)

    def noisy_max(self, scores: np.ndarray, scale: float) -> int:
        return self.inner.noisy_max(scores, scale / 2)

    def randomized_response(self, values: np.ndarray, k: int, p_true: float) -> np.ndarray:
        odds = (p_true * (k - 1) / (1 - p_true)) ** 2  # e^(2ε)
        return self.inner.randomized_response(values, k, odds / (odds + k - 1))


@dataclass(frozen=True)
class AddRemoveSensitivity(Neighbouring):
    """Replace-one neighbours with the histogram sensitivities of add/remove (half the L1)."""

    @property
    def histogram_l1(self) -> float:
        return 1.0

    @property
    def histogram_l2(self) -> float:
        return 1.0


@dataclass(frozen=True)
class PrivateRowCount(Neighbouring):
    """Replace-one neighbours whose row count is taken for private: the dependence scores get the
    add/remove sensitivity log(max_rows + 1) + 1 + log min(|X|, |Π|), 0.6 of replace-one's
    2 (log(n + 1) + 1) when max_rows = n = 101 and X, Π have 3 values."""

    @property
    def count_is_public(self) -> bool:
        return False


class ChargesOncePerQuery(Accountant):
    """An accountant that charges a query it has seen before for free (a cached charge)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._charged: dict[str, LedgerEntry] = {}

    def charge(self, cost: Cost, *, mechanism: str, query: str, sensitivity: float, noise_scale: float,
               note: str = "") -> LedgerEntry:
        if query not in self._charged:
            self._charged[query] = super().charge(cost, mechanism=mechanism, query=query,
                                                  sensitivity=sensitivity, noise_scale=noise_scale, note=note)
        return self._charged[query]


# --------------------------------------------------------------------------------------------
# Claims and accountants
# --------------------------------------------------------------------------------------------


def roomy_accountant(notion: Notion, kind: type[Accountant] = Accountant) -> Accountant:
    """An accountant with room for the audited charges; the claim is what it reports as spent."""
    return kind(Budget(50.0)) if notion == Notion.PURE else kind(Budget(50.0, DELTA))


def mechanism_budget(notion: Notion) -> float:
    return EPSILON if notion == Notion.PURE else RHO


# --------------------------------------------------------------------------------------------
# Mechanisms
# --------------------------------------------------------------------------------------------


def laplace_runs(noise: NoiseFactory, runs: int) -> Sample:
    """The Laplace mechanism on a count (sensitivity 1) at ε = EPSILON."""
    scale = laplace_scale(1.0, EPSILON)
    first = noise(0).laplace(np.full(runs, float(COUNT)), scale)
    second = noise(1).laplace(np.full(runs, COUNT + 1.0), scale)
    return Sample(first, second, Claim(laplace_cost(1.0, scale).epsilon))


def gaussian_runs(noise: NoiseFactory, runs: int) -> Sample:
    """The Gaussian mechanism on a count (sensitivity 1) at ρ = RHO."""
    sigma = gaussian_sigma(1.0, RHO)
    first = noise(0).gaussian(np.full(runs, float(COUNT)), sigma)
    second = noise(1).gaussian(np.full(runs, COUNT + 1.0), sigma)
    return Sample(first, second, zcdp_claim(gaussian_cost(1.0, sigma).rho))


def count_runs(notion: Notion, noise: NoiseFactory, runs: int) -> Sample:
    """``CountRelease`` on a count under add/remove: discrete Laplace (pure) or Gaussian (zCDP)."""
    outputs, claims = [], []
    for stream, count in enumerate((COUNT, COUNT + 1)):
        accountant = roomy_accountant(notion)
        release = CountRelease(accountant, noise(stream), Neighbouring())
        outputs.append(release.release(np.full(runs, count), mechanism_budget(notion), query="count(*)").values)
        claims.append(spent_claim(accountant))
    return Sample(outputs[0], outputs[1], largest(claims))


def replaced_row_runs(notion: Notion, neighbouring: Neighbouring, noise: NoiseFactory, runs: int) -> Sample:
    """``CountRelease`` on a two-cell histogram under replace-one: one row moves from cell 0 to
    cell 1. Statistic: the log-likelihood ratio of the two noisy cells."""
    histograms = (np.array([COUNT, COUNT]), np.array([COUNT - 1, COUNT + 1]))
    statistics, claims = [], []
    for stream, histogram in enumerate(histograms):
        accountant = roomy_accountant(notion)
        release = CountRelease(accountant, noise(stream), neighbouring)
        noisy = release.release(np.tile(histogram, runs), mechanism_budget(notion), query="histogram")
        statistics.append(log_likelihood_ratio(noisy.values.reshape(runs, 2), histograms[0], histograms[1],
                                               noisy.mechanism, noisy.noise_scale))
        claims.append(spent_claim(accountant))
    return Sample(statistics[0], statistics[1], largest(claims))


def repeated_query_runs(notion: Notion, accountant_kind: type[Accountant], noise: NoiseFactory,
                        runs: int) -> Sample:
    """The same count released twice through ``CountRelease``, each with half the budget (as an
    engine measuring a marginal again would). Statistic: the log-likelihood ratio of both."""
    statistics, claims = [], []
    for stream, count in enumerate((COUNT, COUNT + 1)):
        accountant = roomy_accountant(notion, accountant_kind)
        release = CountRelease(accountant, noise(stream), Neighbouring())
        twice = [release.release(np.full(runs, count), mechanism_budget(notion) / 2, query="count(*)")
                 for _ in range(2)]
        values = np.column_stack([noisy.values for noisy in twice])
        statistics.append(log_likelihood_ratio(values, [COUNT] * 2, [COUNT + 1] * 2,
                                               twice[0].mechanism, twice[0].noise_scale))
        claims.append(spent_claim(accountant))
    return Sample(statistics[0], statistics[1], largest(claims))


def selection_sample(tables: tuple[np.ndarray, np.ndarray], domain: Domain, neighbouring: Neighbouring,
                     noise: NoiseFactory, runs: int, budget: float, select: Callable[[Curator], int]) -> Sample:
    """``select`` (one of the ``Curator``'s selections, spending ``budget``) run ``runs`` times on
    each of two neighbouring tables, a fresh noise stream per table. Statistic: the index chosen
    (categorical); the claim: the ε the accountant charged for one run."""
    picks, claims = [], []
    for stream, codes in enumerate(tables):
        accountant = Accountant(Budget(2 * budget * runs))
        curator = Curator(codes, domain, CountRelease(accountant, noise(stream), neighbouring))
        picks.append(np.array([select(curator) for _ in range(runs)]))
        claims.append(Claim(max(entry.cost.epsilon for entry in accountant.ledger)))
    return Sample(picks[0], picks[1], largest(claims))


def selection_runs(neighbouring: Neighbouring, noise: NoiseFactory, runs: int) -> Sample:
    """The exponential mechanism as synth runs it: ``Curator.select_marginal`` (Gumbel report-
    noisy-max) at ε = EPSILON, pure DP. Candidate 0's score rises by the sensitivity between the
    data sets and every other candidate's falls by it: the worst case of the 2Δ/β bound."""
    replace = neighbouring.relation == "replace"
    first_codes = np.repeat([0, 1], COUNT)
    # add/remove: one more row in cell 0; replace: one row moves from cell 1 to cell 0
    second_codes = np.repeat([0, 1], [COUNT + 1, COUNT - 1]) if replace else np.append(first_codes, 0)
    exact = np.array([COUNT, COUNT])
    gap = np.array([SCORE_GAP, -SCORE_GAP if replace else 0])
    estimates = [exact - gap] + [exact + gap] * (SELECTION_CANDIDATES - 1)
    candidates = [("a",)] * SELECTION_CANDIDATES
    return selection_sample((first_codes.reshape(-1, 1), second_codes.reshape(-1, 1)), Domain(("a",), (2,)),
                            neighbouring, noise, runs, EPSILON,
                            lambda curator: curator.select_marginal(candidates, estimates, EPSILON))


def dependence_tables(relation: str) -> tuple[np.ndarray, np.ndarray]:
    """Two neighbouring tables over columns a, b, c, d (3 codes each) between which the scaled
    mutual information n·I(a; b) rises and n·I(c; d) falls by nearly the most one row can move
    them (``synth.privacy.selection_scores``'s derivation; found by exhaustive search over small tables).

    add/remove (100 rows, then a row (0, 0, 0, 0)): a = 0 and b = 0 are new values, so n·I(a; b)
    rises by g(n), the sensitivity's bound up to O(1/n); c = 0 and d = 0 each hold half the rows
    but never together, so n·I(c; d) falls by 2 g(n/2) − g(n). Replace-one (101 rows): (a, b) is
    (2, 1) in 50 rows, (1, 2) in 50 and (2, 2) in row 0, which becomes the unseen (0, 0): n·I(a; b)
    rises by 2 g(50); (c, d) goes the other way, row 0 from (0, 0) to (2, 2), and falls by as much.
    Together: 0.875 of the 2Δ that the claim allows for under replace-one (Δ the sensitivity synth
    uses), 0.73 under add/remove, where Δ also holds log min(|a|, |b|) = log 3 (the term that keeps
    scores scaled above max_rows within it)."""
    if relation == "add-remove":
        ab = np.repeat([[1, 1], [2, 2]], [30, 70], axis=0)  # n·I(a; b) below n·I(c; d): a rarer pick
        cd = np.repeat([[0, 1], [1, 0]], 50, axis=0)
        first = np.hstack([ab, cd])
        return first, np.vstack([first, [0, 0, 0, 0]])
    crossed = np.repeat([[2, 1], [1, 2]], 50, axis=0)
    first = np.vstack([[2, 2, 0, 0], np.hstack([crossed, crossed])])
    second = first.copy()
    second[0] = [0, 0, 2, 2]
    return first, second


def r_dependence_tables() -> tuple[np.ndarray, np.ndarray]:
    """Two add/remove neighbours (100 rows, then a row (0, 0, 0, 0)) between which the scaled
    score n·R(a; b) rises and n·R(c; d) falls by nearly the most one row can move them (2, from
    ``synth.privacy.selection_scores``'s derivation). a and b are independent (n·R = 0) and the new row holds
    values of each not seen before: n·R(a; b) rises by 2n/(n+1), the bound's tight case. (c, d) is
    (0, 1) in 9 rows, (2, 0) in 10 and (2, 1) in 81, so the new (0, 0) takes n·R(c; d) from 1.80 to
    0.18 (the largest fall found by exhaustive search over such tables). Together: 0.90 of the 2Δ
    that the claim allows for."""
    ab = np.array([(a, b) for a in (1, 2) for b in (1, 2)] * 25)
    cd = np.repeat([[0, 1], [2, 0], [2, 1]], [9, 10, 81], axis=0)
    first = np.hstack([ab, cd])
    return first, np.vstack([first, [0, 0, 0, 0]])


DEPENDENCE_EPSILON = 2.0  # at EPSILON a halved noise (0.875 × 2 ε) is caught by too thin a margin
DEPENDENCE_FALLING = {"add-remove": 5, "replace": 9}  # candidates (c, d) next to the one (a, b)


def dependence_runs(neighbouring: Neighbouring, noise: NoiseFactory, runs: int, score: str = "mi",
                    between: bool = False) -> Sample:
    """``Curator.select_by_dependence`` (pure DP) at ε = DEPENDENCE_EPSILON on
    ``dependence_tables`` (score ``mi``) or ``r_dependence_tables`` (score ``r``, add/remove):
    candidate 0 is (a, [b]), whose score rises, the others (c, [d]), whose scores fall.
    ``max_rows`` is the larger table's row count (the tightest public bound), or with ``between``
    the smaller's: the larger table's scores are then scaled to it (once refused on the exact count)."""
    tables = r_dependence_tables() if score == "r" else dependence_tables(neighbouring.relation)
    pairs = [("a", ("b",))] + [("c", ("d",))] * DEPENDENCE_FALLING[neighbouring.relation]
    max_rows = (min if between else max)(len(codes) for codes in tables)
    return selection_sample(tables, Domain(("a", "b", "c", "d"), (3, 3, 3, 3)), neighbouring, noise, runs,
                            DEPENDENCE_EPSILON,
                            lambda curator: curator.select_by_dependence(pairs, DEPENDENCE_EPSILON, score=score,
                                                                         max_rows=max_rows))


SMALL_DATABASE_ROWS = 10  # of each candidate database
SMALL_DATABASE_FALLING = 3  # candidates whose score falls, next to the one whose score rises


def skewed_table(columns: int = 1) -> np.ndarray:
    """100 rows, 96 of them 0 in every column: with ``neighbour`` (a row of 1s added, or row 0
    made 1) the worst case of SmallDB's score on the one-column workload (``small_database_runs``)."""
    return np.tile(np.repeat([0, 1], [96, 4])[:, None], (1, columns))


def small_database_runs(neighbouring: Neighbouring, noise: NoiseFactory, runs: int) -> Sample:
    """``Curator.select_small_database`` (SmallDB's exponential mechanism, sensitivity 1) at
    ε = EPSILON on ``skewed_table``, one column of two codes, and its neighbour. Candidate 0 has
    9 of its 10 rows in code 0: its error 96 − 90 = 6 shrinks by 0.9 (add/remove: 96 − 101·0.9)
    or by 1 (replace-one); the others have all 10 there: their error |96 − 100| = 4 grows by 1.
    So the score gap moves by 1.9 (add/remove) or 2 (replace-one) of the 2Δ the claim allows for."""
    first = skewed_table()
    rows = SMALL_DATABASE_ROWS
    databases = np.array([[0] * (rows - 1) + [1]] + [[0] * rows] * SMALL_DATABASE_FALLING)
    return selection_sample((first, neighbour(first, neighbouring.relation)), Domain(("a",), (2,)), neighbouring,
                            noise, runs, EPSILON,
                            lambda curator: curator.select_small_database(databases, [(("a",), None)], EPSILON))


BOUNDS_ROWS = 60  # values at 20 (the octave [16, 32)); the neighbour adds one at 1000


def exact_upper_bound(name: str, values: np.ndarray, kind: Kind, counts: CountRelease, budget: float) -> LocatedBounds:
    """The mutation: DP bounds, then the upper bound replaced by the exact maximum (a free read)."""
    located = locate_bounds(name, values, kind, counts, budget)
    upper = max(float(values.max()), located.column.lower + 1)
    column = dataclasses.replace(located.column, upper=upper, cuts=None, bins=1)
    return dataclasses.replace(located, column=column)


def bounds_runs(locate: Callable[..., LocatedBounds], noise: NoiseFactory, runs: int) -> Sample:
    """``locate_bounds`` (both of its noisy histograms, under pure DP at ε = EPSILON) on a column
    and on it with one more row far out. Statistic: the upper bound released (-1 when lost)."""
    tables = (np.full(BOUNDS_ROWS, 20.0), np.append(np.full(BOUNDS_ROWS, 20.0), 1000.0))
    statistics, claims = [], []
    for stream, values in enumerate(tables):
        source, uppers = noise(stream), np.empty(runs)
        for run in range(runs):
            accountant = roomy_accountant(Notion.PURE)
            located = locate("x", values, Kind.INTEGER, CountRelease(accountant, source, ADD_REMOVE), EPSILON)
            uppers[run] = -1.0 if located.column is None else located.column.upper
        statistics.append(uppers)
        claims.append(spent_claim(accountant))
    return Sample(statistics[0], statistics[1], largest(claims))


IDENTIFIER_CELLS = 100.0  # the vote's noisy count of the column's cells, taken as given
IDENTIFIER_KEYS = 94  # distinct keys on the first data set, near the uniqueness threshold (80 + 2 deviations); the neighbour has one more


def exact_distinct_identifier(name: str, series: pd.Series, text_like: bool, counts: CountRelease, budget: float,
                              delta: float, cells: float) -> Detection:
    """The mutation: the same charges, then uniqueness decided on the exact distinct count (a free read)."""
    honest = detect_identifier(name, series, text_like, counts, budget, delta, cells)
    column = UnmodelledColumn(name, "text") if series.nunique() > IDENTIFIER_KEYS else None
    return dataclasses.replace(honest, column=column)


def identifier_runs(detect: Callable[..., Detection], noise: NoiseFactory, runs: int) -> Sample:
    """``discovery.detect_identifier`` (a noisy distinct count, then a thresholded histogram of key
    shapes; Laplace under approximate DP at ε = EPSILON) on a column of distinct keys and on it
    with one more key. Statistic: whether the column was taken as an identifier or free text."""
    tables = (pd.Series([f"k{i}" for i in range(IDENTIFIER_KEYS)]),
              pd.Series([f"k{i}" for i in range(IDENTIFIER_KEYS + 1)]))
    statistics, claims = [], []
    for stream, series in enumerate(tables):
        source, unique = noise(stream), np.empty(runs)
        for run in range(runs):
            accountant = Accountant(Budget(50.0, DELTA), Notion.APPROX)
            counts = CountRelease(accountant, source, ADD_REMOVE)
            unique[run] = detect("x", series, True, counts, EPSILON, DELTA / 2, IDENTIFIER_CELLS).column is not None
        statistics.append(unique)
        claims.append(spent_claim(accountant))
    return Sample(statistics[0], statistics[1], largest(claims))


def randomized_response_runs(noise: NoiseFactory, runs: int) -> Sample:
    """k-ary randomized response at ε = EPSILON on one person's value, 0 or 1 (categorical)."""
    k = RESPONSE_CATEGORIES
    p_true = math.exp(EPSILON) / (math.exp(EPSILON) + k - 1)
    first = noise(0).randomized_response(np.zeros(runs, dtype=np.int64), k, p_true)
    second = noise(1).randomized_response(np.ones(runs, dtype=np.int64), k, p_true)
    return Sample(first, second, Claim(randomized_response_cost(k, p_true).epsilon))


# --------------------------------------------------------------------------------------------
# The cases
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditCase:
    """One audit: a subject (mechanism or engine), how to sample it, and whether it is broken."""

    subject: str
    sample: Sampler
    samples: int  # runs per data set, default audit
    strong_samples: int  # runs per data set, strong audit
    sampler: str = "seeded"  # seeded (numpy) or opendp
    categorical: bool = False
    mutation: str = ""  # empty for synth as it is; otherwise the deliberate bug
    wrap: Callable[[NoiseSource], NoiseSource] | None = None
    strong_only: bool = False

    @property
    def name(self) -> str:
        return f"{self.subject} [{self.sampler}]" + (f" / {self.mutation}" if self.mutation else "")

    def noise(self) -> NoiseFactory:
        seed = zlib.crc32(self.name.encode()) * 1_000_000

        def fresh(stream: int) -> NoiseSource:
            source: NoiseSource = SecureNoise() if self.sampler == "opendp" else SeededNoise(seed + stream)
            return self.wrap(source) if self.wrap else source

        return fresh

    @property
    def confidence(self) -> float:
        return UNSEEDED_CONFIDENCE if self.sampler == "opendp" else CONFIDENCE

    def run(self, strong: bool) -> AuditResult:
        runs = self.strong_samples if strong else self.samples
        sample = self.sample(self.noise(), runs)
        return audit(sample.first, sample.second, sample.claim, self.confidence, self.categorical)


ADD_REMOVE, REPLACE = Neighbouring("add-remove"), Neighbouring("replace")
BROKEN_REPLACE = AddRemoveSensitivity("replace")
PRIVATE_COUNT_REPLACE = PrivateRowCount("replace")
HALVED = "noise scale halved"
SENSITIVITY = "replace-one with add/remove sensitivity"
CHARGED_ONCE = "two queries charged once"

VECTOR_RUNS = (200_000, 2_000_000)  # runs per data set (default, strong), drawn in one call
SELECTION_RUNS = (2_500, 20_000)  # one Curator call per run


def _mechanism(subject: str, sampler: Sampler, runs: tuple[int, int], opendp_runs: tuple[int, int],
               categorical: bool = False, opendp_by_default: bool = False) -> list[AuditCase]:
    """The honest mechanism and its halved-noise mutation with numpy's sampler, and the honest
    mechanism with OpenDP's (as real releases draw it; slow, so mostly in the strong audit)."""
    return [
        AuditCase(subject, sampler, *runs, categorical=categorical),
        AuditCase(subject, sampler, *runs, categorical=categorical, mutation=HALVED, wrap=WeakerNoise),
        AuditCase(subject, sampler, *opendp_runs, sampler="opendp", categorical=categorical,
                  strong_only=not opendp_by_default),
    ]


def _honest_and_broken(subject: str, honest: Sampler, broken: Sampler, runs: tuple[int, int], mutation: str,
                       categorical: bool = False, honest_strong_only: bool = False) -> list[AuditCase]:
    """A subject as synth has it and with one deliberate bug."""
    return [AuditCase(subject, honest, *runs, categorical=categorical, strong_only=honest_strong_only),
            AuditCase(subject, broken, *runs, categorical=categorical, mutation=mutation)]


_COUNT_NOTIONS = ((Notion.PURE, "discrete Laplace (pure)"), (Notion.ZCDP, "discrete Gaussian (zCDP)"))


def _engine(setup: EngineSetup, runs: tuple[int, int], neighbouring: Neighbouring | None = None,
            **options: Any) -> AuditCase:
    notion = "pure" if setup.delta == 0 else "zCDP"
    columns = f"{setup.columns} column{'s' if setup.columns > 1 else ''}"
    table = "" if setup.table is tiny_table else f", {setup.table.__name__}"
    settings = "".join(f", {k}={v}" for k, v in setup.options.items())
    subject = f"engine {setup.engine} ({notion}, {setup.relation}, {columns}{table}{settings})"
    return AuditCase(subject, partial(engine_runs, setup, neighbouring or Neighbouring(setup.relation)), *runs,
                     categorical=setup.categorical, **options)


_INDEPENDENT = EngineSetup("independent")
_INDEPENDENT_REPLACE = EngineSetup("independent", relation="replace", columns=2)
_PRIVBAYES = EngineSetup("privbayes")
# zCDP engines at a large (ε, δ): ε(ρ) grows like sqrt(ρ) for small ρ, so halving σ (4ρ) would only
# show with far more runs than a pipeline allows at small budgets
ZCDP_ENGINE_BUDGET = {"epsilon": 3.0, "delta": 0.1}
_PRIVBAYES_ZCDP = EngineSetup("privbayes", **ZCDP_ENGINE_BUDGET)
_MST = EngineSetup("mst", **ZCDP_ENGINE_BUDGET)
_AIM = EngineSetup("aim", {"rounds": 4, "iterations": 20}, **ZCDP_ENGINE_BUDGET)
# the statistic sees MWEM's measurements, not its selections: a small selection share keeps most of the
# budget where the audit can see it
_MWEM = EngineSetup("mwem", {"workload": "2-way", "rounds": 3, "passes": 10, "selection_share": 0.1})
# SmallDB on the table where one row moves its scores the most (``small_database_runs``): 11 candidates
_SMALLDB = EngineSetup("smalldb", {"workload": "1-way", "size": 10}, columns=1, statistic=chosen_database, table=skewed_table)
_SMALLDB_REPLACE = dataclasses.replace(_SMALLDB, relation="replace")

CASES: list[AuditCase] = [
    *_mechanism("Laplace", laplace_runs, VECTOR_RUNS, (10_000, 200_000)),
    *_mechanism("Gaussian", gaussian_runs, VECTOR_RUNS, (10_000, 100_000)),
    *_mechanism("discrete Laplace (CountRelease, pure)", partial(count_runs, Notion.PURE), VECTOR_RUNS,
                (10_000, 200_000), opendp_by_default=True),
    *_mechanism("discrete Gaussian (CountRelease, zCDP)", partial(count_runs, Notion.ZCDP), VECTOR_RUNS,
                (10_000, 200_000), opendp_by_default=True),
    *_mechanism("exponential (Curator.select_marginal)", partial(selection_runs, ADD_REMOVE), SELECTION_RUNS,
                (1_000, 4_000), categorical=True),
    *_mechanism("exponential (Curator.select_by_dependence, mi)", partial(dependence_runs, ADD_REMOVE),
                SELECTION_RUNS, (1_000, 4_000), categorical=True),
    *_mechanism("exponential (Curator.select_by_dependence, mi, max_rows between the neighbours)",
                partial(dependence_runs, ADD_REMOVE, between=True), SELECTION_RUNS, (1_000, 4_000), categorical=True),
    *_mechanism("exponential (Curator.select_by_dependence, r)", partial(dependence_runs, ADD_REMOVE, score="r"),
                SELECTION_RUNS, (1_000, 4_000), categorical=True),
    *_honest_and_broken("exponential, replace-one (Curator.select_by_dependence, mi)",
                        partial(dependence_runs, REPLACE), partial(dependence_runs, PRIVATE_COUNT_REPLACE),
                        SELECTION_RUNS, SENSITIVITY, categorical=True),
    *_mechanism("exponential (Curator.select_small_database)", partial(small_database_runs, ADD_REMOVE),
                SELECTION_RUNS, (1_000, 4_000), categorical=True),
    *_mechanism("exponential, replace-one (Curator.select_small_database)", partial(small_database_runs, REPLACE),
                SELECTION_RUNS, (1_000, 4_000), categorical=True),
    *_mechanism("randomized response", randomized_response_runs, VECTOR_RUNS, (2_000, 40_000), categorical=True),
    *_honest_and_broken("bounds located in two stages (bounds.locate_bounds)", partial(bounds_runs, locate_bounds),
                        partial(bounds_runs, exact_upper_bound), (2_000, 20_000), "upper bound read exactly",
                        categorical=True),
    *_honest_and_broken("identifier detection (discovery.detect_identifier)", partial(identifier_runs, detect_identifier),
                        partial(identifier_runs, exact_distinct_identifier), (1_000, 10_000),
                        "distinct count read exactly", categorical=True),
    *_honest_and_broken("exponential, replace-one (Curator.select_marginal)", partial(selection_runs, REPLACE),
                        partial(selection_runs, BROKEN_REPLACE), SELECTION_RUNS, SENSITIVITY, categorical=True,
                        honest_strong_only=True),
    *(case for notion, label in _COUNT_NOTIONS for case in _honest_and_broken(
        f"{label}, replace-one histogram", partial(replaced_row_runs, notion, REPLACE),
        partial(replaced_row_runs, notion, BROKEN_REPLACE), VECTOR_RUNS, SENSITIVITY)),
    *(case for notion, label in _COUNT_NOTIONS for case in _honest_and_broken(
        f"{label}, one count released twice", partial(repeated_query_runs, notion, Accountant),
        partial(repeated_query_runs, notion, ChargesOncePerQuery), VECTOR_RUNS, CHARGED_ONCE)),
    # engines: every measurement's log-likelihood ratio (SmallDB: the database drawn); small default runs, real
    # power when strong
    _engine(_INDEPENDENT, (400, 20_000)),
    _engine(_INDEPENDENT, (1_000, 20_000), mutation=HALVED, wrap=WeakerNoise),
    _engine(_INDEPENDENT_REPLACE, (400, 20_000)),
    _engine(_INDEPENDENT_REPLACE, (1_000, 20_000), BROKEN_REPLACE, mutation=SENSITIVITY),
    _engine(_PRIVBAYES, (150, 10_000)),
    _engine(_PRIVBAYES, (300, 10_000), mutation=HALVED, wrap=WeakerNoise, strong_only=True),
    _engine(_PRIVBAYES_ZCDP, (100, 5_000)),
    _engine(_PRIVBAYES_ZCDP, (150, 5_000), mutation=HALVED, wrap=WeakerNoise, strong_only=True),
    _engine(_MST, (60, 8_000)),
    _engine(_MST, (100, 8_000), mutation=HALVED, wrap=WeakerNoise, strong_only=True),
    _engine(_AIM, (16, 3_000)),
    _engine(_AIM, (30, 3_000), mutation=HALVED, wrap=WeakerNoise, strong_only=True),
    _engine(_MWEM, (300, 5_000)),
    _engine(_MWEM, (300, 5_000), mutation=HALVED, wrap=WeakerNoise, strong_only=True),
    _engine(_SMALLDB, (2_000, 10_000)),
    _engine(_SMALLDB, (2_000, 10_000), mutation=HALVED, wrap=WeakerNoise),
    _engine(_SMALLDB_REPLACE, (500, 10_000)),
    _engine(EngineSetup("random"), (20, 500)),
    # a table of no rows against one row: released alike, as any neighbours (no exit on exact emptiness)
    _engine(EngineSetup("independent", table=no_rows), (400, 20_000)),
    _engine(EngineSetup("independent", table=no_rows), (1_000, 20_000), mutation=HALVED, wrap=WeakerNoise),
    _engine(EngineSetup("privbayes", table=no_rows), (150, 10_000)),
    *_honest_and_broken("describe on a CSV file of no rows and one of one row, public profile (synth.api.describe)",
                        partial(describe_runs, False), partial(describe_runs, True), (300, 5_000),
                        "an exit on an exactly empty table", categorical=False),
]

"""aim's plan: how many rounds it divides its budget into, what share each round measures with, how much the
1-way marginals get, and how many fitting iterations follow a round. Each rule reads the budget, public
sizes (columns, codes, workload marginals) and, where it says so, a noisy total of rows; never a row.
The rules' measurements on the accuracy suite are in their docstrings (``synth.engines.aim`` uses them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from synth.columns.domain import Domain
from synth.privacy import split_budget

MEASURE_SHARE = 0.9  # of each round's budget; the rest selects
# Rounds per column when unset: (ρ / RHO_AT_FOUR)^(1/3) times four, within [2, 16] (see planned_rounds)
RHO_AT_FOUR = 0.12
FEWEST_PER_COLUMN, MOST_PER_COLUMN = 2, 16
DENSE_MOST_PER_COLUMN = 8  # a dense table's covering plan stops at this many rounds per column (covering_rounds)
# The 1-way marginals together take at most ONE_WAY_SIGNAL / signal of the budget (one_way_share), where a
# table's signal is its rows against a round's noise deviation (signal_of)
ONE_WAY_SIGNAL = 600.0
# A table is dense when a workload marginal's mean cell, measured in a round of the covering plan, holds at
# least this many noise deviations (dense_plan)
DENSE_DEVIATIONS = 4.0
# A table that is not dense but whose workload marginal's mean cell holds at least SPARE_DEVIATIONS noise
# deviations at the planned rounds gets more rounds, as many as keep GRADED_DEVIATIONS (graded_plan)
SPARE_DEVIATIONS, GRADED_DEVIATIONS = 3.0, 2.0
# Fitting iterations after each round when unset: ITERATIONS up to this many rounds per column, fewer beyond
ITERATIONS, MIN_ITERATIONS, ROUNDS_AT_FULL_ITERATIONS = 100, 25, 4


def planned_rounds(columns: int, rho: float) -> int:
    """The rounds aim plans for ``columns`` columns and a budget of ``rho`` (zCDP) when ``rounds`` is
    unset: ``columns`` times 4 (ρ / 0.12)^(1/3), kept within 2 and 16 per column.

    The published AIM plans 16 rounds per column at every budget, which spreads a small budget too
    thin: each round's measurement is too noisy to move the model. On the accuracy suite's sparse
    tables (``synth run`` with the public profile, δ = 1e-9, mean 3-way TVD, seeds 0–2; 2 / 4 / 8 rounds
    per column; benchmarks/RESULTS.md, 2026-11-28 23:54) 2 is best on the whole tuning half at ε = 0.3
    (adult_coded 0.1107 / 0.1183 / 0.1285, diamonds 0.1880 / 0.1889 / 0.2202, doctoraus 0.1942 / 0.2096 /
    0.2445, hdma 0.2085 / 0.2440 / 0.3250) and holds at ε = 1 (4 against 2: geometric mean 1.026;
    diamonds 0.946 and doctoraus 0.974, adult_coded 1.041 and hdma 1.154). On the checking half 4 against 2
    gains at ε = 0.3 on baseball (0.940), gss_wages (0.967) and flchain (0.983) and loses on schooling
    (1.211); at ε = 1 it gains on gss_wages (0.881) and baseball (0.913) and loses on schooling (1.050)
    and flchain (1.009). No public quantity tried (cell signal, rows against a round's deviation,
    columns) tells those apart. A large budget gains from many rounds (adult_coded at ε = 10: 0.055 with
    30, 0.050 with 240), hence the growth with ρ. Dense tables get their own plan (``dense_plan``). It
    reads the budget and the number of columns only."""
    return round(columns * min(max(budget_rounds_per_column(rho), FEWEST_PER_COLUMN), MOST_PER_COLUMN))


def budget_rounds_per_column(rho: float) -> float:
    """The rounds per column that a budget of ``rho`` asks for, before ``planned_rounds`` keeps them
    within 2 and 16: 4 (ρ / 0.12)^(1/3)."""
    return 4 * (rho / RHO_AT_FOUR) ** (1 / 3)


def signal_of(rows: float, deviation: float) -> float:
    """A table's signal: its (noisy) rows against the noise deviation of one round's measurement, its
    size in units of noise, which means the same precision on every table."""
    return rows / deviation


def one_way_share(signal: float, rounds_per_column: float) -> float:
    """The share of a round's measurement budget that each 1-way marginal gets, on a table of this
    ``signal`` (``signal_of``) with this many rounds planned per column: the whole round while the
    1-way marginals would take no more than ``ONE_WAY_SIGNAL`` / signal of the budget, and so much
    less beyond that they take just that: ONE_WAY_SIGNAL × rounds per column / signal.

    The published AIM measures each 1-way marginal with a round's budget: with 2 rounds planned per
    column (``planned_rounds`` at ε ≤ 1) that is half the budget. The higher a table's signal, the
    less its 1-way marginals need: their fraction falls in proportion, and what it leaves buys
    rounds that measure relations. Where the rounds per column follow the budget (ρ^(1/3), above
    ε ≈ 3 at δ = 1e-9), so does the signal, and the share goes as √columns / rows at every ε; below,
    where 2 rounds per column are planned, a smaller budget leaves the 1-way marginals more. On the
    accuracy suite (benchmarks/accuracy_suite.py: ``synth run`` with each table's public profile,
    δ = 1e-9, mean 3-way TVD) 600 was chosen on the tuning half at ε = 1 (3 seeds; 300 / 600 / 1200:
    adult_coded 0.0749 / 0.0726 / 0.0745, diamonds 0.1232 / 0.1250 / 0.1325). It binds only on the
    tables of over 48,000 rows, where it replaced (48,842 / n)² of a round (a rule fitted to
    adult_coded's rows); with 16 coarse groups on every table, against that rule: ε = 1 adult_coded
    0.0745 → 0.0726, diamonds 0.1334 → 0.1250, fertility 0.0054 → 0.0046, insteval 0.0156 → 0.0154;
    ε = 0.3 fertility 0.0120 → 0.0078, diamonds 0.1799 → 0.1880, insteval 0.0388 → 0.0405; ε = 3
    (seeds 0–1) diamonds 0.0943 → 0.0919, insteval 0.0062 → 0.0062, fertility 0.0025 → 0.0031
    (benchmarks/RESULTS.md). It reads a noisy total and the plan, never a constant table size."""
    return min(1.0, ONE_WAY_SIGNAL * rounds_per_column / max(signal, 1.0))


def round_budget(rho: float) -> tuple[float, float]:
    """A round's budget ``rho`` split into its measurement (``MEASURE_SHARE``) and its selection.

    0.9 is the published AIM's split. On the accuracy suite (``synth run`` with the public profile,
    δ = 1e-9, mean 3-way TVD, seeds 0–2; benchmarks/RESULTS.md, 2026-12-03 12:45) the tuning half's
    geometric mean against it was 1.005 (ε = 0.3) and 1.026 (ε = 1) with 0.8, 1.021 and 1.015 with
    0.95; the checking half 1.007 and 1.010 with 0.8, 1.005 and 0.988 with 0.95."""
    measure, select = split_budget(rho, [MEASURE_SHARE, 1 - MEASURE_SHARE])
    return measure, select


def covering_rounds(workload_marginals: int, columns: int) -> int:
    """The rounds that measure each of a table's ``columns`` 1-way marginals and then each workload
    marginal once, at most ``DENSE_MOST_PER_COLUMN`` (8) per column, half the published AIM's plan.

    Chosen on the accuracy suite's tuning half, where the cap binds on the two dense tables with more
    workload marginals than 8 per column (``synth run`` with the public profile, δ = 1e-9, mean 3-way
    TVD, seeds 0–2; benchmarks/RESULTS.md, 2026-11-28 23:54): mpls_stops (10 columns, 120 triples:
    130 rounds uncapped) at ε = 1 0.0227 → 0.0200 (the cap also makes it dense there: its 80 rounds'
    cells hold 5.0 deviations, 130 rounds' 3.9) and at ε = 3 0.0108 → 0.0105; nass_cds (13 columns,
    286 triples: 208 rounds uncapped) at ε = 1 0.0159 → 0.0161 and at ε = 3 0.0091 → 0.0086 (mbi 2.0's
    AIM, which plans 16 per column: 0.0202, 0.0113; 0.0171, 0.0100). 16 per column lost on both at
    ε = 3 (0.0121, 0.0092) and on military (0.00056 against 0.00038 at ε = 1). No other suite table at
    ε = 0.3, 1 or 3 is dense with more workload marginals than 8 per column, so none changes. On a table
    outside the suite (gss_abortion, 64,814 rows, 14 columns of 3–9 codes; RESULTS.md 2026-11-29
    00:56) 224 → 112 rounds gave 0.0146 → 0.0142 at ε = 1 and 0.0087 → 0.0077 at ε = 3. It reads
    public sizes only."""
    return min(DENSE_MOST_PER_COLUMN * columns, workload_marginals + columns)


def cell_signal(rows: float, deviation: float, workload: Sequence[tuple[str, ...]], domain: Domain) -> float:
    """The (noisy) rows against a measurement's noise ``deviation`` and the mean cells of a workload
    marginal: how many deviations an average cell of a workload marginal holds."""
    return rows / (deviation * float(np.mean([domain.size(q) for q in workload])))


def dense_plan(rows: float, rounds: int, workload: Sequence[tuple[str, ...]], columns: int, domain: Domain,
               deviation_of: Callable[[int], float]) -> int | None:
    """The rounds for a dense table, or None when the table is not dense. ``deviation_of(T)``: a
    round's noise deviation when the budget is planned in T rounds.

    A table is dense when, with at least ``covering_rounds`` planned, a workload marginal's mean
    cell still holds ``DENSE_DEVIATIONS`` noise deviations (``cell_signal``): every workload
    marginal can then be measured well, and what the model lacks is the marginals left unmeasured.
    ``planned_rounds`` plans few rounds for a small budget because each would be too noisy to move
    the model, which a dense table's rounds are not: it gets the covering rounds when they are more.
    Its coarse candidates are left out (``coarse_groups`` "auto"): they exist for marginals that the
    noise drowns in full.

    Chosen on the accuracy suite's tuning half (``synth run`` with the public profile, δ = 1e-9,
    mean 3-way TVD, 3 seeds; benchmarks/RESULTS.md, 2026-11-28): where being dense lost, the
    covering plan's cells held at most 2.6 deviations (flights at ε = 3 needs its coarse groups:
    0.0551 with, 0.0620 without; cpssw8 at ε = 1, 2.2: 0.0489 as planned, 0.0557 dense); where it
    won, at least 5.2 (cpssw8 at ε = 3 and 10: 0.0388 → 0.0350, 0.0185 → 0.0170; military from ε =
    0.01, 5.5, on: ε = 0.3 0.0029 → 0.0013 and ε = 1 0.0020 → 0.0004, against mbi's AIM 0.0014 and
    0.0005). 4 lies between. On the suite's ε (0.3, 1, 3) only military, cpssw8 (ε = 3) and, in the
    checking half, fertility and insteval are dense. There it holds in part: fertility 0.0078 /
    0.0046 / 0.0031 → 0.0095 / 0.0052 / 0.0027 (mbi 0.0104 / 0.0052 / 0.0028), insteval 0.0405 /
    0.0154 / 0.0061 → 0.0383 / 0.0168 / 0.0061 (mbi 0.0368 / 0.0163 / 0.0066): two losses to mbi
    become wins and one win a loss of 3 %. It reads a noisy total and public sizes only."""
    plan = max(rounds, covering_rounds(len(workload), columns))
    if cell_signal(rows, deviation_of(plan), workload, domain) < DENSE_DEVIATIONS:
        return None
    return plan


def graded_plan(rows: float, rounds: int, workload: Sequence[tuple[str, ...]], columns: int, domain: Domain,
                deviation_of: Callable[[int], float], rho: float) -> int:
    """The rounds for a table that is not dense (``dense_plan`` gave None) with a budget of ``rho``:
    ``rounds`` (the planned ones), or more when the budget's plan is held at its floor of 2 rounds per
    column (``budget_rounds_per_column`` below 2) and a workload marginal's mean cell at those rounds
    still holds ``SPARE_DEVIATIONS`` (3) noise deviations or more (``cell_signal``): then as many as
    keep ``GRADED_DEVIATIONS`` (2), T = rounds × (signal / 2)², up to the covering plan
    (``covering_rounds``). A cell's signal falls as the square root of the rounds, each round's
    budget being the total over the rounds.

    ``planned_rounds`` gives a small budget few rounds so that each moves the model, and no fewer
    than 2 per column; a table whose cells hold several deviations even then has signal to spare,
    which more rounds turn into more measured marginals. Above the floor the plan already grows
    with the budget. Chosen on the accuracy suite's tuning half (``synth run`` with the public
    profile, δ = 1e-9, mean 3-way TVD, seeds 0–2; benchmarks/RESULTS.md, 2026-12-02 11:35): at ε = 0.3
    mpls_stops (3.15 deviations at the planned 20 rounds: 50; seeds 0–5) 0.0430 → 0.0399 (mbi 2.0's AIM 0.0413)
    and nass_cds (4.82: 26 → 104) 0.0322 → 0.0320 (mbi 0.0331); at ε = 1 cpssw8 (2.62) and flights
    (2.59) lost with a start at 2 deviations (1.036, 1.012), hence 3; flights at ε = 3 (5.2 deviations,
    above the floor: 52 → 104 rounds) gained nothing (0.0552 → 0.0554, seed 0), hence the floor. On
    the checking half it starts nowhere at ε = 0.3, 1 or 3; outside the suite, on gss_abortion at ε =
    0.3 (7.03: 28 → 112), 0.0327 → 0.0297 (mbi 0.0293). It reads a noisy total, the budget and public
    sizes only."""
    if budget_rounds_per_column(rho) >= FEWEST_PER_COLUMN:
        return rounds
    signal = cell_signal(rows, deviation_of(rounds), workload, domain)
    if signal < SPARE_DEVIATIONS:
        return rounds
    most = max(rounds, covering_rounds(len(workload), columns))
    return min(most, round(rounds * (signal / GRADED_DEVIATIONS) ** 2))


def planned_iterations(columns: int, rounds: int) -> int:
    """The fitting iterations after each round when ``iterations`` is unset: 100, and fewer when more
    than four rounds per column are planned (100 × 4 / rounds per column, at least 25), so that the
    refits of a large budget's many rounds cost no more than those of four rounds per column.

    On adult_coded at ε = 10 (125 rounds planned), 50 iterations per round scored 0.0497 and 0.0494
    (seeds 0 and 1) against 0.0499 and 0.0495 with 100, in about half the time (fewer rounds ran:
    a refit that moves the model less anneals sooner); at ε = 3 (60 rounds: four per column) 50
    scored 0.0589 against 0.0582 (3 seeds), so up to four rounds per column keep 100. On the accuracy
    suite (seeds 0–2; benchmarks/RESULTS.md, 2026-12-03 12:45), 50 iterations on every plan scored a
    geometric mean of 1.009 (ε = 0.3; military 1.083) and 1.002 (ε = 1) of this rule's (100, fewer
    only where a dense or graded plan has more than four rounds per column) on the tuning half, 0.996
    and 1.004 on the checking half; 200 scored 1.001 and 1.007, 1.006 and 1.012 (fertility 1.064 and
    1.077). It reads the numbers of columns and rounds only, never the data."""
    per_column = rounds / max(columns, 1)
    return max(MIN_ITERATIONS, min(ITERATIONS, round(ITERATIONS * ROUNDS_AT_FULL_ITERATIONS / per_column)))

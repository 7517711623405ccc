"""aim on dense tables: enough rounds to measure every workload marginal (at most 8 per column), and no
coarse candidates."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from synth.columns.domain import Domain
from synth.engines import make_engine
from synth.engines.aim_plan import (
    DENSE_DEVIATIONS,
    GRADED_DEVIATIONS,
    SPARE_DEVIATIONS,
    budget_rounds_per_column,
    cell_signal,
    covering_rounds,
    dense_plan,
    graded_plan,
    planned_rounds,
)
from synth.engines.base import EngineResult
from synth.privacy import gaussian_sigma
from synth.progress import SILENT
from tests.conftest import MessageRecorder
from tests.test_engines import chain_data, curator_for


def _random_joint(rows: int, seed: int = 0) -> tuple[np.ndarray, Domain]:
    """Six columns of 3 codes drawn from a random joint distribution (Dirichlet 0.3 over the 729
    cells): every 3-way marginal carries structure of its own."""
    rng = np.random.default_rng(seed)
    cells = rng.choice(3 ** 6, size=rows, p=rng.dirichlet(np.full(3 ** 6, 0.3)))
    return np.column_stack(np.unravel_index(cells, (3,) * 6)), Domain(tuple("abcdef"), (3,) * 6)


def _three_way_error(codes: np.ndarray, domain: Domain, options: dict, seed: int) -> float:
    """Mean TVD over the 20 3-way marginals between the data and aim's fitted model (ε = 1)."""
    engine = make_engine("aim", {"iterations": 50, **options})
    result = engine.describe(curator_for(codes, domain, 1.0, seed=seed), SILENT)
    model = engine.build_model(domain, result)
    errors = []
    for q in itertools.combinations(domain.names, 3):
        true = np.zeros((3, 3, 3))
        np.add.at(true, tuple(codes[:, domain.names.index(a)] for a in q), 1)
        fitted = model.marginal(list(q))
        errors.append(0.5 * float(np.abs(true / true.sum() - fitted / fitted.sum()).sum()))
    return float(np.mean(errors))


def _run_unset(codes: np.ndarray, domain: Domain, epsilon: float) -> tuple[float, int, EngineResult]:
    """aim with its rounds unset: the budget, the rounds ``planned_rounds`` gives it, and the result."""
    curator = curator_for(codes, domain, epsilon)
    total = curator.remaining()
    planned = planned_rounds(len(domain.names), total)
    return total, planned, make_engine("aim", {"iterations": 20}).describe(curator, SILENT)


def test_covering_rounds_measure_each_column_then_each_workload_marginal_within_eight_per_column():
    assert covering_rounds(20, 6) == 26  # military: 20 triples of 6 columns
    assert covering_rounds(120, 10) == 8 * 10  # mpls_stops: 130 would measure every triple; 8 per column bound it
    assert covering_rounds(364, 14) == 8 * 14  # adult: half the published AIM's plan of 16 per column


def test_a_table_is_dense_when_a_mean_workload_cell_holds_the_threshold_in_deviations_at_the_covering_plan():
    domain = Domain(("a", "b", "c", "d"), (3, 4, 5, 10))
    workload = list(itertools.combinations(domain.names, 3))
    mean_cells = np.mean([domain.size(q) for q in workload])  # (60 + 120 + 150 + 200) / 4
    assert cell_signal(1000.0, 2.0, workload, domain) == pytest.approx(1000.0 / (2.0 * mean_cells))
    seen: list[int] = []

    def deviation(plan: int) -> float:
        seen.append(plan)
        return float(np.sqrt(plan))  # a round's deviation grows as the root of the rounds

    cover = covering_rounds(len(workload), 4)  # 8
    at_threshold = DENSE_DEVIATIONS * np.sqrt(cover) * mean_cells  # the rows at which a cell holds exactly 4
    assert dense_plan(at_threshold * 1.01, 6, workload, 4, domain, deviation) == cover and seen == [cover]
    assert dense_plan(at_threshold * 0.99, 6, workload, 4, domain, deviation) is None
    # a plan of more rounds than the covering ones is kept, and judged at its own deviation
    assert dense_plan(at_threshold * 1.01, 12, workload, 4, domain, deviation) is None
    assert dense_plan(at_threshold * 2, 12, workload, 4, domain, deviation) == 12


def test_a_dense_table_gets_the_covering_rounds_and_is_fitted_far_better_than_with_the_budgets_plan():
    codes, domain = _random_joint(100_000)
    total, planned, result = _run_unset(codes, domain, 1.0)
    first = result.measurements[0]
    assert first.noise_scale == pytest.approx(gaussian_sigma(1.0, 0.9 * total / planned), rel=1e-9)
    assert planned < covering_rounds(20, 6)  # so the rest of the budget is re-planned in 26 - 1 rounds
    round_one = next(m for m in result.measurements if len(m.attrs) > 1)
    left = total - 0.9 * total / planned  # after the first 1-way marginal
    assert round_one.noise_scale == pytest.approx(gaussian_sigma(1.0, 0.9 * left / 25), rel=1e-9)
    dense = [_three_way_error(codes, domain, {}, seed) for seed in range(2)]
    as_planned = [_three_way_error(codes, domain, {"rounds": planned}, seed) for seed in range(2)]
    assert np.mean(dense) < 0.5 * np.mean(as_planned)  # measured: about 0.0017 against 0.018


def test_a_dense_table_gets_no_coarse_candidates_unless_they_are_asked_for(monkeypatch):
    import synth.engines.aim as aim
    offered: list[tuple[int, ...]] = []
    real = aim.coarse_candidates

    def recording(spec, domain, max_cells, maps, resolutions):
        offered.append(tuple(resolutions))
        return real(spec, domain, max_cells, maps, resolutions)

    monkeypatch.setattr(aim, "coarse_candidates", recording)
    rng = np.random.default_rng(3)
    rows = 200_000
    x = rng.integers(0, 40, rows)  # more than twice 16 codes: coarse groups are offered where not dense
    y = (x // 10 + rng.integers(0, 2, rows)) % 4
    z = rng.integers(0, 3, rows)
    codes, domain = np.column_stack([x, y, z]), Domain(("x", "y", "z"), (40, 4, 3))

    def resolutions(rows: int, epsilon: float, options: dict) -> tuple[int, ...]:
        offered.clear()
        engine = make_engine("aim", {"compress": False, "iterations": 20, **options})
        engine.describe(curator_for(codes[:rows], domain, epsilon), SILENT)
        return offered[0]

    assert resolutions(200_000, 1.0, {}) == ()  # 200,000 rows over 480 cells: dense
    assert resolutions(200_000, 1.0, {"coarse_groups": 8}) == (8,)  # asked for: offered
    assert resolutions(3_000, 0.05, {}) == (16,)  # 3,000 rows at ε = 0.05: not dense


def test_a_sparse_table_keeps_the_budgets_plan():
    total, planned, result = _run_unset(*chain_data(2000), 0.3)
    round_one = next(m for m in result.measurements if len(m.attrs) > 1)
    assert round_one.noise_scale == pytest.approx(gaussian_sigma(1.0, 0.9 * total / planned), rel=1e-9)


def test_a_plan_whose_cells_hold_signal_to_spare_grows_until_they_hold_two_deviations():
    domain = Domain(tuple("abcdefghij"), (2,) * 10)
    workload = list(itertools.combinations(domain.names, 3))  # 120 triples of 8 cells: covering plan 80

    def deviation(plan: int) -> float:
        return float(np.sqrt(plan))

    def rows_holding(signal: float, plan: int) -> float:
        return signal * deviation(plan) * 8

    floor = 0.001  # a budget held at the floor of 2 rounds per column
    assert budget_rounds_per_column(floor) < 2

    assert graded_plan(rows_holding(SPARE_DEVIATIONS * 0.99, 20), 20, workload, 10, domain, deviation, floor) == 20
    at_three_and_a_half = graded_plan(rows_holding(3.5, 20), 20, workload, 10, domain, deviation, floor)
    assert at_three_and_a_half == round(20 * (3.5 / GRADED_DEVIATIONS) ** 2)  # 61
    assert cell_signal(rows_holding(3.5, 20), deviation(61), workload, domain) == pytest.approx(2.0, rel=0.01)
    assert graded_plan(rows_holding(6.0, 20), 20, workload, 10, domain, deviation, floor) == covering_rounds(120, 10)
    assert graded_plan(rows_holding(6.0, 100), 100, workload, 10, domain, deviation, floor) == 100  # never fewer
    # above the floor the budget's plan stands, however strong the signal
    above = 0.2
    assert budget_rounds_per_column(above) > 2
    assert graded_plan(rows_holding(6.0, 20), 20, workload, 10, domain, deviation, above) == 20


def test_aim_measures_its_rounds_at_the_graded_plans_budget_on_a_table_with_signal_to_spare():
    domain = Domain(tuple("abcdefghij"), (2,) * 10)
    rho = curator_for(np.zeros((1, 10), dtype=int), domain, 0.3).remaining()
    planned = planned_rounds(10, rho)
    rows = int(3.5 * 8 * gaussian_sigma(1.0, 0.9 * rho / planned))  # 3.5 deviations a cell at the planned rounds
    rng = np.random.default_rng(4)
    codes = np.column_stack(np.unravel_index(rng.choice(2 ** 10, size=rows, p=rng.dirichlet(np.full(2 ** 10, 0.5))),
                                             (2,) * 10))
    recorder = MessageRecorder()
    result = make_engine("aim", {"iterations": 10}).describe(curator_for(codes, domain, 0.3), recorder)
    first = result.measurements[0]
    noisy_rows = float(first.values.sum())
    workload = list(itertools.combinations(domain.names, 3))

    def deviation(plan: int) -> float:
        return gaussian_sigma(1.0, 0.9 * rho / plan)

    graded = graded_plan(noisy_rows, planned, workload, 10, domain, deviation, rho)
    assert 2.5 * planned < graded < covering_rounds(120, 10)  # about 3 times the planned rounds, below the cover
    assert f"up to {graded} rounds (its cells hold signal to spare" in recorder.messages[0]  # the console says why
    # the other columns' 1-way marginals take a whole round each (few rows: one_way_share is 1), at the graded plan
    second = result.measurements[1]
    left = rho - 0.9 * rho / planned  # after the first 1-way marginal
    assert second.attrs == ("b",)
    assert second.noise_scale == pytest.approx(gaussian_sigma(1.0, 0.9 * left / (graded - 1)), rel=1e-9)

"""The privacy audit: every mechanism and engine stays within the ε it claims, and every
deliberately broken variant is caught (its audited ε lower bound exceeds its claim)."""

from __future__ import annotations

import numpy as np
import pytest
from auditing import Claim, audit, clopper_pearson
from cases import CASES, CONFIDENCE, AuditCase, skewed_table
from engine_runs import NAMES, SIZES, chosen_database, expected_values, tiny_table

from synth.columns.domain import Domain
from synth.engines import EngineResult, make_engine
from synth.engines.smalldb import SmallDBOutput
from synth.privacy import Accountant, Budget, SeededNoise
from synth.privacy.curator import CountRelease, Curator
from synth.privacy.neighbours import Neighbouring
from synth.progress import SILENT

HONEST = [case for case in CASES if not case.mutation]
BROKEN = [case for case in CASES if case.mutation]


def _run(case: AuditCase, strong: bool):
    if case.strong_only and not strong:
        pytest.skip("strong audit only: pass --audit-strong or set SYNTH_AUDIT_STRONG=1")
    return case.run(strong)


@pytest.mark.parametrize("case", HONEST, ids=lambda case: case.name)
def test_audited_epsilon_stays_within_the_claim(case: AuditCase, audit_strong: bool) -> None:
    result = _run(case, audit_strong)
    assert not result.violates, f"{case.name} leaks more than it claims: {result.summary()}"


@pytest.mark.parametrize("case", BROKEN, ids=lambda case: case.name)
def test_broken_variant_is_caught(case: AuditCase, audit_strong: bool) -> None:
    result = _run(case, audit_strong)
    assert result.violates, f"the audit missed the bug '{case.mutation}': {result.summary()}"


def test_clopper_pearson_matches_known_values() -> None:
    lower, upper = clopper_pearson(np.array([0, 5, 10]), 10, 0.025)
    # exact one-sided 97.5 % bounds: 0 of 10 -> [0, 0.3085]; 5 of 10 -> [0.1871, 0.8129]; 10 of 10 -> [0.6915, 1]
    assert lower == pytest.approx([0.0, 0.1871, 0.6915], abs=1e-4)
    assert upper == pytest.approx([0.3085, 0.8129, 1.0], abs=1e-4)


def test_audit_of_identical_mechanisms_false_alarms_at_most_as_often_as_its_confidence_allows() -> None:
    """Choosing the event on one half and measuring it on the other keeps the bound honest: with
    the same distribution on both sides (true ε = 0), a claim of ε = 0 is rejected in at most
    1 − CONFIDENCE of the audits (here 1 %: at most 5 of 200, allowing for chance)."""
    rng = np.random.default_rng(11)
    alarms = sum(audit(rng.normal(size=300), rng.normal(size=300), Claim(0.0), CONFIDENCE).violates
                 for _ in range(100))
    alarms += sum(audit(rng.integers(0, 5, 300), rng.integers(0, 5, 300), Claim(0.0), CONFIDENCE,
                        categorical=True).violates for _ in range(100))
    assert alarms <= 5


def test_audit_finds_most_of_a_known_epsilon() -> None:
    """Binary randomized response at ε = 1, sampled directly: the bound is close below 1."""
    rng = np.random.default_rng(5)
    p = np.e / (1 + np.e)
    first, second = rng.random(100_000) < p, rng.random(100_000) < 1 - p
    result = audit(first.astype(int), second.astype(int), Claim(1.0), CONFIDENCE, categorical=True)
    assert 0.93 < result.epsilon_lb <= 1.0


@pytest.mark.parametrize("engine,delta,options", [
    ("independent", 0.0, {}), ("privbayes", 0.0, {}), ("mst", 0.1, {}), ("aim", 0.1, {"rounds": 4}),
    ("mwem", 0.0, {"workload": "2-way", "rounds": 3, "passes": 10}),
])
def test_engine_statistic_reads_every_measurement_where_it_was_taken(engine: str, delta: float,
                                                                     options: dict[str, int]) -> None:
    """With no noise to speak of (ε = 10⁶), each measurement's values are its expected values on the table
    (compression, coarsening and weights applied as the engine did), so the audit's likelihood
    ratio compares the right cells."""
    table = tiny_table(3)
    accountant = Accountant(Budget(1e6, delta))
    curator = Curator(table, Domain(NAMES, SIZES), CountRelease(accountant, SeededNoise(1), Neighbouring()))
    result = make_engine(engine, options).describe(curator, SILENT)
    assert result.measurements
    for m in result.measurements:
        np.testing.assert_allclose(m.values, expected_values(m, table, result.compression), atol=1e-9)


def test_smalldb_statistic_gives_each_database_its_own_code() -> None:
    """``chosen_database`` codes a database by its cells whatever their order, one code per
    multiset; with no noise to speak of SmallDB draws the best database on ``skewed_table``
    (all 10 rows 0: error 4 rows), code 0."""
    table = skewed_table()

    def code(rows: list[list[int]]) -> float:
        output = SmallDBOutput(tuple(map(tuple, rows)), size=len(rows), candidates=1, queries=1, total=10.0, workload=())
        return chosen_database(EngineResult((), output), table, table)

    assert len({code([[1]] * ones + [[0]] * (10 - ones)) for ones in range(11)}) == 11
    assert code([[0], [1], [0]]) == code([[0], [0], [1]])
    curator = Curator(table, Domain(NAMES[:1], SIZES[:1]), CountRelease(Accountant(Budget(1e6)), SeededNoise(1),
                                                                        Neighbouring()))
    assert chosen_database(make_engine("smalldb", {"workload": "1-way", "size": 10}).describe(curator, SILENT), table, table) == 0

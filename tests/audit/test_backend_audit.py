"""The privacy audit on each counting backend: engines counted through DuckDB (CSV and Parquet) and,
in one representative case, Spark in local mode stay within the ε they claim, and a backend that
counts every row twice is caught. The backend's code rows are checked to be the table's own first,
so an audit that passes is an audit of the counts the backend really gave."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
from auditing import audit
from backends import DUCKDB_CASES, SPARK_CASES, backend_code_rows
from cases import CONFIDENCE, AuditCase
from engine_runs import neighbour, tiny_table

pytest.importorskip("duckdb")
HONEST = [case for case in DUCKDB_CASES if not case.mutation]
BROKEN = [case for case in DUCKDB_CASES if case.mutation]
needs_spark = pytest.mark.skipif(
    shutil.which("java") is None and not os.environ.get("JAVA_HOME"), reason="Spark needs Java")


def _audit(case: AuditCase, strong: bool):
    runs = case.strong_samples if strong else case.samples
    sample = case.sample(case.noise(), runs)
    return audit(sample.first, sample.second, sample.claim, CONFIDENCE, case.categorical)


def _histogram(codes: np.ndarray, weights: np.ndarray | None) -> dict[tuple[int, ...], int]:
    counts: dict[tuple[int, ...], int] = {}
    for row, weight in zip(map(tuple, codes.tolist()), np.ones(len(codes), int) if weights is None else weights,
                           strict=True):
        counts[row] = counts.get(row, 0) + int(weight)
    return counts


@pytest.mark.parametrize("form", ["csv", "parquet"])
def test_the_backend_counts_the_audited_tables_exactly(form: str) -> None:
    for table in (tiny_table(3), neighbour(tiny_table(3), "add-remove")):
        assert _histogram(*backend_code_rows("duckdb", form, False, table)) == _histogram(table, None)


def test_the_broken_backend_counts_the_added_row_twice() -> None:
    table = tiny_table(3)
    assert _histogram(*backend_code_rows("duckdb", "csv", True, table)) == _histogram(table, None)
    added = neighbour(table, "add-remove")
    expected = _histogram(added, None)
    expected[tuple(added[-1].tolist())] += 1
    assert _histogram(*backend_code_rows("duckdb", "csv", True, added)) == expected


@pytest.mark.parametrize("case", HONEST, ids=lambda case: case.name)
def test_audited_epsilon_on_duckdb_stays_within_the_claim(case: AuditCase, audit_strong: bool) -> None:
    result = _audit(case, audit_strong)
    assert not result.violates, f"{case.name} leaks more than it claims: {result.summary()}"


@pytest.mark.parametrize("case", BROKEN, ids=lambda case: case.name)
def test_a_broken_backend_is_caught(case: AuditCase, audit_strong: bool) -> None:
    result = _audit(case, audit_strong)
    assert result.violates, f"the audit missed the bug '{case.mutation}': {result.summary()}"


@needs_spark
@pytest.mark.parametrize("case", SPARK_CASES, ids=lambda case: case.name)
def test_audited_epsilon_on_spark_stays_within_the_claim(case: AuditCase, audit_strong: bool) -> None:
    pytest.importorskip("pyspark")
    result = _audit(case, audit_strong)
    assert not result.violates, f"{case.name} leaks more than it claims: {result.summary()}"

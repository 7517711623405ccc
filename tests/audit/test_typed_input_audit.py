"""The privacy audit on typed inputs: a neighbour that changes a column's dtype moves each count
discovery releases by at most one row, on every input form and backend, and end-to-end discovery
on such neighbours stays within its claim; each way of reading a cell by its column's dtype (the
mutations) is caught by both checks."""

from __future__ import annotations

import os
import shutil
from functools import partial

import pytest
from cases import AuditCase
from typed_inputs import (
    EQUALITY,
    MUTATIONS,
    PAIRS,
    TIMESTAMP_STR,
    TypedPair,
    discovery_runs,
    largest_move,
    opened,
    released_counts,
    vote_runs,
    write_form,
)

BACKENDS = ("memory", "duckdb", "spark")
DISCOVERY_RUNS = (600, 5_000)  # runs per table (default, strong); the mutations differ deterministically
SPARK = pytest.mark.skipif(shutil.which("java") is None and not os.environ.get("JAVA_HOME"), reason="Spark needs Java")


def _cases() -> list:
    cases = []
    for pair in PAIRS:
        for form in pair.forms:
            for backend in BACKENDS if form != "dataframe" else ("memory",):
                marks = [SPARK] if backend == "spark" else []
                cases.append(pytest.param(pair, form, backend, marks=marks, id=f"{pair.name}, {form}, {backend}"))
    return cases


def _move(pair: TypedPair, form: str, backend: str, folder) -> tuple[str, int]:
    if backend != "memory":
        pytest.importorskip(backend if backend == "duckdb" else "pyspark")
    counts = []
    for stem, frame in zip(("base", "neighbour"), pair.tables, strict=True):
        with opened(write_form(frame, form, folder, stem), backend) as table:
            counts.append(released_counts(table, "x"))
    return largest_move(*counts)


@pytest.mark.parametrize("pair,form,backend", _cases())
def test_a_neighbour_that_changes_a_dtype_moves_each_released_count_by_one_row(
        pair: TypedPair, form: str, backend: str, tmp_path) -> None:
    histogram, moved = _move(pair, form, backend, tmp_path)
    assert moved <= 1, f"{histogram} moved by {moved} rows when one row was added"


@pytest.mark.parametrize("pair", [p for p in PAIRS if p.mutation], ids=lambda p: p.mutation)
def test_reading_a_cell_by_its_dtype_moves_a_count_by_many_rows(pair: TypedPair, tmp_path) -> None:
    with MUTATIONS[pair.mutation]():
        _, moved = _move(pair, "dataframe", "memory", tmp_path)
    assert moved > 1, f"the mutation '{pair.mutation}' went unseen"


VOTE_RUNS = (3_000, 30_000)  # one vote per run


def _statistical_audit(pair: TypedPair, mutation: str, end_to_end: bool, strong: bool):
    subject = "discovery" if end_to_end else "the vote"
    sampler = discovery_runs if end_to_end else vote_runs
    case = AuditCase(f"{subject} on typed neighbours ({pair.name})", partial(sampler, pair, mutation),
                     *(DISCOVERY_RUNS if end_to_end else VOTE_RUNS), categorical=end_to_end, mutation=mutation)
    return case.run(strong)


@pytest.mark.parametrize("end_to_end", [False, True], ids=["vote", "discovery"])
@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p.name)
def test_discovery_on_typed_neighbours_stays_within_its_claim(pair: TypedPair, end_to_end: bool,
                                                              audit_strong: bool) -> None:
    result = _statistical_audit(pair, "", end_to_end, audit_strong)
    assert not result.violates, f"'{pair.name}' leaks more than it claims: {result.summary()}"


@pytest.mark.parametrize("end_to_end,pair", [
    *((False, p) for p in PAIRS if p.mutation),
    *((True, p) for p in PAIRS if p.mutation in (TIMESTAMP_STR, EQUALITY)),  # those that change its outcome
], ids=lambda v: v.mutation if isinstance(v, TypedPair) else "discovery" if v else "vote")
def test_discovery_reading_a_cell_by_its_dtype_is_caught(pair: TypedPair, end_to_end: bool, audit_strong: bool) -> None:
    result = _statistical_audit(pair, pair.mutation, end_to_end, audit_strong)
    assert result.violates, f"the audit missed the bug '{pair.mutation}': {result.summary()}"


@pytest.mark.parametrize("pair,form,backend", [case for case in _cases() if case.values[1] != "dataframe"])
def test_the_same_table_is_read_alike_in_every_form_and_on_every_backend(
        pair: TypedPair, form: str, backend: str, tmp_path) -> None:
    # The neighbour (the table whose dtype the added row changed) as a file, read on a backend, gives
    # every released count the DataFrame gives.
    if backend != "memory":
        pytest.importorskip(backend if backend == "duckdb" else "pyspark")
    frame = pair.tables[1]
    with opened(frame, "memory") as table:
        expected = released_counts(table, "x")
    with opened(write_form(frame, form, tmp_path, "neighbour"), backend) as table:
        assert released_counts(table, "x") == expected

"""The privacy audit's engine cases counted through a counting backend, and a broken backend.

Each audited table (the tiny table and its neighbour) is written to a file of category texts
(``v0``, ``v1``, ...), opened on the backend (DuckDB, or Spark in local mode) and encoded on a
public schema whose codes are the table's own (complete categories, no missing code); the Curator
then counts the backend's distinct code rows with their weights, as ``synth describe`` does. A
backend's counts are exact and the same on every call, so each table is counted once and the
engine runs many times on those counts with fresh noise.

The mutation: a backend that reads a CSV file in pieces and reads the row at a piece's boundary
twice (``boundary_row_twice``); the row the neighbour adds is that row, so it moves a count by 2
while the engine calibrates its noise for 1: the audit must catch it.
"""

from __future__ import annotations

import tempfile
from functools import partial
from pathlib import Path

import numpy as np
from cases import _INDEPENDENT, _INDEPENDENT_REPLACE, _MST, AuditCase, _engine
from engine_runs import ROWS, CodeRows, EngineSetup, engine_runs, public_schema, write_codes

from synth.privacy.neighbours import Neighbouring
from synth.tables.counting import CountingTable
from synth.tables.source import TableSource

BOUNDARY_ROW_TWICE = "the row at a piece boundary read twice"
SPARK_MASTER = "local[2]"


def boundary_row_twice(table: CountingTable) -> CountingTable:
    """Break a DuckDB table read from a CSV file as a reader of ``ROWS``-row pieces with an
    off-by-one would: the first row of the second piece is read twice. The audited table has
    ``ROWS`` rows (one piece, untouched); its neighbour adds a row, which is read twice."""
    from synth.tables.duckdb_table import DuckDBTable

    assert isinstance(table, DuckDBTable)
    connection = table._con
    connection.execute(f"INSERT INTO rows SELECT * FROM rows WHERE rowid = {ROWS}")
    return table


def backend_code_rows(backend: str, form: str, broken: bool, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """``codes`` written to a file, counted on ``backend``: its distinct code rows and their weights."""
    with tempfile.TemporaryDirectory(prefix="synth-audit-") as folder:
        source = TableSource(str(write_codes(codes, Path(folder) / f"table.{form}")), backend,
                             SPARK_MASTER if backend == "spark" else None)
        table = source.open(("",))
        assert table is not None and table.backend == backend
        try:
            encoded, _ = (boundary_row_twice(table) if broken else table).encode(public_schema(codes.shape[1]))
        finally:
            source.close()
    return encoded.codes, encoded.weights


def backend_case(setup: EngineSetup, backend: str, runs: tuple[int, int], form: str = "parquet",
                 broken: bool = False) -> AuditCase:
    """The engine case ``setup`` with its tables counted on ``backend`` (``broken``: ``boundary_row_twice``)."""
    code_rows: CodeRows = partial(backend_code_rows, backend, form, broken)
    case = _engine(setup, runs, mutation=BOUNDARY_ROW_TWICE if broken else "")
    sample = partial(engine_runs, setup, Neighbouring(setup.relation), code_rows=code_rows)
    return AuditCase(f"{case.subject} on {backend} ({form})", sample, *runs, categorical=case.categorical,
                     mutation=case.mutation)


DUCKDB_CASES = [
    backend_case(_INDEPENDENT, "duckdb", (400, 20_000), form="csv"),
    backend_case(_INDEPENDENT, "duckdb", (400, 20_000)),
    backend_case(_INDEPENDENT_REPLACE, "duckdb", (400, 20_000)),
    backend_case(_MST, "duckdb", (60, 8_000)),
    backend_case(_INDEPENDENT, "duckdb", (1_000, 20_000), form="csv", broken=True),
]
SPARK_CASES = [backend_case(_INDEPENDENT, "spark", (400, 20_000))]

"""Shared by the backend exactness tests: odd tables, and the exact counts each backend must match.

``exact_counts`` computes, from a counting table, every count the privacy boundary reads from a
column (kind-vote classes, value counts, shapes, parsed values) and from the encoded rows (the
histogram of code rows, the encoding report). Two backends are exact twins when these agree.
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from synth.columns.cells import classify_cells, classify_shapes, parse_values, text_counts, weighted_bincount
from synth.columns.kinds import Kind
from synth.columns.schema import Schema
from synth.domains.drafting import draft_profile
from synth.domains.profile import Profile
from synth.release.describer import describe
from synth.tables.counting import CountingTable, MemoryTable
from synth.tables.source import TableSource, read_table

MARKERS = ("", "NA", "<NULL>")
SPARK_MASTER = "local[2]"  # tests run Spark in local mode
ADULT = Path(__file__).resolve().parents[1] / "synth" / "data" / "adult.csv.gz"
ODD_TEXTS = ["", " ", "NA", " NA ", "<NULL>", "7", "  7 ", "007", "-0", "1.50", "1e3", "2.25", "-3.125", "inf",
             "nan", "true", "Yes", "NO", "FALSE", "0", "1", "2020-01-31", "31/01/2020", "01/31/2020 10:00",
             "2021-06-01T12:30:00", "é", "a,b", 'quo"te', "tab\there", "x", "y", "OTHER", "12345678901234567890"]

@st.composite
def text_tables(draw: st.DrawFn) -> pd.DataFrame:
    """A table of 1-4 text columns of odd cells (every kind a column can read as)."""
    rows = draw(st.integers(1, 40))
    columns = draw(st.integers(1, 4))
    pools = [draw(st.lists(st.sampled_from(ODD_TEXTS), min_size=1, max_size=6, unique=True)) for _ in range(columns)]
    return pd.DataFrame({f"c{j}": [draw(st.sampled_from(pool)) for _ in range(rows)] for j, pool in enumerate(pools)})


@st.composite
def typed_tables(draw: st.DrawFn) -> pd.DataFrame:
    """A table of typed columns with nulls (as Parquet holds them): integers, floats with NaN and
    infinities, booleans, datetimes, and text."""
    rows = draw(st.integers(1, 30))
    missing = st.booleans()
    def nullable(values: list[Any]) -> list[Any]:
        return [None if draw(missing) and draw(missing) else v for v in values]
    ints = draw(st.lists(st.integers(-5, 5), min_size=rows, max_size=rows))
    floats = draw(st.lists(st.sampled_from([0.5, -1.25, 3.0, 1e9, float("inf"), float("nan"), 2.125]),
                           min_size=rows, max_size=rows))
    days = draw(st.lists(st.integers(0, 5000), min_size=rows, max_size=rows))
    return pd.DataFrame({
        "i": pd.array(nullable(ints), dtype="Int64"),
        "f": floats,
        "b": pd.array(nullable(draw(st.lists(st.booleans(), min_size=rows, max_size=rows))), dtype="boolean"),
        "d": pd.to_datetime(np.datetime64("2000-01-01") + np.array(days, dtype="timedelta64[D]")),
        "t": nullable(draw(st.lists(st.sampled_from(ODD_TEXTS), min_size=rows, max_size=rows))),
    })


def write_csv(df: pd.DataFrame, path: Path) -> Path:
    df.to_csv(path, index=False)
    return path


def column_counts(table: CountingTable, name: str) -> dict[str, Any]:
    """Every exact count discovery reads from one column, weighted by the rows each cell stands for."""
    cells = table.column_cells(name)
    values, weights = cells.values, cells.weights
    out: dict[str, Any] = {
        "rows": cells.rows,
        "classes": weighted_bincount(classify_cells(values, MARKERS) + 1, weights, 6).tolist(),
        "texts": text_counts(values, MARKERS, weights).to_dict(),
    }
    for kind in (Kind.BOOLEAN, Kind.FLOAT, Kind.DATETIME):
        shapes = classify_shapes(values, kind, MARKERS)
        mine = shapes >= 0
        out[f"shapes {kind.value}"] = weighted_bincount(shapes[mine], None if weights is None else weights[mine]).tolist()
    for kind in (Kind.INTEGER, Kind.DATETIME):
        parsed, missing = parse_values(values, kind, MARKERS)
        tally: collections.Counter = collections.Counter()
        for value, is_missing, weight in zip(parsed, missing, np.ones(len(parsed), int) if weights is None else weights):
            tally["missing" if is_missing else "unreadable" if np.isnan(value) else float(value)] += int(weight)
        out[f"values {kind.value}"] = dict(tally)
    return out


def encoded_counts(table: CountingTable, schema: Schema) -> tuple[dict[tuple[int, ...], int], Any]:
    """How many rows hold each code row under ``schema``, and the encoding report."""
    rows, report = table.encode(schema)
    weights = np.ones(len(rows.codes), dtype=np.int64) if rows.weights is None else rows.weights
    tally: collections.Counter = collections.Counter()
    for code_row, weight in zip(map(tuple, rows.codes.tolist()), weights.tolist()):
        tally[code_row] += weight
    return dict(tally), report


def open_table(backend: str, path: Path) -> CountingTable:
    """``path`` opened on ``backend`` (Spark in local mode)."""
    table = TableSource(str(path), backend, SPARK_MASTER if backend == "spark" else None).open(MARKERS)
    assert table is not None and table.backend == backend
    return table


def assert_twins(path: Path, backend: str) -> None:
    """Every column's counts and the encoded rows' counts agree between memory and ``backend``."""
    other = open_table(backend, path)
    try:
        df = read_table(path, MARKERS)
        memory = MemoryTable(df)
        assert other.columns == memory.columns
        for name in memory.columns:
            assert column_counts(other, name) == column_counts(memory, name), name
        schema = draft_profile(df, MARKERS).schema
        assert encoded_counts(other, schema) == encoded_counts(memory, schema)
    finally:
        other.close()


def write_adult(folder: Path) -> dict[str, Path]:
    """A slice of the demo table as CSV and as typed Parquet (with missing ages and a date column)."""
    df = pd.read_csv(ADULT, dtype=str, keep_default_na=False).iloc[:4000]
    df.to_csv(folder / "adult.csv", index=False)
    typed = pd.read_csv(folder / "adult.csv")
    typed.loc[::9, "age"] = np.nan
    typed["seen"] = pd.Timestamp("2019-01-01") + pd.to_timedelta(np.arange(len(typed)) % 700, unit="D")
    typed.to_parquet(folder / "adult.parquet")
    return {"csv": folder / "adult.csv", "parquet": folder / "adult.parquet"}


def release_of(table: pd.DataFrame | CountingTable, engine: str) -> tuple[dict, list[str], tuple[str, ...]]:
    """The Description (without its time stamp), console report and notes of a seeded run of ``engine``."""
    profile = Profile(schema=None, epsilon=2.0, delta=1e-6, seed=7, engine=engine,
                      engine_options={"rounds": 20, "iterations": 20} if engine == "aim" else {})
    result = describe(table, profile)
    release = result.description.to_dict()
    release.pop("created")
    return release, result.encoding_report.lines(), result.notes

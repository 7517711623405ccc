"""The counting seam: what the privacy boundary reads from a private table, whatever holds it.

A ``CountingTable`` answers two questions, both exact and private (for the describer, discovery
and the curator only; never written anywhere):

* ``column_cells(name)``: a column's cells, either the cells themselves (``weights`` None) or its
  distinct cells with how many rows hold each (``weights``). Discovery's counts (kind votes,
  shapes, categories, bucket histograms, distinct counts) are weighted sums over these, so the two
  forms give the same numbers;
* ``encode(schema)``: the table's codes (``EncodedRows``), either one row per row or the distinct
  code rows with how many rows hold each, and the encoding report (exact clipping counts, for the
  data owner's console only).

Backends that hold the rows elsewhere (DuckDB, Spark) encode each column's distinct cells here,
with ``synth.columns.encoding`` (the single definition of a code), and count the distinct code rows
where the rows are: ``encode_distinct`` gives them each column's code per distinct cell.
``MemoryTable`` is a pandas DataFrame, read as it always was.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synth.columns.encoding import ColumnCounts, EncodingReport, encode_column
from synth.columns.schema import Schema
from synth.errors import DataError, SynthError
from synth.tables.tableio import mark_missing

NO_NULL_TEXT = "\x01synth: no cell is null\x01"  # the CSV readers' null text: no cell holds it, so none is null


class BackendUnavailable(SynthError):
    """A counting backend cannot be used: its package is missing or its engine cannot be reached."""


@dataclass(frozen=True)
class Cells:
    """A column's cells (``weights`` None), or its distinct cells and the rows holding each."""

    values: pd.Series
    weights: np.ndarray | None = None

    @property
    def rows(self) -> int:
        return len(self.values) if self.weights is None else int(self.weights.sum())


@dataclass(frozen=True)
class EncodedRows:
    """Code rows (rows × schema columns, int32), each standing for ``weights[i]`` rows when given."""

    codes: np.ndarray
    weights: np.ndarray | None = None


class CellsCache:
    """Columns' distinct cells kept on the driver while they hold at most ``limit`` values in all
    (discovery reads each column a few times and encoding once more); a column beyond that is
    kept alone, until the next one is read."""

    def __init__(self, limit: int = 2_000_000) -> None:
        self._limit = limit
        self._cells: dict[str, Cells] = {}

    def get(self, name: str) -> Cells | None:
        return self._cells.get(name)

    def put(self, name: str, cells: Cells) -> Cells:
        if sum(len(c.values) for c in self._cells.values()) + len(cells.values) > self._limit:
            self._cells.clear()
        self._cells[name] = cells
        return cells


class CountingTable(ABC):
    """A private table read through a counting backend (see the module docstring)."""

    backend: str = ""

    @property
    @abstractmethod
    def columns(self) -> tuple[str, ...]:
        """The table's column names, in order (public: the header)."""

    @abstractmethod
    def column_cells(self, name: str) -> Cells:
        """The cells of column ``name`` (see ``Cells``)."""

    @abstractmethod
    def encode(self, schema: Schema) -> tuple[EncodedRows, EncodingReport]:
        """The table's codes under ``schema`` and what encoding changed (exact: console only)."""

    @abstractmethod
    def row_count(self) -> int:
        """How many rows the table has (exact and private: for the evaluation, which is not DP and is for
        the data owner, never for a release)."""

    @abstractmethod
    def close(self) -> None:
        """Let go of what the backend holds (connections, cached tables)."""


class MemoryTable(CountingTable):
    """A pandas DataFrame in memory: cells one per row, codes one row per row (today's path)."""

    backend = "memory"

    def __init__(self, df: pd.DataFrame) -> None:
        self._df = df

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self._df.columns)

    def column_cells(self, name: str) -> Cells:
        return Cells(self._df[name])

    def row_count(self) -> int:
        return int(self._df.shape[0])

    def encode(self, schema: Schema) -> tuple[EncodedRows, EncodingReport]:
        codes, report = schema.encode(self._df)
        return EncodedRows(codes), report

    def close(self) -> None:
        """Nothing to let go of: the DataFrame is the caller's."""


class DistinctCellsTable(CountingTable):
    """A table held by an engine elsewhere, which hands over each column as its distinct cells with
    their row counts (``_distinct_cells``); they are typed and marked missing as ``read_table``
    would type and mark the column, and kept on the driver by a ``CellsCache``."""

    def __init__(self, missing_markers: tuple[str, ...]) -> None:
        self._markers = missing_markers
        self._dtypes: dict[str, str] = {}  # Parquet's pandas extension dtypes (``parquet_dtypes``)
        self._cells = CellsCache()

    @abstractmethod
    def _distinct_cells(self, name: str) -> tuple[pd.Series, np.ndarray]:
        """Column ``name``'s distinct cells, in a fixed order, and how many rows hold each."""

    def column_cells(self, name: str) -> Cells:
        cached = self._cells.get(name)
        if cached is not None:
            return cached
        values, counts = self._distinct_cells(name)
        if name in self._dtypes:
            values = values.astype(self._dtypes[name])
        frame = mark_missing(pd.DataFrame({name: values.reset_index(drop=True)}), self._markers)
        return self._cells.put(name, Cells(frame[name], np.asarray(counts, dtype=np.int64)))


def as_table(data: pd.DataFrame | CountingTable) -> CountingTable:
    """``data`` as a CountingTable: a DataFrame is wrapped in a MemoryTable."""
    return data if isinstance(data, CountingTable) else MemoryTable(data)


def parquet_dtypes(path: str) -> dict[str, str]:
    """The pandas extension dtypes (Int64, boolean, ...) a Parquet file's pandas metadata gives its
    columns, which ``pd.read_parquet`` restores: a backend gives its cells the same dtypes, so
    they read the same (a nullable boolean column is typed, not the texts True and False)."""
    import pyarrow.parquet as pq

    metadata = pq.read_schema(path).pandas_metadata or {}
    return {c["name"]: c["numpy_type"] for c in metadata.get("columns", [])
            if c.get("numpy_type") in EXTENSION_DTYPES}


EXTENSION_DTYPES = frozenset({"boolean", "Float32", "Float64",
                              *(f"{sign}Int{bits}" for sign in ("", "U") for bits in (8, 16, 32, 64))})


def check_schema_columns(schema: Schema, columns: tuple[str, ...]) -> None:
    """DataError when the table lacks a column the schema names (as ``Schema.encode`` says)."""
    absent = [n for n in schema.names if n not in columns]
    if absent:
        raise DataError(
            f"the data lacks column(s) {absent} that the schema names. Fix the column names in "
            "the profile, or pass the data file they belong to."
        )


def encode_distinct(schema: Schema, columns: tuple[str, ...],
                    cells_of: Callable[[str], Cells]) -> tuple[list[np.ndarray], EncodingReport]:
    """Each schema column's code for each of its distinct cells (in ``cells_of``'s order), and the
    encoding report counted over the rows the cells stand for."""
    check_schema_columns(schema, columns)
    codes: list[np.ndarray] = []
    counts: list[ColumnCounts] = []
    for column in schema.columns:
        cells = cells_of(column.name)
        column_codes, column_counts = encode_column(column, cells.values, schema.missing_markers, cells.weights)
        codes.append(column_codes)
        counts.append(column_counts)
    ignored = tuple(str(c) for c in columns if c not in schema.output_names)
    return codes, EncodingReport(tuple(counts), ignored)

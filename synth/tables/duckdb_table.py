"""The ``duckdb`` counting backend: a CSV or Parquet file counted in place by embedded DuckDB.

Inside the privacy boundary. What leaves DuckDB for the describer: each column's distinct cells
with their row counts (``column_cells``), and the counts of the distinct code rows after encoding
(``encode``); never a row. The codes themselves are made in Python by ``synth.columns.encoding`` for
each distinct cell, pushed back as a table (distinct cell → code) and joined to the rows, so a
row gets exactly the code the in-memory path gives it.

CSV cells are read as text, as ``synth.tables.tableio`` reads them, by its rule for odd records (its
delimiter, header names and leading empty lines; an empty cell is empty text and a missing field
null; a record whose cells hold nothing but spaces and tabs is no row: ``blank_row``; a record
longer than the header is refused; CRLF or CR inside a cell reads as LF), into a DuckDB database in a
temporary folder that is deleted on ``close`` (one parse of the file, on one thread, which DuckDB
needs to pad short records when quoted cells hold line breaks; DuckDB spills to that folder beyond
its memory limit). Parquet is read in place, with its types. Nothing is written anywhere else.

Cost: one scan per column for its distinct cells, then one scan with a hash join per column for
the codes, grouped on the codes packed into a few 63-bit keys (``packed_groups``) and streamed back
a million code rows at a time. A column's distinct-cell table has one entry per distinct value: small for categories
and binned numbers, as large as the table for identifiers, free text or continuous floats (about
100 bytes a distinct text in Python), so such columns cost memory in proportion to their rows.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from synth.columns.encoding import EncodingReport
from synth.columns.schema import Schema
from synth.errors import InputFileError
from synth.tables.counting import (
    NO_NULL_TEXT,
    BackendUnavailable,
    DistinctCellsTable,
    EncodedRows,
    encode_distinct,
    parquet_dtypes,
)
from synth.tables.tableio import BLANK, checked_path, csv_layout, table_format, too_many_fields

MEMORY_LIMIT = "768MB"  # DuckDB's own memory (it spills beyond it); the Python side holds distinct cells and code rows
FETCH_ROWS = 1 << 20  # distinct code rows moved from DuckDB at a time
KEY_SPAN = 1 << 62  # the product of the sizes of the columns packed into one grouping key stays below this


def require_duckdb():
    """The ``duckdb`` module, or BackendUnavailable saying which extra to install."""
    try:
        import duckdb
    except ImportError:
        raise BackendUnavailable(
            "the duckdb backend needs the duckdb package: pip install 'synth[duckdb]' (or use --backend memory)."
        ) from None
    return duckdb


def quoted(name: str) -> str:
    """``name`` as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def blank_row(names: list[str]) -> str:
    """SQL true for a record that is no row (``synth.tables.tableio.BLANK``): each cell holds nothing but
    spaces and tabs, or is empty, or absent (null: a field missing from a short record)."""
    return " AND ".join(f"regexp_full_match(coalesce({quoted(n)}, ''), '[{BLANK}]*')" for n in names)


def line_breaks_as_lf(name: str) -> str:
    """SQL for column ``name`` with each CRLF or CR inside a cell read as LF."""
    return f"replace(replace({quoted(name)}, chr(13) || chr(10), chr(10)), chr(13), chr(10)) AS {quoted(name)}"


def packed_groups(sizes: tuple[int, ...]) -> list[list[tuple[int, int]]]:
    """The columns of a code row packed into as few 63-bit keys as their sizes allow: consecutive
    columns share a key while the product of their sizes stays below 2^62; each key is a list of
    (column, stride), its value the sum of code × stride. DuckDB groups a few keys in a fraction of
    the memory it takes for one column per code (a synthetic table of float columns has millions of
    distinct code rows)."""
    groups: list[list[tuple[int, int]]] = []
    span = KEY_SPAN
    for j, size in enumerate(sizes):
        if span * size >= KEY_SPAN:
            groups.append([])
            span = 1
        groups[-1].append((j, span))
        span *= max(size, 1)
    return groups


class DuckDBTable(DistinctCellsTable):
    """A CSV or Parquet file counted by DuckDB (see the module docstring)."""

    backend = "duckdb"

    def __init__(self, path: str | os.PathLike[str], missing_markers: tuple[str, ...] = ("",),
                 memory_limit: str = MEMORY_LIMIT) -> None:
        duckdb = require_duckdb()
        p = checked_path(path)
        super().__init__(missing_markers)
        self._folder = tempfile.TemporaryDirectory(prefix="synth-duckdb-")
        self._con = duckdb.connect(str(Path(self._folder.name) / "rows.duckdb"))
        self._con.execute(f"SET memory_limit = '{memory_limit}'")
        self._con.execute("SET preserve_insertion_order = false")
        self._con.execute(f"SET temp_directory = '{self._folder.name}'")
        self._distinct: dict[str, str] = {}
        try:
            if table_format(p) == "csv":
                layout = csv_layout(p)
                names = layout.names
                self._con.execute(
                    f"CREATE TABLE rows AS SELECT {', '.join(map(line_breaks_as_lf, names))} FROM read_csv(?, header = true, "
                    "skip = ?, all_varchar = true, delim = ?, quote = '\"', escape = '\"', null_padding = true, "
                    "parallel = false, auto_detect = false, allow_quoted_nulls = false, "
                    f"nullstr = ?, columns = ?) WHERE NOT ({blank_row(names)})",
                    [str(p), layout.empty_lines, layout.delimiter, NO_NULL_TEXT, {name: "VARCHAR" for name in names}])
                self._columns = tuple(names)
            else:
                literal = "'" + str(p).replace("'", "''") + "'"  # a view cannot take a parameter
                self._con.execute(f"CREATE VIEW rows AS SELECT * FROM read_parquet({literal})")
                self._columns = tuple(row[0] for row in self._con.execute("DESCRIBE rows").fetchall())
                self._dtypes = parquet_dtypes(str(p))
        except duckdb.Error as error:
            self.close()
            if "Expected Number of Columns" in str(error):  # a record longer than the header
                raise too_many_fields(p, layout) from None
            raise InputFileError(f"DuckDB cannot read {p} ({type(error).__name__}: {str(error).splitlines()[0]}); "
                                 "check that it is a complete CSV or Parquet file.") from None

    @property
    def columns(self) -> tuple[str, ...]:
        return self._columns

    def row_count(self) -> int:
        return int(self._con.execute("SELECT count(*) FROM rows").fetchone()[0])

    def _distinct_table(self, name: str) -> str:
        """The temporary table of ``name``'s distinct cells: value v, rows n, and id (its rank by value)."""
        table = self._distinct.get(name)
        if table is None:
            table = f"distinct_{len(self._distinct)}"
            self._con.execute(
                f"CREATE TEMP TABLE {table} AS SELECT v, n, (row_number() OVER (ORDER BY v NULLS FIRST) - 1)::BIGINT "
                f"AS id FROM (SELECT {quoted(name)} AS v, count(*) AS n FROM rows GROUP BY ALL)")
            self._distinct[name] = table
        return table

    def _distinct_cells(self, name: str) -> tuple[pd.Series, np.ndarray]:
        fetched = self._con.sql(f"SELECT v, n FROM {self._distinct_table(name)} ORDER BY id").to_arrow_table()
        return fetched.column(0).to_pandas(), fetched.column(1).to_numpy()

    def encode(self, schema: Schema) -> tuple[EncodedRows, EncodingReport]:
        codes, report = encode_distinct(schema, self._columns, self.column_cells)
        joins = []
        for j, (column, column_codes) in enumerate(zip(schema.columns, codes, strict=True)):
            mapping = pd.DataFrame({"id": np.arange(len(column_codes), dtype=np.int64), "code": column_codes})
            self._con.register("mapping", mapping)
            self._con.execute(f"CREATE OR REPLACE TEMP TABLE codes_{j} AS SELECT d.v, m.code FROM "
                              f"{self._distinct_table(column.name)} d JOIN mapping m USING (id)")
            self._con.unregister("mapping")
            joins.append(f"JOIN codes_{j} ON rows.{quoted(column.name)} IS NOT DISTINCT FROM codes_{j}.v")
        groups = packed_groups(schema.sizes)
        keys = [" + ".join(f"codes_{j}.code::BIGINT * {stride}" for j, stride in group) + f" AS k{g}"
                for g, group in enumerate(groups)]
        query = f"SELECT {', '.join(keys)}, count(*) AS n FROM rows {' '.join(joins)} GROUP BY ALL"
        return self._fetch_code_rows(query, groups, schema.sizes), report

    def _fetch_code_rows(self, query: str, groups: list[list[tuple[int, int]]], sizes: tuple[int, ...]) -> EncodedRows:
        """The result of ``query`` (one packed key per group of ``packed_groups`` and a count) as a
        code matrix and weights, streamed ``FETCH_ROWS`` rows at a time and unpacked one batch at a
        time into int32 pieces, which are put together one column at a time, each column's pieces let
        go of once copied."""
        pieces: list[list[np.ndarray]] = [[] for _ in range(len(sizes) + 1)]
        with self._con.sql(query).to_arrow_reader(FETCH_ROWS) as reader:
            for batch in reader:
                for g, group in enumerate(groups):
                    key = batch.column(g).to_numpy()
                    for j, stride in group:
                        pieces[j].append(((key // stride) % sizes[j]).astype(np.int32))
                pieces[-1].append(batch.column(len(groups)).to_numpy())
        rows = sum(len(p) for p in pieces[-1])
        matrix = np.empty((rows, len(sizes)), dtype=np.int32, order="F")
        for j in range(len(sizes)):
            if rows:
                np.concatenate(pieces[j], out=matrix[:, j])
            pieces[j].clear()
        weights = np.concatenate(pieces[-1]).astype(np.int64) if rows else np.empty(0, np.int64)
        return EncodedRows(matrix, weights)

    def close(self) -> None:
        self._con.close()
        self._folder.cleanup()

"""Writing a synthetic database as the kind of database the user gave (a PostgreSQL database as a
SQLite file: ``output_kind``), with its keys declared.

A SQLite file (Python's ``sqlite3``) or a DuckDB file (``duckdb``) gets each table created with
``PRIMARY KEY`` and ``FOREIGN KEY ... REFERENCES`` declared, parents before children; a folder
gets one CSV or Parquet file per table (files declare no keys: the release's ``relational.json``
records them). Column types follow the synthetic values (integers, reals, booleans, dates as
timestamps in DuckDB and ISO text in SQLite, text). It writes synthetic rows only.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd

from synth.relational.keys import Structure
from synth.tables.tableio import write_table


def output_kind(kind: str) -> str:
    """The kind of database a release of a ``kind`` database is written as: the same, except that a
    PostgreSQL database is written as a SQLite file (a release is a file to share, never a write to
    the user's server)."""
    return "sqlite" if kind == "postgresql" else kind


def output_name(kind: str) -> str:
    """The synthetic database's name in the release folder."""
    return {"sqlite": "synthetic.sqlite", "duckdb": "synthetic.duckdb"}.get(output_kind(kind), "synthetic")


def _sql_type(series: pd.Series, duck: bool) -> str:
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "BOOLEAN" if duck else "INTEGER"
    if pd.api.types.is_integer_dtype(dtype):
        return "BIGINT" if duck else "INTEGER"
    if pd.api.types.is_float_dtype(dtype):
        return "DOUBLE" if duck else "REAL"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "TIMESTAMP" if duck else "TEXT"
    return "VARCHAR" if duck else "TEXT"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _create(name: str, frame: pd.DataFrame, structure: Structure, duck: bool) -> str:
    keys = next(t for t in structure.tables if t.name == name)
    parts = []
    for column in frame.columns:
        text = f"{_quoted(column)} {_sql_type(frame[column], duck)}"
        if column == keys.primary_key:
            text += " PRIMARY KEY"
        parts.append(text)
    for fk in keys.foreign_keys:
        parts.append(f"FOREIGN KEY ({_quoted(fk.column)}) REFERENCES {_quoted(fk.parent)} ({_quoted(fk.parent_column)})")
    return f"CREATE TABLE {_quoted(name)} ({', '.join(parts)})"


def _python_rows(frame: pd.DataFrame) -> list[tuple[object, ...]]:
    """Rows of plain Python values for sqlite3 (missing as None, dates as ISO text)."""
    columns = []
    for name in frame.columns:
        series = frame[name]
        if pd.api.types.is_datetime64_any_dtype(series.dtype):
            values = [None if pd.isna(v) else pd.Timestamp(v).isoformat(sep=" ") for v in series]
        else:
            values = [None if pd.isna(v) else (v.item() if isinstance(v, np.generic) else v) for v in series.astype(object)]
        columns.append(values)
    return list(zip(*columns, strict=True)) if columns else []


def write_database(tables: dict[str, pd.DataFrame], structure: Structure, kind: str, path: Path,
                   file_format: str | None = None) -> Path:
    """Write ``tables`` (parents first, as ``structure`` orders them) to ``path``, a new file or folder."""
    order = [t.name for t in structure.tables]
    if kind == "sqlite":
        connection = sqlite3.connect(path)
        try:
            connection.execute("PRAGMA foreign_keys = ON")
            for name in order:
                frame = tables[name]
                connection.execute(_create(name, frame, structure, duck=False))
                marks = ", ".join("?" for _ in frame.columns)
                connection.executemany(f"INSERT INTO {_quoted(name)} VALUES ({marks})", _python_rows(frame))
            connection.commit()
        finally:
            connection.close()
        return path
    if kind == "duckdb":
        import duckdb
        duck = duckdb.connect(str(path))
        try:
            for name in order:
                frame = tables[name]
                duck.execute(_create(name, frame, structure, duck=True))
                duck.register("synthetic_rows", frame)
                duck.execute(f"INSERT INTO {_quoted(name)} SELECT * FROM synthetic_rows")
                duck.unregister("synthetic_rows")
        finally:
            duck.close()
        return path
    path.mkdir()
    for name in order:
        write_table(tables[name], path / f"{name}.{file_format or 'csv'}")
    return path

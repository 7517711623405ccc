"""Writing a synthetic database as the kind of database the user gave (a PostgreSQL database as a
SQLite file: ``output_kind``), with its keys declared, chunk by chunk.

A SQLite file (Python's ``sqlite3``) or a DuckDB file (``duckdb``) gets each table created with
``PRIMARY KEY`` and ``FOREIGN KEY ... REFERENCES`` declared, parents before children; a folder
gets one CSV or Parquet file per table (files declare no keys: the release's ``relational.json``
records them). Column types follow the synthetic values (integers, reals, booleans, dates as
timestamps in DuckDB and ISO text in SQLite, text). It writes synthetic rows only.

The database comes in chunks (``synth.relational.generation``: a chunk holds every table's rows of
some root rows, parents first); each chunk is appended to every table's output before the next is
drawn, and none is kept, so memory holds one chunk however large the database. The output is
written under a temporary name beside ``path`` and renamed into place once every chunk is in: a
failure midway leaves nothing at ``path`` and no temporary file.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd

from synth.files import check_writable
from synth.relational.keys import Structure
from synth.tables.tableio import TableSink

SQLITE_BATCH = 50_000  # rows turned into Python values at a time for sqlite3


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
    keys = structure.table(name)
    parts = []
    for column in frame.columns:
        text = f"{_quoted(column)} {_sql_type(frame[column], duck)}"
        if column == keys.primary_key:
            text += " PRIMARY KEY"
        parts.append(text)
    for fk in keys.foreign_keys:
        parts.append(f"FOREIGN KEY ({_quoted(fk.column)}) REFERENCES {_quoted(fk.parent)} ({_quoted(fk.parent_column)})")
    return f"CREATE TABLE {_quoted(name)} ({', '.join(parts)})"


def _python_rows(frame: pd.DataFrame) -> Iterator[tuple[object, ...]]:
    """Rows of plain Python values for sqlite3 (missing as None, dates as ISO text), made
    ``SQLITE_BATCH`` rows at a time."""
    for start in range(0, len(frame), SQLITE_BATCH):
        columns = []
        for name in frame.columns:
            series = frame[name].iloc[start:start + SQLITE_BATCH]
            if pd.api.types.is_datetime64_any_dtype(series.dtype):
                values = [None if pd.isna(v) else pd.Timestamp(v).isoformat(sep=" ") for v in series]
            else:
                values = [None if pd.isna(v) else (v.item() if isinstance(v, np.generic) else v)
                          for v in series.astype(object)]
            columns.append(values)
        yield from zip(*columns, strict=True)


class _Writer(Protocol):
    """A database being written, chunk by chunk: each table's rows of a chunk appended (parents
    first), then the chunk ended; closed when done or on failure."""

    def append(self, name: str, frame: pd.DataFrame) -> None: ...

    def end_chunk(self) -> None: ...

    def close(self) -> None: ...


class _SQLite:
    """A SQLite file being written: a table is created with its first chunk's rows, each chunk
    committed once all its tables are in."""

    def __init__(self, path: Path, structure: Structure) -> None:
        self.structure, self.created = structure, set[str]()
        self.connection = sqlite3.connect(path)
        self.connection.execute("PRAGMA foreign_keys = ON")

    def append(self, name: str, frame: pd.DataFrame) -> None:
        if name not in self.created:
            self.connection.execute(_create(name, frame, self.structure, duck=False))
            self.created.add(name)
        marks = ", ".join("?" for _ in frame.columns)
        self.connection.executemany(f"INSERT INTO {_quoted(name)} VALUES ({marks})", _python_rows(frame))

    def end_chunk(self) -> None:
        self.connection.commit()

    def close(self) -> None:
        self.connection.close()


class _DuckDB:
    """A DuckDB file being written: a table is created with its first chunk's rows."""

    def __init__(self, path: Path, structure: Structure) -> None:
        import duckdb

        self.structure, self.created = structure, set[str]()
        self.connection = duckdb.connect(str(path))

    def append(self, name: str, frame: pd.DataFrame) -> None:
        if name not in self.created:
            self.connection.execute(_create(name, frame, self.structure, duck=True))
            self.created.add(name)
        self.connection.register("synthetic_rows", frame)
        try:
            self.connection.execute(f"INSERT INTO {_quoted(name)} SELECT * FROM synthetic_rows")
        finally:
            self.connection.unregister("synthetic_rows")

    def end_chunk(self) -> None:
        return None

    def close(self) -> None:
        self.connection.close()


class _Folder:
    """A folder of one CSV or Parquet file per table, each file opened with its table's first chunk."""

    def __init__(self, path: Path, file_format: str) -> None:
        path.mkdir()
        self.path, self.suffix = path, file_format
        self.stack = ExitStack()
        self.sinks: dict[str, TableSink] = {}

    def append(self, name: str, frame: pd.DataFrame) -> None:
        if name not in self.sinks:
            file = self.path / f"{name}.{self.suffix}"
            self.sinks[name] = self.stack.enter_context(TableSink(file, file, ""))
        self.sinks[name].write(frame)

    def end_chunk(self) -> None:
        return None

    def close(self) -> None:
        self.stack.close()


def _remove(tmp: Path) -> None:
    """Remove a temporary output and the side files its database kept beside it."""
    if tmp.is_dir():
        shutil.rmtree(tmp, ignore_errors=True)
    for path in (tmp, *(tmp.with_name(tmp.name + side) for side in (".wal", "-journal", "-wal", "-shm"))):
        path.unlink(missing_ok=True)


def write_database(chunks: Iterable[Mapping[str, pd.DataFrame]], structure: Structure, kind: str, path: Path,
                   file_format: str | None = None) -> dict[str, int]:
    """Write the synthetic database given in ``chunks`` (each: every table's rows of the chunk, the
    tables ``structure`` has, parents first) to ``path``, a new file or folder of the ``kind`` asked
    for (a folder's files in ``file_format``, CSV by default), all or nothing (module docstring); the
    rows written per table. OutputError if ``path`` exists or its folder is missing; ValueError if
    ``chunks`` gives none."""
    check_writable(path, force=False)
    order = [t.name for t in structure.tables]
    rows = dict.fromkeys(order, 0)
    written = 0
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        writer: _Writer = (_SQLite(tmp, structure) if kind == "sqlite" else _DuckDB(tmp, structure)
                           if kind == "duckdb" else _Folder(tmp, file_format or "csv"))
        try:
            for chunk in chunks:
                for name in order:
                    writer.append(name, chunk[name])
                    rows[name] += len(chunk[name])
                writer.end_chunk()
                written += 1
                del chunk  # the next chunk is drawn with this one gone
        finally:
            writer.close()
        if not written:
            raise ValueError("write_database was given no chunk: there would be no tables")
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise
    return rows

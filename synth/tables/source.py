"""Choosing a counting backend for a data file, opening the file on it, and reading a table.

``TableSource`` is a data path with the backend chosen for it (``memory``, ``duckdb``, ``spark``,
or ``auto``: DuckDB for files above ``AUTO_BYTES`` when it is installed, memory otherwise). It is
path-like, so the API's verbs take it where they take a path; ``read_table`` opens it on its
backend (a ``CountingTable``) instead of reading it into pandas (``synth.tables.tableio``).
``close`` lets go of what was opened.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from synth.errors import InputFileError
from synth.tables.counting import CountingTable
from synth.tables.tableio import read_frame, table_format

BACKENDS = ("auto", "memory", "duckdb", "spark")
AUTO_BYTES = {"csv": 256 * 2**20, "parquet": 64 * 2**20}  # above these sizes on disk, auto counts on DuckDB


@dataclass
class TableSource(os.PathLike):
    """A data file and the backend that reads it (``backend`` one of ``BACKENDS``)."""

    path: str
    backend: str = "auto"
    spark_master: str | None = None
    _opened: list[CountingTable] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise InputFileError(f"unknown backend {self.backend!r}; choose one of {', '.join(BACKENDS)}.")

    def __fspath__(self) -> str:
        return self.path

    def resolved(self) -> tuple[str, str]:
        """The backend that will read the file, and why (for the console)."""
        if self.backend != "auto":
            return self.backend, "chosen with --backend"
        path = Path(self.path)
        if not path.is_file():
            return "memory", "the default"
        kind = table_format(path)
        size = path.stat().st_size
        if size <= AUTO_BYTES[kind]:
            return "memory", "the file fits in memory"
        limit = f"{AUTO_BYTES[kind] / 2**20:.0f} MB"
        if importlib.util.find_spec("duckdb") is None:
            return "memory", (f"the file is {size / 2**20:,.0f} MB, above the {limit} that --backend auto counts on "
                              "DuckDB, but duckdb is not installed (pip install 'synth[duckdb]')")
        return "duckdb", f"the file is {size / 2**20:,.0f} MB, above {limit} ({kind})"

    def open(self, missing_markers: tuple[str, ...]) -> CountingTable | None:
        """The file opened on its backend, or None for ``memory`` (read into pandas as usual)."""
        backend, _ = self.resolved()
        if backend == "memory":
            return None
        if backend == "duckdb":
            from synth.tables.duckdb_table import DuckDBTable

            table: CountingTable = DuckDBTable(self.path, missing_markers)
        else:
            from synth.tables.spark_table import SparkTable

            table = SparkTable(self.path, missing_markers, self.spark_master)
        self._opened.append(table)
        return table

    def close(self) -> None:
        """Close every table opened from this source."""
        while self._opened:
            self._opened.pop().close()


def read_table(path: str | os.PathLike[str], missing_markers: Iterable[str] = ("",)) -> pd.DataFrame | CountingTable:
    """Read a CSV (text cells, NA for missing) or Parquet file (``synth.tables.tableio.read_frame``).

    A ``TableSource`` on a backend other than memory is opened there instead (a ``CountingTable``:
    the rows stay in the backend, which counts them for describe).

    A header without rows gives a table of no rows: whether the private table is empty is never
    decided here (describe measures it under noise like any other table).

    InputFileError: no such file, unreadable, empty, unknown file type. DataError: no columns, or a
    column named twice.
    """
    if isinstance(path, TableSource):
        table = path.open(tuple(missing_markers))
        if table is not None:
            return table
    return read_frame(path, missing_markers)

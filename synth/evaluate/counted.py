"""An evaluation's tables counted on a counting backend, so an original (or a synthetic table) larger
than memory can be evaluated.

A table given as a ``synth.tables.source.TableSource`` that resolves to a backend other than
memory (``--backend duckdb`` or ``spark``, or ``auto`` for a large file) is opened there. The
backend counts every row: it encodes the table on each of the evaluation's schemas (the codes
``synth.columns.encoding`` gives, as the in-memory reading gives them) and returns the distinct code rows
with how many rows hold each (``Counts``), from which every count-based score is exact. The
scores that need rows (KS, correlations, PCA, ML utility, distances, rare-combination samples)
read a uniform random sample of at most ``ROW_SAMPLE`` rows, chosen by position and read from the
file in pieces (all rows, as the memory path reads them, when the table has no more). Nothing here
is differentially private: it reads the original data, for the data owner.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synth.columns.schema import Schema
from synth.evaluate.fidelity import rows_of
from synth.progress import SILENT, Progress
from synth.tables.counting import CountingTable

ROW_SAMPLE = 1_000_000  # rows read for the scores that need rows, from a table counted on a backend


@dataclass(frozen=True)
class Counts:
    """A table's code rows for counting: every row's codes (``weights`` None), or its distinct code
    rows with how many rows hold each (as a counting backend returns them)."""

    codes: np.ndarray  # code rows × columns, int32
    weights: np.ndarray | None = None

    @property
    def rows(self) -> int:
        """How many rows of the table the code rows stand for."""
        return rows_of(self.codes, self.weights)


def open_counting(table: pd.DataFrame | str | os.PathLike[str], markers: tuple[str, ...]) -> CountingTable | None:
    """``table`` opened on its counting backend, or None when it is read into memory (a DataFrame, a
    path, or a TableSource that resolves to memory). The caller closes what is returned."""
    from synth.tables.source import TableSource

    return table.open(markers) if isinstance(table, TableSource) else None


def sample_positions(rows: int, rng: np.random.Generator, cap: int | None = None) -> np.ndarray | None:
    """Sorted positions of a uniform sample of ``cap`` (default ``ROW_SAMPLE``) of ``rows`` rows, or
    None (every row) when there are no more than ``cap``."""
    cap = ROW_SAMPLE if cap is None else cap
    return np.sort(rng.choice(rows, size=cap, replace=False)) if rows > cap else None


def backend_counts(table: CountingTable, schemas: Sequence[Schema], which: str,
                   progress: Progress = SILENT) -> list[Counts]:
    """Every row of ``table`` counted on each of ``schemas`` by its backend: distinct code rows and weights."""
    out = []
    for schema in schemas:
        progress.message(f"counting the {which} table on {table.backend} ({len(schema.columns)} columns)")
        encoded, _ = table.encode(schema)
        out.append(Counts(np.asfortranarray(encoded.codes),
                          None if encoded.weights is None else np.asarray(encoded.weights, dtype=np.int64)))
    return out

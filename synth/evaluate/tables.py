"""The two tables of an evaluation, read (in chunks when large), checked and put on one discretisation.

Every metric works on a ``Table``: the code matrix of its rows under one schema (the Description's,
else a schema drafted from the original) and the numeric values of its numeric and datetime columns.
Files are read ``CHUNK_ROWS`` rows at a time and each chunk is encoded before the next is read, so
the text of a large table is never held whole. Without a Description the schema is drafted from a
random sample of the original (at most ``DRAFT_ROWS`` rows), which needs a first pass over the file.
Bad input raises ``DataError``: different columns, a table without rows (or an original of fewer than
``MIN_ORIGINAL_ROWS``), a numeric, datetime or boolean column whose cells mostly cannot be read as
such, a categorical column whose synthetic values are mostly not among its categories. This module reads the original data: nothing it returns is differentially private.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synth.cells import parse_values
from synth.drafting import draft_profile
from synth.encoding import encode_parsed
from synth.errors import DataError
from synth.kinds import NUMERIC_KINDS, Kind
from synth.progress import SILENT, Progress
from synth.schema import Schema
from synth.tableio import read_table_chunks

CHUNK_ROWS = 200_000
DRAFT_ROWS = 200_000
HOLDOUT_SHARE = 0.2  # of the original's rows, held out to test models and as the privacy baseline
MAX_HOLDOUT_ROWS = 20_000
MIN_ORIGINAL_ROWS = 10  # fewer leave too few rows to hold some out
MAX_INVALID_SHARE = 0.5  # more unreadable cells than this in a column: the tables differ in kind

TableLike = pd.DataFrame | str | os.PathLike[str]


@dataclass(frozen=True)
class Table:
    """One table on the evaluation's schema: codes of every cell and values of numeric columns."""

    codes: np.ndarray  # rows × columns, int32, column-major
    values: dict[int, np.ndarray]  # column position → float values (NaN: missing or unreadable)
    chunks: int  # how many pieces the table was read in
    unlisted: np.ndarray  # per column, the share of non-missing cells that are not among its categories

    @property
    def rows(self) -> int:
        return int(self.codes.shape[0])


@dataclass(frozen=True)
class Tables:
    """The original and the synthetic table on one schema, and notes on how they were read."""

    schema: Schema
    original: Table
    synthetic: Table
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Split:
    """The original's rows split in two: ``reference`` and a random ``holdout``."""

    reference: np.ndarray
    holdout: np.ndarray


def holdout_split(rows: int, rng: np.random.Generator) -> Split:
    """A random HOLDOUT_SHARE of the rows (at most MAX_HOLDOUT_ROWS) held out, the rest kept."""
    order = rng.permutation(rows)
    size = min(int(round(rows * HOLDOUT_SHARE)), MAX_HOLDOUT_ROWS)
    return Split(np.sort(order[size:]), np.sort(order[:size]))


def sample_rows(rows: int | np.ndarray, cap: int, rng: np.random.Generator) -> np.ndarray:
    """All of ``rows`` (a count or row indices), or a sorted uniform sample of ``cap`` of them."""
    pool = np.arange(rows) if isinstance(rows, int) else rows
    return np.sort(rng.choice(pool, size=cap, replace=False)) if pool.size > cap else pool


def _chunks(table: TableLike, markers: tuple[str, ...]) -> Iterator[pd.DataFrame]:
    if isinstance(table, pd.DataFrame):
        for start in range(0, max(len(table), 1), CHUNK_ROWS):
            yield table.iloc[start:start + CHUNK_ROWS]
    else:
        yield from read_table_chunks(table, CHUNK_ROWS, markers)


def _name(table: TableLike, which: str) -> str:
    return f"the {which} table" if isinstance(table, pd.DataFrame) else f"{which} table {os.fspath(table)}"


def _header(table: TableLike, markers: tuple[str, ...]) -> list[str]:
    if isinstance(table, pd.DataFrame):
        return [str(c) for c in table.columns]
    chunks = read_table_chunks(table, 1, markers)
    try:
        return [str(c) for c in next(chunks).columns]
    finally:
        chunks.close()


def _check_columns(original: list[str], synthetic: list[str], schema: Schema | None, target: str | None) -> list[str]:
    """DataError unless the tables can be compared; the original's columns left unevaluated.

    Without a schema both tables must have the same columns. With the release's schema, the
    columns it models must be in both; the original may hold more (columns the release left out,
    or id and text columns, which it does not model): those are returned, to be listed."""
    only_o = [n for n in original if n not in synthetic]
    only_s = [n for n in synthetic if n not in original]
    if only_s or (only_o and schema is None):
        raise DataError(
            f"the two tables do not have the same columns (only in the original: {only_o}; only in the "
            f"synthetic: {only_s}). Evaluate a synthetic table made from this original, with its column names."
        )
    if target is not None and target not in (original if schema is None else schema.names):
        raise DataError(f"the target column {target!r} is not a column the release models; choose one of "
                        f"{list(original if schema is None else schema.names)}.")
    if schema is None:
        return []
    absent = [n for n in schema.names if n not in original or n not in synthetic]
    if absent:
        raise DataError(
            f"the Description models column(s) {absent} that the tables lack. Pass the Description "
            "this synthetic table was generated from."
        )
    return [n for n in original if n not in schema.names]


def _draft_schema(original: TableLike, markers: tuple[str, ...], rng: np.random.Generator,
                  progress: Progress) -> tuple[Schema, str]:
    """A schema drafted from (a sample of) the original, and a note on what it was drafted from."""
    if isinstance(original, pd.DataFrame) and len(original) <= DRAFT_ROWS:
        return draft_profile(original, markers).schema, "all rows of the original"
    kept, seen = [], 0
    for chunk in progress.track(_chunks(original, markers), "sampling the original to draft a schema"):
        seen += len(chunk)
        kept.append(chunk.iloc[np.sort(rng.permutation(len(chunk))[:DRAFT_ROWS])])
    sample = pd.concat(kept, ignore_index=True)
    if len(sample) > DRAFT_ROWS:
        sample = sample.iloc[np.sort(rng.permutation(len(sample))[:DRAFT_ROWS])]
    note = "all rows of the original" if len(sample) == seen else f"a random sample of {len(sample):,} original rows"
    return draft_profile(sample, markers).schema, note


def _check_kinds(invalid: np.ndarray, present: np.ndarray, schema: Schema, which: str) -> None:
    """DataError when most non-missing cells of a numeric, datetime or boolean column are unreadable."""
    for j, column in enumerate(schema.columns):
        if column.kind != Kind.CATEGORICAL and present[j] and invalid[j] / present[j] > MAX_INVALID_SHARE:
            raise DataError(
                f"column {column.name!r} is {column.kind.value} in the evaluation's schema, but most of its "
                f"cells in the {which} table cannot be read as {column.kind.value} values: the two tables "
                "differ in the kind of this column. Compare tables with the same columns of the same kinds."
            )


def _read(table: TableLike, schema: Schema, which: str, progress: Progress) -> Table:
    numeric = [j for j, c in enumerate(schema.columns) if c.kind in NUMERIC_KINDS]
    listed = [j for j in range(len(schema.columns)) if j not in numeric]
    listed_schema = schema.select([schema.columns[j].name for j in listed]) if listed else None
    codes: list[np.ndarray] = []
    values: dict[int, list[np.ndarray]] = {j: [] for j in numeric}
    invalid, present, other = (np.zeros(len(schema.columns)) for _ in range(3))
    for chunk in progress.track(_chunks(table, schema.missing_markers), f"reading the {which} table"):
        chunk_codes = np.empty((len(chunk), len(schema.columns)), dtype=np.int32)
        if listed_schema is not None:
            chunk_codes[:, listed], report = listed_schema.encode(chunk)
            unreadable = np.array([c.invalid for c in report.columns])  # coded missing, but present
            invalid[listed] += unreadable
            other[listed] += [c.other for c in report.columns]
            present[listed] += unreadable + (chunk_codes[:, listed] != [schema.columns[j].missing_code
                                                                        for j in listed]).sum(axis=0)
        for j in numeric:  # parsed once: the values are kept, the codes follow from them
            column = schema.columns[j]
            parsed, missing = parse_values(chunk[column.name], column.kind, schema.missing_markers)
            chunk_codes[:, j], counts = encode_parsed(column, parsed, missing)
            values[j].append(parsed)
            invalid[j] += counts.invalid
            present[j] += int((~missing).sum())
        codes.append(chunk_codes)
    rows = sum(len(c) for c in codes)
    if rows == 0:
        raise DataError(f"the {which} table has no rows; there is nothing to compare.")
    _check_kinds(invalid, present, schema, which)
    return Table(np.asfortranarray(np.concatenate(codes)), {j: np.concatenate(v) for j, v in values.items()},
                 len(codes), other / np.maximum(present, 1))


def load_tables(original: TableLike, synthetic: TableLike, schema: Schema | None = None,
                missing_markers: tuple[str, ...] = ("",), target: str | None = None, seed: int = 0,
                progress: Progress = SILENT) -> Tables:
    """Read, check and encode both tables (DataError on different columns, no rows, other kinds, or
    a ``target`` that is not a column), before any other work."""
    markers = schema.missing_markers if schema is not None else missing_markers
    unevaluated = _check_columns(_header(original, markers), _header(synthetic, markers), schema, target)
    notes = []
    if unevaluated:
        notes.append(f"Not evaluated: column(s) {unevaluated}, which the release does not model (left out, or "
                     "written by their own rule: fresh keys for an id column, empty cells for free text).")
    if schema is None:
        schema, source = _draft_schema(original, markers, np.random.default_rng(seed), progress)
        notes.append(f"The discretisation (categories, numeric bins) was drafted from {source}; pass "
                     "--description to use the release's own.")
    tables = {which: _read(table, schema, which, progress)
              for which, table in (("original", original), ("synthetic", synthetic))}
    for j, column in enumerate(schema.columns):
        if tables["synthetic"].unlisted[j] > MAX_INVALID_SHARE >= tables["original"].unlisted[j]:
            raise DataError(
                f"most values of column {column.name!r} in the synthetic table are not among its categories in "
                "the original: the two tables differ in the kind or the values of this column. Compare tables "
                "with the same columns of the same kinds.")
    if tables["original"].rows < MIN_ORIGINAL_ROWS:
        raise DataError(f"the original table has fewer than {MIN_ORIGINAL_ROWS} rows: too few to hold some out "
                        "as a test set and baseline. Evaluate a larger table.")
    for which, table in (("original", original), ("synthetic", synthetic)):
        if tables[which].chunks > 1:
            notes.append(f"The {which} table was read in {tables[which].chunks} pieces of at most "
                         f"{CHUNK_ROWS:,} rows, each encoded before the next was read ({_name(table, which)}).")
    return Tables(schema, tables["original"], tables["synthetic"], tuple(notes))

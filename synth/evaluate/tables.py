"""The two tables of an evaluation, read (in chunks when large), checked and put on its discretisations.

Every metric works on a ``Table``: the code matrix of its rows under one schema and the numeric
values of its numeric and datetime columns. Both tables are put on a discretisation drafted from
(a random sample of at most ``DRAFT_ROWS`` rows of) the original (``discretisation``), which
needs a first pass over a file, and, when the release's schema is given, on that schema too, in
the same pass. Files are read ``CHUNK_ROWS`` rows at a time and each chunk is encoded before the
next is read, so the text of a large table is never held whole. Bad input raises ``DataError``:
different columns, a table without rows (or an original of fewer than ``MIN_ORIGINAL_ROWS``), a
numeric, datetime or boolean column whose cells mostly cannot be read as such, a categorical column
whose synthetic values are mostly not among the original's (the release's OTHER label aside). This
module reads the original data: nothing it returns is differentially private.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TypeAlias

import numpy as np
import pandas as pd

from synth.columns.cells import parse_values, text_counts
from synth.columns.column import DEFAULT_OTHER_LABEL, Column
from synth.columns.encoding import encode_parsed
from synth.columns.kinds import NUMERIC_KINDS, Kind
from synth.columns.schema import Schema
from synth.errors import DataError
from synth.evaluate.counted import Counts, backend_counts, open_counting, sample_positions
from synth.evaluate.discretisation import draft_discretisation
from synth.progress import SILENT, Progress
from synth.tables.counting import CountingTable
from synth.tables.tableio import read_table_chunks

CHUNK_ROWS = 200_000
DRAFT_ROWS = 200_000
HOLDOUT_SHARE = 0.2  # of the original's rows, held out to test models and as the privacy baseline
MAX_HOLDOUT_ROWS = 20_000
MIN_ORIGINAL_ROWS = 10  # fewer leave too few rows to hold some out
MAX_INVALID_SHARE = 0.5  # more unreadable cells than this in a column: the tables differ in kind

TableLike: TypeAlias = pd.DataFrame | str | os.PathLike[str]


@dataclass(frozen=True)
class Table:
    """One table on the evaluation's schema: codes and numeric values of its rows (every row, or a
    uniform sample of them: ``sampled``) and, in ``counted``, the code rows of every row."""

    codes: np.ndarray  # rows × columns, int32, column-major
    values: dict[int, np.ndarray]  # column position → float values (NaN: missing or unreadable)
    chunks: int  # how many pieces the table was read in
    unlisted: np.ndarray  # per column, the share of non-missing cells that are not among its categories
    counts: Counts | None = None  # every row's code rows when ``codes`` holds a sample (or a backend counted them)

    @property
    def rows(self) -> int:
        """The rows held in ``codes`` and ``values``."""
        return int(self.codes.shape[0])

    @property
    def counted(self) -> Counts:
        """The code rows of every row of the table, for counting."""
        return self.counts if self.counts is not None else Counts(self.codes)

    @property
    def total_rows(self) -> int:
        return self.counted.rows

    @property
    def sampled(self) -> bool:
        return self.rows < self.total_rows


@dataclass(frozen=True)
class Tables:
    """The original and the synthetic table on one schema, notes on how they were read, the original's
    columns that are not scored (name → reason) and, when the release's schema was given, both
    tables on it too (``release``; ``schema`` is then the discretisation drafted from the original)."""

    schema: Schema
    original: Table
    synthetic: Table
    notes: tuple[str, ...]
    not_scored: Mapping[str, str] = field(default_factory=dict)
    release: Tables | None = None
    drafted_from: str = ""  # what ``schema`` was drafted from, when it was


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
    positions = sample_positions(pool.size, rng, cap)
    return pool if positions is None else np.sort(pool[positions])


def _chunks(table: TableLike, markers: tuple[str, ...], keep: np.ndarray | None = None) -> Iterator[pd.DataFrame]:
    """The table's rows in pieces of at most CHUNK_ROWS (only the rows at positions ``keep``, sorted, when given)."""
    pieces = ((table.iloc[start:start + CHUNK_ROWS] for start in range(0, max(len(table), 1), CHUNK_ROWS))
              if isinstance(table, pd.DataFrame) else read_table_chunks(table, CHUNK_ROWS, markers))
    start = 0
    for chunk in pieces:
        if keep is None:
            yield chunk
            continue
        wanted = keep[np.searchsorted(keep, start):np.searchsorted(keep, start + len(chunk))] - start
        start += len(chunk)
        yield chunk.iloc[wanted]


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


def _check_columns(original: list[str], synthetic: list[str], schema: Schema | None, target: str | None) -> None:
    """DataError unless the tables can be compared.

    Without a schema both tables must have the same columns. With the release's schema, the
    columns it models must be in both; the original may hold more (columns the release left out,
    or id and text columns, which it does not model), which are listed, not scored."""
    only_o = [n for n in original if n not in synthetic]
    only_s = [n for n in synthetic if n not in original]
    if only_s or (only_o and schema is None):
        raise DataError(
            f"the two tables do not have the same columns (only in the original: {only_o}; only in the "
            f"synthetic: {only_s}). Evaluate a synthetic table made from this original, with its column names"
            + ("; if a synth release left columns out, pass its Description (--description) to evaluate the "
               "columns both tables hold." if only_o and not only_s else ".")
        )
    if target is not None and target not in (original if schema is None else schema.names):
        raise DataError(f"the target column {target!r} is not a column the release models; choose one of "
                        f"{list(original if schema is None else schema.names)}.")
    if schema is None:
        return
    absent = [n for n in schema.names if n not in original or n not in synthetic]
    if absent:
        raise DataError(
            f"the Description models column(s) {absent} that the tables lack. Pass the Description "
            "this synthetic table was generated from."
        )


def _draft_sample(pieces: Iterable[pd.DataFrame], names: list[str], rng: np.random.Generator,
                  progress: Progress) -> tuple[pd.DataFrame, str]:
    """The columns ``names`` of a uniform random sample of at most DRAFT_ROWS of the rows in ``pieces``
    (in their order), and what it is: "all rows of the original" or "a random sample of N original
    rows". Each row gets a uniform key and the rows of the smallest keys are kept as the pieces go by,
    so no more than DRAFT_ROWS rows and one piece are ever held."""
    sample, keys, seen = pd.DataFrame(columns=names), np.empty(0), 0
    for chunk in progress.track(pieces, "sampling the original to draft a discretisation"):
        seen += len(chunk)
        sample = pd.concat([sample, chunk[names]], ignore_index=True) if len(sample) else chunk[names]
        keys = np.concatenate([keys, rng.random(len(chunk))])
        if len(keys) > DRAFT_ROWS:
            chosen = np.sort(np.argpartition(keys, DRAFT_ROWS)[:DRAFT_ROWS])
            sample, keys = sample.iloc[chosen], keys[chosen]
    return sample.reset_index(drop=True), ("all rows of the original" if len(sample) == seen else
                                           f"a random sample of {len(sample):,} original rows")


def _check_kinds(invalid: np.ndarray, present: np.ndarray, schema: Schema, which: str) -> None:
    """DataError when most non-missing cells of a numeric, datetime or boolean column are unreadable."""
    for j, column in enumerate(schema.columns):
        if column.kind != Kind.CATEGORICAL and present[j] and invalid[j] / present[j] > MAX_INVALID_SHARE:
            raise DataError(
                f"column {column.name!r} is {column.kind.value} in the evaluation, but most of its cells in the "
                f"{which} table cannot be read as {column.kind.value} values: the two tables differ in the kind "
                "of this column. Compare tables with the same columns of the same kinds."
            )


def _unlisted(cells: pd.Series, other: int, schema: Schema) -> int:
    """Of a column's ``other`` cells (not among its categories), those not written as the OTHER label."""
    return other - int(text_counts(cells, schema.missing_markers).get(schema.other_label, 0)) if other else 0


Parse = tuple[str, Kind, tuple[str, ...]]  # a column's cells read as a kind, with these missing markers


def _parse(column: Column, schema: Schema) -> Parse:
    return column.name, column.kind, schema.missing_markers


@dataclass
class _Reading:
    """One table's pieces on one schema as they are read, and per column the counts of cells that are
    unreadable, present (not missing), and unlisted (not among the categories, nor the OTHER label)."""

    schema: Schema
    codes: list[np.ndarray]
    counts: np.ndarray  # 3 × columns: unreadable, present, unlisted

    @property
    def numeric(self) -> list[int]:
        return [j for j, c in enumerate(self.schema.columns) if c.kind in NUMERIC_KINDS]

    def add(self, chunk: pd.DataFrame, parsed: dict[Parse, tuple[np.ndarray, np.ndarray]]) -> None:
        """Encode ``chunk``; numeric columns are parsed once into ``parsed``, shared by every reading."""
        schema, numeric = self.schema, self.numeric
        listed = [j for j in range(len(schema.columns)) if j not in numeric]
        codes = np.empty((len(chunk), len(schema.columns)), dtype=np.int32)
        if listed:
            codes[:, listed], report = schema.select([schema.columns[j].name for j in listed]).encode(chunk)
            unreadable = np.array([c.invalid for c in report.columns])  # coded missing, but present
            self.counts[0, listed] += unreadable
            self.counts[1, listed] += unreadable + (codes[:, listed] != [schema.columns[j].missing_code
                                                                          for j in listed]).sum(axis=0)
            self.counts[2, listed] += [_unlisted(chunk[c.name], c.other, schema) for c in report.columns]
        for j in numeric:  # the values are kept, the codes follow from them
            column = schema.columns[j]
            key = _parse(column, schema)
            if key not in parsed:
                parsed[key] = parse_values(chunk[column.name], column.kind, schema.missing_markers)
            values, missing = parsed[key]
            codes[:, j], counts = encode_parsed(column, values, missing)
            self.counts[0, j] += counts.invalid
            self.counts[1, j] += int((~missing).sum())
        self.codes.append(codes)

    def table(self, which: str, values: dict[Parse, np.ndarray]) -> Table:
        if sum(len(c) for c in self.codes) == 0:
            raise DataError(f"the {which} table has no rows; there is nothing to compare.")
        _check_kinds(self.counts[0], self.counts[1], self.schema, which)
        return Table(np.asfortranarray(np.concatenate(self.codes)),
                     {j: values[_parse(self.schema.columns[j], self.schema)] for j in self.numeric}, len(self.codes),
                     self.counts[2] / np.maximum(self.counts[1], 1))


def _read(pieces: Iterable[pd.DataFrame], schemas: list[Schema], which: str, progress: Progress,
          sample: int | None = None) -> list[Table]:
    """The rows in ``pieces`` (a table's chunks, or a ``sample`` of that many of its rows) on each of
    ``schemas``, each piece encoded before the next; a numeric column read alike on several schemas is
    parsed and held once."""
    readings = [_Reading(schema, [], np.zeros((3, len(schema.columns)))) for schema in schemas]
    values: dict[Parse, list[np.ndarray]] = {}
    what = f"reading the {which} table" + ("" if sample is None else f" (a sample of {sample:,} rows)")
    for chunk in progress.track(pieces, what):
        parsed: dict[Parse, tuple[np.ndarray, np.ndarray]] = {}
        for reading in readings:
            reading.add(chunk, parsed)
        for key, (read, _) in parsed.items():
            values.setdefault(key, []).append(read)
    joined = {key: np.concatenate(arrays) for key, arrays in values.items()}
    return [reading.table(which, joined) for reading in readings]


def _drained(held: list[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """The pieces of ``held`` in order, each let go of as it is given (so that encoding them does not
    hold both the text and the codes of every piece)."""
    held.reverse()
    while held:
        yield held.pop()


def _counted_note(which: str, backend: str, table: Table) -> str:
    """Which scores of a table counted on a backend are exact and which read a sample of its rows."""
    rows = (f"all {table.rows:,} of its rows" if not table.sampled else
            f"a uniform random sample of {table.rows:,} of its {table.total_rows:,} rows")
    return (f"The {which} table was counted on the {backend} backend: column and marginal TVDs, the query "
            "workload, Cramér's V, exact matches and the reference counts of rare combinations count every "
            f"row; KS, Pearson, Spearman and η, the PCA, ML utility, distances to the closest record and the "
            f"rare-combination samples read {rows}.")


def _not_scored(original: list[str], release: Schema | None, set_apart: dict[str, str]) -> dict[str, str]:
    """The original's columns that are not scored, each with the reason."""
    if release is None:
        return {name: f"(nearly) one value per row, read as {kind}: not scored" for name, kind in set_apart.items()}
    rules = {c.name: c.kind for c in release.unmodelled}
    reasons = {Kind.ID: "an identifier: the release writes fresh keys", Kind.TEXT: "free text: the release writes it empty"}
    return {name: reasons[rules[name]] if name in rules else
            "not in the release (left out by its profile, or its domain was not found under DP)"
            for name in original if name not in release.names}


def load_tables(original: TableLike, synthetic: TableLike, schema: Schema | None = None,
                missing_markers: tuple[str, ...] = ("",), target: str | None = None, seed: int = 0,
                progress: Progress = SILENT) -> Tables:
    """Read, check and encode both tables (DataError on different columns, no rows, other kinds, or
    a ``target`` that is not a column), before any other work.

    Both are put on a discretisation drafted from the original (``discretisation``) and, when the
    release's ``schema`` is given, on that schema too (``Tables.release``). A table given as a
    ``TableSource`` on a backend other than memory is counted there (``counted``): its rows held
    for the row-based scores are then a uniform sample of at most ``ROW_SAMPLE``."""
    markers = schema.missing_markers if schema is not None else missing_markers
    opened: dict[str, CountingTable] = {}
    try:
        for which, table in (("original", original), ("synthetic", synthetic)):
            counting = open_counting(table, markers)
            if counting is not None:
                opened[which] = counting
        return _load(original, synthetic, schema, markers, target, seed, progress, opened)
    finally:
        for counting in opened.values():
            counting.close()


def _load(original: TableLike, synthetic: TableLike, schema: Schema | None, markers: tuple[str, ...],
          target: str | None, seed: int, progress: Progress, opened: dict[str, CountingTable]) -> Tables:
    header = _header(original, markers)
    _check_columns(header, _header(synthetic, markers), schema, target)
    names = list(header if schema is None else schema.names)
    positions = np.random.default_rng([seed, 2])  # its own stream: the metrics draw theirs from ``seed``
    keep = {which: sample_positions(counting.row_count(), positions) for which, counting in opened.items()}
    held = None  # an original counted on a backend is read once: its rows for the row-based scores, held
    if "original" in opened:
        held = list(_chunks(original, markers, keep["original"]))
    sample, source = _draft_sample(_chunks(original, markers) if held is None else held, names,
                                   np.random.default_rng(seed), progress)
    drafted = draft_discretisation(sample, markers, None if schema is None else {c.name: c.kind for c in schema.columns},
                                   DEFAULT_OTHER_LABEL if schema is None else schema.other_label)
    if not drafted.schema.columns:
        raise DataError(f"every column of the original holds (nearly) one value per row ({list(drafted.set_apart)}): "
                        "identifiers or free text, which the evaluation does not score. Evaluate a table with "
                        "other columns.")
    if target is not None and target in drafted.set_apart:
        raise DataError(f"the target column {target!r} holds (nearly) one value per row (an identifier or free "
                        "text), which the evaluation does not score; choose another --target.")
    not_scored = _not_scored(header, schema, drafted.set_apart)
    notes = [f"The scores are on a discretisation drafted from {source}"
             + ("; the release's own schema is scored beside it (column and marginal TVDs)." if schema is not None
                else "; pass --description to score on the release's own schema too.")]
    if not_scored:
        notes.append(f"Not evaluated: column(s) {list(not_scored)} (the reasons are listed with the columns).")
    schemas = [drafted.schema] + ([schema] if schema is not None else [])
    sampled = {which: None if rows is None else rows.size for which, rows in keep.items()}
    tables = {"original": _read(_chunks(original, markers) if held is None else _drained(held), schemas, "original",
                                progress, sampled.get("original")),
              "synthetic": _read(_chunks(synthetic, markers, keep.get("synthetic")), schemas, "synthetic", progress,
                                 sampled.get("synthetic"))}
    for j, column in enumerate(drafted.schema.columns):
        if tables["synthetic"][0].unlisted[j] > MAX_INVALID_SHARE >= tables["original"][0].unlisted[j]:
            raise DataError(
                f"most values of column {column.name!r} in the synthetic table are not among its categories in "
                "the original: the two tables differ in the kind or the values of this column. Compare tables "
                "with the same columns of the same kinds.")
    if tables["original"][0].rows < MIN_ORIGINAL_ROWS:
        raise DataError(f"the original table has fewer than {MIN_ORIGINAL_ROWS} rows: too few to hold some out "
                        "as a test set and baseline. Evaluate a larger table.")
    for which, table in (("original", original), ("synthetic", synthetic)):
        if tables[which][0].chunks > 1:
            notes.append(f"The {which} table was read in {tables[which][0].chunks} pieces of at most {CHUNK_ROWS:,} rows, "
                         + ("once: the rows kept for the row-based scores were held for the draft too"
                            if which == "original" and "original" in opened else "each encoded before the next was read")
                         + f" ({_name(table, which)}).")
    for which, counting in opened.items():  # after the checks: counting every row is the long part
        counted = backend_counts(counting, schemas, which, progress)
        counting.close()  # let go of the backend's memory before the next table is counted (closing again is harmless)
        tables[which] = [replace(t, counts=c) for t, c in zip(tables[which], counted, strict=True)]
        notes.append(_counted_note(which, counting.backend, tables[which][0]))
    release = None if schema is None else Tables(schema, tables["original"][1], tables["synthetic"][1], ())
    return Tables(drafted.schema, tables["original"][0], tables["synthetic"][0], tuple(notes), not_scored, release,
                  source)


def read_alike(table: TableLike, original: TableLike, tables: Tables, which: str, progress: Progress = SILENT) -> Table:
    """Another table of the original's population with the original's columns (a holdout), read onto
    ``tables.schema``; DataError when its columns differ from the original's."""
    markers = tables.schema.missing_markers
    header, expected = _header(table, markers), _header(original, markers)
    if sorted(header) != sorted(expected):
        raise DataError(f"the {which} table's columns differ from the original's (only in the {which}: "
                        f"{[n for n in header if n not in expected]}; only in the original: "
                        f"{[n for n in expected if n not in header]}). Give rows with the original's columns.")
    return _read(_chunks(table, markers), [tables.schema], which, progress)[0]

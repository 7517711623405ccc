"""Encoding one column's cells to its codes and decoding codes back to values.

Each cell gets a code of its column (the layout is in ``synth.columns.schema``). Numbers outside the
bounds are clipped into the first or last bin; integer columns round values with decimals to the
nearest whole number. A value that does not fit its column (text in an integer column, an unknown
boolean word, an unreadable date) is counted as *invalid* and encoded as MISSING; an unknown
category is encoded as OTHER. A cell its column has no code for goes to the column's *fallback*:
an unlisted value to MISSING when there is one, else to code 0 (the first category); a missing
or unreadable cell to code 0 (the first category, False, or the lowest bin). The rule looks at
the cell alone, so it is the same for every table; the cells it moved are counted on the console.
Decoding draws numbers uniformly inside their bin, never outside the bounds.

This module must never fail because of a private value: any cell maps to a code. Its errors
never quote a value from the data, and the exact counts in an ``EncodingReport`` are for the data
owner's console, never for a release.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from synth.columns.cells import FALSE_WORDS, TRUE_WORDS, distinct_texts, parse_values, weighted_bincount, weighted_sum
from synth.columns.column import Column
from synth.columns.kinds import NUMERIC_KINDS, Kind
from synth.columns.textshape import decimals_for, rounded_inside, shaped
from synth.errors import SchemaError

# --- Encoding report ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnCounts:
    """Exact counts of one column's cells that did not fit its domain."""

    name: str
    kind: Kind
    clipped_low: int = 0
    clipped_high: int = 0
    other: int = 0
    invalid: int = 0
    rounded: int = 0  # values with decimals in an integer column, rounded to whole numbers
    unplaced: int = 0  # missing cells in a column without a MISSING code, written as its first code
    bounds: tuple[str, str] | None = None  # the column's bounds as text, for messages
    other_to: str = "OTHER"  # where unlisted values went (a closed domain has no OTHER)
    invalid_to: str = "missing"  # where unreadable cells went
    first: str = ""  # the label of the column's first code, where cells without a code go

    @property
    def clean(self) -> bool:
        return self.clipped_low == self.clipped_high == self.other == self.invalid == self.rounded == self.unplaced == 0


def _values(count: int) -> str:
    return "1 value" if count == 1 else f"{count} values"


@dataclass(frozen=True)
class EncodingReport:
    """What encoding changed: clipped numbers, unknown categories, unreadable cells.

    These are EXACT counts of private data. They are shown to the data owner only (on the
    console) and must never be written into a release, a Description, or a log that is shared.
    """

    columns: tuple[ColumnCounts, ...]
    ignored_columns: tuple[str, ...] = ()

    def counts(self, name: str) -> ColumnCounts:
        """The counts of column ``name``."""
        for c in self.columns:
            if c.name == name:
                return c
        raise SchemaError(f"the encoding report has no column {name!r}.")

    @property
    def clean(self) -> bool:
        """True when no value was clipped, mapped to OTHER, or unreadable."""
        return all(c.clean for c in self.columns)

    def lines(self) -> list[str]:
        """A human-readable summary for the data owner's console (exact counts: do not share)."""
        out: list[str] = []
        for c in self.columns:
            low, high = c.bounds or ("the lower bound", "the upper bound")
            if c.clipped_low:
                out.append(f"{c.name}: {_values(c.clipped_low)} below {low} clipped to the lowest bin")
            if c.clipped_high:
                out.append(f"{c.name}: {_values(c.clipped_high)} above {high} clipped to the highest bin")
            if c.other:
                out.append(f"{c.name}: {_values(c.other)} not in the category list encoded as {c.other_to}")
            if c.rounded:
                out.append(f"{c.name}: {_values(c.rounded)} with decimals rounded to whole numbers (an integer column)")
            if c.invalid:
                what = {
                    Kind.BOOLEAN: "not one of true/false, yes/no, 1/0",
                    Kind.DATETIME: "not readable as dates",
                }.get(c.kind, "not readable as numbers")
                out.append(f"{c.name}: {_values(c.invalid)} {what}, encoded as {c.invalid_to}")
            if c.unplaced:
                out.append(f"{c.name}: {c.unplaced} missing cell(s) written as {c.first} (the column's domain "
                           "has no missing code)")
        if self.ignored_columns:
            out.append(f"columns not in the schema, ignored: {', '.join(self.ignored_columns)}")
        return out


# --- encoding and decoding a column ------------------------------------------------------------


def encode_column(column: Column, series: pd.Series, markers: Sequence[str],
                  weights: np.ndarray | None = None) -> tuple[np.ndarray, ColumnCounts]:
    """Codes of one column's cells (int32), and what was changed to give every cell a code.

    With ``weights`` (the rows each cell stands for: distinct cells from a counting backend) the
    counts are over the rows."""
    if column.kind in NUMERIC_KINDS:
        return encode_parsed(column, *parse_values(series, column.kind, markers, column.shape), weights)
    return _encode_listed(column, series, markers, weights)


def _column_counts(column: Column, **counts: Any) -> ColumnCounts:
    """A column's counts, with the labels of where its cells without a code of their own went."""
    labels = column.labels("OTHER")
    return ColumnCounts(column.name, column.kind, other_to=labels[column.unlisted_code],
                        invalid_to="missing" if column.missing else labels[0], first=labels[0], **counts)


def encode_parsed(column: Column, values: np.ndarray, missing: np.ndarray,
                  weights: np.ndarray | None = None) -> tuple[np.ndarray, ColumnCounts]:
    """Codes of a numeric or datetime column from its ``parse_values`` output, and what was changed
    (counted over rows: each cell ``weights[i]`` times when given)."""
    codes = np.full(len(values), column.absent_code, dtype=np.int32)
    readable = ~np.isnan(values)
    v = values[readable]
    w = None if weights is None else weights[readable]
    rounded = 0
    if column.kind == Kind.INTEGER:
        whole = np.floor(v + 0.5)  # round half up to the integer the value stands for
        rounded = weighted_sum(whole != v, w)
        v = whole
    low, high = v < column.lower, v > column.upper
    v = np.clip(v, column.lower, column.upper)
    codes[readable] = np.searchsorted(column.edges[1:-1], v, side="right")
    counts = _column_counts(
        column, clipped_low=weighted_sum(low, w), clipped_high=weighted_sum(high, w),
        invalid=weighted_sum(~readable & ~missing, weights), rounded=rounded, bounds=column.bound_texts(),
        unplaced=0 if column.missing else weighted_sum(missing, weights),
    )
    return codes, counts


def _encode_listed(column: Column, series: pd.Series, markers: Sequence[str],
                   weights: np.ndarray | None) -> tuple[np.ndarray, ColumnCounts]:
    """Categorical and boolean columns: match each distinct cell text, then spread to the rows."""
    labels, texts, is_missing = distinct_texts(series, markers)
    if column.kind == Kind.CATEGORICAL:
        assert column.categories is not None
        distinct = pd.Index(column.categories, dtype=object).get_indexer(texts)
        unmatched = (distinct < 0) & ~is_missing
        distinct[unmatched] = column.unlisted_code
    else:
        true_words, false_words = TRUE_WORDS, FALSE_WORDS
        if column.shape.labels is not None:
            true_words, false_words = true_words | {column.shape.labels[0].lower()}, false_words | {column.shape.labels[1].lower()}
        lowered = [t.lower() for t in texts]
        distinct = np.array([1 if t in true_words else 0 if t in false_words else -1 for t in lowered],
                            dtype=np.int64)
        unmatched = (distinct < 0) & ~is_missing
    distinct[is_missing | (distinct < 0)] = column.absent_code
    codes = distinct[labels].astype(np.int32)
    weight = weighted_bincount(labels, weights, len(texts))
    bad = int(weight[unmatched].sum())
    unplaced = 0 if column.missing else int(weight[is_missing].sum())
    if column.kind == Kind.CATEGORICAL:
        return codes, _column_counts(column, other=bad, unplaced=unplaced)
    return codes, _column_counts(column, invalid=bad, unplaced=unplaced)


def decode_column(column: Column, codes: np.ndarray, rng: np.random.Generator, other_label: str) -> pd.Series:
    """Values of one column's codes (see ``Schema.decode`` for the types), in the column's
    written shape (``synth.columns.textshape.shaped``)."""
    missing = codes == column.missing_code
    if column.kind == Kind.CATEGORICAL:
        assert column.categories is not None
        words = np.array([*column.categories, *[other_label] * (column.other_code >= 0), None], dtype=object)
        return pd.Series(pd.array(words[codes], dtype="str"))
    if column.kind == Kind.BOOLEAN:
        truth = codes == 1
        if column.missing:  # nullable whenever the column can be missing, so every chunk has one dtype
            return shaped(pd.Series(pd.arrays.BooleanArray(truth, missing)), column.kind, column.shape)
        return shaped(pd.Series(truth, dtype=bool), column.kind, column.shape)
    assert column.bins is not None and column.upper is not None  # a numeric column has bins and bounds
    bins = np.minimum(codes, column.bins - 1)  # MISSING rows draw a throwaway value, masked below
    if column.kind == Kind.DATETIME:
        starts, stops = column.second_ranges
        return draw_numbers(column, starts[bins], stops[bins], stops[bins], missing, rng)
    edges = column.edges
    low, high = edges[bins], edges[bins + 1]
    ceiling = np.where(bins == column.bins - 1, column.upper, np.nextafter(high, -np.inf))
    return draw_numbers(column, low, high, ceiling, missing, rng)


def draw_numbers(column: Column, low: np.ndarray, high: np.ndarray, ceiling: np.ndarray, missing: np.ndarray,
                 rng: np.random.Generator, limits: tuple[float, float] | None = None) -> pd.Series:
    """Values of a numeric or datetime column drawn uniformly per row: whole numbers (integers,
    datetime seconds) in [low, high), floats in [low, ceiling]; in the column's written shape
    (floats rounded to its decimals inside [low, ceiling], or inside ``limits``, by default its
    bounds, where that holds no rounded value: ``rounded_inside``; dates made whole days when
    date-only), NA where ``missing``. Decoding draws inside bins; conditional sampling inside a
    bin's part of a range, within the range's ``limits``."""
    if column.kind == Kind.INTEGER:
        values = rng.integers(low.astype(np.int64), high.astype(np.int64))
        if column.missing:  # nullable whenever the column can be missing, so every chunk has one dtype
            return pd.Series(pd.arrays.IntegerArray(values, missing))
        return pd.Series(values, dtype=np.int64)
    if column.kind == Kind.DATETIME:
        low, high = low.astype(np.int64), high.astype(np.int64)
        seconds = rng.integers(low, high)
        if column.shape.whole_days:
            seconds = _whole_days(seconds, low, high)
        stamps = seconds.astype("datetime64[s]")
        stamps[missing] = np.datetime64("NaT")
        return shaped(pd.Series(stamps), column.kind, column.shape)
    values = np.clip(low + rng.random(len(low)) * (high - low), low, ceiling)
    widths = np.diff(column.edges)  # a last bin that holds just upper (or a column of one value) has width 0
    narrowest = float(widths[widths > 0].min()) if np.any(widths > 0) else 0.0
    assert column.lower is not None and column.upper is not None  # a float column has bounds
    values = rounded_inside(values, low, ceiling, decimals_for(column.shape, narrowest),
                            limits or (column.lower, column.upper))
    values[missing] = np.nan
    return pd.Series(values, dtype=float)


def _whole_days(seconds: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """Draws moved to the midnight that starts their day, or to the first midnight inside their
    bin when that day began before it (a bin narrower than a day that holds no midnight keeps
    its draw)."""
    day = 86_400
    midnight = seconds // day * day
    first = -(-starts // day) * day
    inside = midnight >= starts
    return np.where(inside, midnight, np.where(first < stops, first, seconds))

"""Schemas: the columns of a release (``synth.columns.column``), in output order, with how missing cells
are written and the OTHER label.

``encode`` maps a table to an integer matrix (one code per cell), ``decode`` maps codes back to
values of each column's type and written shape (both by ``synth.columns.encoding``, one column at a time).
Identifier and free-text columns (``synth.columns.unmodelled``) are kept beside the modelled ones.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from synth.columns.column import DEFAULT_OTHER_LABEL, Column, column_from_dict
from synth.columns.encoding import EncodingReport, decode_column, encode_column
from synth.columns.unmodelled import KeyRange, UnmodelledColumn
from synth.errors import DataError, SchemaError

# --- Schema ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Schema:
    """The columns of a release, how missing cells are written, and the OTHER label.

    ``columns`` are the modelled ones (in code order); ``unmodelled`` are id and text columns,
    written by their own rule (``synth.columns.unmodelled``); ``order`` is the order of all of them in
    the output (empty: the modelled columns, then the unmodelled ones).
    """

    columns: tuple[Column, ...]
    missing_markers: tuple[str, ...] = ("",)
    other_label: str = DEFAULT_OTHER_LABEL
    unmodelled: tuple[UnmodelledColumn, ...] = ()
    order: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        columns, unmodelled = tuple(self.columns), tuple(self.unmodelled)
        if not all(isinstance(c, Column) for c in columns) or not all(isinstance(c, UnmodelledColumn) for c in unmodelled):
            raise SchemaError("a schema's columns must be Column objects and its unmodelled ones UnmodelledColumn objects.")
        if not columns and not unmodelled:
            raise SchemaError("a schema needs at least one column.")
        every: tuple[Column | UnmodelledColumn, ...] = (*columns, *unmodelled)
        names = [c.name for c in every]
        repeated = sorted(n for n, times in Counter(names).items() if times > 1)
        if repeated:
            raise SchemaError(f"column name(s) {repeated} appear more than once; each column needs its own name.")
        if self.order and sorted(self.order) != sorted(names):
            raise SchemaError("a schema's order must name each of its columns once.")
        object.__setattr__(self, "unmodelled", unmodelled)
        object.__setattr__(self, "order", tuple(self.order) if tuple(self.order) != tuple(names) else ())
        markers = self.missing_markers
        if isinstance(markers, str) or not all(isinstance(m, str) and m == m.strip() for m in markers):
            raise SchemaError(
                "missing_markers must be a list of strings without surrounding spaces, e.g. [\"\", \"NA\"]."
            )
        if not isinstance(self.other_label, str) or not self.other_label or self.other_label != self.other_label.strip():
            raise SchemaError("other_label must be a non-empty string without surrounding spaces, e.g. \"<OTHER>\".")
        if self.other_label in markers:
            raise SchemaError("other_label is also a missing marker; choose labels that differ.")
        for column in columns:
            if column.categories is None:
                continue
            if self.other_label in column.categories:
                raise SchemaError(
                    f"column {column.name!r} has a category equal to other_label {self.other_label!r}; "
                    "set a different other_label."
                )
            if set(column.categories) & set(markers):
                raise SchemaError(
                    f"column {column.name!r} has a category that is also a missing marker; cells "
                    "equal to a marker are read as missing. Remove it from the categories or the markers."
                )
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "missing_markers", tuple(markers))

    @cached_property
    def names(self) -> tuple[str, ...]:
        """The modelled columns' names, in code order."""
        return tuple(c.name for c in self.columns)

    @property
    def missing_text(self) -> str:
        """How a missing cell is written out: the first missing marker, as the input wrote them."""
        return self.missing_markers[0] if self.missing_markers else ""

    @cached_property
    def output_names(self) -> tuple[str, ...]:
        """Every column's name, unmodelled ones too, in the output's order."""
        return self.order or (*self.names, *(c.name for c in self.unmodelled))

    @cached_property
    def sizes(self) -> tuple[int, ...]:
        return tuple(c.size for c in self.columns)

    @cached_property
    def _by_name(self) -> dict[str, Column]:
        return {c.name: c for c in self.columns}

    def column(self, name: str) -> Column:
        """The column called ``name``."""
        if name not in self._by_name:
            raise SchemaError(f"the schema has no column {name!r}; its columns are {list(self.names)}.")
        return self._by_name[name]

    def select(self, names: Sequence[str]) -> Schema:
        """The schema of just these modelled columns, in the order given."""
        return Schema(tuple(self.column(n) for n in names), self.missing_markers, self.other_label)

    @cached_property
    def output_columns(self) -> tuple[Column | UnmodelledColumn, ...]:
        """Every column, unmodelled ones too, in the output's order."""
        every: tuple[Column | UnmodelledColumn, ...] = (*self.columns, *self.unmodelled)
        everything = {c.name: c for c in every}
        return tuple(everything[n] for n in self.output_names)

    def to_dict(self) -> dict[str, Any]:
        """Every column (unmodelled ones too) in output order, with the markers and OTHER label."""
        return {
            "columns": [c.to_dict() for c in self.output_columns],
            "missing_markers": list(self.missing_markers),
            "other_label": self.other_label,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Schema:
        if not isinstance(data, Mapping) or not isinstance(data.get("columns"), list):
            raise SchemaError("a schema must be a table with a list of columns.")
        return cls.ordered(
            [column_from_dict(c) for c in data["columns"]],
            missing_markers=data.get("missing_markers", ("",)),
            other_label=data.get("other_label", DEFAULT_OTHER_LABEL),
        )

    @classmethod
    def ordered(cls, columns: Sequence[Column | UnmodelledColumn], missing_markers: Sequence[str] = ("",),
                other_label: str = DEFAULT_OTHER_LABEL) -> Schema:
        """A schema of modelled and unmodelled columns mixed, kept in the order given."""
        return cls(
            columns=tuple(c for c in columns if isinstance(c, Column)),
            missing_markers=tuple(missing_markers),
            other_label=other_label,
            unmodelled=tuple(c for c in columns if isinstance(c, UnmodelledColumn)),
            order=tuple(c.name for c in columns),
        )

    def encode(self, df: pd.DataFrame) -> tuple[np.ndarray, EncodingReport]:
        """Codes of ``df`` as an int32 matrix (rows × schema columns) and the encoding report.

        Raises DataError only for schema facts (a schema column absent from ``df`` or named twice);
        any cell value is mapped to a code. Columns of ``df`` not in the schema are ignored.
        """
        absent = [n for n in self.names if n not in df.columns]
        if absent:
            raise DataError(
                f"the data lacks column(s) {absent} that the schema names. Fix the column names in "
                "the profile, or pass the data file they belong to."
            )
        doubled = [n for n in self.names if int((df.columns == n).sum()) > 1]
        if doubled:
            raise DataError(f"the data has column(s) {doubled} more than once; rename or drop the copies.")
        codes = np.empty((len(df), len(self.columns)), dtype=np.int32, order="F")
        counts = []
        for j, column in enumerate(self.columns):
            codes[:, j], column_counts = encode_column(column, df[column.name], self.missing_markers)
            counts.append(column_counts)
        ignored = tuple(str(c) for c in df.columns if c not in self.output_names)
        return codes, EncodingReport(tuple(counts), ignored)

    def decode(self, codes: np.ndarray, rng: np.random.Generator, piece: KeyRange | None = None) -> pd.DataFrame:
        """Values for a code matrix: numbers drawn uniformly inside their bin, never outside bounds;
        the unmodelled columns' fresh keys continue across the pieces of a table written in pieces
        when ``piece`` says where these rows lie in it.

        Integer columns give int64 (nullable Int64 when some are missing), floats float64 (NaN
        when missing), datetimes datetime64[s], booleans bool (nullable boolean when missing),
        categories strings (OTHER as ``other_label``, MISSING as NA).
        """
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != len(self.columns) or not np.issubdtype(codes.dtype, np.integer):
            raise DataError(
                f"decode needs an integer code matrix with {len(self.columns)} columns (one per schema "
                "column); the codes given do not match this schema."
            )
        out = {}
        for j, column in enumerate(self.columns):
            col_codes = codes[:, j].astype(np.int64)
            if col_codes.size and (col_codes.min() < 0 or col_codes.max() >= column.size):
                raise DataError(
                    f"codes of column {column.name!r} lie outside 0..{column.size - 1}; they were not "
                    "made with this schema."
                )
            out[column.name] = decode_column(column, col_codes, rng, self.other_label)
        for unmodelled in self.unmodelled:
            out[unmodelled.name] = unmodelled.generate(len(codes), rng, piece)
        return pd.DataFrame(out, columns=list(self.output_names))

"""Column kinds, public domains, and the encoding of table cells to small integer codes.

A ``Schema`` lists the columns of a release with their kind and finite domain. ``encode`` maps a
table to an integer matrix (one code per cell), ``decode`` maps codes back to values of the
column's type. Code layout, per column:

* categorical with m categories: 0..m-1 = the categories in order, m = OTHER (any value not in
  the list), m+1 = MISSING;
* boolean: 0 = False, 1 = True, 2 = MISSING;
* integer, float, datetime with b bins: 0..b-1 = bins over [lower, upper], b = MISSING.

A closed domain drops codes: a ``complete`` categorical column (its list holds every value) has no
OTHER code, and a column with ``missing = false`` (no cell is missing) has no MISSING code; the
codes after them move down. A cell its column has no code for goes to the column's *fallback*: an
unlisted value to MISSING when there is one, else to code 0 (the first category); a missing or
unreadable cell to code 0 (the first category, False, or the lowest bin). The rule looks at the
cell alone, so it is the same for every table; the cells it moved are counted on the console. The
numeric bins
  are equal-width, or split at the column's ``cuts`` (its inner bin edges, for skewed columns).
  Values outside the bounds are clipped into the first or last bin. Integer bins have whole-number
  edges, so every integer of [lower, upper] (both included) falls in exactly one bin; datetimes
  are binned as whole seconds since 1970-01-01 UTC (naive datetimes are read as UTC).

A cell is MISSING when it is NA (None, NaN, NaT), empty or blank, or equal to one of the schema's
missing markers (text is compared after stripping surrounding whitespace). A value that does not
fit its column (text in an integer column, an unknown boolean word, an unreadable date) is counted
as *invalid* and encoded as MISSING; an unknown category is encoded as OTHER.

This module must never fail because of a private value: encoding only raises on schema facts (a
column is missing from the table). Its errors never quote a value from the data, and the exact
counts in an ``EncodingReport`` are for the data owner's console, never for a release.
"""

from __future__ import annotations

import math
import numbers
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from enum import Enum
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from synth.errors import DataError, SchemaError
from synth.unmodelled import UnmodelledColumn, unmodelled_from_dict


class Kind(str, Enum):
    """What a column holds; it decides the domain and the code layout."""

    CATEGORICAL = "categorical"
    INTEGER = "integer"
    FLOAT = "float"
    DATETIME = "datetime"
    BOOLEAN = "boolean"
    ID = "id"  # a key: left out of the model, written as fresh keys (synth.unmodelled)
    TEXT = "text"  # free text: left out of the model, written empty (synth.unmodelled)


class DomainSource(str, Enum):
    """Where a column's domain came from; only ``data-derived`` breaks end-to-end DP."""

    PUBLIC = "public"
    DP_ESTIMATED = "dp-estimated"
    DATA_DERIVED = "data-derived"


NUMERIC_KINDS = frozenset({Kind.INTEGER, Kind.FLOAT, Kind.DATETIME})
UNMODELLED_KINDS = frozenset({Kind.ID, Kind.TEXT})
MISSING_LABEL = "<MISSING>"
DEFAULT_OTHER_LABEL = "<OTHER>"
MAX_EXACT_INTEGER = 2**53  # integer bounds beyond this are not exact as floats
FIRST_SECOND = -62135596800.0  # 0001-01-01T00:00:00 UTC
LAST_SECOND = 253402300799.0  # 9999-12-31T23:59:59 UTC
TRUE_WORDS = frozenset({"true", "1", "yes"})
FALSE_WORDS = frozenset({"false", "0", "no"})
DATE_SHARE = 0.95  # share of non-missing text cells that must read as dates for kind datetime
_EPOCH = datetime(1970, 1, 1)
_DATE_LIKE = re.compile(r"\d+\D+\d+")  # dates have at least two groups of digits
_LEADING_ZERO = re.compile(r"^[+-]?0\d")  # "007" is an identifier, not the number 7
_COLUMN_KEYS = ("name", "kind", "categories", "lower", "upper", "bins", "cuts", "complete", "missing", "source")


# --- small conversions -------------------------------------------------------------------------


def datetime_to_seconds(value: Any) -> float:
    """Seconds since 1970-01-01 UTC of an ISO 8601 string, ``date`` or ``datetime``.

    Aware datetimes are converted to UTC; naive ones are taken as UTC. SchemaError if unreadable.
    """
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise SchemaError(
                f"{value!r} is not an ISO 8601 date such as 2020-01-31 or 2020-01-31T12:00:00. "
                "Write datetime bounds and cuts in that form."
            ) from None
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
        return (value - _EPOCH).total_seconds()
    if isinstance(value, date):
        return (datetime(value.year, value.month, value.day) - _EPOCH).total_seconds()
    raise SchemaError(
        f"a datetime bound or cut must be an ISO 8601 date string such as \"2020-01-31\"; got a "
        f"{type(value).__name__}. Quote the date in the profile."
    )


def seconds_to_iso(seconds: float) -> str:
    """ISO 8601 text of whole seconds since the epoch; the date alone when it is midnight."""
    moment = _EPOCH + timedelta(seconds=seconds)
    return moment.date().isoformat() if moment.time() == datetime.min.time() else moment.isoformat()


def _number_text(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else format(x, ".10g")


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _cell_text(value: Any) -> str:
    """The string form a cell is matched on: text stripped, integral numbers without ".0"."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        x = float(value)
        return str(int(x)) if x.is_integer() else repr(x)
    return str(value).strip()


# --- Column ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """One column: its name, kind, public domain, and where that domain came from.

    Categorical columns have ``categories`` (distinct strings); integer, float and datetime
    columns have ``lower`` < ``upper`` (floats; datetimes as seconds since the epoch) and either
    ``bins`` (that many equal-width bins) or ``cuts``: the inner bin edges, strictly increasing and
    strictly inside (lower, upper), giving len(cuts) + 1 bins (``bins`` is then set to that, and
    if given must already equal it). Integer columns need whole-number bounds and at most as many
    bins as integers in [lower, upper] (too many bins is an error, not silently reduced, so the
    domain is what the profile says); their cuts are whole numbers with lower < cut <= upper, so
    every bin holds at least one integer. Datetime bounds and cuts are whole seconds and bins are
    at least one second wide. Boolean columns have the fixed domain False/True and nothing else.

    ``complete`` (categorical only) says the categories list every value: no OTHER code.
    ``missing = False`` says no cell is missing: no MISSING code. See the module docstring for
    where cells without a code of their own go.
    """

    name: str
    kind: Kind
    categories: tuple[str, ...] | None = None
    lower: float | None = None
    upper: float | None = None
    bins: int | None = None
    cuts: tuple[float, ...] | None = None
    complete: bool = False
    missing: bool = True
    source: DomainSource = DomainSource.PUBLIC

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise SchemaError("every column needs a non-empty name (a string). Fix the column's name.")
        set_ = object.__setattr__
        set_(self, "kind", _enum(Kind, self.kind, f"column {self.name!r}: kind"))
        set_(self, "source", _enum(DomainSource, self.source, f"column {self.name!r}: source"))
        for key in ("complete", "missing"):
            if not isinstance(getattr(self, key), (bool, np.bool_)):
                raise SchemaError(f"{self._where()}: {key} must be true or false.")
            set_(self, key, bool(getattr(self, key)))
        if self.kind in UNMODELLED_KINDS:
            raise SchemaError(f"{self._where()} is left out of the model; describe it with an UnmodelledColumn.")
        if self.complete and self.kind != Kind.CATEGORICAL:
            raise SchemaError(f"{self._where()}: only a categorical column can be complete (it has no "
                              "OTHER code); remove complete.")
        if self.kind == Kind.CATEGORICAL:
            self._reject("lower", "upper", "bins", "cuts")
            set_(self, "categories", self._checked_categories())
        elif self.kind == Kind.BOOLEAN:
            self._reject("categories", "lower", "upper", "bins", "cuts")
        else:
            self._reject("categories")
            self._check_numeric_domain()

    def _where(self) -> str:
        return f"column {self.name!r} ({self.kind.value})"

    def _reject(self, *keys: str) -> None:
        given = [k for k in keys if getattr(self, k) is not None]
        if given:
            raise SchemaError(
                f"{self._where()} cannot have {', '.join(given)}. Remove them, or change the kind."
            )

    def _checked_categories(self) -> tuple[str, ...]:
        cats = self.categories
        if cats is None or isinstance(cats, (str, bytes)) or not isinstance(cats, Iterable):
            raise SchemaError(
                f"{self._where()} needs categories: a list of at least one string, e.g. "
                "categories = [\"no\", \"yes\"]."
            )
        cats = tuple(cats)
        if not cats:
            raise SchemaError(f"{self._where()} has an empty category list; list at least one category.")
        for i, cat in enumerate(cats, start=1):
            if not isinstance(cat, str):
                raise SchemaError(
                    f"{self._where()}: category number {i} is a {type(cat).__name__}, not a string. "
                    "Quote every category (e.g. \"1\" rather than 1)."
                )
            if cat != cat.strip() or not cat:
                raise SchemaError(
                    f"{self._where()}: category number {i} is empty or has surrounding spaces; cells "
                    "are compared after stripping spaces, so remove them from the category."
                )
        if len(set(cats)) != len(cats):
            twice = next(i for i, c in enumerate(cats, start=1) if cats.index(c) != i - 1)
            raise SchemaError(
                f"{self._where()}: category number {twice} repeats an earlier one; list each once."
            )
        return cats

    def _check_numeric_domain(self) -> None:
        where = self._where()
        for key in ("lower", "upper"):
            value = getattr(self, key)
            if not _is_real(value) or not math.isfinite(value):
                raise SchemaError(f"{where} needs {key}: a finite number. Set it in the profile.")
            object.__setattr__(self, key, float(value))
        if self.cuts is None:
            bins = self.bins
            if not isinstance(bins, numbers.Integral) or isinstance(bins, (bool, np.bool_)) or bins < 1:
                raise SchemaError(
                    f"{where} needs bins: a whole number of at least 1 (e.g. bins = 32), or cuts: "
                    "its inner bin edges (e.g. cuts = [1, 10, 100])."
                )
            object.__setattr__(self, "bins", int(bins))
        lower, upper = self.lower, self.upper
        assert lower is not None and upper is not None
        if not lower < upper:
            raise SchemaError(
                f"{where}: lower must be smaller than upper. Swap or correct the bounds."
            )
        if not math.isfinite(upper - lower):
            raise SchemaError(f"{where}: the bounds are too far apart to be binned; narrow them.")
        if self.kind == Kind.INTEGER:
            if not (lower.is_integer() and upper.is_integer()):
                raise SchemaError(f"{where}: the bounds of an integer column must be whole numbers.")
            if max(abs(lower), abs(upper)) > MAX_EXACT_INTEGER:
                raise SchemaError(f"{where}: integer bounds must lie within ±2**53; use kind \"float\".")
            integers = int(upper - lower) + 1
            if self.cuts is None and self.bins > integers:
                raise SchemaError(
                    f"{where} asks for {self.bins} bins but its bounds hold only {integers} "
                    f"integers; set bins to at most {integers}."
                )
        elif self.kind == Kind.DATETIME:
            if not (lower.is_integer() and upper.is_integer()):
                raise SchemaError(f"{where}: datetime bounds must be whole seconds.")
            if lower < FIRST_SECOND or upper > LAST_SECOND:
                raise SchemaError(f"{where}: datetime bounds must lie in the years 1 to 9999.")
        if self.cuts is not None:
            self._check_cuts()
        if self.kind == Kind.DATETIME:
            starts, stops = self._second_ranges
            if np.any(stops <= starts):
                raise SchemaError(
                    f"{where}: bins narrower than one second; use fewer bins or wider bounds."
                )
        elif np.any(np.diff(self.edges) <= 0):
            raise SchemaError(
                f"{where}: the bounds are too close together (in floating point) for "
                f"{self.bins} bins; use fewer bins or wider bounds."
            )

    def _check_cuts(self) -> None:
        """Check ``cuts`` against the (already checked) bounds and set ``bins`` from them."""
        where, cuts = self._where(), self.cuts
        if isinstance(cuts, (str, bytes)) or not isinstance(cuts, Iterable):
            raise SchemaError(
                f"{where}: cuts must be a list of inner bin edges in increasing order, e.g. "
                "cuts = [1, 10, 100]."
            )
        cuts = tuple(cuts)
        if not cuts:
            raise SchemaError(f"{where} has an empty cuts list; list at least one cut, or give bins = 1 instead.")
        for i, cut in enumerate(cuts, start=1):
            if not _is_real(cut) or not math.isfinite(cut):
                raise SchemaError(f"{where}: cut number {i} is not a finite number; every cut must be one.")
        cuts = tuple(float(c) for c in cuts)
        for i in range(1, len(cuts)):
            if not cuts[i - 1] < cuts[i]:
                raise SchemaError(
                    f"{where}: cut number {i + 1} is not greater than the cut before it; list the "
                    "cuts in strictly increasing order, each once."
                )
        if self.kind in (Kind.INTEGER, Kind.DATETIME):
            unit = "whole numbers" if self.kind == Kind.INTEGER else "whole seconds"
            for i, cut in enumerate(cuts, start=1):
                if not cut.is_integer():
                    raise SchemaError(f"{where}: cut number {i} is not whole; the cuts of this kind must be {unit}.")
        lower, upper = self.lower, self.upper
        assert lower is not None and upper is not None
        integer = self.kind == Kind.INTEGER  # the last integer bin may hold just upper
        for i, cut in enumerate(cuts, start=1):
            if not (lower < cut and (cut <= upper if integer else cut < upper)):
                rule = "lower < cut <= upper" if integer else "lower < cut < upper"
                raise SchemaError(
                    f"{where}: cut number {i} lies outside the bounds; every cut must satisfy "
                    f"{rule} so that each bin holds values. Move or remove it, or widen the bounds."
                )
        if self.bins is not None and self.bins != len(cuts) + 1:
            raise SchemaError(
                f"{where} has bins = {self.bins!r} but its cuts make {len(cuts) + 1} bins; leave "
                f"bins out (the cuts decide it) or set bins = {len(cuts) + 1}."
            )
        object.__setattr__(self, "cuts", cuts)
        object.__setattr__(self, "bins", len(cuts) + 1)

    # -- derived facts --

    @property
    def values(self) -> int:
        """Number of codes for values: categories, False/True, or bins (no OTHER, no MISSING)."""
        if self.kind == Kind.CATEGORICAL:
            assert self.categories is not None
            return len(self.categories)
        if self.kind == Kind.BOOLEAN:
            return 2
        assert self.bins is not None
        return self.bins

    @property
    def size(self) -> int:
        """Number of codes, MISSING and OTHER included when the column has them."""
        return self.values + int(self.other_code >= 0) + int(self.missing)

    @property
    def other_code(self) -> int:
        """The code of a value outside an open category list; -1 when there is none."""
        return self.values if self.kind == Kind.CATEGORICAL and not self.complete else -1

    @property
    def missing_code(self) -> int:
        """The code of a missing value (the last one); -1 when the column has none."""
        return self.values + int(self.other_code >= 0) if self.missing else -1

    @property
    def unlisted_code(self) -> int:
        """Where a value outside a category list goes: OTHER, else MISSING, else the first code."""
        return self.other_code if self.other_code >= 0 else max(self.missing_code, 0)

    @property
    def absent_code(self) -> int:
        """Where a missing or unreadable cell goes: MISSING, else the first code."""
        return max(self.missing_code, 0)

    @cached_property
    def edges(self) -> np.ndarray:
        """The bins+1 bin edges of a numeric column; bin k is [edges[k], edges[k+1]).

        The edges are [lower, *cuts, upper] when the column has cuts, else equally spaced. The last
        bin also holds ``upper``. For integer columns the edges are whole numbers and the last edge
        is upper + 1, so bin k holds the integers edges[k] .. edges[k+1] - 1.
        """
        if self.kind not in NUMERIC_KINDS:
            raise SchemaError(f"{self._where()} has no bins; only numeric and datetime columns do.")
        assert self.lower is not None and self.upper is not None and self.bins is not None
        if self.cuts is not None:
            edges = np.array([self.lower, *self.cuts, self.upper], dtype=float)
            if self.kind == Kind.INTEGER:
                edges[-1] += 1.0
        elif self.kind == Kind.INTEGER:
            lower, count = int(self.lower), int(self.upper - self.lower) + 1
            edges = np.array([lower + (k * count) // self.bins for k in range(self.bins + 1)], dtype=float)
        else:
            edges = np.linspace(self.lower, self.upper, self.bins + 1)
        edges.flags.writeable = False
        return edges

    @cached_property
    def _second_ranges(self) -> tuple[np.ndarray, np.ndarray]:
        """Per bin of a datetime column, the whole seconds [start, stop) that fall in it."""
        assert self.upper is not None
        starts = np.ceil(self.edges[:-1]).astype(np.int64)
        stops = np.ceil(self.edges[1:]).astype(np.int64)
        stops[-1] = int(self.upper) + 1
        return starts, stops

    def labels(self, other_label: str = DEFAULT_OTHER_LABEL) -> tuple[str, ...]:
        """A readable label for every code, in code order (for reports), e.g. "[17, 25)"."""
        closing = (other_label,) * (self.other_code >= 0) + (MISSING_LABEL,) * self.missing
        if self.kind == Kind.CATEGORICAL:
            assert self.categories is not None
            return (*self.categories, *closing)
        if self.kind == Kind.BOOLEAN:
            return ("False", "True", *closing)
        edges = self.edges
        if self.kind == Kind.INTEGER:
            names = [
                str(int(a)) if b - a == 1 else f"[{int(a)}, {int(b)})" for a, b in zip(edges[:-1], edges[1:])
            ]
        else:
            text = seconds_to_iso if self.kind == Kind.DATETIME else _number_text
            names = [f"[{text(a)}, {text(b)})" for a, b in zip(edges[:-1], edges[1:])]
            names[-1] = names[-1][:-1] + "]"
        return (*names, *closing)

    def bound_texts(self) -> tuple[str, str]:
        """The bounds as text (ISO dates for datetime columns)."""
        assert self.lower is not None and self.upper is not None
        text = seconds_to_iso if self.kind == Kind.DATETIME else _number_text
        return text(self.lower), text(self.upper)

    # -- serialisation --

    def _public_number(self, x: float) -> int | float | str:
        """A bound or cut as written in a profile: int (integer), ISO string (datetime), float."""
        if self.kind == Kind.INTEGER:
            return int(x)
        return seconds_to_iso(x) if self.kind == Kind.DATETIME else x

    def to_dict(self) -> dict[str, Any]:
        """JSON- and TOML-safe form: integer bounds and cuts as ints, datetime ones as ISO strings.

        A column with cuts is written with its cuts and without bins (they follow from the cuts).
        """
        out: dict[str, Any] = {"name": self.name, "kind": self.kind.value}
        if self.categories is not None:
            out["categories"] = list(self.categories)
        if self.kind in NUMERIC_KINDS:
            assert self.lower is not None and self.upper is not None
            out["lower"], out["upper"] = self._public_number(self.lower), self._public_number(self.upper)
            if self.cuts is not None:
                out["cuts"] = [self._public_number(c) for c in self.cuts]
            else:
                out["bins"] = self.bins
        if self.complete:
            out["complete"] = True
        if not self.missing:
            out["missing"] = False
        out["source"] = self.source.value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Column:
        """Inverse of ``to_dict``; datetime bounds and cuts may also be ``date``/``datetime`` objects."""
        if not isinstance(data, Mapping):
            raise SchemaError("a column must be a table of keys (name, kind, ...); fix its entry.")
        unknown = [k for k in data if k not in _COLUMN_KEYS]
        if unknown:
            raise SchemaError(
                f"column {data.get('name')!r} has unknown key(s) {unknown}; the allowed keys are "
                f"{', '.join(_COLUMN_KEYS)}."
            )
        if "kind" not in data:
            raise SchemaError(f"column {data.get('name')!r} needs a kind: one of {_choices(Kind)}.")
        kind = _enum(Kind, data["kind"], f"column {data.get('name')!r}: kind")
        lower, upper, cuts = data.get("lower"), data.get("upper"), data.get("cuts")
        if kind == Kind.DATETIME:
            lower = None if lower is None else datetime_to_seconds(lower)
            upper = None if upper is None else datetime_to_seconds(upper)
            if isinstance(cuts, (list, tuple)):
                cuts = [datetime_to_seconds(c) for c in cuts]
        if isinstance(cuts, list):
            cuts = tuple(cuts)
        categories = data.get("categories")
        if isinstance(categories, list):
            categories = tuple(categories)
        return cls(
            name=data.get("name"),  # type: ignore[arg-type]  # checked in __post_init__
            kind=kind,
            categories=categories,
            lower=lower,
            upper=upper,
            bins=data.get("bins"),
            cuts=cuts,
            complete=data.get("complete", False),
            missing=data.get("missing", True),
            source=data.get("source", DomainSource.PUBLIC.value),
        )


def column_from_dict(data: Mapping[str, Any]) -> Column | UnmodelledColumn:
    """A modelled column, or an unmodelled one for the kinds id and text."""
    if isinstance(data, Mapping) and data.get("kind") in (Kind.ID.value, Kind.TEXT.value):
        return unmodelled_from_dict(data)
    return Column.from_dict(data)


def _choices(enum: type[Enum]) -> str:
    return ", ".join(repr(member.value) for member in enum)


def _enum(enum: type[Enum], value: Any, what: str) -> Any:
    try:
        return enum(value)
    except ValueError:
        raise SchemaError(f"{what} is {value!r}; it must be one of {_choices(enum)}.") from None


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


# --- reading cells -----------------------------------------------------------------------------


def _factorize(series: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """Row labels (-1 for NA) and the distinct non-NA cells, whatever their types."""
    try:
        labels, uniques = pd.factorize(series, use_na_sentinel=True)
    except TypeError:  # unhashable cells (lists, dicts): match them on their text
        labels, uniques = pd.factorize(series.map(lambda v: v if ptypes.is_hashable(v) else repr(v)))
    return np.asarray(labels, dtype=np.int64), list(np.asarray(uniques, dtype=object))


def _distinct_texts(series: pd.Series, markers: Iterable[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row labels into the distinct cell texts, those texts, and which of them mean MISSING.

    NA cells get the label of an extra, empty text at the end (so every label is an index).
    """
    labels, uniques = _factorize(series)
    labels[labels < 0] = len(uniques)
    texts = np.array([*(_cell_text(v) for v in uniques), ""], dtype=object)
    missing_words = set(markers) | {""}
    is_missing = np.array([t in missing_words for t in texts], dtype=bool)
    return labels, texts, is_missing


def text_counts(series: pd.Series, missing_markers: Iterable[str] = ("",)) -> pd.Series:
    """How often each non-missing cell text occurs (the text encoding matches categories on)."""
    labels, texts, is_missing = _distinct_texts(series, missing_markers)
    counts = np.bincount(labels, minlength=len(texts))
    keep = ~is_missing
    return pd.Series(counts[keep], index=pd.Index(texts[keep], dtype=object)).groupby(level=0).sum()


def count_missing(series: pd.Series, missing_markers: Iterable[str] = ("",)) -> int:
    """How many cells are missing (NA, blank, or a missing marker), as encoding reads them."""
    labels, _, is_missing = _distinct_texts(series, missing_markers)
    return int(is_missing[labels].sum())


def _datetime_array_seconds(values: pd.Series) -> np.ndarray:
    """Whole seconds since the epoch (floored) of a datetime series; NaN for NaT."""
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        values = values.dt.tz_convert("UTC").dt.tz_localize(None)
    stamps = values.to_numpy()
    seconds = stamps.astype("datetime64[s]").astype(np.int64).astype(float)
    seconds[np.isnat(stamps)] = np.nan
    return seconds


def _parse_dates(texts: np.ndarray) -> np.ndarray:
    """Seconds since the epoch of date texts; NaN where a text is not a readable date."""
    if len(texts) == 0:
        return np.empty(0)
    text = pd.Series(texts, dtype=object)
    seconds = _datetime_array_seconds(pd.to_datetime(text, errors="coerce", format="ISO8601", utc=True))
    retry = np.isnan(seconds)
    if retry.any():
        mixed = pd.to_datetime(text[retry], errors="coerce", format="mixed", utc=True)
        seconds[retry] = _datetime_array_seconds(mixed)
    seconds[(seconds < FIRST_SECOND) | (seconds > LAST_SECOND)] = np.nan
    return seconds


def _parse_numbers(texts: np.ndarray) -> np.ndarray:
    return pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def parse_values(series: pd.Series, kind: Kind, missing_markers: Iterable[str] = ("",)) -> tuple[np.ndarray, np.ndarray]:
    """Cells of a numeric or datetime column as floats (datetimes as whole seconds since the epoch).

    Returns ``(values, missing)``: ``values`` is NaN where a cell is missing or unreadable, and
    ``missing`` marks the cells that are missing (so NaN and not missing means invalid).
    """
    plain_numbers = ptypes.is_numeric_dtype(series.dtype) and not ptypes.is_complex_dtype(series.dtype)
    if kind in (Kind.INTEGER, Kind.FLOAT) and plain_numbers:
        values = series.to_numpy(dtype=float, na_value=np.nan)
        return values, np.isnan(values)
    if kind == Kind.DATETIME and ptypes.is_datetime64_any_dtype(series.dtype):
        values = _datetime_array_seconds(series)
        return values, np.isnan(values)
    labels, texts, is_missing = _distinct_texts(series, missing_markers)
    distinct = np.full(len(texts), np.nan)
    present = ~is_missing
    distinct[present] = _parse_dates(texts[present]) if kind == Kind.DATETIME else _parse_numbers(texts[present])
    return distinct[labels], is_missing[labels]


# --- encoding and decoding one column ----------------------------------------------------------


def _encode_numeric(column: Column, series: pd.Series, markers: Sequence[str]) -> tuple[np.ndarray, ColumnCounts]:
    return encode_parsed(column, *parse_values(series, column.kind, markers))


def _column_counts(column: Column, **counts: Any) -> ColumnCounts:
    """A column's counts, with the labels of where its cells without a code of their own went."""
    labels = column.labels("OTHER")
    return ColumnCounts(column.name, column.kind, other_to=labels[column.unlisted_code],
                        invalid_to="missing" if column.missing else labels[0], first=labels[0], **counts)


def encode_parsed(column: Column, values: np.ndarray, missing: np.ndarray) -> tuple[np.ndarray, ColumnCounts]:
    """Codes of a numeric or datetime column from its ``parse_values`` output, and what was changed."""
    codes = np.full(len(values), column.absent_code, dtype=np.int32)
    readable = ~np.isnan(values)
    v = values[readable]
    rounded = 0
    if column.kind == Kind.INTEGER:
        whole = np.floor(v + 0.5)  # round half up to the integer the value stands for
        rounded = int(np.count_nonzero(whole != v))
        v = whole
    low, high = v < column.lower, v > column.upper
    v = np.clip(v, column.lower, column.upper)
    codes[readable] = np.searchsorted(column.edges[1:-1], v, side="right")
    counts = _column_counts(
        column, clipped_low=int(low.sum()), clipped_high=int(high.sum()),
        invalid=int((~readable & ~missing).sum()), rounded=rounded, bounds=column.bound_texts(),
        unplaced=0 if column.missing else int(missing.sum()),
    )
    return codes, counts


def _encode_listed(column: Column, series: pd.Series, markers: Sequence[str]) -> tuple[np.ndarray, ColumnCounts]:
    """Categorical and boolean columns: match each distinct cell text, then spread to the rows."""
    labels, texts, is_missing = _distinct_texts(series, markers)
    if column.kind == Kind.CATEGORICAL:
        assert column.categories is not None
        distinct = pd.Index(column.categories, dtype=object).get_indexer(texts)
        unmatched = (distinct < 0) & ~is_missing
        distinct[unmatched] = column.unlisted_code
    else:
        lowered = [t.lower() for t in texts]
        distinct = np.array([1 if t in TRUE_WORDS else 0 if t in FALSE_WORDS else -1 for t in lowered],
                            dtype=np.int64)
        unmatched = (distinct < 0) & ~is_missing
    distinct[is_missing | (distinct < 0)] = column.absent_code
    codes = distinct[labels].astype(np.int32)
    weight = np.bincount(labels, minlength=len(texts))
    bad = int(weight[unmatched].sum())
    unplaced = 0 if column.missing else int(weight[is_missing].sum())
    if column.kind == Kind.CATEGORICAL:
        return codes, _column_counts(column, other=bad, unplaced=unplaced)
    return codes, _column_counts(column, invalid=bad, unplaced=unplaced)


def _decode_column(column: Column, codes: np.ndarray, rng: np.random.Generator, other_label: str) -> pd.Series:
    missing = codes == column.missing_code
    if column.kind == Kind.CATEGORICAL:
        assert column.categories is not None
        words = np.array([*column.categories, *[other_label] * (column.other_code >= 0), None], dtype=object)
        return pd.Series(pd.array(words[codes], dtype="str"))
    if column.kind == Kind.BOOLEAN:
        truth = codes == 1
        if missing.any():
            return pd.Series(pd.arrays.BooleanArray(truth, missing))
        return pd.Series(truth, dtype=bool)
    bins = np.minimum(codes, column.bins - 1)  # MISSING rows draw a throwaway value, masked below
    if column.kind == Kind.INTEGER:
        edges = column.edges.astype(np.int64)
        values = rng.integers(edges[bins], edges[bins + 1])
        if missing.any():
            return pd.Series(pd.arrays.IntegerArray(values, missing))
        return pd.Series(values, dtype=np.int64)
    if column.kind == Kind.DATETIME:
        starts, stops = column._second_ranges
        seconds = rng.integers(starts[bins], stops[bins]).astype("datetime64[s]")
        seconds[missing] = np.datetime64("NaT")
        return pd.Series(seconds)
    edges = column.edges
    low, high = edges[bins], edges[bins + 1]
    ceiling = np.where(bins == column.bins - 1, column.upper, np.nextafter(high, -np.inf))
    values = np.clip(low + rng.random(len(codes)) * (high - low), low, ceiling)
    values[missing] = np.nan
    return pd.Series(values, dtype=float)


# --- Schema ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Schema:
    """The columns of a release, how missing cells are written, and the OTHER label.

    ``columns`` are the modelled ones (in code order); ``unmodelled`` are id and text columns,
    written by their own rule (``synth.unmodelled``); ``order`` is the order of all of them in
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
        names = [c.name for c in (*columns, *unmodelled)]
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
        everything = {c.name: c for c in (*self.columns, *self.unmodelled)}
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
            encode = _encode_numeric if column.kind in NUMERIC_KINDS else _encode_listed
            codes[:, j], column_counts = encode(column, df[column.name], self.missing_markers)
            counts.append(column_counts)
        ignored = tuple(str(c) for c in df.columns if c not in self.output_names)
        return codes, EncodingReport(tuple(counts), ignored)

    def decode(self, codes: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
        """Values for a code matrix: numbers drawn uniformly inside their bin, never outside bounds.

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
            out[column.name] = _decode_column(column, col_codes, rng, self.other_label)
        for unmodelled in self.unmodelled:
            out[unmodelled.name] = unmodelled.generate(len(codes), rng)
        return pd.DataFrame(out, columns=list(self.output_names))


# --- kinds -------------------------------------------------------------------------------------


CELL_CLASSES = (Kind.BOOLEAN, Kind.INTEGER, Kind.FLOAT, Kind.DATETIME, Kind.CATEGORICAL)


def _classify_texts(texts: np.ndarray) -> np.ndarray:
    """Index into CELL_CLASSES of what each (non-missing) text reads as.

    A boolean word (true/false/yes/no; 1 and 0 read as integers), a number (integer or not; a
    leading zero as in "007" makes it an identifier, i.e. text), a date (two groups of digits and
    readable as a date), or other text.
    """
    classes = np.full(len(texts), CELL_CLASSES.index(Kind.CATEGORICAL), dtype=np.int64)
    if len(texts) == 0:
        return classes
    lowered = np.array([t.lower() for t in texts], dtype=object)
    boolean = np.isin(lowered, list((TRUE_WORDS | FALSE_WORDS) - {"0", "1"}))
    numbers = _parse_numbers(texts)
    leading_zero = np.array([bool(_LEADING_ZERO.match(t)) for t in texts])
    numeric = ~np.isnan(numbers) & ~leading_zero
    integral = numeric & np.isfinite(numbers) & (numbers == np.floor(numbers))
    date_like = np.array([bool(_DATE_LIKE.search(t)) for t in texts]) & ~numeric & ~boolean
    dated = np.zeros(len(texts), dtype=bool)
    dated[date_like] = ~np.isnan(_parse_dates(texts[date_like]))
    classes[boolean] = CELL_CLASSES.index(Kind.BOOLEAN)
    classes[numeric] = CELL_CLASSES.index(Kind.FLOAT)
    classes[integral] = CELL_CLASSES.index(Kind.INTEGER)
    classes[dated] = CELL_CLASSES.index(Kind.DATETIME)
    return classes


def _classify_typed(series: pd.Series) -> np.ndarray | None:
    """``classify_cells`` for a bool, number or datetime dtype, without going through text (the
    classes are the ones the cells' texts would get); None for other dtypes."""
    dtype = series.dtype
    if ptypes.is_bool_dtype(dtype):
        classes = np.full(len(series), CELL_CLASSES.index(Kind.BOOLEAN), dtype=np.int64)
        classes[series.isna().to_numpy()] = -1
        return classes
    if ptypes.is_datetime64_any_dtype(dtype):
        classes = np.full(len(series), CELL_CLASSES.index(Kind.DATETIME), dtype=np.int64)
        classes[series.isna().to_numpy()] = -1
        return classes
    if ptypes.is_numeric_dtype(dtype) and not ptypes.is_complex_dtype(dtype):
        values = series.to_numpy(dtype=float, na_value=np.nan)
        integral = np.isfinite(values) & (values == np.floor(values))
        classes = np.where(integral, CELL_CLASSES.index(Kind.INTEGER), CELL_CLASSES.index(Kind.FLOAT))
        classes[np.isnan(values)] = -1
        return classes.astype(np.int64)
    return None


def classify_cells(series: pd.Series, missing_markers: Iterable[str] = ("",)) -> np.ndarray:
    """Per cell, the index into CELL_CLASSES of what it reads as; -1 for a missing cell.

    Typed cells (bool, numbers, datetimes) read as what their text would read as; the dtype
    itself decides nothing. Exact and private: only the describer may release it, and only with
    noise.
    """
    typed = _classify_typed(series)
    if typed is not None:
        return typed
    labels, texts, is_missing = _distinct_texts(series, missing_markers)
    classes = _classify_texts(texts)
    classes[is_missing] = -1
    return classes[labels]


def declared_kind(series: pd.Series) -> Kind | None:
    """The kind a column's dtype suggests, or None for text, whose kind is open.

    A dtype was inferred from the cells (by ``pd.read_csv`` or whoever wrote the file), so it is
    private: only a drafted profile, which a person reviews, may use it.
    """
    dtype = series.dtype
    if ptypes.is_bool_dtype(dtype):
        return Kind.BOOLEAN
    if ptypes.is_integer_dtype(dtype):
        return Kind.INTEGER
    if ptypes.is_float_dtype(dtype):
        return Kind.FLOAT
    if ptypes.is_datetime64_any_dtype(dtype):
        return Kind.DATETIME
    if isinstance(dtype, pd.CategoricalDtype):
        return Kind.CATEGORICAL
    return None


def _infer_kind(series: pd.Series, markers: Sequence[str]) -> Kind:
    declared = declared_kind(series)
    if declared == Kind.FLOAT:
        values = series.to_numpy(dtype=float, na_value=np.nan)
        values = values[~np.isnan(values)]
        integral = values.size > 0 and bool(np.all(np.isfinite(values) & (values == np.floor(values))))
        return Kind.INTEGER if integral else Kind.FLOAT
    if declared is not None:
        return declared
    counts = text_counts(series, markers)
    if counts.empty:
        return Kind.CATEGORICAL
    weights = counts.to_numpy(dtype=float)
    classes = _classify_texts(counts.index.to_numpy(dtype=object))
    share = np.bincount(classes, weights=weights, minlength=len(CELL_CLASSES)) / weights.sum()
    b, i, f, d = (share[CELL_CLASSES.index(k)] for k in (Kind.BOOLEAN, Kind.INTEGER, Kind.FLOAT, Kind.DATETIME))
    if b > 0 and b + i == 1 and set(counts.index[classes == CELL_CLASSES.index(Kind.INTEGER)]) <= {"0", "1"}:
        return Kind.BOOLEAN
    if i + f == 1:
        return Kind.INTEGER if f == 0 else Kind.FLOAT
    if d >= DATE_SHARE:
        return Kind.DATETIME
    return Kind.CATEGORICAL


def infer_kinds(df: pd.DataFrame, missing_markers: Sequence[str] = ("",)) -> dict[str, Kind]:
    """A kind for each column of ``df``, from its dtype, or for text from what the text reads as.

    bool dtype → boolean; int → integer; float → integer when every non-missing value is a
    whole number (pandas reads an integer column with empty cells as float, so this is taken as a
    fact about the column's type), else float; datetime dtype → datetime. Text (after dropping
    missing cells and markers): only true/false/yes/no (with 1/0) → boolean; all numbers →
    integer or float (unless a number has a leading zero, like an identifier "007"); at least
    95 % readable as dates → datetime; anything else → categorical. These are decisions about a
    column's type for a draft profile that a person reviews; no value leaves this function.
    """
    return {name: _infer_kind(df[name], tuple(missing_markers)) for name in df.columns}

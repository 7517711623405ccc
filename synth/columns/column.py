"""A column of a release: its kind, public domain, written shape and code layout.

Code layout, per column:

* categorical with m categories: 0..m-1 = the categories in order, m = OTHER (any value not in
  the list), m+1 = MISSING;
* boolean: 0 = False, 1 = True, 2 = MISSING;
* integer, float, datetime with b bins: 0..b-1 = bins over [lower, upper], b = MISSING.

A closed domain drops codes: a ``complete`` categorical column (its list holds every value) has no
OTHER code, and a column with ``missing = false`` (no cell is missing) has no MISSING code; the
codes after them move down. The numeric bins are equal-width, or split at the column's ``cuts``
(its inner bin edges, for skewed columns). Integer bins have whole-number edges, so every integer
of [lower, upper] (both included) falls in exactly one bin; datetimes are binned as whole seconds
since 1970-01-01 UTC. The columns of a release together make a ``synth.columns.schema.Schema``.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Any

import numpy as np

from synth.columns.cells import FIRST_SECOND, LAST_SECOND, datetime_to_seconds, seconds_to_iso
from synth.columns.kinds import NUMERIC_KINDS, UNMODELLED_KINDS, DomainSource, Kind
from synth.columns.textshape import SHAPE_KEYS, TextShape
from synth.columns.unmodelled import UnmodelledColumn, unmodelled_from_dict
from synth.errors import SchemaError

MISSING_LABEL = "<MISSING>"
DEFAULT_OTHER_LABEL = "<OTHER>"
MAX_EXACT_INTEGER = 2**53  # integer bounds beyond this are not exact as floats
_COLUMN_KEYS = ("name", "kind", "categories", "lower", "upper", "bins", "cuts", "complete", "missing", "source",
                *SHAPE_KEYS)


# --- small conversions -------------------------------------------------------------------------


def number_text(x: float) -> str:
    """A bound or cut as text: whole numbers without a decimal point, others to 10 digits."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else format(x, ".10g")


def _as_tuple(value: Any) -> tuple[Any, ...] | None:
    """A list of a profile (any iterable but text) as a tuple; None for anything else."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        return None
    return tuple(value)


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


# --- Column ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """One column: its name, kind, public domain, and where that domain came from.

    Categorical columns have ``categories`` (distinct strings); integer, float and datetime
    columns have ``lower`` < ``upper`` (floats; datetimes as seconds since the epoch) and either
    ``bins`` (that many equal-width bins) or ``cuts``: the inner bin edges, strictly increasing,
    with lower < cut <= upper for numbers (a cut at upper leaves a last bin holding upper alone)
    and lower < cut < upper for datetimes, giving len(cuts) + 1 bins (``bins`` is then set to that,
    and if given must already equal it). Integer columns need whole-number bounds and at most as
    many bins as integers in [lower, upper] (too many bins is an error, not silently reduced, so
    the domain is what the profile says); their cuts are whole numbers, so every bin holds at
    least one integer. Datetime bounds and cuts are whole seconds and bins are
    at least one second wide. Boolean columns have the fixed domain False/True and nothing else.

    ``complete`` (categorical only) says the categories list every value: no OTHER code.
    ``missing = False`` says no cell is missing: no MISSING code. ``synth.columns.encoding`` says
    where cells without a code of their own go. ``shape`` says how values are read and written
    as text (``synth.columns.textshape``).
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
    shape: TextShape = TextShape()

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
        set_(self, "shape", self.shape.checked(self.kind, self._where()))
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
        cats = _as_tuple(self.categories)
        if cats is None:
            raise SchemaError(
                f"{self._where()} needs categories: a list of at least one string, e.g. "
                "categories = [\"no\", \"yes\"]."
            )
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
        if lower > upper or (lower == upper and (self.cuts is not None or self.bins != 1)):
            raise SchemaError(
                f"{where}: lower must be smaller than upper (or equal to it with bins = 1, for a column "
                "that holds one value). Swap or correct the bounds."
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
            starts, stops = self.second_ranges
            if np.any(stops <= starts):
                raise SchemaError(
                    f"{where}: bins narrower than one second; use fewer bins or wider bounds."
                )
        elif np.any(np.diff(self.edges)[:-1] <= 0) or np.diff(self.edges)[-1] < (0 if self._upper_alone or lower == upper
                                                                                 else 1e-300):
            raise SchemaError(
                f"{where}: the bounds are too close together (in floating point) for "
                f"{self.bins} bins; use fewer bins or wider bounds."
            )

    def _check_cuts(self) -> None:
        """Check ``cuts`` against the (already checked) bounds and set ``bins`` from them."""
        where, cuts = self._where(), _as_tuple(self.cuts)
        if cuts is None:
            raise SchemaError(
                f"{where}: cuts must be a list of inner bin edges in increasing order, e.g. "
                "cuts = [1, 10, 100]."
            )
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
        numbers = self.kind != Kind.DATETIME  # the last bin of a number column may hold just upper
        for i, cut in enumerate(cuts, start=1):
            if not (lower < cut and (cut <= upper if numbers else cut < upper)):
                rule = "lower < cut <= upper" if numbers else "lower < cut < upper"
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
    def _upper_alone(self) -> bool:
        """A float column whose last cut is upper: its last bin holds upper alone (width 0)."""
        return self.kind == Kind.FLOAT and self.cuts is not None and self.cuts[-1] == self.upper

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
    def second_ranges(self) -> tuple[np.ndarray, np.ndarray]:
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
                str(int(a)) if b - a == 1 else f"[{int(a)}, {int(b)})" for a, b in itertools.pairwise(edges)
            ]
        else:
            text = seconds_to_iso if self.kind == Kind.DATETIME else number_text
            names = [f"[{text(a)}, {text(b)})" for a, b in itertools.pairwise(edges)]
            names[-1] = names[-1][:-1] + "]"
        return (*names, *closing)

    def bound_texts(self) -> tuple[str, str]:
        """The bounds as text (ISO dates for datetime columns)."""
        assert self.lower is not None and self.upper is not None
        text = seconds_to_iso if self.kind == Kind.DATETIME else number_text
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
        out.update(self.shape.to_dict())
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
            shape=TextShape.from_dict(data),
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

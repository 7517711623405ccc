"""Conditions for sampling: a value (or values, or a range) per column, as evidence on the codes.

A condition names a modelled column and what its synthetic cells must hold:

* a categorical column: a category, the OTHER label, or a list of them;
* a boolean column: True / False (or their words: true/false, yes/no, 1/0);
* an integer, float or datetime column: a range ``low..high`` (both ends included; either may be
  left out: ``30..``, ``..40``) or a single value (a one-value range: an integer, a second of a
  datetime; a float column needs a range, as one exact float has no probability). A datetime end
  is an ISO date or date-time; a date alone as the upper end includes that whole day;
* any column: None, or a missing marker (``""`` by default), for a missing cell, when the column
  has missing cells.

``read_conditions`` turns such conditions into a ``Condition`` per column: one weight per code of
the column (1 for a kept code, 0 for another, and for a numeric bin the share of its values
inside the range, as values are drawn uniformly inside a bin), which a model takes as evidence.
``values_in_ranges`` then draws the values of a range-conditioned column inside the range (the
generator puts them in place of the decoded ones), so that conditioning is exact on values too.
Command-line conditions are texts ``column=value`` (``parse_condition``). Errors say which column
or value is wrong and what the column holds. Everything here reads the public schema only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import numpy as np
import pandas as pd

from synth.columns.cells import FALSE_WORDS, TRUE_WORDS, datetime_to_seconds
from synth.columns.column import Column
from synth.columns.encoding import draw_numbers
from synth.columns.kinds import NUMERIC_KINDS, Kind
from synth.columns.schema import Schema
from synth.errors import ConditionError, SynthError

RANGE = ".."
DAY_SECONDS = 86_400
MAX_LISTED = 12  # values quoted in an error about an unknown value


@dataclass(frozen=True)
class Condition:
    """One column's condition (``text``: as the user gave it): a weight per code, and for a range its
    ends in the column's units (None when open); for whole-number units (integers, datetime
    seconds) the range is [low, high), otherwise [low, high]."""

    column: str
    text: str
    weights: np.ndarray
    low: float | None = None
    high: float | None = None

    @property
    def ranged(self) -> bool:
        return self.low is not None or self.high is not None


def parse_condition(text: str) -> tuple[str, str]:
    """``column=value`` as (column, value) (split at the first ``=``); ConditionError otherwise."""
    column, sep, value = text.partition("=")
    if not sep or not column.strip():
        raise ConditionError(f"the condition {text!r} is not of the form COLUMN=VALUE, e.g. sex=Female or "
                             "age=30..40.")
    return column.strip(), value.strip()


def _describe(value: Any) -> str:
    """A condition's value as the user gave it: texts as they are (quoted when empty), lists in brackets."""
    if isinstance(value, (list, tuple, set, frozenset)):
        return "[" + ", ".join(_describe(v) for v in value) + "]"
    return value if isinstance(value, str) and value else repr(value)


def _one_hot(column: Column, codes: list[int]) -> np.ndarray:
    weights = np.zeros(column.size)
    weights[codes] = 1.0
    return weights


def _is_missing(value: Any, schema: Schema) -> bool:
    return value is None or (isinstance(value, str) and value in schema.missing_markers)


def _missing_code(column: Column, where: str) -> int:
    if column.missing_code < 0:
        raise ConditionError(f"{where}: the column has no missing cells (its domain is closed); ask for a value.")
    return column.missing_code


def _listed_code(column: Column, value: Any, schema: Schema, where: str) -> int:
    """The code of one value of a categorical or boolean column."""
    if _is_missing(value, schema):
        return _missing_code(column, where)
    if column.kind == Kind.BOOLEAN:
        word = str(value).strip().lower() if not isinstance(value, (bool, np.bool_)) else str(bool(value)).lower()
        if word in TRUE_WORDS or word in FALSE_WORDS:
            return int(word in TRUE_WORDS)
        raise ConditionError(f"{where}: a boolean column holds true or false (or yes/no, 1/0).")
    assert column.categories is not None
    if isinstance(value, str) and value in column.categories:
        return column.categories.index(value)
    if isinstance(value, str) and value == schema.other_label and column.other_code >= 0:
        return column.other_code
    values = list(column.categories) + [schema.other_label] * (column.other_code >= 0)
    more = len(values) - MAX_LISTED
    listed = ", ".join(values[:MAX_LISTED]) + (f" and {more} more" if more > 0 else "")
    raise ConditionError(f"{where}: the column has no value {value!r}; its values are {listed}.")


def _bin_spans(column: Column) -> tuple[np.ndarray, np.ndarray, bool]:
    """Each bin's values as [start, stop): whole numbers (integers, datetime seconds) or reals."""
    if column.kind == Kind.DATETIME:
        starts, stops = column.second_ranges
        return starts.astype(float), stops.astype(float), True
    edges = column.edges
    return edges[:-1], edges[1:], column.kind == Kind.INTEGER


def _end(column: Column, value: Any, upper: bool, where: str) -> float | None:
    """One end of a range in the column's units (None: open)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if column.kind == Kind.DATETIME:
        if not isinstance(value, (str, date)):
            raise ConditionError(f"{where}: a datetime end is an ISO date such as 2020-01-31 or 2020-01-31T12:00:00.")
        try:
            seconds = datetime_to_seconds(value.strip() if isinstance(value, str) else value)
        except SynthError:
            raise ConditionError(f"{where}: {value!r} is not an ISO date such as 2020-01-31 or "
                                 "2020-01-31T12:00:00.") from None
        if isinstance(value, str):
            whole_day = len(value.strip()) == len("2020-01-31")
        else:
            whole_day = not isinstance(value, datetime)
        return seconds + DAY_SECONDS - 1 if upper and whole_day else seconds
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or isinstance(value, (bool, np.bool_)):
        raise ConditionError(f"{where}: {value!r} is not a finite number; give a number or a range such as 30..40.")
    return number


def _range(column: Column, value: Any, where: str) -> tuple[float | None, float | None]:
    if isinstance(value, (tuple, list)) and len(value) == 2:
        low, high = value
    elif isinstance(value, str) and RANGE in value:
        low, _, high = value.partition(RANGE)
    else:
        low = high = value
    return _end(column, low, False, where), _end(column, high, True, where)


def _numeric(column: Column, value: Any, text: str) -> Condition:
    where = f"the condition {text}"
    low, high = _range(column, value, where)
    if low is not None and high is not None and low > high:
        raise ConditionError(f"{where}: the range ends before it starts; write it as low..high.")
    if column.kind == Kind.FLOAT and low is not None and low == high:
        raise ConditionError(f"{where}: a float column takes any real value, so one exact value has no "
                             "probability; give a range such as 1.5..2.5.")
    starts, stops, whole = _bin_spans(column)
    lo = -math.inf if low is None else (math.ceil(low) if whole else low)
    hi = math.inf if high is None else (math.floor(high) + 1 if whole else high)
    inside = np.clip(np.minimum(stops, hi) - np.maximum(starts, lo), 0.0, None) / (stops - starts)
    if not inside.any():
        lower, upper = column.bound_texts()
        raise ConditionError(f"{where}: the range holds no value of the column, whose values lie in "
                             f"[{lower}, {upper}].")
    weights = np.zeros(column.size)
    weights[:column.bins] = np.minimum(inside, 1.0)
    return Condition(column.name, text, weights, None if low is None else lo, None if high is None else hi)


def _condition(schema: Schema, name: str, value: Any) -> Condition:
    text = f"{name}={_describe(value)}"
    where = f"the condition {text}"
    if name not in schema.names:
        unmodelled = [c.name for c in schema.unmodelled]
        if name in unmodelled:
            raise ConditionError(f"{where}: column {name!r} is not modelled (an identifier or free text, written by "
                                 "its own rule), so no condition can apply to it.")
        raise ConditionError(f"{where}: there is no column {name!r}; the modelled columns are "
                             f"{', '.join(schema.names)}.")
    column = schema.column(name)
    if column.kind in NUMERIC_KINDS:
        if _is_missing(value, schema):
            return Condition(name, text, _one_hot(column, [_missing_code(column, where)]))
        return _numeric(column, value, text)
    values = list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]
    if not values:
        raise ConditionError(f"{where}: the list of values is empty; give at least one.")
    return Condition(name, text, _one_hot(column, [_listed_code(column, v, schema, where) for v in values]))


def read_conditions(schema: Schema, conditions: Mapping[str, Any]) -> list[Condition]:
    """One ``Condition`` per column named in ``conditions`` (see the module docstring)."""
    return [_condition(schema, str(name), value) for name, value in conditions.items()]


def evidence(conditions: list[Condition]) -> dict[str, np.ndarray]:
    """The conditions as evidence on the model's columns."""
    return {c.column: c.weights for c in conditions}


def values_in_ranges(schema: Schema, conditions: list[Condition], codes: np.ndarray,
                     rng: np.random.Generator) -> dict[str, pd.Series]:
    """For each range-conditioned column, values for the bins in ``codes`` drawn uniformly inside the
    part of their bin that lies in the range, in the column's written shape (``draw_numbers``)."""
    values = {}
    for condition in conditions:
        if not condition.ranged:
            continue
        column = schema.column(condition.column)
        bins = codes[:, schema.names.index(column.name)]
        starts, stops, _ = _bin_spans(column)
        low = np.maximum(starts[bins], -math.inf if condition.low is None else condition.low)
        high = np.minimum(stops[bins], math.inf if condition.high is None else condition.high)
        assert column.lower is not None and column.upper is not None  # a ranged column is numeric
        limits = (max(column.lower, -math.inf if condition.low is None else condition.low),
                  min(column.upper, math.inf if condition.high is None else condition.high))
        values[column.name] = draw_numbers(column, low, high, high, np.zeros(len(bins), dtype=bool), rng, limits)
    return values


def condition_text(conditions: list[Condition]) -> str:
    """The conditions as the user gave them, for messages."""
    return ", ".join(c.text for c in conditions)


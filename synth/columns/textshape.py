"""How a column's values look as text: decimals, boolean words, date format and day order.

A ``TextShape`` is public metadata of one column, beside its kind and domain: it comes from a
profile (``decimals``, ``labels``, ``format``, ``dayfirst``), or from a noisy vote over the cells'
shapes during discovery (``synth.domains.votes.vote_shape``), never from an exact read of the data
unless the column is marked data-derived. It governs two things:

* reading: a datetime column's cells are parsed with its ``format`` when one is given, else with
  its day order (``dayfirst``) applied to every cell alike (``synth.columns.cells``), so "05/03/2023" and
  "23/02/2023" in one column never get different day orders;
* writing (``shaped``): floats are rounded to ``decimals``; booleans are written with their
  ``labels`` (e.g. yes/no); datetimes with their ``format``, or as ISO dates (whole days) when
  ``date_only`` (a format without a time of day makes whole days too).

Left unset, a float keeps about two significant digits inside its narrowest bin (a public rule,
from the domain alone), a boolean is True/False, and a datetime is written in ISO 8601.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from synth.columns.kinds import Kind
from synth.errors import SchemaError

SHAPE_KEYS = ("decimals", "labels", "format", "dayfirst", "date_only")
KIND_SHAPE_KEYS = {Kind.FLOAT: ("decimals",), Kind.BOOLEAN: ("labels",), Kind.DATETIME: ("format", "dayfirst", "date_only")}
MAX_DECIMALS = 12
_TIME_DIRECTIVES = re.compile(r"%[HIMSfpXcTrRsz]")
_CHECK_MOMENT = datetime(2001, 2, 3, 4, 5, 6)


@dataclass(frozen=True)
class TextShape:
    """The written form of one column's values (see the module docstring); every field optional."""

    decimals: int | None = None  # float: digits after the decimal point
    labels: tuple[str, str] | None = None  # boolean: the words for true and for false
    format: str | None = None  # datetime: strptime/strftime format, e.g. "%d/%m/%Y"
    dayfirst: bool = False  # datetime without a format: read 05/03/2023 as 5 March
    date_only: bool = False  # datetime: whole days, written without a time of day

    @property
    def whole_days(self) -> bool:
        """True when values are whole days: date only, or a format that writes no time of day."""
        return self.date_only or (self.format is not None and not _TIME_DIRECTIVES.search(self.format))

    def checked(self, kind: Kind, where: str) -> TextShape:
        """This shape, validated for a column of ``kind`` (SchemaError saying what to fix)."""
        given = list(self.to_dict())
        allowed = KIND_SHAPE_KEYS.get(kind, ())
        wrong = [key for key in given if key not in allowed]
        if wrong:
            raise SchemaError(f"{where} cannot have {', '.join(wrong)} ({kind.value} columns take "
                              f"{', '.join(sorted(allowed)) or 'none of ' + ', '.join(SHAPE_KEYS)}).")
        decimals = self.decimals
        labels: Any = self.labels  # as given (a list when read from a file): checked below
        if decimals is not None and (isinstance(decimals, bool) or not isinstance(decimals, (int, np.integer))
                                     or not 0 <= decimals <= MAX_DECIMALS):
            raise SchemaError(f"{where}: decimals must be a whole number from 0 to {MAX_DECIMALS}; got {decimals!r}.")
        if labels is not None:
            labels = tuple(labels) if isinstance(labels, (list, tuple)) else labels
            if (not isinstance(labels, tuple) or len(labels) != 2 or not all(isinstance(w, str) and w.strip() for w in labels)
                    or labels[0] == labels[1]):
                raise SchemaError(f"{where}: labels must be two different words, for true then false, e.g. "
                                  f"[\"yes\", \"no\"]; got {self.labels!r}.")
        for key in ("dayfirst", "date_only"):
            if not isinstance(getattr(self, key), (bool, np.bool_)):
                raise SchemaError(f"{where}: {key} must be true or false.")
        if self.format is not None:
            _check_format(self.format, where)
            if self.date_only and _TIME_DIRECTIVES.search(self.format):
                raise SchemaError(f"{where}: date_only is set, but the format {self.format!r} writes a time of "
                                  "day; remove one of them.")
        return TextShape(None if decimals is None else int(decimals), labels, self.format, bool(self.dayfirst),
                         bool(self.date_only))

    def to_dict(self) -> dict[str, Any]:
        """The keys that are set (not None, not false), as a profile or Description writes them."""
        values = {key: getattr(self, key) for key in SHAPE_KEYS}
        return {key: list(value) if key == "labels" else value
                for key, value in values.items() if value is not None and value is not False}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TextShape:
        """The shape keys of a column's table (others are ignored here); checked by ``checked``."""
        return cls(data.get("decimals"), data.get("labels"), data.get("format"), data.get("dayfirst", False),
                   data.get("date_only", False))


def _check_format(fmt: Any, where: str) -> None:
    """A date format must be text with a directive, and read back what it writes."""
    if not isinstance(fmt, str) or "%" not in fmt:
        raise SchemaError(f"{where}: format must be a date format such as \"%d/%m/%Y\" or \"%Y-%m-%d %H:%M\"; "
                          f"got {fmt!r}.")
    try:
        written = _CHECK_MOMENT.strftime(fmt)
        datetime.strptime(written, fmt)
    except ValueError as exc:
        raise SchemaError(f"{where}: the date format {fmt!r} cannot be read back ({exc}); use strftime "
                          "directives such as %Y, %m, %d, %H, %M, %S.") from None


def decimals_for(shape: TextShape, narrowest_bin: float) -> int:
    """The shape's decimals, else about two significant digits inside a bin this wide (public:
    from the domain alone)."""
    if shape.decimals is not None:
        return shape.decimals
    if not narrowest_bin > 0 or not math.isfinite(narrowest_bin):
        return MAX_DECIMALS
    return int(min(max(1 - math.floor(math.log10(narrowest_bin)), 0), MAX_DECIMALS))


def _grid_span(low: np.ndarray | float, high: np.ndarray | float, decimals: int) -> tuple[np.ndarray, np.ndarray]:
    """The first and the last number of ``decimals`` decimals inside [low, high] (first > last
    when there is none), stepped inward when float division lands them just outside."""
    scale = 10.0**decimals
    first, last = np.ceil(np.multiply(low, scale)) / scale, np.floor(np.multiply(high, scale)) / scale
    first = np.where(first < low, (np.ceil(np.multiply(low, scale)) + 1) / scale, first)
    last = np.where(last > high, (np.floor(np.multiply(high, scale)) - 1) / scale, last)
    return first, last


def numbers_inside(lower: float, upper: float, decimals: int) -> int:
    """How many numbers of ``decimals`` decimals lie inside [lower, upper]."""
    first, last = _grid_span(lower, upper, decimals)
    return max(int(round((float(last) - float(first)) * 10.0**decimals)) + 1, 0)


def rounded_inside(values: np.ndarray, low: np.ndarray, ceiling: np.ndarray, decimals: int,
                   limits: tuple[float, float]) -> np.ndarray:
    """``values`` rounded to ``decimals``, every one: each is the number of that many decimals
    nearest it inside its bin [low, ceiling], or, when the bin holds none, nearest it inside
    ``limits`` (the column's bounds, or a condition's range within them: a value never leaves
    them). When even ``limits`` hold no such number, the fewest more decimals that give one are
    used; beyond ``MAX_DECIMALS`` a value stays as drawn (a range narrower than 1e-12)."""
    lower, upper = limits
    while decimals < MAX_DECIMALS and not np.all(np.less_equal(*_grid_span(lower, upper, decimals))):
        decimals += 1
    rounded = np.round(values, decimals)
    first, last = _grid_span(low, ceiling, decimals)
    start, stop = _grid_span(lower, upper, decimals)
    if not start <= stop:
        start, stop = values, values
    return np.where(first <= last, np.clip(rounded, first, last), np.clip(rounded, start, stop))


def shaped(values: pd.Series, kind: Kind, shape: TextShape) -> pd.Series:
    """Decoded booleans and datetimes in their written form: boolean words, formatted dates.

    Missing cells stay missing (NA); values keep their dtype except where a format or labels make
    them text. (Floats are rounded while decoding, where their bins are known: ``rounded_inside``.)
    """
    if kind == Kind.BOOLEAN and shape.labels is not None:
        words = np.where(values.fillna(False).to_numpy(dtype=bool), shape.labels[0], shape.labels[1]).astype(object)
        words[values.isna().to_numpy()] = None
        return pd.Series(pd.array(words, dtype="str"))
    if kind == Kind.DATETIME and shape.format is not None:
        return pd.Series(pd.array(values.dt.strftime(shape.format), dtype="str"))
    return values

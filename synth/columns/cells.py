"""Reading cells: whether a cell is missing, the number or date it holds, and the kind a column reads as.

A cell is read by its own type and value, never by its column's dtype: one added row can change a
column's dtype (a null turns a bool column into object), and how the other cells are read must not
change with it. Each cell has one text (``cell_text``): text stripped, a bool "True" or "False", a
whole number without ".0", a datetime in UTC as its ISO date when it is midnight, else with its
time of day. Cells are grouped and matched on that text (``distinct_texts``), never on Python
equality (``True == 1``). Columns of a number or datetime dtype are read without going through
text, by the same rules as their texts (a test holds the two routes equal).

A cell is missing when it is NA (None, NaN, NaT), empty or blank, or equal to one of the missing
markers (text is compared after stripping surrounding whitespace). Numbers and dates read as floats
(dates as whole seconds since 1970-01-01 UTC; naive datetimes are taken as UTC), NaN where a cell
is missing or unreadable.

A column may come as its distinct cells with ``weights`` (how many rows hold each one), as a
counting backend (``synth.tables``) gives it: every count here is then weighted, so it equals the
count over the rows themselves.

Nothing here fails because of a cell's value: a cell that cannot be read is NaN, or text. What is
computed here from a table is exact and private, for the callers allowed to hold it.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from synth.columns.kinds import Kind
from synth.columns.textshape import MAX_DECIMALS, TextShape
from synth.errors import SchemaError

FIRST_SECOND = -62135596800.0  # 0001-01-01T00:00:00 UTC
LAST_SECOND = 253402300799.0  # 9999-12-31T23:59:59 UTC
TRUE_WORDS = frozenset({"true", "1", "yes"})
FALSE_WORDS = frozenset({"false", "0", "no"})
DATE_SHARE = 0.95  # share of non-missing text cells that must read as dates for kind datetime
_EPOCH = datetime(1970, 1, 1)
_DATE_LIKE = re.compile(r"\d+\D+\d+")  # dates have at least two groups of digits
_LEADING_ZERO = re.compile(r"^[+-]?0\d")  # "007" is an identifier, not the number 7


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
            value = value.astimezone(UTC).replace(tzinfo=None)
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


def cell_text(value: Any) -> str:
    """The text a (non-missing) cell is read as, from its own type and value alone.

    Text is stripped; a bool is "True" or "False" (never 1 or 0); a whole number has no ".0"; other
    numbers their shortest form at their own precision; a date its ISO date; a datetime (naive
    taken as UTC, aware converted to UTC) its ISO date when its time is midnight, else its ISO
    date and time (so it has a time of day exactly when the text holds a ":").
    """
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        x = float(value)
        if x.is_integer():
            return str(int(x))
        return str(value) if isinstance(value, np.floating) and value.dtype.itemsize < 8 else repr(x)
    if isinstance(value, np.datetime64):
        value = pd.Timestamp(value)
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        midnight = value == datetime.combine(value.date(), datetime.min.time())
        return value.date().isoformat() if midnight else value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return str(value).strip()


def _text_or_none(value: Any) -> str | None:
    """``cell_text`` of a cell, None for an NA cell (None, NaN, NaT, pd.NA)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (float, np.floating)) and np.isnan(value):
        return None
    if isinstance(value, np.datetime64) and np.isnat(value):
        return None
    return cell_text(value)


# --- reading cells -----------------------------------------------------------------------------


def weighted_bincount(labels: np.ndarray, weights: np.ndarray | None, minlength: int = 0) -> np.ndarray:
    """``np.bincount`` of ``labels`` (int64), each label counted ``weights[i]`` times when weights are
    given (whole numbers: the sums are exact below 2**53)."""
    if weights is None:
        return np.bincount(labels, minlength=minlength)
    return np.bincount(labels, weights=weights, minlength=minlength).astype(np.int64)


def weighted_sum(mask: np.ndarray, weights: np.ndarray | None) -> int:
    """How many rows ``mask`` marks: its count of True, or the sum of their ``weights``."""
    return int(mask.sum()) if weights is None else int(weights[mask].sum())



# object columns whose cells pd.factorize may group by Python equality across texts (True == 1 == 1.0)
_FACTORIZED_AS_IS = frozenset({"string", "empty", "boolean", "integer", "floating", "mixed-integer-float",
                               "datetime", "datetime64", "date"})


def _factorize(series: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """Row labels (-1 for NA) and the distinct non-NA cells, grouped by their texts.

    A column of one type (or ints and floats, whose equal values have equal texts) is factorized
    as it is; cells of mixed types are first turned into their texts, so a True is never grouped
    with a 1, whatever came first.
    """
    if series.dtype == object and pd.api.types.infer_dtype(series, skipna=True) not in _FACTORIZED_AS_IS:
        series = series.map(_text_or_none)
    labels, uniques = pd.factorize(series, use_na_sentinel=True)
    return np.asarray(labels, dtype=np.int64), list(np.asarray(uniques, dtype=object))


def distinct_texts(series: pd.Series, markers: Iterable[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row labels into the distinct cell texts, those texts, and which of them mean MISSING.

    NA cells get the label of an extra, empty text at the end (so every label is an index).
    """
    labels, uniques = _factorize(series)
    labels[labels < 0] = len(uniques)
    texts = np.array([*(cell_text(v) for v in uniques), ""], dtype=object)
    missing_words = set(markers) | {""}
    is_missing = np.array([t in missing_words for t in texts], dtype=bool)
    return labels, texts, is_missing


def text_counts(series: pd.Series, missing_markers: Iterable[str] = ("",),
                weights: np.ndarray | None = None) -> pd.Series:
    """How often each non-missing cell text occurs (the text encoding matches categories on)."""
    labels, texts, is_missing = distinct_texts(series, missing_markers)
    counts = weighted_bincount(labels, weights, len(texts))
    keep = ~is_missing
    return pd.Series(counts[keep], index=pd.Index(texts[keep], dtype=object)).groupby(level=0).sum()


def count_missing(series: pd.Series, missing_markers: Iterable[str] = ("",)) -> int:
    """How many cells are missing (NA, blank, or a missing marker), as encoding reads them."""
    labels, _, is_missing = distinct_texts(series, missing_markers)
    return int(is_missing[labels].sum())


def _datetime_array_seconds(values: pd.Series) -> np.ndarray:
    """Whole seconds since the epoch (floored) of a datetime series; NaN for NaT."""
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        values = values.dt.tz_convert("UTC").dt.tz_localize(None)
    stamps = values.to_numpy()
    seconds = stamps.astype("datetime64[s]").astype(np.int64).astype(float)
    seconds[np.isnat(stamps)] = np.nan
    return seconds


_NUMERIC_DATE = re.compile(r"^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4}|\d{2})(?=$|[ T])(.*)$")


def _in_day_order(text: str, dayfirst: bool) -> str | None:
    """A numeric date such as 05/03/2023 rewritten in ISO order (2023-03-05 when ``dayfirst``),
    None when it has no valid month in that order; the text itself when it is not such a date."""
    match = _NUMERIC_DATE.match(text)
    if match is None:
        return text
    first, second, year, rest = match.groups()
    day, month = (int(first), int(second)) if dayfirst else (int(second), int(first))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    if len(year) == 2:  # the strptime rule: 69-99 are the 1900s, 00-68 the 2000s
        year = ("19" if int(year) >= 69 else "20") + year
    return f"{year}-{month:02d}-{day:02d}{rest}"


def _parse_dates(texts: np.ndarray, date_format: str | None = None, dayfirst: bool = False) -> np.ndarray:
    """Seconds since the epoch of date texts; NaN where a text is not a readable date.

    With a ``date_format`` every text is read with it. Otherwise ISO 8601 first, and numeric dates
    such as 05/03/2023 in one day order for the whole column (month first unless ``dayfirst``: a
    text that has no valid month in that order is unreadable, never read the other way round), and
    pandas' reading of any other form."""
    if len(texts) == 0:
        return np.empty(0)
    text = pd.Series(texts, dtype=object)
    if date_format is not None:
        read = pd.to_datetime(text, errors="coerce", format=date_format, utc=True)
        return _in_range(_datetime_array_seconds(read))
    seconds = _datetime_array_seconds(pd.to_datetime(text, errors="coerce", format="ISO8601", utc=True))
    retry = np.isnan(seconds)
    if retry.any():
        stripped = text[retry].map(lambda t: str(t).strip())
        ordered = stripped.map(lambda t: _in_day_order(t, dayfirst))
        numeric = ordered.ne(stripped)  # rewritten in ISO order or refused: a numeric date
        readable = ordered.notna()
        iso = pd.to_datetime(ordered[readable], errors="coerce", format="ISO8601", utc=True)
        again = pd.Series(np.nan, index=ordered.index)
        again[readable] = _datetime_array_seconds(iso)
        rest = readable & again.isna() & ~numeric
        if rest.any():
            mixed = pd.to_datetime(ordered[rest], errors="coerce", format="mixed", dayfirst=dayfirst, utc=True)
            again[rest] = _datetime_array_seconds(mixed)
        seconds[retry] = again.to_numpy(dtype=float)
    return _in_range(seconds)


def _in_range(seconds: np.ndarray) -> np.ndarray:
    seconds[(seconds < FIRST_SECOND) | (seconds > LAST_SECOND)] = np.nan
    return seconds


def _parse_numbers(texts: np.ndarray) -> np.ndarray:
    """Number texts as floats, NaN where a text is not a number. pandas decides which texts are numbers;
    each number is then read by Python's ``float``, which gives exactly the double its text names
    (pandas' fast parser can miss by one unit in the last place on 17-digit texts, so that a CSV's
    "0.10000000149011612" and the same double from a typed column would read differently)."""
    values = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=float, na_value=np.nan,
                                                                                      copy=True)
    numbers = np.flatnonzero(~np.isnan(values))
    values[numbers] = [_exact(str(texts[i]), values[i]) for i in numbers]
    return values


def _exact(text: str, fallback: float) -> float:
    try:
        return float(text)
    except ValueError:  # a form pandas reads and Python does not: keep pandas' value
        return fallback


def parse_values(series: pd.Series, kind: Kind, missing_markers: Iterable[str] = ("",),
                 shape: TextShape = TextShape()) -> tuple[np.ndarray, np.ndarray]:
    """Cells of a numeric or datetime column as floats (datetimes as whole seconds since the epoch).

    Returns ``(values, missing)``: ``values`` is NaN where a cell is missing or unreadable, and
    ``missing`` marks the cells that are missing (so NaN and not missing means invalid). Date
    texts are read with the ``shape``'s format, else in its day order (``_parse_dates``).
    """
    if kind in (Kind.INTEGER, Kind.FLOAT) and _plain_numbers(series):
        values = series.to_numpy(dtype=float, na_value=np.nan)
        return values, np.isnan(values)
    if kind == Kind.DATETIME and ptypes.is_datetime64_any_dtype(series.dtype):
        values = _datetime_array_seconds(series)
        return values, np.isnan(values)
    labels, texts, is_missing = distinct_texts(series, missing_markers)
    distinct = np.full(len(texts), np.nan)
    present = ~is_missing
    distinct[present] = (_parse_dates(texts[present], shape.format, shape.dayfirst) if kind == Kind.DATETIME
                         else _parse_numbers(texts[present]))
    return distinct[labels], is_missing[labels]


# --- the kind a column reads as ----------------------------------------------------------------


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
    candidates = texts[date_like]  # a date in either day order (which one is decided later, for the column)
    dated[date_like] = ~np.isnan(_parse_dates(candidates)) | ~np.isnan(_parse_dates(candidates, dayfirst=True))
    classes[boolean] = CELL_CLASSES.index(Kind.BOOLEAN)
    classes[numeric] = CELL_CLASSES.index(Kind.FLOAT)
    classes[integral] = CELL_CLASSES.index(Kind.INTEGER)
    classes[dated] = CELL_CLASSES.index(Kind.DATETIME)
    return classes


def _plain_numbers(series: pd.Series) -> bool:
    """Whether a column's dtype holds real numbers only (not bools, which are read as words)."""
    dtype = series.dtype
    return ptypes.is_numeric_dtype(dtype) and not ptypes.is_bool_dtype(dtype) and not ptypes.is_complex_dtype(dtype)


def _has_time_of_day(series: pd.Series) -> np.ndarray:
    """Per cell of a datetime-dtype column, whether its time (in UTC) is not midnight: what its
    ``cell_text`` says with a ":"."""
    if isinstance(series.dtype, pd.DatetimeTZDtype):
        series = series.dt.tz_convert("UTC").dt.tz_localize(None)
    return (series != series.dt.normalize()).to_numpy(dtype=bool)


def _classify_typed(series: pd.Series) -> np.ndarray | None:
    """``classify_cells`` for a bool, number or datetime dtype, without going through text (the
    classes are the ones the cells' texts get); None for other dtypes."""
    dtype = series.dtype
    if ptypes.is_bool_dtype(dtype):
        classes = np.full(len(series), CELL_CLASSES.index(Kind.BOOLEAN), dtype=np.int64)
        classes[series.isna().to_numpy()] = -1
        return classes
    if ptypes.is_datetime64_any_dtype(dtype):
        classes = np.full(len(series), CELL_CLASSES.index(Kind.DATETIME), dtype=np.int64)
        classes[series.isna().to_numpy()] = -1
        return classes
    if _plain_numbers(series):
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
    labels, texts, is_missing = distinct_texts(series, missing_markers)
    classes = _classify_texts(texts)
    classes[is_missing] = -1
    return classes[labels]


# --- the shape a column's values are written in ------------------------------------------------


BOOLEAN_SPELLINGS = (("true", "false"), ("True", "False"), ("TRUE", "FALSE"), ("yes", "no"), ("Yes", "No"),
                     ("YES", "NO"))
DEFAULT_BOOLEAN_SPELLING = ("True", "False")  # how a bool cell reads, and how an unlabelled boolean is written
VOTED_DECIMALS = MAX_DECIMALS  # 0..12 decimals get a shape cell each; more share the last one
DATE_ORDERS = ("day first", "month first", "either")  # what a numeric date such as 05/03/2023 allows
SHAPE_CELLS = {Kind.BOOLEAN: len(BOOLEAN_SPELLINGS), Kind.FLOAT: VOTED_DECIMALS + 2, Kind.DATETIME: 2 * len(DATE_ORDERS)}


def _decimals(text: str) -> int:
    """Digits after the decimal point as written (1.50: 2), or of the plain form of 1e-3 (3)."""
    mantissa = text.lstrip("+-")
    if "e" in mantissa.lower():
        try:
            mantissa = np.format_float_positional(float(text), trim="-")
        except ValueError:
            return 0
    return min(len(mantissa.partition(".")[2]), VOTED_DECIMALS + 1)


def _date_shape(text: str) -> int:
    """Shape cell of a date text: with or without a time of day (×3), then its ``DATE_ORDERS`` index."""
    timed = ":" in text
    match = _NUMERIC_DATE.match(text)
    order = 2
    if match is not None:
        first, second = int(match.group(1)), int(match.group(2))
        order = 0 if first > 12 >= second else 1 if second > 12 >= first else 2
    return 3 * timed + order


def classify_shapes(series: pd.Series, kind: Kind, missing_markers: Iterable[str] = ("",)) -> np.ndarray:
    """Per cell of a boolean, float or datetime column, the index of its written shape among the
    kind's ``SHAPE_CELLS`` (a spelling in ``BOOLEAN_SPELLINGS``; decimals 0..``VOTED_DECIMALS``, or more; a date
    with or without time, by ``DATE_ORDERS``), -1 for a missing cell or one of another kind.
    Every cell's shape is that of its ``cell_text`` (a bool is spelled True/False; a datetime has a
    time of day when it is not midnight), whatever its column's dtype. Exact and private: only the
    describer may release it, and only with noise."""
    wanted = [CELL_CLASSES.index(kind)] + ([CELL_CLASSES.index(Kind.INTEGER)] if kind == Kind.FLOAT else [])
    if ptypes.is_datetime64_any_dtype(series.dtype):  # the shapes of the cells' texts, without the texts
        typed = _classify_typed(series)
        assert typed is not None  # a datetime column is typed
        return np.where(np.isin(typed, wanted), 3 * _has_time_of_day(series) + 2, -1).astype(np.int64)
    labels, texts, is_missing = distinct_texts(series, missing_markers)
    if _plain_numbers(series):  # numbers: their shortest plain form; typed rows say which are numbers
        typed = _classify_typed(series)
        assert typed is not None  # a number column is typed
        texts = np.array([np.format_float_positional(float(t), trim="-") if t else t for t in texts], dtype=object)
        return np.where(np.isin(typed, wanted), _shapes_of(texts, kind)[labels], -1)
    classes = _classify_texts(texts)
    classes[is_missing] = -1
    shapes = np.full(len(texts), -1, dtype=np.int64)
    mine = np.isin(classes, wanted)
    shapes[mine] = _shapes_of(texts[mine], kind)
    return shapes[labels]


def _shapes_of(texts: np.ndarray, kind: Kind) -> np.ndarray:
    """The shape cell of each text of a column of ``kind`` (-1: a boolean word spelled otherwise)."""
    if kind == Kind.BOOLEAN:
        spelling = {word: i for i, pair in enumerate(BOOLEAN_SPELLINGS) for word in pair}
        return np.array([spelling.get(t, -1) for t in texts], dtype=np.int64)
    shape = _decimals if kind == Kind.FLOAT else _date_shape
    return np.array([shape(t) for t in texts], dtype=np.int64)


def shape_from_counts(kind: Kind, counts: np.ndarray, std: float, margin: float, lead: float) -> TextShape:
    """The written shape a column's ``SHAPE_CELLS`` counts show: a count counts when it exceeds
    ``margin`` deviations of its noise (``std``; 0 for exact counts, which then only need to be
    positive), and day first must lead month first by ``lead`` deviations of the difference.
    Booleans: the most frequent spelling (none for True/False, the default); floats: the most decimals seen (more than
    ``VOTED_DECIMALS``, the most a float is written with: that many); datetimes: date only unless times are seen, day first
    when dates readable only day first outnumber those readable only month first."""
    clear = counts > margin * std
    if kind == Kind.BOOLEAN:  # the default spelling (True/False: how a bool cell reads) is left unset
        best = int(np.argmax(counts))
        spelled = clear[best] and BOOLEAN_SPELLINGS[best] != DEFAULT_BOOLEAN_SPELLING
        return TextShape(labels=BOOLEAN_SPELLINGS[best]) if spelled else TextShape()
    if kind == Kind.FLOAT:
        written = np.nonzero(clear)[0]
        if not written.size:
            return TextShape()
        return TextShape(decimals=min(int(written.max()), VOTED_DECIMALS))
    timed = counts[3:].sum() > margin * std * np.sqrt(3)
    day_first, month_first = counts[[0, 3]].sum(), counts[[1, 4]].sum()
    dayfirst = bool(day_first > margin * std * np.sqrt(2) and day_first - month_first > lead * std * 2)
    return TextShape(dayfirst=dayfirst, date_only=not timed)


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

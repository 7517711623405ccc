"""The discretisation an evaluation scores on by default, drafted from the original table.

A release's own schema can hide what it lost: when its category list missed a column's values,
the original's cells fall in OTHER on its codes just as the synthetic ones do, and the two agree.
So the evaluation scores on codes drafted from the original instead, as SDMetrics scores against
the real data (the release's schema is scored beside it, labelled as such):

* a numeric or datetime column: up to ``QUANTILE_BINS`` bins cut at the original's quantiles (the
  5 %, 10 %, ..., 95 % points; cuts that coincide merge), between its smallest and largest value;
  a value outside that range falls in the end bin on its side;
* a categorical column: its ``TOP_VALUES`` most frequent values, then one OTHER code for the rest,
  which is also where a synthetic cell written as the release's OTHER label goes;
* a boolean column: False and True;
* in every column, missing is a code of its own.

Kinds are the release's when its schema is given (the kinds the synthetic table was written in),
else read from the original as ``synth.domains.drafting.draft_profile`` reads them; the draft also sets
apart columns of (nearly) one value per row, identifiers and free text, which are not scored.
Everything here reads the original data: nothing it returns is differentially private.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synth.columns.cells import FIRST_SECOND, LAST_SECOND, parse_values, text_counts
from synth.columns.column import DEFAULT_OTHER_LABEL, MAX_EXACT_INTEGER, Column
from synth.columns.kinds import DomainSource, Kind
from synth.columns.schema import Schema
from synth.domains.drafting import EMPTY_CATEGORY, draft_profile

QUANTILE_BINS = 20
TOP_VALUES = 50
DRAFTED = (f"drafted from the original: numbers and dates in up to {QUANTILE_BINS} bins cut at its quantiles, "
           f"text in its {TOP_VALUES} most frequent values and one code for all others (the release's OTHER "
           "included), booleans as False/True, and missing as a code of its own")
RELEASE = ("the release's own schema (its Description's categories and bins): a value the release cannot "
           "represent is OTHER in both tables there, so a loss does not show")


@dataclass(frozen=True)
class Discretisation:
    """The drafted schema, and the columns it set apart (name → "id" or "text"), which are not scored."""

    schema: Schema
    set_apart: dict[str, str]


def _numeric_column(name: str, series: pd.Series, kind: Kind, markers: Sequence[str]) -> Column:
    """Bins at the quantiles of the column's readable values (one bin when there are none)."""
    values, _ = parse_values(series, kind, markers)
    values = values[np.isfinite(values)]
    if kind == Kind.INTEGER:
        values = np.floor(values + 0.5)
        values = values[np.abs(values) <= MAX_EXACT_INTEGER // 2]  # room for the bounds to be widened
    elif kind == Kind.DATETIME:
        values = values[(values >= FIRST_SECOND) & (values <= LAST_SECOND - 1.0)]
    lower, upper = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
    if upper <= lower:
        upper = lower + (1.0 if kind != Kind.FLOAT else max(1.0, abs(lower)))
    cuts = np.quantile(values, np.linspace(0.0, 1.0, QUANTILE_BINS + 1)[1:-1]) if values.size else np.empty(0)
    if kind != Kind.FLOAT:  # whole numbers and seconds: v >= q exactly when v >= ceil(q)
        cuts = np.ceil(cuts)
    cuts = np.unique(cuts)
    cuts = cuts[(cuts > lower) & ((cuts <= upper) if kind == Kind.INTEGER else (cuts < upper))]
    bins = None if cuts.size else 1
    return Column(name, kind, lower=lower, upper=upper, bins=bins, cuts=tuple(cuts.tolist()) or None,
                  source=DomainSource.DATA_DERIVED)


def _categorical_column(name: str, series: pd.Series, markers: Sequence[str], other_label: str) -> Column:
    """The TOP_VALUES most frequent texts (ties in text order), most frequent first, then OTHER."""
    counts = text_counts(series, markers).drop(other_label, errors="ignore")
    top = counts.sort_values(ascending=False, kind="stable").index[:TOP_VALUES]
    return Column(name, Kind.CATEGORICAL, categories=tuple(str(v) for v in top) or (EMPTY_CATEGORY,),
                  source=DomainSource.DATA_DERIVED)


def draft_column(name: str, series: pd.Series, kind: Kind, markers: Sequence[str] = ("",),
                 other_label: str = DEFAULT_OTHER_LABEL) -> Column:
    """One column of the drafted discretisation, from the original's cells ``series``."""
    if kind == Kind.CATEGORICAL:
        return _categorical_column(name, series, markers, other_label)
    if kind == Kind.BOOLEAN:
        return Column(name, kind, source=DomainSource.DATA_DERIVED)
    return _numeric_column(name, series, kind, markers)


def draft_discretisation(original: pd.DataFrame, missing_markers: Sequence[str] = ("",),
                         kinds: Mapping[str, Kind] | None = None,
                         other_label: str = DEFAULT_OTHER_LABEL) -> Discretisation:
    """The discretisation of ``original``'s columns (of those named in ``kinds``, with these kinds,
    when it is given; else of every column, kinds and id/text columns read from the data, and the
    missing markers widened as a drafted profile widens them)."""
    markers, set_apart = tuple(missing_markers), {}
    if kinds is None:
        draft = draft_profile(original, markers).schema
        assert draft is not None  # a drafted profile always has its schema
        markers = draft.missing_markers
        kinds = {c.name: c.kind for c in draft.columns}
        set_apart = {c.name: c.kind.value for c in draft.unmodelled}
    columns = tuple(draft_column(name, original[name], kind, markers, other_label) for name, kind in kinds.items())
    return Discretisation(Schema(columns, markers, other_label), set_apart)

"""Pairwise association between columns, in the original and in the synthetic table.

Each pair gets the measure that fits its kinds: Pearson's correlation for two numeric columns
(Spearman's rank correlation is computed next to it), Cramér's V for two categorical ones (missing
is a category), and the correlation ratio η for a numeric and a categorical column. Numeric pairs
use the rows where both values are present; for Spearman each column is ranked once over its
present values (so it equals the textbook coefficient when neither column has missing values).
Cramér's V is left undefined (NaN) for a pair of categorical columns with more than
``fidelity.DENSE_CELLS`` cells together. Cramér's V counts every row (``Table.counted``); the
others read the rows ``Table`` holds (a sample of a large table counted on a backend). Values lie in [−1, 1] (Pearson, Spearman) or [0, 1]
(Cramér's V, η). Computed on the original data: NOT differentially private.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import rankdata

from synth.evaluate.fidelity import DENSE_CELLS, marginal_counts
from synth.evaluate.tables import Table, Tables

PEARSON, SPEARMAN, CRAMERS_V, ETA = "pearson", "spearman", "cramers_v", "correlation_ratio"


def cramers_v(joint: np.ndarray) -> float:
    """Cramér's V of a 2-way table (counts or shares): sqrt(φ² / (min(r, c) − 1)) over the codes of
    positive probability; NaN when either column has only one such code."""
    p = joint / joint.sum()
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    p, rows, cols = p[rows > 0][:, cols > 0], rows[rows > 0], cols[cols > 0]
    k = min(rows.size, cols.size) - 1
    if k < 1:
        return math.nan
    expected = np.outer(rows, cols)
    phi2 = float(((p - expected) ** 2 / expected).sum())
    return math.sqrt(min(phi2 / k, 1.0))


def correlation_ratio(codes: np.ndarray, values: np.ndarray, size: int) -> float:
    """η: the share of the variance of ``values`` explained by the categories ``codes``, square-rooted
    (rows with a missing value are left out); NaN when the values do not vary."""
    present = np.isfinite(values)
    codes, values = codes[present], values[present]
    if values.size < 2:
        return math.nan
    centred = values - values.mean()
    total = float((centred ** 2).sum())
    if total <= 0:
        return math.nan
    counts = np.bincount(codes, minlength=size)
    sums = np.bincount(codes, weights=centred, minlength=size)
    between = float((sums[counts > 0] ** 2 / counts[counts > 0]).sum())
    return math.sqrt(min(between / total, 1.0))


def _correlation(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(np.corrcoef(x, y)[0, 1])


@dataclass(frozen=True)
class Associations:
    """Association matrices of one table (NaN on the diagonal and where undefined)."""

    main: np.ndarray  # Pearson, Cramér's V or η, by the pair's kinds
    spearman: np.ndarray  # numeric pairs only


def associations(table: Table, tables: Tables) -> Associations:
    """Every pair's association in ``table`` (the original or the synthetic of ``tables``)."""
    schema, counted = tables.schema, table.counted
    d = len(schema.columns)
    main, spearman = np.full((d, d), math.nan), np.full((d, d), math.nan)
    ranks = {j: rankdata(v, nan_policy="omit") for j, v in table.values.items()}  # NaN stays NaN
    finite = {j: np.isfinite(v) for j, v in table.values.items()}
    present = {j: None if f.all() else np.flatnonzero(f) for j, f in finite.items()}  # rows with a value
    values = {j: v if present[j] is None else v[present[j]] for j, v in table.values.items()}
    for i, j in itertools.combinations(range(d), 2):
        numeric_i, numeric_j = i in table.values, j in table.values
        if numeric_i and numeric_j:
            both = finite[i] & finite[j]
            main[i, j] = main[j, i] = _correlation(table.values[i][both], table.values[j][both])
            spearman[i, j] = spearman[j, i] = _correlation(ranks[i][both], ranks[j][both])
        elif numeric_i or numeric_j:
            numeric, category = (i, j) if numeric_i else (j, i)
            rows = present[numeric]
            codes = table.codes[:, category] if rows is None else table.codes[rows, category]
            main[i, j] = main[j, i] = correlation_ratio(codes, values[numeric], schema.columns[category].size)
        elif schema.sizes[i] * schema.sizes[j] <= DENSE_CELLS:  # wider pairs are left undefined (NaN)
            joint = marginal_counts(counted.codes, schema.sizes, (i, j), counted.weights).reshape(
                schema.sizes[i], schema.sizes[j])
            main[i, j] = main[j, i] = cramers_v(joint.astype(float))
    return Associations(main, spearman)


def measures(tables: Tables) -> list[list[str | None]]:
    """The name of the measure used for each pair (None on the diagonal)."""
    numeric = set(tables.original.values)
    d = len(tables.schema.columns)
    names: list[list[str | None]] = [[None] * d for _ in range(d)]
    for i, j in itertools.combinations(range(d), 2):
        kinds = (i in numeric) + (j in numeric)
        names[i][j] = names[j][i] = PEARSON if kinds == 2 else ETA if kinds == 1 else CRAMERS_V
    return names


@dataclass(frozen=True)
class AssociationComparison:
    """The association matrices of both tables and their difference (synthetic − original)."""

    names: tuple[str, ...]
    measures: list[list[str | None]]
    original: Associations
    synthetic: Associations

    @property
    def difference(self) -> np.ndarray:
        return self.synthetic.main - self.original.main

    @property
    def mean_abs_difference(self) -> float:
        upper = np.triu_indices(len(self.names), 1)
        gaps = np.abs(self.difference[upper])
        return float(np.nanmean(gaps)) if np.isfinite(gaps).any() else math.nan

    def to_dict(self) -> dict[str, Any]:
        def matrix(m: np.ndarray) -> list[list[float | None]]:
            return [[None if not np.isfinite(v) else float(v) for v in row] for row in m]

        return {"columns": list(self.names), "measure": self.measures,
                "original": matrix(self.original.main), "synthetic": matrix(self.synthetic.main),
                "difference": matrix(self.difference), "mean_abs_difference": _none_if_nan(self.mean_abs_difference),
                "spearman": {"original": matrix(self.original.spearman), "synthetic": matrix(self.synthetic.spearman),
                             "difference": matrix(self.synthetic.spearman - self.original.spearman)}}


def _none_if_nan(value: float) -> float | None:
    return None if not math.isfinite(value) else value


def compare_associations(tables: Tables) -> AssociationComparison:
    """Association matrices of the original and the synthetic table."""
    return AssociationComparison(tables.schema.names, measures(tables), associations(tables.original, tables),
                                 associations(tables.synthetic, tables))

"""Rows of an evaluation table as numeric feature vectors, for models, PCA and distances.

A numeric or datetime column becomes its value, centred and scaled, with 0 where it is missing and a
0/1 missing indicator next to it; a categorical or boolean column becomes one-hot indicators of its
codes (missing and other are codes too), each weighted by ``one_hot_weight``. The scaling is fitted
once on reference rows ("spread": their mean and standard deviation; "bounds": the schema's public
lower and upper bounds, mapping the domain to [0, 1]) and applied to any rows of either table.
``native`` keeps values and codes as they are, for models that handle missing values and categories
themselves. Nothing here is differentially private: it reads the tables it is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from synth.columns.schema import Schema
from synth.evaluate.tables import Table


@dataclass(frozen=True)
class Features:
    """A fitted map from rows to feature vectors over the columns at ``positions``."""

    schema: Schema
    positions: tuple[int, ...]
    centre: dict[int, float]
    scale: dict[int, float]
    one_hot_weight: float

    def matrix(self, table: Table, rows: np.ndarray) -> np.ndarray:
        """The feature vectors of ``table``'s ``rows`` (float64, one row each)."""
        parts = []
        for j in self.positions:
            if j in self.centre:
                values = table.values[j][rows]
                present = np.isfinite(values)
                parts.append(np.column_stack([np.where(present, (values - self.centre[j]) / self.scale[j], 0.0),
                                              (~present).astype(float)]))
            else:
                one_hot = np.zeros((rows.size, self.schema.columns[j].size))
                one_hot[np.arange(rows.size), table.codes[rows, j]] = self.one_hot_weight
                parts.append(one_hot)
        return np.hstack(parts) if parts else np.zeros((rows.size, 0))


def fit_features(schema: Schema, table: Table, rows: np.ndarray, positions: Sequence[int],
                 scaling: Literal["spread", "bounds"], one_hot_weight: float = 1.0) -> Features:
    """Features over ``positions``, numeric scaling fitted on ``table``'s ``rows`` or the schema bounds."""
    centre, scale = {}, {}
    for j in positions:
        if j not in table.values:
            continue
        if scaling == "bounds":
            column = schema.columns[j]
            assert column.lower is not None and column.upper is not None
            centre[j], scale[j] = column.lower, column.upper - column.lower
        else:
            values = table.values[j][rows]
            values = values[np.isfinite(values)]
            centre[j] = float(values.mean()) if values.size else 0.0
            spread = float(values.std()) if values.size else 0.0
            scale[j] = spread if spread > 0 else 1.0
    return Features(schema, tuple(positions), centre, scale, one_hot_weight)


def native(table: Table, rows: np.ndarray, positions: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Values (NaN when missing) of numeric columns and codes of the others, and which are categorical."""
    columns = [table.values[j][rows] if j in table.values else table.codes[rows, j].astype(float) for j in positions]
    return np.column_stack(columns), np.array([j not in table.values for j in positions])

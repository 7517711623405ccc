"""Utility evaluation: how close a synthetic table is to the original.

``evaluate`` puts both tables on one discretisation (the Description's schema when given, else a
schema drafted from the original) and computes per-column total-variation distance, the
Kolmogorov–Smirnov statistic of numeric columns, and the mean and maximum TVD over all 2-way
marginals. It reads the original data: the result is NOT differentially private and is meant
for the data owner. New metric families add a field to ``Evaluation`` and a key to ``to_dict``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from synth.errors import DataError
from synth.evaluate.fidelity import ks_statistic, kway_tvds, marginal_tvd
from synth.profile import draft_profile
from synth.schema import Kind, Schema, parse_values

SCHEMA_VERSION = 1
NOT_DP_NOTICE = ("This evaluation reads the original data; its numbers are not differentially "
                 "private. Keep them with the data owner.")


@dataclass(frozen=True)
class ColumnFidelity:
    name: str
    kind: str
    tvd: float
    ks: float | None


@dataclass(frozen=True)
class Evaluation:
    """Fidelity of a synthetic table to the original."""

    columns: tuple[ColumnFidelity, ...]
    two_way_mean_tvd: float
    two_way_max_tvd: float
    two_way_pairs: int
    original_rows: int
    synthetic_rows: int

    @property
    def mean_column_tvd(self) -> float:
        return float(np.mean([c.tvd for c in self.columns]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "notice": NOT_DP_NOTICE,
            "rows": {"original": self.original_rows, "synthetic": self.synthetic_rows},
            "columns": {c.name: {"kind": c.kind, "tvd": c.tvd, "ks": c.ks} for c in self.columns},
            "summary": {
                "mean_column_tvd": self.mean_column_tvd,
                "two_way": {"mean_tvd": self.two_way_mean_tvd, "max_tvd": self.two_way_max_tvd,
                            "marginals": self.two_way_pairs},
            },
        }

    def lines(self) -> list[str]:
        """A short text report for the console."""
        out = [f"{'column':<24} {'kind':<12} {'TVD':>7} {'KS':>7}"]
        for c in self.columns:
            ks = "" if c.ks is None else f"{c.ks:.3f}"
            out.append(f"{c.name[:24]:<24} {c.kind:<12} {c.tvd:>7.3f} {ks:>7}")
        out.append(f"mean 1-way TVD {self.mean_column_tvd:.3f}; mean 2-way TVD "
                   f"{self.two_way_mean_tvd:.3f} (max {self.two_way_max_tvd:.3f}, "
                   f"{self.two_way_pairs} marginals)")
        out.append(NOT_DP_NOTICE)
        return out


def evaluate(original: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema | None = None,
             missing_markers: tuple[str, ...] = ("",)) -> Evaluation:
    """Per-column and 2-way fidelity of ``synthetic`` to ``original``."""
    if schema is None:
        schema = draft_profile(original, missing_markers=missing_markers).schema
    absent = {
        "original": [n for n in schema.names if n not in original.columns],
        "synthetic": [n for n in schema.names if n not in synthetic.columns],
    }
    if absent["original"] or absent["synthetic"]:
        raise DataError(
            f"the tables do not have the same columns (missing from the original: "
            f"{absent['original']}; from the synthetic: {absent['synthetic']}). Compare tables "
            "made from one another."
        )
    if len(original) == 0 or len(synthetic) == 0:
        raise DataError("one of the tables has no rows; there is nothing to compare.")
    codes_o, _ = schema.encode(original)
    codes_s, _ = schema.encode(synthetic)
    columns = []
    for j, col in enumerate(schema.columns):
        ks = None
        if col.kind in (Kind.INTEGER, Kind.FLOAT, Kind.DATETIME):
            a, b = (parse_values(df[col.name], col.kind, schema.missing_markers)[0] for df in (original, synthetic))
            a, b = a[np.isfinite(a)], b[np.isfinite(b)]
            ks = ks_statistic(a, b) if a.size and b.size else math.nan
        columns.append(ColumnFidelity(col.name, col.kind.value,
                                      marginal_tvd(codes_o, codes_s, schema.sizes, [j]), ks))
    two_way = kway_tvds(codes_o, codes_s, schema.sizes, 2) if len(schema.columns) > 1 else np.zeros(0)
    return Evaluation(
        columns=tuple(columns),
        two_way_mean_tvd=float(two_way.mean()) if two_way.size else 0.0,
        two_way_max_tvd=float(two_way.max()) if two_way.size else 0.0,
        two_way_pairs=int(two_way.size),
        original_rows=len(original),
        synthetic_rows=len(synthetic),
    )

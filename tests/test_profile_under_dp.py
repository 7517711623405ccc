"""A profile drafted under DP (`synth profile --epsilon`), reviewed, then used by `synth run`: one
release of two steps, within one budget (issue 30, item 8), and the data-derived draft's bins."""

from __future__ import annotations

import numpy as np
import pandas as pd

from synth.column import Column
from synth.drafting import DRAFT_BINS, draft_profile


def _bin_of(column: Column, value: float) -> tuple[float, float]:
    edges = column.edges
    k = min(int(np.searchsorted(edges, value, side="right")) - 1, column.bins - 1)
    return edges[k], edges[k + 1]


def test_drafted_integers_of_few_values_get_one_bin_per_value():
    rng = np.random.default_rng(0)
    values = [0, 10, 20, 30, 40, 50]
    df = pd.DataFrame({"steps": rng.choice(values, 500), "rating": rng.integers(1, 6, 500),
                       "many": rng.integers(0, 1000, 500)})
    schema = draft_profile(df).schema
    steps = schema.column("steps")
    for v in values:  # the bin holding v holds no other integer: no value is drawn that never occurs
        low, high = _bin_of(steps, v)
        assert low == v and (high == v + 1 or high == v == steps.upper), (v, low, high)
    assert schema.column("rating").bins == 5
    assert schema.column("many").bins <= DRAFT_BINS + 1


def test_a_drafted_skewed_column_is_cut_at_its_quantiles():
    rng = np.random.default_rng(1)
    income = np.round(rng.lognormal(10, 1.5, 20_000), 2)
    column = draft_profile(pd.DataFrame({"income": income})).schema.column("income")
    assert column.cuts is not None and column.bins >= DRAFT_BINS - 2
    shares = np.histogram(income, bins=np.asarray(column.edges))[0] / income.size
    assert shares.max() < 2 / DRAFT_BINS  # equal-width bins held over 90 % in the first bin
    expected = np.quantile(income, np.arange(1, DRAFT_BINS) / DRAFT_BINS, method="inverted_cdf")
    assert np.allclose(sorted(column.cuts), expected)
    zeros = np.concatenate([np.zeros(5000), income[:15_000]])
    with_zero = draft_profile(pd.DataFrame({"x": zeros})).schema.column("x")
    assert _bin_of(with_zero, 0.0)[1] == np.min(zeros[zeros > 0])  # a heavy zero: a bin of its own

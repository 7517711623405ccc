"""Evaluation metrics against independent computations on small tables."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ks_2samp

from synth.evaluate import evaluate
from synth.evaluate.fidelity import ks_statistic, kway_tvds, marginal_tvd
from synth.errors import DataError


def test_ks_statistic_matches_scipy():
    rng = np.random.default_rng(0)
    for a, b in [(rng.normal(size=300), rng.normal(0.3, 1, size=500)),
                 (rng.integers(0, 5, 200).astype(float), rng.integers(0, 6, 100).astype(float))]:
        assert ks_statistic(a, b) == pytest.approx(ks_2samp(a, b).statistic, abs=1e-12)


def test_marginal_tvd_by_hand():
    original = np.array([[0, 0], [0, 1], [1, 1], [1, 1]])
    synthetic = np.array([[0, 0], [0, 0], [0, 0], [1, 1]])
    sizes = (2, 2)
    # 1-way on column 0: (0.5, 0.5) vs (0.75, 0.25) -> 0.25
    assert marginal_tvd(original, synthetic, sizes, [0]) == pytest.approx(0.25)
    # 2-way: cells (00, 01, 10, 11) = (.25, .25, 0, .5) vs (.75, 0, 0, .25) -> 0.5 * (.5 + .25 + .25) = 0.5
    assert marginal_tvd(original, synthetic, sizes, [0, 1]) == pytest.approx(0.5)
    assert kway_tvds(original, synthetic, sizes, 2).tolist() == pytest.approx([0.5])


def test_evaluate_reports_every_column_and_pair():
    rng = np.random.default_rng(1)
    original = pd.DataFrame({"a": rng.choice(list("xyz"), 500), "b": rng.integers(0, 50, 500).astype(str),
                             "c": rng.choice(["yes", "no"], 500)})
    same = evaluate(original, original.copy())
    assert same.mean_column_tvd == 0 and same.two_way_mean_tvd == 0 and same.two_way_pairs == 3
    shuffled = pd.DataFrame({name: rng.permutation(original[name].to_numpy()) for name in original})
    result = evaluate(original, shuffled)
    assert result.mean_column_tvd == pytest.approx(0, abs=1e-12)  # same 1-way marginals
    assert result.two_way_mean_tvd > 0
    pairs = list(itertools.combinations(range(3), 2))
    assert result.to_dict()["summary"]["two_way"]["marginals"] == len(pairs)


def test_evaluate_refuses_mismatched_tables():
    with pytest.raises(DataError, match="same columns"):
        evaluate(pd.DataFrame({"a": ["x"]}), pd.DataFrame({"b": ["x"]}))

"""The accuracy suite's helpers (benchmarks/suite_tables.py, benchmarks/pgm_common.py): public bins
code values as their docstrings say, a value a recipe rules out is refused, and the sampled 3-way
column sets are fixed by the table's width alone."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from pgm_common import describe_column_sets, scored_column_sets
from public_bins import binned, code_frame, integers, levels, log_grid


def test_binned_has_end_bins_and_a_missing_code():
    values = pd.Series([-1.0, 0.0, 0.99, 1.0, 2.5, 7.0, np.nan], name="x")
    codes, size = binned(values, [0, 1, 2, 3], missing=True)
    # below 0 | [0,1) | [1,2) | [2,3) | 3 and above | missing
    assert size == 6
    assert codes.tolist() == [0, 1, 1, 2, 3, 4, 5]


def test_binned_without_a_low_end_refuses_a_value_below():
    codes, size = binned(pd.Series([0, 4, 12], name="n"), [0, 5, 10], below=False)
    assert (codes.tolist(), size) == ([0, 0, 2], 3)
    with pytest.raises(ValueError, match="cannot occur"):
        binned(pd.Series([-1, 4], name="n"), [0, 5, 10], below=False)
    with pytest.raises(ValueError, match="missing"):
        binned(pd.Series([1.0, np.nan], name="n"), [0, 5, 10])


def test_integers_one_code_each_then_the_top_end_bin():
    codes, size = integers(pd.Series([0, 3, 5, 9], name="k"), 0, 5)
    assert (codes.tolist(), size) == ([0, 3, 5, 6], 7)


def test_levels_in_documented_order_and_other():
    codes, size = levels(pd.Series(["yes", "no", None], name="f"), ["no", "yes"], other=True)
    assert (codes.tolist(), size) == ([1, 0, 2], 3)
    with pytest.raises(ValueError, match="documented levels"):
        levels(pd.Series(["maybe"], name="f"), ["no", "yes"])


def test_log_grid_and_code_frame():
    assert np.allclose(log_grid(100, 100_000, 1), [100, 1000, 10_000, 100_000])
    frame = pd.DataFrame({"a": ["no", "yes"], "b": [1, 2]})
    codes, domain = code_frame({"a": lambda f: levels(f["a"], ["no", "yes"]),
                                "b": lambda f: integers(f["b"], 1, 2)}, frame)
    assert domain == {"a": 2, "b": 3}
    assert codes.tolist() == [[0, 0], [1, 1]]


def test_scored_column_sets_all_or_a_fixed_sample():
    assert len(scored_column_sets(14, 3)) == 364
    assert describe_column_sets(14, 3, scored_column_sets(14, 3)) == "all 364 3-way marginals"
    sample = scored_column_sets(86, 3)
    assert len(sample) == 2000 == len(set(sample))
    assert sample == scored_column_sets(86, 3)  # the same on every call
    assert all(len(s) == 3 and s[0] < s[1] < s[2] < 86 for s in sample)
    assert f"{math.comb(86, 3):,}" in describe_column_sets(86, 3, sample)

"""Domain compression: maps from noisy counts, honest re-expression, uniform expansion."""

from __future__ import annotations

import numpy as np
import pytest

from synth.model.compression import compress_one_way, compressed_sizes, expand_codes, expand_marginal
from synth.privacy.measurement import Measurement


def _m(name, values, sigma=2.0):
    return Measurement((name,), np.asarray(values, dtype=float), "discrete_gaussian", sigma)


def test_rare_codes_merge_and_the_merged_cell_keeps_the_noise_level():
    maps, out = compress_one_way([_m("a", [100, 3, 50, -1, 2]), _m("b", [40, 30])])
    assert set(maps) == {"a"}  # b is fully supported (threshold 3 sigma = 6)
    np.testing.assert_array_equal(maps["a"], [0, 2, 1, 2, 2])
    a = out[0]
    np.testing.assert_allclose(a.values, [100, 50, (3 - 1 + 2) / np.sqrt(3)])
    np.testing.assert_allclose(a.weights, [1, 1, 1 / np.sqrt(3)])
    assert out[1].weights is None
    assert compressed_sizes(["a", "b"], [5, 2], maps) == (3, 2)


def test_expansion_spreads_merged_codes_uniformly():
    mapping = np.array([0, 2, 1, 2, 2])
    codes = np.column_stack([np.full(30_000, 2), np.zeros(30_000, dtype=int)])
    expanded = expand_codes(codes, ["a", "b"], {"a": mapping}, np.random.default_rng(0))
    freq = np.bincount(expanded[:, 0], minlength=5) / len(codes)
    np.testing.assert_allclose(freq, [0, 1 / 3, 0, 1 / 3, 1 / 3], atol=0.01)
    kept = expand_codes(np.array([[0, 1], [1, 0]]), ["a", "b"], {"a": mapping}, np.random.default_rng(0))
    np.testing.assert_array_equal(kept, [[0, 1], [2, 0]])


def test_expanded_marginal_keeps_mass():
    mapping = np.array([0, 2, 1, 2, 2])
    marginal = np.array([[6.0, 0.0], [3.0, 1.0], [9.0, 3.0]])
    out = expand_marginal(marginal, ["a", "b"], {"a": mapping})
    assert out.shape == (5, 2) and out.sum() == pytest.approx(marginal.sum())
    np.testing.assert_allclose(out[[1, 3, 4]], np.tile([[3.0, 1.0]], (3, 1)))

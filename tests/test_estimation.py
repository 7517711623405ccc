"""Post-processing: simplex projection, total estimation, the product model and its sampler."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from synth.columns.domain import Domain
from synth.model.estimation import combine_measurements, estimate_total, project_to_simplex
from synth.model.independent import ProductModel, fit_product_model
from synth.privacy.measurement import Measurement


def test_projection_matches_a_generic_solver():
    rng = np.random.default_rng(1)
    for _ in range(5):
        y = rng.normal(10, 20, size=7)
        x = project_to_simplex(y, 50.0)
        assert x.min() >= 0 and x.sum() == pytest.approx(50.0)
        solved = minimize(lambda z, y=y: ((z - y) ** 2).sum(), np.full(7, 50 / 7), method="SLSQP",
                          bounds=[(0, None)] * 7, constraints=[{"type": "eq", "fun": lambda z: z.sum() - 50}])
        np.testing.assert_allclose(x, solved.x, atol=1e-4)


def test_projection_keeps_feasible_points():
    y = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(project_to_simplex(y, 10.0), y)


def _m(attrs, values, scale):
    return Measurement(tuple(attrs), np.asarray(values, dtype=float), "discrete_gaussian", scale)


def test_total_is_inverse_variance_weighted():
    count = _m((), [100.0], 1.0)          # variance 1
    marginal = _m(("a",), [60.0, 50.0], 2.0)  # sum 110, variance 2 * 4 = 8
    assert estimate_total([count, marginal]) == pytest.approx((100 / 1 + 110 / 8) / (1 + 1 / 8))


def test_total_is_unbiased_over_noise_draws():
    rng = np.random.default_rng(3)
    truth = np.array([500.0, 300.0, 200.0])
    estimates = [estimate_total([_m(("a",), truth + rng.normal(0, 5, 3), 5.0),
                                 _m((), [1000 + rng.normal(0, 5)], 5.0)]) for _ in range(2000)]
    # variance of the weighted mean: 1 / (1/25 + 1/75) = 18.75
    assert np.mean(estimates) == pytest.approx(1000, abs=4 * np.sqrt(18.75 / 2000))
    assert np.std(estimates) == pytest.approx(np.sqrt(18.75), rel=0.1)


def test_combine_averages_by_precision():
    values, std = combine_measurements([_m(("a",), [10, 20], 1.0), _m(("a",), [20, 40], 2.0)])
    np.testing.assert_allclose(values, [(10 + 20 / 4) / 1.25, (20 + 40 / 4) / 1.25])
    assert std == pytest.approx(1 / np.sqrt(1.25))


def _schema() -> Domain:
    return Domain(("a", "b"), (4, 3))


def test_product_model_fits_and_samples_its_marginals():
    schema = _schema()
    a = _m(("a",), [600, 300, 100, -20], 10.0)
    b = _m(("b",), [250, 750, 0], 10.0)
    model = fit_product_model(schema, [a, b])
    assert model.total == pytest.approx(1000, abs=20)
    pa = model.marginal(["a"])
    assert pa.sum() == pytest.approx(1) and pa.min() >= 0 and pa[3] == 0
    codes = model.sample(200_000, np.random.default_rng(0))
    freq = np.bincount(codes[:, 0], minlength=4) / len(codes)
    np.testing.assert_allclose(freq, pa, atol=0.005)
    joint = model.marginal(["a", "b"])
    assert joint.shape == (4, 3)
    np.testing.assert_allclose(joint, np.outer(pa, model.marginal(["b"])))


def test_product_model_samples_independent_columns():
    model = ProductModel(_schema(), (np.array([0.5, 0.5, 0, 0]), np.array([0.5, 0.5, 0])), 100.0)
    codes = model.sample(100_000, np.random.default_rng(2))
    table = np.histogram2d(codes[:, 0], codes[:, 1], bins=[2, 2])[0] / len(codes)
    np.testing.assert_allclose(table, 0.25, atol=0.006)


def test_total_of_a_weighted_measurement_undoes_the_weights():
    weighted = Measurement(("a",), np.array([50.0, 30.0, 20.0 / np.sqrt(4)]), "discrete_gaussian", 1.0,
                           np.array([1.0, 1.0, 0.5]))
    assert estimate_total([weighted]) == pytest.approx(100.0)

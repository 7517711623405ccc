"""The graphical-model fitter: recovery from exact marginals, denoising, warm starts, validation."""

from __future__ import annotations

import numpy as np
import pytest

from synth.columns.domain import Domain
from synth.model.estimation import estimate_total, project_to_simplex
from synth.model.factor import Factor
from synth.model.fitting import fit_graphical_model
from synth.model.graphical import GraphicalModel
from synth.model.junction_tree import build_junction_tree
from synth.privacy.measurement import Measurement

DOMAIN = Domain(("a", "b", "c", "d", "e"), (3, 4, 2, 5, 3))
CYCLE = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("d", "e")]  # needs a chord


def true_model(cliques, seed: int, total: float) -> GraphicalModel:
    rng = np.random.default_rng(seed)
    potentials = {c: Factor(DOMAIN.project(c), rng.normal(size=DOMAIN.shape(c))) for c in cliques}
    return GraphicalModel(DOMAIN, build_junction_tree(DOMAIN, cliques), potentials, total)


def measure(model: GraphicalModel, attrs, std: float, rng: np.random.Generator | None = None) -> Measurement:
    values = np.asarray(model.marginal(attrs), dtype=float).ravel()
    if rng is not None:
        values = values + rng.normal(0.0, std, values.size)
    return Measurement(tuple(attrs), values, "gaussian", std)


def test_exact_marginals_are_recovered():
    truth = true_model(CYCLE, seed=1, total=10_000.0)
    attrs_list = [(a,) for a in DOMAIN.names] + [("b", "a"), *CYCLE[1:]]  # one pair in reverse order
    measurements = [measure(truth, attrs, 1.0) for attrs in attrs_list]
    model = fit_graphical_model(DOMAIN, measurements, iterations=3000, tolerance=1e-10)
    assert model.total == pytest.approx(10_000.0)
    for m in measurements:
        error = np.abs(model.marginal(m.attrs).ravel() - m.values).max()
        assert error < 1e-3 * model.total, m.attrs
    assert model.fit.loss < 1.0


def test_fitted_marginals_are_closer_to_the_truth_than_the_noisy_measurements():
    truth = true_model(CYCLE, seed=2, total=2_000.0)
    rng = np.random.default_rng(7)
    attrs_list = [(a,) for a in DOMAIN.names] + CYCLE
    fitted_errors, raw_errors = [], []
    for _ in range(3):
        measurements = [measure(truth, attrs, 20.0, rng) for attrs in attrs_list]
        model = fit_graphical_model(DOMAIN, measurements, iterations=500)
        for m in measurements:
            exact = np.asarray(truth.marginal(m.attrs)).ravel()
            fitted_errors.append(np.abs(model.marginal(m.attrs).ravel() - exact).mean())
            raw_errors.append(np.abs(m.values - exact).mean())
    assert np.mean(fitted_errors) < 0.8 * np.mean(raw_errors)


def test_a_single_measurement_of_everything_is_projected_onto_the_simplex():
    small = Domain(("a", "b"), (3, 4))
    rng = np.random.default_rng(3)
    y = rng.normal(5.0, 6.0, 12)  # some cells negative: the optimum has exact zeros
    model = fit_graphical_model(small, [Measurement(("a", "b"), y, "gaussian", 2.0)], iterations=3000, tolerance=0)
    expected = project_to_simplex(y, y.sum())
    np.testing.assert_allclose(model.marginal(("a", "b")).ravel(), expected, atol=0.02 * y.sum() / 12)


def test_weighted_measurements_are_fitted_as_weights_times_the_marginal():
    truth = true_model(CYCLE, seed=4, total=5_000.0)
    exact = np.asarray(truth.marginal(("d",))).ravel()
    weights = np.array([1.0, 1.0, 0.5, 0.5, 2.0])
    measurements = [measure(truth, (a,), 1.0) for a in "abce"] + [
        Measurement(("d",), weights * exact, "gaussian", 1.0, weights)]
    model = fit_graphical_model(DOMAIN, measurements, iterations=2000, tolerance=1e-10, total=5_000.0)
    np.testing.assert_allclose(model.marginal(("d",)), exact, atol=1e-3 * 5_000)


def test_the_total_comes_from_the_measurements():
    truth = true_model(CYCLE, seed=5, total=3_000.0)
    rng = np.random.default_rng(1)
    measurements = [measure(truth, (a,), 10.0, rng) for a in DOMAIN.names]
    count = Measurement((), np.array([2_950.0]), "gaussian", 5.0)
    model = fit_graphical_model(DOMAIN, [*measurements, count], iterations=50)
    assert model.total == pytest.approx(estimate_total([*measurements, count]))
    assert model.marginal(("a", "c")).sum() == pytest.approx(model.total)
    assert model.total != pytest.approx(estimate_total(measurements))  # the count took part
    given = fit_graphical_model(DOMAIN, measurements, iterations=5, total=1234.0)
    assert given.total == 1234.0 and given.marginal(("e",)).sum() == pytest.approx(1234.0)


def test_extra_cliques_join_the_structure_and_summary_is_reported():
    truth = true_model(CYCLE, seed=6, total=1_000.0)
    measurements = [measure(truth, (a,), 1.0) for a in DOMAIN.names]
    seen = []
    model = fit_graphical_model(DOMAIN, measurements, cliques=[("a", "e")], iterations=20,
                                callback=lambda i, loss: seen.append((i, loss)))
    assert any({"a", "e"} <= set(c) for c in model.cliques)
    assert [i for i, _ in seen] == list(range(1, model.fit.iterations + 1))
    assert model.fit.loss == pytest.approx(seen[-1][1]) and seen[-1][1] < seen[0][1]


def test_warm_start_needs_fewer_iterations_than_a_cold_start():
    truth = true_model(CYCLE, seed=8, total=20_000.0)
    rng = np.random.default_rng(8)
    first = [measure(truth, attrs, 5.0, rng) for attrs in [(a,) for a in DOMAIN.names] + CYCLE[:3]]
    previous = fit_graphical_model(DOMAIN, first, iterations=2000, tolerance=1e-7)
    more = [*first, measure(truth, CYCLE[3], 5.0, rng)]  # AIM-style: one more marginal, refit
    cold = fit_graphical_model(DOMAIN, more, iterations=2000, tolerance=1e-7)
    warm = fit_graphical_model(DOMAIN, more, iterations=2000, tolerance=1e-7, warm_start=previous)
    assert warm.fit.converged and cold.fit.converged
    assert warm.fit.iterations < cold.fit.iterations
    assert warm.fit.loss == pytest.approx(cold.fit.loss, rel=1e-3)
    # with no iterations, a warm start whose cliques the new model contains is the previous model
    unchanged = fit_graphical_model(DOMAIN, more, iterations=0, warm_start=previous, total=previous.total)
    np.testing.assert_allclose(unchanged.marginal(("a", "b", "e")), previous.marginal(("a", "b", "e")), rtol=1e-9)


def test_bad_measurements_are_refused_with_clear_messages():
    good = Measurement(("a",), np.ones(3), "gaussian", 1.0)
    with pytest.raises(ValueError, match="has 4 values, but its marginal has 3 cells"):
        fit_graphical_model(DOMAIN, [good, Measurement(("a",), np.ones(4), "gaussian", 1.0)])
    with pytest.raises(ValueError, match="lacks"):
        fit_graphical_model(DOMAIN, [good, Measurement(("zz",), np.ones(3), "gaussian", 1.0)])
    with pytest.raises(ValueError, match="repeats"):
        fit_graphical_model(DOMAIN, [good, Measurement(("a", "a"), np.ones(9), "gaussian", 1.0)])
    with pytest.raises(ValueError, match="non-finite"):
        fit_graphical_model(DOMAIN, [Measurement(("a",), np.array([1.0, np.nan, 1.0]), "gaussian", 1.0)])
    with pytest.raises(ValueError, match="no measurements"):
        fit_graphical_model(DOMAIN, [])
    other = Domain(("a", "b"), (3, 4))
    previous = fit_graphical_model(other, [good], iterations=1)
    with pytest.raises(ValueError, match="another domain"):
        fit_graphical_model(DOMAIN, [good], warm_start=previous)

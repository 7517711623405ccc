"""Coarse measurements fitted through derived columns (synth.model.derived)."""

from __future__ import annotations

import numpy as np
import pytest

from synth.columns.domain import Domain
from synth.model.compression import ExpandedModel
from synth.model.derived import DerivedColumns, DerivedModel, derived_for, derived_name, fit_derived
from synth.model.fitting import fit_graphical_model
from synth.model.store import read_model, write_model
from synth.privacy.measurement import Measurement, group_table

DOMAIN = Domain(("a", "b", "c"), (12, 3, 2))
GROUPS = np.repeat(np.arange(4), 3)  # a's 12 codes in 4 groups of 3


def _truth(seed: int = 0) -> np.ndarray:
    """A joint table over (a, b, c) of 10,000 rows in which b depends on a and c on b."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(12))[:, None, None] * rng.dirichlet(np.ones(3), size=12)[:, :, None]
    p = p * rng.dirichlet(np.ones(2), size=3)[None, :, :]
    return 10_000 * p


def _measured(table: np.ndarray, attrs: tuple[str, ...], coarsening: dict | None = None) -> Measurement:
    """An exact measurement (noise scale 1, values without noise) of ``table``'s marginal."""
    axes = tuple(i for i, a in enumerate(DOMAIN.names) if a not in attrs)
    marginal = table.sum(axis=axes)
    if coarsening:
        marginal = group_table(marginal, [coarsening.get(a) for a in attrs])
    return Measurement(attrs, marginal.ravel(), "gaussian", 1.0, coarsening=coarsening or {})


def _measurements(table: np.ndarray) -> list[Measurement]:
    return [_measured(table, ("a",)), _measured(table, ("b",)), _measured(table, ("c",)),
            _measured(table, ("a", "b"), {"a": GROUPS}), _measured(table, ("b", "c"))]


def test_one_derived_column_per_distinct_map_and_names_never_clash():
    other = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    base = Domain(("a", derived_name("a", other), "b"), (12, 2, 3))
    derived = DerivedColumns.of(base, [("a", GROUPS), ("a", GROUPS.copy()), ("a", other)])
    assert len(derived.names) == 2
    assert derived_name("a", other) not in derived.names  # taken by a real column
    assert derived.names[0] == derived_name("a", GROUPS)  # named by its map, whatever else is derived
    assert DerivedColumns.of(base, [("a", other), ("a", GROUPS)]).name("a", GROUPS) == derived.names[0]
    assert derived.domain.names[:3] == base.names and derived.domain.sizes[3:] == (4, 2)
    m = Measurement(("a", "b"), np.zeros(6), "gaussian", 1.0, coarsening={"a": other})
    rewritten = derived.rewrite(m)
    assert rewritten.attrs == (derived.name("a", other), "b") and not rewritten.coarsening
    assert derived_for(DOMAIN, [_measured(_truth(), ("a",))]) is None


def test_the_fit_equals_the_full_resolution_fit_and_ties_each_derived_column_to_its_source():
    """With exact measurements of a, b, c, (a's groups × b) and (b, c), the maximum-entropy answer
    is P(a) P(b | group of a) P(c | b) whichever way the coarse measurement is fitted; the derived
    fit must find it (the full-resolution fit is the reference) and give the derived column no
    mass away from its source's group."""
    truth = _truth()
    measurements = _measurements(truth)
    reference = fit_graphical_model(DOMAIN, measurements, iterations=3000, tolerance=1e-12)
    derived = derived_for(DOMAIN, measurements)
    assert derived is not None
    model = fit_derived(DOMAIN, measurements, derived, iterations=3000, tolerance=1e-12)
    expected = reference.marginal(("a", "b", "c"))
    got = model.marginal(("a", "b", "c"))
    assert np.abs(got - expected).sum() < 1e-3 * 10_000
    # the fitted coarse table reproduces the measured one
    coarse = model.marginal((derived.name("a", GROUPS), "b"))
    assert np.allclose(coarse, group_table(truth.sum(axis=2), [GROUPS, None]), atol=0.5)
    tie = model.marginal(("a", derived.name("a", GROUPS)))
    off_map = tie.sum() - tie[np.arange(12), GROUPS].sum()
    assert off_map < 1e-9 * tie.sum()


def test_a_mutated_tie_is_caught():
    """Without the structural zeros (links), the derived column drifts from its source's group:
    the check above would fail, so it tests something."""
    measurements = _measurements(_truth())
    derived = derived_for(DOMAIN, measurements)
    untied = fit_graphical_model(derived.domain, [derived.rewrite(m) for m in measurements],
                                 cliques=[("a", derived.name("a", GROUPS))], iterations=500)
    tie = untied.marginal(("a", derived.name("a", GROUPS)))
    assert tie.sum() - tie[np.arange(12), GROUPS].sum() > 0.1 * tie.sum()


def test_the_model_samples_and_conditions_on_base_columns_only(tmp_path):
    truth = _truth(1)
    measurements = _measurements(truth)
    derived = derived_for(DOMAIN, measurements)
    model = DerivedModel(fit_derived(DOMAIN, measurements, derived, iterations=500), DOMAIN)
    rows = model.sample(5_000, np.random.default_rng(0))
    assert rows.shape == (5_000, 3) and rows[:, 0].max() < 12 and rows[:, 1].max() < 3
    conditioned = model.given({"c": np.array([1.0, 0.0])})
    assert set(np.unique(conditioned.sample(200, np.random.default_rng(1))[:, 2])) == {0}
    stored = ExpandedModel(model, DOMAIN.names, {})
    path = write_model(tmp_path / "m.npz", stored, {"note": "test"})
    loaded, _, _ = read_model(path)
    assert np.array_equal(loaded.sample(300, np.random.default_rng(2)), stored.sample(300, np.random.default_rng(2)))


def test_a_stored_model_whose_base_is_not_its_prefix_is_refused(tmp_path):
    measurements = _measurements(_truth())
    derived = derived_for(DOMAIN, measurements)
    wrong = DerivedModel(fit_derived(DOMAIN, measurements, derived, iterations=50), Domain(("b",), (3,)))
    path = write_model(tmp_path / "m.npz", wrong, {})
    from synth.errors import ModelFileError
    with pytest.raises(ModelFileError, match="derived columns"):
        read_model(path)

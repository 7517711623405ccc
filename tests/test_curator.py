"""The curator: correct noisy marginals, calibrated noise, charge-before-noise, refusals."""

from __future__ import annotations

import numpy as np
import pytest

from synth.columns.column import Column
from synth.columns.domain import Domain
from synth.columns.kinds import DomainSource, Kind
from synth.columns.schema import Schema
from synth.errors import BudgetExhaustedError, EngineError
from synth.privacy import Accountant, Budget, SeededNoise
from synth.privacy.curator import CountRelease, Curator
from synth.privacy.neighbours import Neighbouring


def _schema(sizes=(48, 40)) -> Schema:
    return Schema(columns=tuple(
        Column(name=f"c{i}", kind=Kind.CATEGORICAL, categories=tuple(str(k) for k in range(s - 2)),
               lower=None, upper=None, bins=None, source=DomainSource.PUBLIC)
        for i, s in enumerate(sizes)))


def _codes(schema: Schema, n=5000, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.integers(0, s, n) for s in schema.sizes]).astype(np.int32)


def _curator(epsilon=10.0, delta=1e-6, relation="add-remove", noise=None, codes=None):
    schema = _schema()
    accountant = Accountant(Budget(epsilon, delta))
    release = CountRelease(accountant, noise or SeededNoise(3), Neighbouring(relation))
    domain = Domain(schema.names, schema.sizes)
    return Curator(_codes(schema) if codes is None else codes, domain, release), schema


def _exact(codes, sizes):
    flat = np.ravel_multi_index((codes[:, 0], codes[:, 1]), sizes)
    return np.bincount(flat, minlength=sizes[0] * sizes[1])


@pytest.mark.parametrize("relation,factor", [("add-remove", 1.0), ("replace", np.sqrt(2.0))])
def test_gaussian_marginal_noise_has_the_calibrated_scale(relation, factor):
    codes = _codes(_schema())
    curator, schema = _curator(relation=relation, codes=codes)
    rho = 0.02
    m = curator.measure_marginal(("c0", "c1"), rho)
    sigma = factor / np.sqrt(2 * rho)
    assert m.mechanism == "discrete_gaussian" and m.noise_scale == pytest.approx(sigma, rel=1e-9)
    error = m.values - _exact(codes, schema.sizes)
    assert abs(error.mean()) < 4 * sigma / np.sqrt(error.size)
    assert error.std() == pytest.approx(sigma, rel=0.06)  # 1,920 cells: a wrong scale is far off
    entry = curator.accountant.ledger[-1]
    assert entry.cost.rho == pytest.approx(rho, rel=1e-9) and entry.cost.rho <= rho
    assert entry.query == "marginal(c0, c1)" and entry.noise_scale == m.noise_scale


def test_pure_dp_uses_discrete_laplace_with_scale_sensitivity_over_epsilon():
    codes = _codes(_schema())
    curator, schema = _curator(epsilon=10.0, delta=0.0, codes=codes)
    m = curator.measure_marginal(("c0", "c1"), 0.5)
    assert m.mechanism == "discrete_laplace" and m.noise_scale == pytest.approx(2.0, rel=1e-9)
    error = m.values - _exact(codes, schema.sizes)
    q = np.exp(-1 / 2.0)
    assert error.var() == pytest.approx(2 * q / (1 - q) ** 2, rel=0.1)
    assert curator.accountant.ledger[-1].cost.epsilon == pytest.approx(0.5, rel=1e-9)


class SpyNoise(SeededNoise):
    """Records, at each draw, how many ledger entries existed."""

    def __init__(self, accountant_ref: list) -> None:
        super().__init__(0)
        self.ledger_sizes: list[int] = []
        self.ref = accountant_ref

    def discrete_gaussian(self, counts, sigma):
        self.ledger_sizes.append(len(self.ref[0].ledger))
        return super().discrete_gaussian(counts, sigma)


def test_charge_happens_before_noise_and_refusal_draws_nothing():
    ref: list = []
    spy = SpyNoise(ref)
    curator, _ = _curator(epsilon=1.0, noise=spy)
    ref.append(curator.accountant)
    curator.measure_marginal(("c0",), curator.remaining() / 2)
    assert spy.ledger_sizes == [1]  # the entry existed when noise was drawn
    before = curator.accountant.ledger
    with pytest.raises(BudgetExhaustedError):
        curator.measure_marginal(("c1",), curator.remaining() * 1.5)
    assert spy.ledger_sizes == [1] and curator.accountant.ledger == before
    curator.measure_marginal(("c1",), curator.remaining())  # exactly what is left still works
    assert len(curator.accountant.ledger) == 2


def test_noisy_count_and_its_absence_under_replace():
    curator, _ = _curator()
    m = curator.noisy_count(0.1)
    assert m.attrs == () and m.values.shape == (1,)
    assert abs(m.values[0] - 5000) < 8 / np.sqrt(0.2)
    replace, _ = _curator(relation="replace")
    with pytest.raises(EngineError):
        replace.noisy_count(0.1)


def test_bad_marginal_requests_are_refused_before_charging():
    curator, _ = _curator()
    for attrs in [("nope",), ("c0", "c0"), ()]:
        with pytest.raises(EngineError):
            curator.measure_marginal(attrs, 0.1)
    assert curator.accountant.ledger == ()


@pytest.mark.parametrize("relation", ["add-remove", "replace"])
def test_selection_follows_the_exponential_mechanism(relation):
    codes = _codes(_schema(), n=400)
    curator, schema = _curator(epsilon=1e6, relation=relation, codes=codes)
    candidates = [("c0",), ("c1",), ("c0", "c1")]
    exact = [np.bincount(codes[:, 0], minlength=48), np.bincount(codes[:, 1], minlength=40),
             _exact(codes, schema.sizes)]
    # estimates off by known L1 amounts: 30, 10 and 0 rows
    estimates = [exact[0] + np.eye(48)[0] * 30, exact[1] - np.eye(40)[3] * 10, exact[2]]
    weights, rho = [1.0, 2.0, 1.0], 0.5
    sensitivity = 2.0 * (1.0 if relation == "add-remove" else 2.0)
    scale = 2 * sensitivity / np.sqrt(8 * rho)  # Gumbel scale for bounded-range rho = eps^2 / 8
    scores = np.array([30.0, 20.0, 0.0])
    expected = np.exp(scores / scale) / np.exp(scores / scale).sum()
    picks = np.bincount([curator.select_marginal(candidates, estimates, rho, weights=weights)
                         for _ in range(3000)], minlength=3)
    assert picks / 3000 == pytest.approx(expected, abs=0.03)
    entry = curator.accountant.ledger[-1]
    assert entry.mechanism == "exponential" and entry.sensitivity == sensitivity
    assert entry.cost.rho == pytest.approx(rho, rel=1e-9) and entry.cost.rho <= rho


def test_compressed_view_merges_codes_and_shares_the_budget():
    codes = _codes(_schema(), n=1000)
    curator, _ = _curator(codes=codes)
    mapping = np.minimum(np.arange(48), 5)  # codes 5..47 become one code
    view = curator.compressed({"c0": mapping})
    assert view.domain.sizes == (6, 40)
    m = view.measure_marginal(("c0",), curator.remaining())  # sigma about 0.5
    expected = np.bincount(mapping[codes[:, 0]], minlength=6)
    assert np.abs(m.values - expected).max() <= 3
    assert len(curator.accountant.ledger) == 1  # charged to the shared accountant


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_expected_absolute_noise_is_the_mean_error_of_a_measurement(delta):
    codes = np.arange(20_000)[:, None] % 10_000
    domain = Domain(("x",), (10_000,))
    accountant = Accountant(Budget(1.0, delta))
    curator = Curator(codes, domain, CountRelease(accountant, SeededNoise(5), Neighbouring()))
    budget = curator.remaining() / 4
    expected = curator.expected_absolute_noise(budget)
    measured = curator.measure_marginal(("x",), budget)
    observed = np.abs(measured.values - 2).mean()  # every cell holds 2 rows
    assert expected > 1 and observed == pytest.approx(expected, rel=0.05)  # 10,000 cells: s.e. about 1 %

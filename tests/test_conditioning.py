"""Conditioning models on evidence (issue 15, item 4): every model's ``given`` is the exact
conditional distribution, checked against a brute-force joint table, and samples of the
conditioned model follow it (chi-square, fixed seeds); evidence of zero probability is refused."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import chisquare

from synth.columns.domain import Domain
from synth.errors import ConditionError
from synth.model.bayesian_network import BayesianNetwork, Conditional
from synth.model.compression import ExpandedModel
from synth.model.histogram import HistogramModel
from synth.model.independent import ProductModel
from tests.test_graphical import STRUCTURES, brute_force_joint, random_model

ALPHA = 1e-3  # a correct sampler fails one chi-square test in a thousand


def random_evidence(domain: Domain, attrs, seed: int) -> dict[str, np.ndarray]:
    """Weights in [0, 1] with a zero, a one and fractions, on each of ``attrs``."""
    rng = np.random.default_rng(seed)
    evidence = {}
    for a in attrs:
        weights = rng.random(domain.shape([a])[0])
        weights[0], weights[-1] = 0.0, 1.0
        evidence[a] = weights
    return evidence


def weighted_joint(joint: np.ndarray, domain: Domain, evidence) -> np.ndarray:
    """The joint table times the evidence weights (the unnormalised conditional)."""
    out = joint.copy()
    for a, weights in evidence.items():
        shape = [1] * len(domain)
        shape[domain.index(a)] = weights.size
        out = out * weights.reshape(shape)
    return out


def marginal_of(table: np.ndarray, domain: Domain, attrs) -> np.ndarray:
    kept = [a for a in domain.names if a in attrs]
    summed = table.sum(axis=tuple(i for i, a in enumerate(domain.names) if a not in attrs))
    return summed.transpose([kept.index(a) for a in attrs])


def assert_conditional_matches(model, joint: np.ndarray, evidence, names) -> None:
    """``model.given(evidence)`` has the brute-force conditional's marginals over every set of up to
    three attributes, scaled to total · P(evidence)."""
    conditioned = model.given(evidence)
    expected = weighted_joint(joint, model.domain, evidence)
    assert conditioned.total == pytest.approx(expected.sum(), rel=1e-9)
    for k in (1, 2, 3):
        for attrs in itertools.combinations(names, k):
            np.testing.assert_allclose(conditioned.marginal(attrs), marginal_of(expected, model.domain, attrs),
                                       rtol=1e-8, atol=1e-10 * model.total)


def assert_samples_follow(conditioned, domain: Domain, attrs, seed: int, n: int = 20_000) -> np.ndarray:
    """Samples of ``conditioned`` (over ``domain``) follow its marginal over ``attrs`` (chi-square);
    returns the codes."""
    codes = conditioned.sample(n, np.random.default_rng(seed))
    expected = np.ravel(conditioned.marginal(attrs))
    expected = expected / expected.sum() * n
    cells = np.ravel_multi_index([codes[:, domain.index(a)] for a in attrs], domain.shape(attrs))
    observed = np.bincount(cells, minlength=expected.size)
    assert observed[expected == 0].sum() == 0  # nothing drawn where the condition excludes it
    live = expected > 0
    assert chisquare(observed[live], expected[live]).pvalue > ALPHA
    return codes


@pytest.mark.parametrize("index", range(len(STRUCTURES)))
def test_a_graphical_model_conditioned_on_the_tree_equals_the_brute_force_conditional(index):
    model = random_model(STRUCTURES[index], seed=index)
    joint = brute_force_joint(model)
    names = model.domain.names
    for pick in ((names[0],), (names[0], names[-1]), names[1:4]):  # one attribute, far apart, several
        assert_conditional_matches(model, joint, random_evidence(model.domain, pick, seed=index), names)


def test_samples_of_a_conditioned_graphical_model_follow_the_conditional_and_meet_the_condition():
    model = random_model(STRUCTURES[3], seed=7, scale=2.0)
    names = model.domain.names
    evidence = {"a": np.array([0.0, 1.0, 0.0, 0.0][: model.domain.shape(["a"])[0]]),
                "d": np.linspace(0.2, 1.0, model.domain.shape(["d"])[0])}
    conditioned = model.given(evidence)
    codes = assert_samples_follow(conditioned, model.domain, ("a", "d", "f"), seed=1)
    assert set(codes[:, names.index("a")]) == {1}
    assert_samples_follow(conditioned, model.domain, ("b", "c", "e"), seed=2)  # the columns not conditioned too


def test_a_condition_the_model_gives_no_probability_is_refused():
    model = random_model(STRUCTURES[0], seed=1)
    impossible = {"b": np.zeros(model.domain.shape(["b"])[0])}
    with pytest.raises(ConditionError, match="zero probability"):
        model.given(impossible)
    with pytest.raises(ValueError, match="weights in"):
        model.given({"b": np.array([2.0])})
    with pytest.raises(ValueError, match="not in the domain"):
        model.given({"zz": np.array([1.0])})


def test_independent_columns_condition_column_by_column():
    domain = Domain(("a", "b", "c"), (3, 4, 2))
    rng = np.random.default_rng(3)
    probabilities = tuple(p / p.sum() for p in (rng.random(3), rng.random(4), rng.random(2)))
    model = ProductModel(domain, probabilities, 500.0)
    joint = 500.0 * probabilities[0][:, None, None] * probabilities[1][None, :, None] * probabilities[2][None, None, :]
    evidence = random_evidence(domain, ("a", "b"), seed=4)
    conditioned = model.given(evidence)
    expected = weighted_joint(joint, domain, evidence)
    assert conditioned.total == pytest.approx(expected.sum())
    for attrs in (("a",), ("b",), ("c",), ("a", "b", "c")):  # ProductModel's marginals are probabilities
        np.testing.assert_allclose(conditioned.marginal(attrs), marginal_of(expected, domain, attrs) / expected.sum())
    codes = conditioned.sample(20_000, np.random.default_rng(5))
    assert 0 not in codes[:, 0] and 0 not in codes[:, 1]  # weight 0 on code 0 of a and b
    with pytest.raises(ConditionError, match="zero probability"):
        model.given({"c": np.zeros(2)})


def test_a_histogram_conditions_every_cell():
    domain = Domain(("a", "b", "c"), (3, 2, 4))
    counts = np.random.default_rng(6).random(domain.sizes) * 10
    counts[1, 0, :] = 0.0
    model = HistogramModel(domain, counts)
    evidence = random_evidence(domain, ("a", "c"), seed=7)
    assert_conditional_matches(model, counts, evidence, domain.names)
    assert_samples_follow(model.given(evidence), domain, ("a", "b", "c"), seed=8)
    with pytest.raises(ConditionError, match="zero probability"):
        model.given({"a": np.array([0.0, 1.0, 0.0]), "b": np.array([1.0, 0.0])})  # the empty cells only


def test_a_compressed_model_conditions_its_merged_codes_in_proportion_to_their_weights():
    """Codes 2..4 of ``a`` are merged into one compressed code: a condition keeping codes 2 and 3
    gives the merged code half of its weight, and expansion never draws code 4."""
    inner = random_model([("a", "b"), ("b", "c")], seed=9)
    sizes = dict(zip(inner.domain.names, inner.domain.sizes))
    mapping = np.append(np.arange(sizes["a"] - 1), [sizes["a"] - 1] * 3)  # last compressed code: 3 codes
    model = ExpandedModel(inner, inner.domain.names, {"a": mapping})
    domain = Domain(inner.domain.names, (mapping.size, sizes["b"], sizes["c"]))
    group = np.bincount(mapping)[mapping]
    joint = np.take(brute_force_joint(inner), mapping, axis=0) / group[:, None, None]  # merged codes spread evenly
    weights = np.ones(mapping.size)
    weights[0], weights[-1], weights[-2] = 0.3, 0.0, 0.5
    evidence = {"a": weights, **random_evidence(domain, ("c",), seed=10)}
    conditioned = model.given(evidence)
    expected = weighted_joint(joint, domain, evidence)
    assert conditioned.total == pytest.approx(expected.sum(), rel=1e-9)
    for attrs in (("a",), ("a", "c"), ("a", "b", "c")):
        np.testing.assert_allclose(conditioned.marginal(attrs), marginal_of(expected, domain, attrs), rtol=1e-8)
    codes = assert_samples_follow(conditioned, domain, ("a", "c"), seed=11)
    assert mapping.size - 1 not in codes[:, 0]
    # conditioning twice is conditioning on the product of the weights
    twice = model.given({"a": np.sqrt(weights)}).given({"a": np.sqrt(weights)})
    np.testing.assert_allclose(twice.marginal(("a", "b")), model.given({"a": weights}).marginal(("a", "b")), rtol=1e-8)


def random_network(seed: int) -> BayesianNetwork:
    """a → b, (a, b) → c with a seen on two coarse groups, c → d; a few table cells exactly zero."""
    rng = np.random.default_rng(seed)
    domain = Domain(("a", "b", "c", "d"), (4, 3, 3, 2))
    groups = np.array([0, 0, 1, 1])

    def table(*shape: int) -> np.ndarray:
        t = rng.random(shape) * (rng.random(shape) > 0.15)
        t[..., 0] += 1e-3  # every row keeps some mass
        return t / t.sum(axis=-1, keepdims=True)

    conditionals = (Conditional("a", (), (), table(4)), Conditional("b", ("a",), (None,), table(4, 3)),
                    Conditional("c", ("a", "b"), (groups, None), table(2, 3, 3)),
                    Conditional("d", ("c",), (None,), table(3, 2)))
    return BayesianNetwork(domain, conditionals, 800.0)


def test_a_bayesian_network_conditions_exactly_through_its_junction_tree():
    network = random_network(12)
    domain = network.domain
    joint = network.marginal(domain.names)  # exact, by elimination over its tables
    for pick in (("d",), ("a", "d"), ("b", "c")):  # a descendant, both ends, the middle
        assert_conditional_matches(network, joint, random_evidence(domain, pick, seed=13), domain.names)
    conditioned = network.given({"d": np.array([0.0, 1.0])})
    codes = assert_samples_follow(conditioned, domain, ("a", "b", "c"), seed=14)
    assert set(codes[:, 3]) == {1}
    zero = np.argwhere(joint == 0)[0]  # a cell the network rules out (a table's zero) cannot be asked for
    with pytest.raises(ConditionError, match="zero probability"):
        network.given({a: np.eye(size)[code] for a, size, code in zip(domain.names, domain.sizes, zero)})


def test_a_network_too_large_to_condition_exactly_says_so(monkeypatch):
    import synth.model.bayesian_network as bn

    monkeypatch.setattr(bn, "MAX_CONDITIONING_MB", 1e-6)
    with pytest.raises(ConditionError, match="privbayes network exactly needs a junction tree"):
        random_network(15).given({"d": np.array([0.0, 1.0])})

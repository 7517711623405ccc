"""The low-variance sampler (issue 16, item 1): rounded counts per parent configuration, dealt in
random order, how every model draws by default (the matching that follows is tested in
tests/test_matching.py); i.i.d. draws on request.

What is proven, and tested exactly (fixed seeds): within every group of rows sharing a parent
configuration, each value's count is the floor or the ceiling of the group's size times its
conditional probability. Along a junction tree, where a clique's k new columns are drawn one at a
time given its separator and the columns before them, every clique cell is therefore within k
(strictly) of its separator configuration's sampled rows times the cell's conditional
probability; the root's first column is within 1 of n times its probability. What is tested
statistically: the remainder is unbiased, siblings stay conditionally independent (a sorted
assignment, the mutation, fails the test), and i.i.d. stays multinomial.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import chi2

import synth.model.sampling as sampling_module
from synth.columns.domain import Domain
from synth.errors import SamplingError
from synth.generation.generate import fit
from synth.model.bayesian_network import BayesianNetwork, Conditional
from synth.model.compression import expand_codes
from synth.model.factor import Factor
from synth.model.graphical import CalibratedTree, GraphicalModel
from synth.model.histogram import HistogramModel
from synth.model.independent import ProductModel
from synth.model.junction_tree import build_junction_tree
from synth.model.sampling import check_sampling, draw, rounded_counts
from tests.test_cli import assert_clean_error, run_cli
from tests.test_graphical import STRUCTURES, random_model
from tests.test_kept_model import small_description


def _counts(codes: np.ndarray, domain: Domain, attrs) -> np.ndarray:
    """The sampled counts over ``attrs``, shaped by their sizes."""
    cells = np.ravel_multi_index([codes[:, domain.index(a)] for a in attrs], domain.shape(attrs))
    return np.bincount(cells, minlength=domain.size(attrs)).reshape(domain.shape(attrs)).astype(float)


def assert_within_rounding(model: CalibratedTree, codes: np.ndarray) -> None:
    """The proven bound on every clique: a cell is within (its clique's new columns) of its
    separator configuration's sampled rows times its conditional probability; a clique's first
    new column within 1; the root's first column within 1 of n times its probability."""
    n = len(codes)
    separators = {0: ()} | {child: separator for _, child, separator in model.junction_tree.edges}
    for index, clique in enumerate(model.cliques):
        separator = separators[index]
        new = clique[len(separator):]
        for depth in (1, len(new)):  # the first new column, and all of them
            attrs = clique[:len(separator) + depth]
            table = model.marginal(attrs).reshape(model.domain.size(separator), -1)
            mass = table.sum(axis=1, keepdims=True)
            conditional = np.divide(table, mass, out=np.zeros_like(table), where=mass > 0)
            rows = _counts(codes, model.domain, separator).reshape(-1, 1) if separator else np.array([[n]])
            sampled = _counts(codes, model.domain, attrs).reshape(table.shape)
            assert np.all(np.abs(sampled - rows * conditional) < depth), (clique, depth)
    first = model.cliques[0][0]
    p = model.marginal([first]) / model.total
    assert np.all(np.abs(_counts(codes, model.domain, [first]) - n * p) < 1)


# ---------------------------------------------------------------- the counts of one group

def test_rounded_counts_are_floor_or_ceiling_sum_to_the_group_and_are_unbiased():
    rng = np.random.default_rng(0)
    sizes = np.array([0.0, 1, 7, 40, 1000])
    probabilities = rng.dirichlet(np.full(6, 0.5), size=sizes.size)
    probabilities[2, 3] = 0.0  # a value the model rules out never gets a row
    probabilities[2] /= probabilities[2].sum()
    expected = sizes[:, None] * probabilities
    draws = np.array([rounded_counts(sizes, probabilities, np.random.default_rng(seed)) for seed in range(3000)])
    assert np.all(draws.sum(axis=2) == sizes)
    assert np.all((draws >= np.floor(expected)) & (draws <= np.ceil(expected)))
    assert np.all(draws[:, 2, 3] == 0)
    fraction = expected - np.floor(expected)  # each count is floor + Bernoulli(fraction)
    tolerance = 5 * np.sqrt(fraction * (1 - fraction) / len(draws)) + 1e-9
    assert np.all(np.abs(draws.mean(axis=0) - expected) <= tolerance)


def test_rounded_counts_take_the_values_in_a_random_order():
    """Four values each expecting 2.5 rows of 10: two of them get a third row. Over a random order
    every pair is equally likely to be those two (1/6 each); over a fixed order, neighbours would
    never be (their fractional parts fill one stretch of length 1) and others would half the time."""
    sizes, probabilities = np.array([10.0]), np.full((1, 4), 0.25)
    ceilings = np.array([rounded_counts(sizes, probabilities, np.random.default_rng(seed))[0] == 3
                         for seed in range(3000)])
    assert np.all(ceilings.sum(axis=1) == 2)
    for a, b in itertools.combinations(range(4), 2):
        assert abs(np.mean(ceilings[:, a] & ceilings[:, b]) - 1 / 6) < 0.035, (a, b)


def test_iid_stays_multinomial_and_rounding_removes_its_noise():
    p = np.array([0.2, 0.3, 0.5])
    iid = np.array([np.bincount(draw(50, p, np.random.default_rng(s), "iid"), minlength=3) for s in range(2000)])
    rounded = np.array([np.bincount(draw(50, p, np.random.default_rng(s)), minlength=3) for s in range(2000)])
    binomial = 50 * p * (1 - p)  # the variance of a multinomial count; the sample variance's s.d. is ~3 %
    assert np.all(np.abs(iid.var(axis=0, ddof=1) / binomial - 1) < 0.15)
    assert np.all(np.abs(iid.mean(axis=0) - 50 * p) < 5 * np.sqrt(binomial / 2000))
    assert set(rounded[:, 0]) == {10} and set(rounded[:, 1]) == {15} and set(rounded[:, 2]) == {25}


def test_a_bad_scheme_is_refused_with_the_choices():
    assert check_sampling("iid") == "iid" and check_sampling("rounded") == "rounded"
    for bad in ("sorted", "IID", None, 1):
        with pytest.raises(SamplingError, match="rounded, iid"):
            check_sampling(bad)


# ---------------------------------------------------------------- junction trees

@pytest.mark.parametrize("structure", [STRUCTURES[0], STRUCTURES[3], STRUCTURES[5], STRUCTURES[6]])
@pytest.mark.parametrize("n", [997, 3_700])  # below and beyond the model's total of 1000 rows
def test_tree_samples_match_every_clique_within_rounding(structure, n):
    model = random_model(structure, seed=7, scale=1.5)
    assert_within_rounding(model, model.sample(n, np.random.default_rng(n)))


def test_a_conditioned_tree_samples_the_same_way():
    model = random_model(STRUCTURES[6], seed=3, scale=1.5)
    weights = np.zeros(model.domain.sizes[0])
    weights[[0, 1]] = [1.0, 0.4]
    conditioned = model.given({"a": weights})
    codes = conditioned.sample(2_500, np.random.default_rng(1))
    assert set(codes[:, 0]) <= {0, 1}
    assert_within_rounding(conditioned, codes)


def test_rounding_beats_iid_on_every_clique():
    model = random_model(STRUCTURES[3], seed=11, scale=1.5)
    errors = {}
    for scheme in ("rounded", "iid"):
        codes = model.sample(5_000, np.random.default_rng(5), scheme)
        errors[scheme] = [0.5 * np.abs(_counts(codes, model.domain, c) / 5_000 - model.marginal(c) / model.total).sum()
                          for c in model.cliques]
    assert all(r < 0.7 * i for r, i in zip(errors["rounded"], errors["iid"])), errors


def _siblings_statistic(codes: np.ndarray) -> float:
    """p-value of the chi-square test that y and z are independent given x (columns 0, 1, 2)."""
    statistic, freedom = 0.0, 0
    for x in np.unique(codes[:, 0]):
        group = codes[codes[:, 0] == x]
        table = np.zeros((4, 4))
        np.add.at(table, (group[:, 1], group[:, 2]), 1)
        table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
        expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / table.sum()
        statistic += ((table - expected) ** 2 / expected).sum()
        freedom += (table.shape[0] - 1) * (table.shape[1] - 1)
    return float(chi2.sf(statistic, freedom))


def _sorted_deal(configs: np.ndarray, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The mutation: values dealt to a configuration's rows in row order, not shuffled."""
    dealt = np.empty(configs.size, dtype=np.int64)
    dealt[np.argsort(configs, kind="stable")] = values
    return dealt


def test_siblings_stay_conditionally_independent_and_a_sorted_assignment_fails(monkeypatch):
    domain = Domain(("x", "y", "z"), (3, 4, 4))
    rng = np.random.default_rng(8)
    potentials = {c: Factor(domain.project(c), rng.normal(size=domain.shape(c))) for c in [("x", "y"), ("x", "z")]}
    model = GraphicalModel(domain, build_junction_tree(domain, potentials), potentials, 6_000.0)
    assert len(model.cliques) == 2  # y and z are siblings given x
    for scheme in ("rounded", "iid"):
        assert _siblings_statistic(model.sample(6_000, np.random.default_rng(3), scheme)) > 0.001, scheme
    monkeypatch.setattr(sampling_module, "deal", _sorted_deal)
    sorted_codes = model.sample(6_000, np.random.default_rng(3))
    assert_within_rounding(model, sorted_codes)  # the counts alone cannot see the mutation ...
    assert _siblings_statistic(sorted_codes) < 1e-9  # ... the independence test does


# ---------------------------------------------------------------- the other models

@pytest.mark.parametrize("block_cells", [None, 7])  # 7: one configuration's table at a time (bounded memory)
def test_networks_round_each_column_per_parent_configuration(monkeypatch, block_cells):
    if block_cells is not None:
        monkeypatch.setattr(sampling_module, "GROUP_BLOCK_CELLS", block_cells)
    rng = np.random.default_rng(2)
    domain = Domain(("a", "b", "c"), (3, 4, 5))
    network = BayesianNetwork(domain, (
        Conditional("a", (), (), rng.dirichlet(np.ones(3))),
        Conditional("b", ("a",), (None,), rng.dirichlet(np.ones(4), size=3)),
        Conditional("c", ("a", "b"), (np.array([0, 1, 1]), None), rng.dirichlet(np.ones(5), size=(2, 4))),
    ), 1000.0)
    codes = network.sample(4_321, np.random.default_rng(0))
    for c in network.conditionals:
        columns = [codes[:, domain.index(p)] if g is None else g[codes[:, domain.index(p)]]
                   for p, g in zip(c.parents, c.groups)]
        configs = np.ravel_multi_index(columns, c.table.shape[:-1]) if columns else np.zeros(len(codes), int)
        table = c.table.reshape(-1, c.table.shape[-1])
        sampled = np.zeros_like(table)
        np.add.at(sampled, (configs, codes[:, domain.index(c.attribute)]), 1)
        assert np.all(np.abs(sampled - sampled.sum(axis=1, keepdims=True) * table) < 1), c.attribute


def test_product_histogram_and_expanded_codes_are_within_one_per_cell():
    rng = np.random.default_rng(4)
    domain = Domain(("a", "b"), (3, 5))
    product = ProductModel(domain, (rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(5))), 800.0)
    codes = product.sample(1_234, np.random.default_rng(1))
    for j, p in enumerate(product.probabilities):
        assert np.all(np.abs(np.bincount(codes[:, j], minlength=p.size) - 1_234 * p) < 1)
    histogram = HistogramModel(domain, rng.random(domain.sizes) * 10)
    codes = histogram.sample(999, np.random.default_rng(1))
    expected = 999 * histogram.counts / histogram.total
    assert np.all(np.abs(_counts(codes, domain, domain.names) - expected) < 1)
    mapping = np.array([0, 2, 1, 2, 2])  # codes 1, 3 and 4 merged into compressed code 2
    merged = expand_codes(np.full((1_000, 1), 2), ["a"], {"a": mapping}, np.random.default_rng(0))
    assert sorted(np.bincount(merged[:, 0], minlength=5)[[1, 3, 4]]) == [333, 333, 334]


# ---------------------------------------------------------------- the user's paths

def test_fitted_models_sample_rounded_and_iid_on_request():
    fitted = fit(small_description("independent"))
    p = fitted.model.marginal(["sex"])
    p = p / p.sum()
    for seed in range(3):
        counts = fitted.sample(777, seed=seed, sampling="rounded")["sex"].value_counts()
        assert np.all(np.abs(counts[["Female", "Male"]].to_numpy() - 777 * p) < 1)
    iid = [fitted.sample(777, seed=seed, sampling="iid")["sex"].eq("Female").sum() for seed in range(10)]
    assert max(abs(c - 777 * p[0]) for c in iid) > 1  # i.i.d. counts wander
    with pytest.raises(SamplingError, match="rounded, iid"):
        fitted.sample(10, sampling="sorted")


def test_the_cli_refuses_a_bad_scheme_before_any_work(capsys, tmp_path, mixed_csv):
    from synth.release.description import save_description

    path = tmp_path / "description.json"
    save_description(small_description("independent"), path)
    code, _, err = run_cli(capsys, "generate", str(path), "-o", str(tmp_path / "s.csv"), "--sampling", "sorted")
    assert_clean_error(code, err, "unknown sampling 'sorted'", "rounded, iid")
    assert not (tmp_path / "description.model.npz").exists() and not (tmp_path / "s.csv").exists()
    code, _, err = run_cli(capsys, "generate", str(path), "-o", str(tmp_path / "s.csv"), "--sampling", "iid", "-q")
    assert code == 0, err
    code, _, err = run_cli(capsys, "run", str(mixed_csv), "--epsilon", "1", "-o", str(tmp_path / "out"),
                           "--sampling", "shuffled")
    assert_clean_error(code, err, "unknown sampling 'shuffled'")
    assert not (tmp_path / "out").exists()  # refused before any budget was spent

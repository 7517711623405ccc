"""PrivBayes and random engines: the mutual-information mechanism, the network, its tables and
sampling, budgets, options, and the whole path from a table to synthetic rows."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chisquare

from synth.api import describe
from synth.columns.column import Column
from synth.columns.domain import Domain
from synth.columns.kinds import DomainSource, Kind
from synth.columns.schema import Schema
from synth.domains.profile import Profile
from synth.engines import make_engine
from synth.engines.privbayes import parent_groups
from synth.errors import DescriptionError, EngineError, SynthError
from synth.generation.generate import ExpandedModel, fit_model, generate
from synth.inspect import inspect_text
from synth.model.bayesian_network import BayesianNetwork, Conditional, network_from_measurements
from synth.model.fitting import fit_graphical_model
from synth.model.junction_tree import model_size_mb
from synth.privacy import Accountant, Budget, Notion, SeededNoise
from synth.privacy.curator import CountRelease, Curator
from synth.privacy.measurement import Measurement, table_cells
from synth.privacy.neighbours import Neighbouring
from synth.privacy.selection_scores import Dependence
from synth.progress import SILENT
from synth.release.description import Description, load_description, save_description
from tests.conftest import mixed_table
from tests.test_engines import chain_data, curator_for


def _curator(codes: np.ndarray, domain: Domain, epsilon: float = 1e4, delta: float = 0.0,
             relation: str = "add-remove", seed: int = 0, notion: Notion | None = None) -> Curator:
    accountant = Accountant(Budget(epsilon, delta), notion)
    return Curator(codes, domain, CountRelease(accountant, SeededNoise(seed), Neighbouring(relation)))


def _scaled_mi(joint: np.ndarray) -> float:
    """n·I(X; Π) from a (child, parents) count table, as Σ c log(c n / (row · column))."""
    n = joint.sum()
    rows, columns = joint.sum(axis=1, keepdims=True), joint.sum(axis=0, keepdims=True)
    mask = joint > 0
    return float(np.sum(joint[mask] * np.log((joint * n / (rows * columns))[mask])))


# --- the mutual-information mechanism ------------------------------------------------------------

def _scaled_r(joint: np.ndarray) -> float:
    """n·R(X; Π): half the L1 distance between the counts and the product of their margins."""
    return 0.5 * float(np.abs(joint - np.outer(joint.sum(axis=1), joint.sum(axis=0)) / joint.sum()).sum())


def _score(codes: np.ndarray, domain: Domain, attrs: tuple[str, ...], maps: dict, score: str = "mi") -> float:
    """The score of one (child, parents) pair, from the exact counts of ``codes``."""
    def exact(columns: tuple[str, ...], groups: dict) -> np.ndarray:
        flat, sizes = table_cells(codes, domain, columns, groups)
        return np.bincount(flat, minlength=math.prod(sizes))

    return float(Dependence(score, [attrs], maps, 10**9, domain).values(exact, len(codes))[0])


def _bound(score: str, relation: str, n: int) -> float:
    """The sensitivity claimed in synth.privacy.selection_scores' docstring, for a table of n rows before the change."""
    if score == "r":
        return 2.0 if relation == "add-remove" else 3 + 2 / n
    return math.log(n + 1) + 1 if relation == "add-remove" else 2 * (math.log(n + 1) + 1)


@pytest.mark.parametrize("score", ["mi", "r"])
@pytest.mark.parametrize("relation", ["add-remove", "replace"])
def test_score_sensitivity_bound_holds_on_random_neighbours(relation, score):
    rng = np.random.default_rng(11)
    domain = Domain(("x", "p", "q"), (5, 12, 3))
    maps = {"p": np.arange(12) // 3}  # p as a parent on 4 groups
    worst = 0.0
    for trial in range(300):
        n = int(rng.integers(2, 150))
        skew = rng.dirichlet(np.full(4, 0.5))
        codes = np.column_stack([rng.choice(4, n, p=skew), rng.integers(0, 11, n), rng.integers(0, 2, n)])
        codes[:, 0] = np.where(rng.random(n) < 0.7, codes[:, 1] % 4, codes[:, 0])  # x depends on p
        # the changed row: random, or fresh values everywhere (the worst case of the derivation)
        row = np.array([4, 11, 2]) if trial % 3 == 0 else np.array([rng.integers(0, s) for s in domain.sizes])
        if relation == "add-remove":
            neighbour = np.vstack([codes, row])
        else:
            neighbour = codes.copy()
            neighbour[rng.integers(0, n)] = row
        bound = _bound(score, relation, n)
        for attrs in [("x", "p"), ("x", "p", "q"), ("q", "x")]:
            change = abs(_score(neighbour, domain, attrs, maps, score)
                         - _score(codes, domain, attrs, maps, score))
            assert change < bound
            worst = max(worst, change / bound)
    assert worst > 0.5  # the bound is not loose by more than a factor of 2: the test can see a wrong one


def test_the_r_bound_under_add_remove_is_reached_on_independent_columns():
    domain = Domain(("x", "p"), (5, 6))
    independent = np.array([(x, p) for x in range(4) for p in range(5)] * 5)  # 100 rows, e = 0
    added = np.vstack([independent, [4, 5]])  # a row of values not seen before
    change = (_score(added, domain, ("x", "p"), {}, "r")
              - _score(independent, domain, ("x", "p"), {}, "r"))
    assert change == pytest.approx(2 * 100 / 101) and change < _bound("r", "add-remove", 100)


def test_scores_match_their_definitions():
    codes, domain = chain_data(400)
    maps = {"a": np.arange(domain.size(("a",))) // 2}
    joint = np.zeros((domain.size(("b",)), int(maps["a"].max()) + 1))
    np.add.at(joint, (codes[:, domain.index("b")], maps["a"][codes[:, domain.index("a")]]), 1)
    assert _score(codes, domain, ("b", "a"), maps, "mi") == pytest.approx(_scaled_mi(joint))
    assert _score(codes, domain, ("b", "a"), maps, "r") == pytest.approx(_scaled_r(joint))
    assert _scaled_r(joint) > 10  # b depends on a: the comparison is not 0 == 0


@pytest.mark.parametrize("score", ["mi", "r"])
@pytest.mark.parametrize("relation", ["add-remove", "replace"])
def test_selection_records_the_sensitivity_of_its_relation(score, relation):
    codes, domain = chain_data(500)
    pairs = [("b", ("a",)), ("c", ("a",))]
    curator = _curator(codes, domain, epsilon=10.0, relation=relation)
    curator.select_by_dependence(pairs, 1.0, score, max_rows=500)
    assert curator.accountant.ledger[-1].sensitivity == pytest.approx(  # L = log 4: 4 values of a, b and c
        math.log(501) + 1 + math.log(4) if (score, relation) == ("mi", "add-remove") else _bound(score, relation, 500))


def test_an_unknown_score_is_refused():
    codes, domain = chain_data(100)
    curator = _curator(codes, domain)
    with pytest.raises(EngineError, match="unknown dependence score 'f'"):
        curator.select_by_dependence([("b", ("a",)), ("c", ("a",))], 1.0, "f")
    assert curator.accountant.ledger == ()


@pytest.mark.parametrize("score", ["mi", "r"])
@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_selection_follows_the_exponential_mechanism(delta, score):
    rng = np.random.default_rng(5)
    n = 60
    x = rng.integers(0, 3, n)
    y = np.where(rng.random(n) < 0.5, x, rng.integers(0, 3, n))
    z = np.where(rng.random(n) < 0.3, x % 2, rng.integers(0, 2, n))
    codes, domain = np.column_stack([x, y, z]), Domain(("x", "y", "z"), (3, 3, 2))
    pairs = [("y", ("x",)), ("z", ("x",)), ("z", ("y",))]
    scores = []
    for child, (parent,) in pairs:
        joint = np.zeros((domain.size((child,)), domain.size((parent,))))
        np.add.at(joint, (codes[:, domain.index(child)], codes[:, domain.index(parent)]), 1)
        scores.append(_scaled_mi(joint) if score == "mi" else _scaled_r(joint))
    scores = np.array(scores)
    curator = _curator(codes, domain, epsilon=1e5, delta=delta, seed=2)
    sensitivity = _bound(score, "add-remove", n) + (math.log(3) if score == "mi" else 0.0)  # + L: 3 values of y
    scale = 6.0 if score == "mi" else 2.0  # Gumbel scale: keeps the choice far from certain and from uniform
    budget = 2 * sensitivity / scale if delta == 0 else (2 * sensitivity / scale) ** 2 / 8
    draws = 3000
    picks = np.bincount([curator.select_by_dependence(pairs, budget, score, max_rows=n) for _ in range(draws)],
                        minlength=3)
    entry = curator.accountant.ledger[-1]
    assert entry.mechanism == "exponential" and entry.noise_scale == pytest.approx(scale, rel=1e-9)
    expected = np.exp((scores - scores.max()) / scale)
    expected /= expected.sum()
    assert expected.max() > 0.5 and expected.min() < 0.2  # far from uniform: the test has power
    assert chisquare(picks, expected * draws).pvalue > 1e-3


@pytest.mark.parametrize("score", ["mi", "r"])
def test_selection_is_near_uniform_at_tiny_budget_and_certain_at_huge(score):
    codes, domain = chain_data(2000)
    pairs = [("b", ("a",)), ("e", ("a",)), ("d", ("e",))]  # a strong dependence, then two independent pairs
    curator = _curator(codes, domain, epsilon=1e9)
    tiny = np.bincount([curator.select_by_dependence(pairs, 1e-6, score) for _ in range(3000)], minlength=3)
    assert chisquare(tiny).pvalue > 1e-3
    huge = np.bincount([curator.select_by_dependence(pairs, 1e3, score) for _ in range(300)], minlength=3)
    assert huge[0] == 300


def test_choices_that_cannot_depend_on_the_data_are_free():
    codes, domain = chain_data(300)
    curator = _curator(codes, domain, epsilon=1.0)
    assert curator.select_by_dependence([("a", ("b",))], 0.5) == 0
    picks = np.bincount([curator.select_by_dependence([(a, ()) for a in "abcde"], 0.5)
                         for _ in range(2500)], minlength=5)
    assert chisquare(picks).pvalue > 1e-3  # uniform
    assert curator.accountant.ledger == ()


# --- the engine ------------------------------------------------------------------------------------

@pytest.mark.parametrize("score", ["mi", "r"])
def test_huge_epsilon_finds_the_true_chain(score):
    codes, domain = chain_data(20_000)
    result = make_engine("privbayes", {"degree": 1, "score": score}).describe(curator_for(codes, domain, 1e4), SILENT)
    edges = {frozenset((child, p)) for child, parents in result.output.network for p in parents}
    assert {frozenset("ab"), frozenset("bc"), frozenset("cd")} <= edges and len(edges) == 4
    result = make_engine("privbayes", {"score": score}).describe(curator_for(codes, domain, 1e4), SILENT)
    order = [child for child, _ in result.output.network]
    for a, parents in result.output.network:  # with two parents, the chain neighbours placed before are among them
        neighbours = {"a": "b", "b": "ac", "c": "bd", "d": "c", "e": ""}[a]
        assert {b for b in neighbours if order.index(b) < order.index(a)} <= set(parents)


def test_large_columns_are_coarse_parents_and_full_children():
    rng = np.random.default_rng(3)
    n = 20_000
    x = rng.integers(0, 40, n)
    y = np.where(rng.random(n) < 0.9, x // 5, rng.integers(0, 8, n))
    w = np.where(rng.random(n) < 0.9, x % 2, 1 - x % 2)  # depends on x's low bit only
    codes, domain = np.column_stack([x, y, w]), Domain(("x", "y", "w"), (40, 8, 2))
    result = make_engine("privbayes", {"degree": 1}).describe(curator_for(codes, domain, 1e4), SILENT)
    groups = parent_groups({"x": 40, "y": 8, "w": 2}, 8)
    assert set(groups) == {"x"} and np.array_equal(groups["x"], np.arange(40) // 5)
    for m in result.measurements:
        if m.attrs and m.attrs[0] == "x":
            assert m.coarsening == {} and m.values.size == 40 * np.prod([domain.size((p,)) for p in m.attrs[1:]])
        elif "x" in m.attrs:
            assert np.array_equal(m.coarsening["x"], groups["x"]) and m.values.size == domain.size(m.attrs[:1]) * 8
    if any("x" in parents for _, parents in result.output.network):
        assert result.output.parent_groups == {"x": tuple(groups["x"].tolist())}


@pytest.mark.parametrize("delta,notion,relation", [
    (0.0, None, "add-remove"), (1e-6, None, "add-remove"), (1e-6, Notion.APPROX, "add-remove"),
    (1e-6, None, "replace")])
def test_the_ledger_spends_exactly_the_budget(delta, notion, relation):
    codes, domain = chain_data(3000)
    curator = _curator(codes, domain, epsilon=1.0, delta=delta, relation=relation, notion=notion)
    total = curator.remaining()
    result = make_engine("privbayes").describe(curator, SILENT)
    spent = sum(Fraction(curator.notion.unit_of(e.cost)) for e in curator.accountant.ledger)
    assert float(spent) == pytest.approx(total, rel=1e-9) and spent <= Fraction(total)
    kinds = [e.mechanism for e in curator.accountant.ledger]
    assert kinds.count("exponential") == 4  # the first column is free, then one choice per column
    assert len(result.measurements) == 5 + (relation == "add-remove")  # the tables (and the count)


def test_theta_usefulness_drops_parents_at_tiny_epsilon():
    codes, domain = chain_data(2000)
    curator = _curator(codes, domain, epsilon=0.01)
    result = make_engine("privbayes").describe(curator, SILENT)
    assert result.output.max_cells < 4 and result.output.degree_used == 0
    assert all(not parents for _, parents in result.output.network)
    assert "exponential" not in {e.mechanism for e in curator.accountant.ledger}  # nothing to choose: free
    # at a moderate budget, every table with parents has at most max_cells cells
    curator = _curator(codes, domain, epsilon=0.5)
    result = make_engine("privbayes", {"theta": 8}).describe(curator, SILENT)
    limit = result.output.max_cells
    assert 16 <= limit < 64  # room for one parent of 4 codes, not two
    for m in result.measurements:
        if len(m.attrs) > 1:
            assert m.values.size <= limit
    assert result.output.degree_used == 1


def test_with_fit_the_network_keeps_the_model_within_its_size_cap():
    codes, domain = chain_data(20_000)
    cap = 70 * 8 / 2**20  # 70 float64 cells: room for the chain's 2-way cliques, not for a 3-way one
    free = make_engine("privbayes", {"fit": True}).describe(curator_for(codes, domain, 1e4), SILENT)
    assert free.output.degree_used == 2  # without the cap the network uses two parents
    capped = make_engine("privbayes", {"fit": True, "max_model_size": cap}).describe(
        curator_for(codes, domain, 1e4), SILENT)
    tables = [(child, *parents) for child, parents in capped.output.network]
    assert model_size_mb(domain, tables) <= cap and capped.output.degree_used == 1
    unfitted = make_engine("privbayes", {"max_model_size": cap}).describe(curator_for(codes, domain, 1e4), SILENT)
    assert unfitted.output.degree_used == 2  # the cap is for the fitter's model only


@pytest.mark.parametrize("options,needle", [
    ({"degree": -1}, "degree"), ({"degree": 1.5}, "degree"), ({"theta": 0}, "theta"), ({"theta": -2.0}, "theta"),
    ({"parent_bins": 1}, "parent_bins"), ({"structure_share": 1.0}, "structure_share"),
    ({"max_rows": 0}, "max_rows"), ({"fit": "yes"}, "fit"), ({"k": 2}, "no option"),
    ({"score": "f"}, "score must be one of mi, r"), ({"max_model_size": 0}, "max_model_size"),
])
def test_bad_options_are_refused(options, needle):
    with pytest.raises(EngineError, match=needle):
        make_engine("privbayes", options)


def test_a_degree_of_all_other_columns_or_more_is_refused_before_spending():
    codes, domain = chain_data(200)  # 5 columns
    curator = _curator(codes, domain)
    with pytest.raises(EngineError, match="degree 5 is too large for a table of 5 columns"):
        make_engine("privbayes", {"degree": 5}).describe(curator, SILENT)
    assert curator.accountant.ledger == ()
    make_engine("privbayes", {"degree": 4}).describe(curator, SILENT)  # every other column may be a parent


# --- the Bayesian network model ------------------------------------------------------------------

def _network() -> BayesianNetwork:
    """a (3) → b (4); (a, b) → c (10); c on 5 groups → d (3)."""
    rng = np.random.default_rng(8)
    domain = Domain(("a", "b", "c", "d"), (3, 4, 10, 3))
    groups = np.arange(10) // 2
    conditionals = (
        Conditional("a", (), (), np.array([0.5, 0.3, 0.2])),
        Conditional("b", ("a",), (None,), rng.dirichlet(np.ones(4), 3)),
        Conditional("c", ("a", "b"), (None, None), rng.dirichlet(np.full(10, 0.5), (3, 4))),
        Conditional("d", ("c",), (groups,), rng.dirichlet(np.ones(3), 5)),
    )
    return BayesianNetwork(domain, conditionals, 1000.0)


def _joint(model: BayesianNetwork) -> np.ndarray:
    a, b, c, d = (c.table for c in model.conditionals)
    return model.total * np.einsum("a,ab,abc,cd->abcd", a, b, c, d[np.arange(10) // 2])


@pytest.mark.parametrize("attrs", [("a",), ("d",), ("d", "a"), ("b", "d"), ("c", "b", "a"), ("a", "b", "c", "d")])
def test_network_marginals_are_exact(attrs):
    model = _network()
    joint = _joint(model)
    expected = np.einsum(f"abcd->{''.join(attrs)}", joint)
    assert model.marginal(attrs) == pytest.approx(expected, rel=1e-10)
    assert model.marginal(attrs).sum() == pytest.approx(1000.0)


def test_network_sampling_matches_its_conditionals():
    model = _network()
    n = 60_000
    rows = model.sample(n, np.random.default_rng(4))
    assert rows.shape == (n, 4)
    groups = np.arange(10) // 2
    for g in range(5):  # d given c's group
        drawn = np.bincount(rows[groups[rows[:, 2]] == g, 3], minlength=3)
        assert chisquare(drawn, model.conditionals[3].table[g] * drawn.sum()).pvalue > 1e-4
    for a in range(3):  # c given (a, b)
        for b in range(4):
            drawn = np.bincount(rows[(rows[:, 0] == a) & (rows[:, 1] == b), 2], minlength=10)
            p = model.conditionals[2].table[a, b]
            keep = p * drawn.sum() >= 5
            pooled = np.append(drawn[keep], drawn[~keep].sum())
            expected = np.append(p[keep], p[~keep].sum()) * drawn.sum()
            assert chisquare(pooled[expected > 0], expected[expected > 0]).pvalue > 1e-4
    joint = _joint(model) / 1000.0
    flat = np.ravel_multi_index(rows.T, (3, 4, 10, 3))
    assert np.abs(np.bincount(flat, minlength=360) / n - joint.ravel()).sum() / 2 < 0.04


def test_tables_from_noisy_counts_are_projected_rows():
    domain = Domain(("a", "b"), (2, 3))
    measurements = [
        Measurement(("a",), np.array([60.0, 40.0]), "discrete_gaussian", 1.0),
        # cells (b, a) in C order: given a = 0 the counts of b are (30, 10, -5), given a = 1 (-4, 12, 2)
        Measurement(("b", "a"), np.array([30.0, -4.0, 10.0, 12.0, -5.0, 2.0]), "discrete_gaussian", 1.0),
    ]
    model = network_from_measurements(domain, [("a", ()), ("b", ("a",))], measurements)
    table = model.conditionals[1].table  # (a, b)
    assert table.shape == (2, 3)
    # a = 0: counts (30, 10, -5) with sum 35 → lowered by 2.5 → (27.5, 7.5, 0) / 35
    assert table[0] == pytest.approx([27.5 / 35, 7.5 / 35, 0.0])
    # a = 1: counts (-4, 12, 2), sum 10 → lowered by 2 → (0, 10, 0)
    assert table[1] == pytest.approx([0.0, 1.0, 0.0])
    with pytest.raises(DescriptionError, match="topological"):
        network_from_measurements(domain, [("b", ("a",)), ("a", ())], measurements)
    with pytest.raises(DescriptionError, match="no measurement"):
        network_from_measurements(domain, [("a", ()), ("b", ())], measurements)


def test_a_row_with_no_mass_is_uniform():
    domain = Domain(("a", "b"), (2, 3))
    measurements = [Measurement(("a",), np.array([5.0, 5.0]), "discrete_gaussian", 1.0),
                    Measurement(("b", "a"), np.array([4.0, -1.0, 3.0, -2.0, 3.0, 0.0]), "discrete_gaussian", 1.0)]
    model = network_from_measurements(domain, [("a", ()), ("b", ("a",))], measurements)
    assert model.conditionals[1].table[1] == pytest.approx([1 / 3] * 3)


def test_the_fitter_matches_coarse_measurements():
    rng = np.random.default_rng(2)
    joint = rng.dirichlet(np.full(18, 0.7)).reshape(6, 3) * 5000  # (a, c)
    groups = np.array([0, 0, 1, 1, 2, 2])
    coarse = np.add.reduceat(joint, [0, 2, 4], axis=0)  # (a groups, c)
    measurements = [Measurement(("c", "a"), coarse.T.ravel(), "gaussian", 0.01, coarsening={"a": groups}),
                    Measurement(("a",), joint.sum(axis=1), "gaussian", 0.01)]
    model = fit_graphical_model(Domain(("a", "c"), (6, 3)), measurements, iterations=3000, tolerance=0)
    fitted = model.marginal(("a", "c"))
    assert np.add.reduceat(fitted, [0, 2, 4], axis=0) == pytest.approx(coarse, abs=0.5)
    assert fitted.sum(axis=1) == pytest.approx(joint.sum(axis=1), abs=0.5)


# --- Descriptions, the generator and the API ---------------------------------------------------------

def assert_in_domain(synthetic, description) -> np.ndarray:
    """Every value decodes to the released domain: nothing clipped or unreadable on re-encoding,
    categories among the public ones (or the out-of-domain category); returns the codes."""
    codes, report = description.schema.encode(synthetic)
    assert all(c.clipped_low == c.clipped_high == c.invalid == 0 for c in report.columns)
    city = description.schema.column("city")
    assert set(synthetic["city"].dropna()) <= set(city.categories) | {"<OTHER>"}
    return codes


@pytest.mark.parametrize("fit", [False, True])
def test_end_to_end_release_decodes_to_the_domain(tmp_path, fit):
    df = mixed_table(3000)
    profile = Profile(schema=None, epsilon=2.0, delta=1e-6, engine="privbayes", engine_options={"fit": fit}, seed=4)
    description = describe(df, profile, report_to=None)
    save_description(description, tmp_path / "d.json")
    loaded = load_description(tmp_path / "d.json")
    assert loaded.engine_options["fit"] is fit
    assert loaded.engine_output.network == description.engine_output.network
    assert len(loaded.engine_output.network) == len(df.columns)
    assert float(loaded.privacy["spent"]["epsilon"]) <= 2.0
    model = fit_model(loaded, iterations=200)
    assert isinstance(model, ExpandedModel) == fit
    for column in loaded.schema.columns:
        assert model.marginal([column.name]).shape == (column.size,)
    synthetic = generate(loaded, rows=700, seed=1, iterations=200)
    assert list(synthetic.columns) == list(df.columns) and len(synthetic) == 700
    assert_in_domain(synthetic, loaded)


def test_a_coarse_measurement_must_fit_its_domain():
    description = describe(mixed_table(2000), epsilon=5.0, delta=1e-6, engine="privbayes", seed=1, report_to=None)
    coarse = [m for m in description.measurements if m.coarsening]
    assert coarse, "the mixed table has columns of more than 8 codes used as parents"
    bad = coarse[0]
    name = next(iter(bad.coarsening))
    broken = Measurement(bad.attrs, bad.values, bad.mechanism, bad.noise_scale,
                         coarsening={name: np.append(bad.coarsening[name], 0)})
    measurements = tuple(broken if m is bad else m for m in description.measurements)
    with pytest.raises(DescriptionError, match="coarsening"):
        replace(description, measurements=measurements).validate()
    with pytest.raises(DescriptionError, match="coarsens"):
        Measurement(bad.attrs, bad.values, bad.mechanism, bad.noise_scale, coarsening={name: np.array([0, 2])})


@pytest.mark.parametrize("network", [
    [{"attribute": "age"}], [{"parents": []}], "age", [["age", []]], [{"attribute": 3, "parents": []}]])
def test_a_malformed_network_is_a_description_error(network):
    description = describe(mixed_table(), epsilon=1.0, delta=1e-6, engine="privbayes", seed=1, report_to=None)
    data = description.to_dict()
    data["engine"]["output"]["network"] = network
    with pytest.raises(DescriptionError, match="network"):
        Description.from_dict(data)


def test_random_engine_spends_nothing_and_needs_rows(tmp_path):
    df = mixed_table(500)
    schema = Schema(columns=(
        Column(name="city", kind=Kind.CATEGORICAL, categories=("Lyon", "Oslo", "Porto", "Quito"), lower=None,
               upper=None, bins=None, source=DomainSource.PUBLIC),
        Column(name="age", kind=Kind.INTEGER, categories=None, lower=18, upper=79, bins=62,
               source=DomainSource.PUBLIC)))
    description = describe(df, Profile(schema=schema, epsilon=1.0, engine="random"), report_to=None)
    assert description.measurements == () and description.ledger == ()
    save_description(description, tmp_path / "d.json")
    loaded = load_description(tmp_path / "d.json")  # an empty ledger is a valid release
    assert loaded.ledger_totals() == {"epsilon": 0.0, "delta": 0.0, "rho": 0.0}
    with pytest.raises(SynthError, match="--rows"):
        generate(loaded)
    synthetic = generate(loaded, rows=4000, seed=2)
    codes = assert_in_domain(synthetic, loaded)
    city = loaded.schema.names.index("city")
    counts = np.bincount(codes[:, city], minlength=loaded.schema.sizes[city])
    assert chisquare(counts).pvalue > 1e-3  # uniform over the column's codes
    with pytest.raises(EngineError, match="no option"):
        make_engine("random", {"rows": 5})
    text = inspect_text(loaded)
    assert "estimated rows: none: nothing was measured" in text and "nan" not in text

"""Domain, factors, junction trees and the graphical model: exact marginals and i.i.d. sampling.

Every model here is small enough to build its full joint table by broadcasting, which is the
brute-force reference for belief propagation, variable elimination and sampling.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import chi2, chisquare

from synth.columns.domain import Domain
from synth.model import junction_tree
from synth.model.factor import Factor
from synth.model.graphical import GraphicalModel, _contract
from synth.model.junction_tree import (
    ModelSizes,
    build_junction_tree,
    maximal_cliques,
    model_size_mb,
    spanning_tree_edges,
)

# clique structures over attributes a..f: chains, stars, non-chordal cycles that need fill-in
STRUCTURES = [
    [("a", "b"), ("b", "c"), ("c", "d")],
    [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")],  # 4-cycle
    [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "a")],  # 5-cycle
    [("a", "b", "c"), ("c", "d"), ("d", "e"), ("e", "f"), ("f", "a")],  # triple closing a 5-cycle
    [("a", "c"), ("b", "d"), ("a", "d"), ("b", "c"), ("e",), ("e", "f"), ("d", "f")],
    [("a",), ("b",), ("c", "d")],  # disconnected pieces
    [("a", "b", "c"), ("b", "c", "d"), ("c", "d", "e"), ("a", "e")],
    [("a", "b"), ("b", "c"), ("d", "e"), ("e", "f")],  # two chains: (a, c, d, f) needs both eliminated
]


def random_model(structure, seed: int, total: float = 1000.0, scale: float = 1.0) -> GraphicalModel:
    rng = np.random.default_rng(seed)
    names = sorted({a for clique in structure for a in clique})
    domain = Domain(tuple(names), tuple(int(s) for s in rng.integers(2, 5, len(names))))
    tree = build_junction_tree(domain, structure)
    potentials = {tuple(c): Factor(domain.project(c), scale * rng.normal(size=domain.shape(c))) for c in structure}
    return GraphicalModel(domain, tree, potentials, total)


def brute_force_joint(model: GraphicalModel) -> np.ndarray:
    """The full joint table (domain order, counts summing to the total) by broadcasting."""
    joint = Factor.zeros(model.domain)
    for factor in model.potentials.values():
        joint = joint + factor
    p = np.exp(joint.values - joint.values.max())
    return p * model.total / p.sum()


def brute_force_marginal(model: GraphicalModel, attrs) -> np.ndarray:
    names = model.domain.names
    table = brute_force_joint(model).sum(axis=tuple(i for i, a in enumerate(names) if a not in attrs))
    kept = [a for a in names if a in attrs]
    return table.transpose([kept.index(a) for a in attrs])


# ---------------------------------------------------------------- domain and factors

def test_domain_validates_and_answers_sizes():
    d = Domain(("x", "y", "z"), (2, 3, 4))
    assert d.size() == 24 and d.size(("z", "x")) == 8 and d.size(()) == 1
    assert d.shape(("z", "x")) == (4, 2)
    assert d.project(("z", "x")) == Domain(("z", "x"), (4, 2))
    assert d.index("y") == 1 and d.canonical(("z", "x")) == ("x", "z")
    assert Domain.from_mapping({"x": 2, "y": 3}) == Domain(("x", "y"), (2, 3))
    with pytest.raises(ValueError, match="distinct"):
        Domain(("x", "x"), (2, 2))
    with pytest.raises(ValueError, match="at least one code"):
        Domain(("x", "y"), (2, 0))
    with pytest.raises(ValueError, match="one size per name"):
        Domain(("x",), (2, 3))
    with pytest.raises(ValueError, match="not in the domain"):
        d.index("w")
    with pytest.raises(ValueError, match="'w' is not in the domain"):
        d.shape(("x", "w"))


def test_factor_product_broadcasts_over_the_union():
    rng = np.random.default_rng(0)
    d = Domain(("x", "y", "z"), (2, 3, 4))
    f = Factor(d.project(("z", "x")), rng.normal(size=(4, 2)))
    g = Factor(d.project(("y", "x")), rng.normal(size=(3, 2)))
    h = f + g
    assert h.domain.names == ("z", "x", "y")
    for z, x, y in itertools.product(range(4), range(2), range(3)):
        assert h.values[z, x, y] == pytest.approx(f.values[z, x] + g.values[y, x])
    with pytest.raises(ValueError, match="shape"):
        Factor(d.project(("x",)), np.zeros(3))


# ---------------------------------------------------------------- junction trees

@pytest.mark.parametrize("structure", STRUCTURES)
def test_junction_tree_is_a_tree_with_running_intersection(structure):
    names = sorted({a for clique in structure for a in clique}) + ["lonely"]
    domain = Domain(tuple(names), tuple(range(2, 2 + len(names))))
    tree = build_junction_tree(domain, structure)
    cliques = [set(c) for c in tree.cliques]
    # every input clique, and every attribute (even one in no clique), is inside a maximal clique
    for clique in structure:
        assert any(set(clique) <= c for c in cliques)
    assert any(c == {"lonely"} for c in cliques)
    # no maximal clique contains another
    assert not any(i != j and a <= b for i, a in enumerate(cliques) for j, b in enumerate(cliques))
    # a spanning tree, parents before children, separators = intersections, child layout sep-first
    assert len(tree.edges) == len(cliques) - 1
    seen = {0}
    for parent, child, separator in tree.edges:
        assert parent in seen and child not in seen
        seen.add(child)
        assert set(separator) == cliques[parent] & cliques[child]
        assert tree.cliques[child][: len(separator)] == separator
    assert seen == set(range(len(cliques)))
    # running intersection: the cliques holding any attribute form a connected subtree
    for attr in names:
        holders = {i for i, c in enumerate(cliques) if attr in c}
        links = [(p, c) for p, c, _ in tree.edges if p in holders and c in holders]
        assert len(links) == len(holders) - 1


def test_cycles_are_triangulated_and_sizes_come_from_the_structure_only():
    domain = Domain(("a", "b", "c", "d", "e"), (3, 4, 5, 6, 7))
    cycle = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "a")]
    tree = build_junction_tree(domain, cycle)
    assert len(tree.cliques) == 3 and all(len(c) == 3 for c in tree.cliques)  # a 5-cycle needs two chords
    cells = sum(domain.size(c) for c in tree.cliques)
    assert model_size_mb(domain, cycle) == pytest.approx(cells * 8 / 2**20)
    assert tree.size_mb == pytest.approx(model_size_mb(domain, cycle))
    assert tree.largest_clique_cells == max(domain.size(c) for c in tree.cliques)
    assert sorted(map(set, maximal_cliques(domain, cycle)), key=sorted) == sorted(map(set, tree.cliques), key=sorted)
    # min-fill with a cell-count tie-break: a 4-cycle gets the chord that keeps cliques smallest
    square = Domain(("a", "b", "c", "d"), (100, 2, 100, 2))
    chorded = maximal_cliques(square, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")])
    assert all({"b", "d"} <= set(c) for c in chorded)
    with pytest.raises(ValueError, match="not in the domain"):
        build_junction_tree(domain, [("a", "zz")])


def greedy_elimination_by_hand(domain: Domain, cliques) -> list[set[str]]:
    """The documented rule, recomputed from scratch at every step: eliminate the attribute whose
    neighbours lack the fewest edges, then whose clique has the fewest cells, then the first in the
    domain; keep the cliques formed that no other holds."""
    edges = {a: set() for a in domain.names}
    for clique in cliques:
        for a in clique:
            edges[a] |= set(clique) - {a}
    left, formed = list(domain.names), []
    while left:
        def key(a):
            near = edges[a] & set(left)
            missing = sum(1 for x, y in itertools.combinations(sorted(near), 2) if y not in edges[x])
            return missing, domain.size(near | {a}), domain.index(a)
        a = min(left, key=key)
        near = edges[a] & set(left)
        for x in near:
            edges[x] |= near - {x}
        formed.append(near | {a})
        left.remove(a)
    return [c for c in formed if not any(c < d for d in formed)]


def test_greedy_elimination_picks_as_if_every_attribute_were_scored_afresh_at_every_step():
    rng = np.random.default_rng(17)
    names = tuple(f"c{i}" for i in range(14))
    for trial in range(200):  # sparse to dense graphs; sizes from few values, so that cells tie often
        domain = Domain(names, tuple(int(s) for s in rng.choice([2, 3, 4, 6], size=len(names))))
        cliques = [tuple(str(a) for a in rng.choice(names, size=int(rng.integers(2, 5)), replace=False))
                   for _ in range(int(rng.integers(1, 4 + trial // 10)))]
        assert list(map(set, maximal_cliques(domain, cliques))) == greedy_elimination_by_hand(domain, cliques)


def test_model_sizes_with_one_more_clique_match_a_fresh_triangulation_and_are_remembered(monkeypatch):
    rng = np.random.default_rng(5)
    names = tuple("abcdefghij")
    domain = Domain(names, tuple(int(s) for s in rng.integers(2, 30, size=len(names))))
    sizes = ModelSizes(domain)
    cliques: list[tuple[str, ...]] = []
    triangulations = []
    real = junction_tree._eliminated
    monkeypatch.setattr(junction_tree, "_eliminated", lambda d, g: triangulations.append(g) or real(d, g))
    for _ in range(12):  # a growing clique list, as aim's rounds grow it
        graph = sizes.graph(cliques)
        for k in (1, 2, 3, 3, 4):
            extra = tuple(str(a) for a in rng.choice(names, size=k, replace=False))
            assert sizes.with_clique(graph, extra) == model_size_mb(domain, cliques + [extra])
        cliques.append(tuple(str(a) for a in rng.choice(names, size=3, replace=False)))
    asked = len(triangulations)
    # the same graph asked again is not triangulated again: one already inside it, or the whole list
    graph, whole = sizes.graph(cliques), model_size_mb(domain, cliques)
    triangulations.clear()
    assert sizes.with_clique(graph, cliques[0]) == sizes.with_clique(graph, cliques[-1][:2]) == whole
    assert len(triangulations) == 1 and asked > 12
    monkeypatch.setattr(junction_tree, "REMEMBERED_SIZES", 1)  # a full memory starts afresh, sizes unchanged
    assert sizes.with_clique(graph, ("a", "j")) == model_size_mb(domain, cliques + [("a", "j")])
    assert sizes.with_clique(graph, cliques[0]) == model_size_mb(domain, cliques)


def test_the_spanning_tree_is_networkxs_maximum_spanning_tree_walked_breadth_first():
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(11)
    names = [f"c{i}" for i in range(9)]
    for _ in range(300):  # many ties: weights are small counts of shared attributes
        nodes = [tuple(str(a) for a in rng.choice(names, size=int(rng.integers(1, 5)), replace=False))
                 for _ in range(int(rng.integers(1, 12)))]
        graph = nx.Graph()
        graph.add_nodes_from(range(len(nodes)))
        for i in range(len(nodes)):
            for j in range(i + 1, len(nodes)):
                graph.add_edge(i, j, weight=len(set(nodes[i]) & set(nodes[j])))
        expected = list(nx.bfs_edges(nx.maximum_spanning_tree(graph), 0))
        assert spanning_tree_edges(nodes) == expected
    # weights: abc-abd 2, abc-c 1, abd-d 1, the rest 0; heaviest first, then the walk from node 0
    assert spanning_tree_edges(["abc", "abd", "c", "d"]) == [(0, 1), (0, 2), (1, 3)]


# ---------------------------------------------------------------- exact marginals

@pytest.mark.parametrize("index", range(len(STRUCTURES)))
def test_belief_propagation_matches_brute_force(index):
    model = random_model(STRUCTURES[index], seed=index)
    joint = brute_force_joint(model)
    for clique, table in model.clique_marginals.items():
        np.testing.assert_allclose(table, brute_force_marginal(model, clique), rtol=1e-9, atol=1e-9)
    names = model.domain.names
    across = 0
    for k in range(len(names) + 1):
        for attrs in itertools.combinations(names, k):
            order = tuple(np.random.default_rng(k).permutation(attrs)) if attrs else ()
            expected = brute_force_marginal(model, order)
            np.testing.assert_allclose(model.marginal(order), expected, rtol=1e-9, atol=1e-9)
            across += model.junction_tree.containing(attrs) is None
    assert across > 0 or len(model.cliques) == 1  # subsets spread over several cliques were checked
    assert model.marginal(()) == pytest.approx(joint.sum())


def test_marginals_are_cached_and_read_only():
    model = random_model(STRUCTURES[2], seed=3)
    first = model.marginal(("a", "c"))
    assert model.marginal(("c", "a")).base is not None  # a view of the cached table
    np.testing.assert_allclose(model.marginal(("c", "a")), first.T)
    with pytest.raises(ValueError):
        first[0, 0] = 1.0
    with pytest.raises(ValueError, match="not in the domain"):
        model.marginal(("a", "zz"))



def test_marginals_across_cliques_share_each_cliques_factor(monkeypatch):
    """Marginals spanning cliques sum each clique's table onto what they keep once per model, and are
    the values a fresh model computes for each alone, to the last bit."""
    import synth.model.graphical as graphical

    structure = [("a", "b", "c"), ("c", "d"), ("d", "e", "f")]
    wanted = [("a", "e"), ("b", "e"), ("a", "f"), ("b", "f"), ("a", "e"), ("a", "d", "f")]
    model = random_model(structure, seed=4)
    big = {model.cliques.index(c) for c in model.cliques if set(c) in ({"a", "b", "c"}, {"d", "e", "f"})}
    summed: list[int] = []
    real = graphical.marginalise

    def counting(table, attrs, keep):
        summed.append(table.size)
        return real(table, attrs, keep)

    monkeypatch.setattr(graphical, "marginalise", counting)
    got = [model.marginal(q) for q in wanted]
    monkeypatch.setattr(graphical, "marginalise", real)
    for q, table in zip(wanted, got):
        assert np.array_equal(table, random_model(structure, seed=4).marginal(q))
        np.testing.assert_allclose(table, brute_force_marginal(model, q), rtol=1e-9)
    sizes = {model.domain.size(model.cliques[i]) for i in big}
    # each big clique is summed onto (its separator with) a, b, e, f: once per kept set, not once per marginal
    passes = sum(size in sizes for size in summed)
    assert passes <= 2 * 3, summed
    with pytest.raises(ValueError):
        got[0][0, 0] = 1.0


def test_the_clique_containing_attributes_is_the_smallest_and_the_first_of_equals():
    draws = np.random.default_rng(5)
    names = tuple("abcdefgh")
    for _ in range(40):
        domain = Domain(names, tuple(int(s) for s in draws.choice([2, 3], size=len(names))))
        structure = [tuple(draws.choice(names, size=int(draws.integers(1, 4)), replace=False)) for _ in range(6)]
        tree = build_junction_tree(domain, structure)
        for k in range(4):
            for attrs in itertools.combinations(names, k):
                holders = [i for i, c in enumerate(tree.cliques) if set(attrs) <= set(c)]
                expected = min(holders, key=lambda i: (domain.size(tree.cliques[i]), i)) if holders else None
                assert tree.containing(attrs) == expected
    assert tree.containing(("z",)) is None  # a name no clique holds


def test_contractions_keep_numpys_greedy_order_to_the_last_bit():
    """``_contract`` finds each layout's contraction order once; its products must equal
    ``np.einsum(optimize=True)``'s exactly, on the first call and on later ones."""
    draws = np.random.default_rng(0)
    names = list("abcdefg")
    for _ in range(200):
        sizes = {a: int(draws.integers(1, 6)) for a in names}
        factors = []
        for _ in range(int(draws.integers(3, 6))):
            attrs = tuple(str(a) for a in draws.choice(names, size=int(draws.integers(1, 4)), replace=False))
            factors.append((attrs, draws.random(tuple(sizes[a] for a in attrs))))
        present = list(dict.fromkeys(a for attrs, _ in factors for a in attrs))
        out = tuple(str(a) for a in draws.choice(present, size=int(draws.integers(0, 4)), replace=False))
        labels = {a: i for i, a in enumerate(dict.fromkeys(present + list(out)))}
        operands: list = []
        for attrs, table in factors:
            operands += [table, [labels[a] for a in attrs]]
        expected = np.einsum(*operands, [labels[a] for a in out], optimize=True)
        assert np.array_equal(_contract(factors, out), expected)
        assert np.array_equal(_contract(factors, out), expected)


def test_covering_subtrees_are_minimal_per_independent_part_and_merging_bounds_the_size():
    names = tuple("abcdefg")
    domain = Domain(names, (2, 3, 4, 5, 6, 7, 8))
    # a-b-c-d chain, e-f pair, g alone: three parts joined only by empty separators
    tree = build_junction_tree(domain, [("a", "b"), ("b", "c"), ("c", "d"), ("e", "f"), ("g",)])
    index = {frozenset(c): i for i, c in enumerate(tree.cliques)}
    parts = tree.covering_subtrees(("a", "c", "f"))
    assert sorted(sorted(map(sorted, (tree.cliques[i] for i in part))) for part in parts) == [
        [["a", "b"], ["b", "c"]], [["e", "f"]]]
    assert tree.covering_subtrees(("b",)) in ([{index[frozenset("ab")]}], [{index[frozenset("bc")]}])
    assert tree.covering_subtrees(("a", "d"))[0] == {index[frozenset(p)] for p in ("ab", "bc", "cd")}
    # merging a-b, b-c and e-f into one clique {a, b, c, e, f} (2*3*4*6*7 cells) plus c-d and g
    assert tree.merged_size_mb(("a", "c", "f")) == pytest.approx((1008 + 20 + 8) * 8 / 2**20)
    # the merged tree is one valid structure for the cliques plus the new one; here the greedy
    # triangulation of the same cliques finds one no larger
    wanted = [("a", "b"), ("b", "c"), ("c", "d"), ("e", "f"), ("g",), ("a", "c", "f")]
    assert model_size_mb(domain, wanted) <= tree.merged_size_mb(("a", "c", "f"))


def test_a_three_way_marginal_across_a_long_chain_is_cheap_and_exact():
    names = tuple(f"x{i}" for i in range(14))
    domain = Domain(names, (40,) * 14)
    chain = [(names[i], names[i + 1]) for i in range(13)]
    rng = np.random.default_rng(5)
    potentials = {c: Factor(domain.project(c), rng.normal(size=(40, 40))) for c in chain}
    model = GraphicalModel(domain, build_junction_tree(domain, chain), potentials, 1.0)
    table = model.marginal(("x0", "x7", "x13"))
    assert table.shape == (40, 40, 40) and table.sum() == pytest.approx(1.0)
    # the chain is Markov: P(x0, x7, x13) = P(x0, x7) P(x13 | x7)
    pair = model.marginal(("x0", "x7"))
    conditional = model.marginal(("x7", "x13")) / model.marginal(("x7",))[:, None]
    np.testing.assert_allclose(table, pair[:, :, None] * conditional[None], rtol=1e-9, atol=1e-15)


def test_model_rejects_potentials_outside_its_cliques():
    domain = Domain(("a", "b", "c"), (2, 2, 2))
    tree = build_junction_tree(domain, [("a", "b"), ("b", "c")])
    with pytest.raises(ValueError, match="no clique"):
        GraphicalModel(domain, tree, {("a", "c"): Factor.zeros(domain.project(("a", "c")))}, 10.0)
    with pytest.raises(ValueError, match="positive"):
        GraphicalModel(domain, tree, {}, 0.0)


# ---------------------------------------------------------------- sampling

def _chi_square(counts: np.ndarray, expected: np.ndarray) -> tuple[float, float]:
    statistic, p = chisquare(counts.ravel(), expected.ravel() * counts.sum() / expected.sum())
    return float(statistic), float(p)


def _counts(codes: np.ndarray, domain: Domain, attrs) -> np.ndarray:
    columns = [codes[:, domain.index(a)] for a in attrs]
    return np.bincount(np.ravel_multi_index(columns, domain.shape(attrs)), minlength=domain.size(attrs))


def _sample_ignoring_separators(model: GraphicalModel, n: int, rng: np.random.Generator) -> np.ndarray:
    """A deliberately wrong sampler: each clique's new attributes drawn from their own marginal."""
    codes = np.zeros((n, len(model.domain)), dtype=np.int64)
    steps = [(0, ())] + [(child, separator) for _, child, separator in model.junction_tree.edges]
    for index, separator in steps:
        new = model.cliques[index][len(separator):]
        p = model.marginal(new).ravel()
        flat = rng.choice(p.size, size=n, p=p / p.sum())
        for a, column in zip(new, np.unravel_index(flat, model.domain.shape(new))):
            codes[:, model.domain.index(a)] = column
    return codes


def test_samples_follow_the_model_and_a_sampler_ignoring_separators_fails():
    model = random_model(STRUCTURES[3], seed=11, scale=1.5)
    n = 100_000
    codes = model.sample(n, np.random.default_rng(2024))
    assert codes.shape == (n, len(model.domain)) and codes.dtype.kind == "i"
    assert all(0 <= codes[:, i].min() and codes[:, i].max() < s for i, s in enumerate(model.domain.sizes))
    wrong = _sample_ignoring_separators(model, n, np.random.default_rng(2024))
    names = model.domain.names
    for attrs in list(itertools.combinations(names, 2)) + list(itertools.combinations(names, 3)):
        _, p = _chi_square(_counts(codes, model.domain, attrs), model.marginal(attrs))
        assert p > 0.001, attrs
    # pairs that straddle a separator: the wrong sampler breaks their dependence
    straddling = [(separator[0], model.cliques[child][-1])
                  for _, child, separator in model.junction_tree.edges if separator]
    for attrs in straddling:
        expected = model.marginal(attrs)
        statistic, _ = _chi_square(_counts(wrong, model.domain, attrs), expected)
        assert statistic > chi2.ppf(1 - 1e-9, expected.size - 1), attrs


def test_sampling_is_reproducible_and_handles_edge_cases():
    model = random_model(STRUCTURES[5], seed=4)
    a = model.sample(500, np.random.default_rng(9))
    b = model.sample(500, np.random.default_rng(9))
    np.testing.assert_array_equal(a, b)
    assert model.sample(0, np.random.default_rng(0)).shape == (0, len(model.domain))
    with pytest.raises(ValueError, match="negative"):
        model.sample(-1, np.random.default_rng(0))


def test_sampling_never_rounds_a_deterministic_share():
    # one attribute with probabilities 0.5/0.5: i.i.d., two rows are sometimes equal; rounded, two
    # rows always differ, and the third row's value is drawn, not fixed
    domain = Domain(("a",), (2,))
    model = GraphicalModel(domain, build_junction_tree(domain, [("a",)]), {}, 2.0)
    draws = {tuple(model.sample(2, np.random.default_rng(seed), "iid")[:, 0]) for seed in range(20)}
    assert len(draws) > 2
    rounded = {tuple(model.sample(2, np.random.default_rng(seed))[:, 0]) for seed in range(20)}
    assert rounded == {(0, 1), (1, 0)}
    thirds = {int(model.sample(3, np.random.default_rng(seed))[:, 0].sum()) for seed in range(20)}
    assert thirds == {1, 2}


def test_marginal_cost_counts_the_cliques_summed_and_the_products_formed():
    model = random_model(STRUCTURES[0], seed=5)  # a chain a-b-c-d: cliques (a, b), (b, c), (c, d)
    size = model.domain.size
    assert model.marginal_cost(("a",)) == size(("a", "b"))  # inside one clique: that clique's table
    # a and d: the whole chain is summed, then (a, b) × (b, c) × (c, d) contracted: at least the three
    # cliques plus a product over three columns
    far = model.marginal_cost(("a", "d"))
    assert far >= size(("a", "b")) + size(("b", "c")) + size(("c", "d")) + min(
        size(("a", "b", "c")), size(("b", "c", "d")))
    assert far > model.marginal_cost(("a", "c")) > model.marginal_cost(("a", "b"))
    model.marginal(("a", "d"))
    assert model.marginal_cost(("d", "a")) == 0  # cached
    assert model.marginal_cost(()) == 0
    pieces = random_model(STRUCTURES[5], seed=5)  # independent parts: each part's cliques
    assert pieces.marginal_cost(("a", "c")) == pieces.domain.size(("a",)) + pieces.domain.size(("c", "d"))

"""A graphical model on a junction tree: exact marginals by belief propagation, sampling.

The model is ``P(x) ∝ exp(Σ_C θ_C(x_C))`` over the maximal cliques C of a junction tree, scaled
to ``total`` rows. Sum-product belief propagation (one pass up the tree in log space, one pass
down in probability space, a single ``exp`` per clique cell) gives every clique's marginal; a
marginal inside a clique is a sum of that clique's table, and any other marginal is obtained by
variable elimination over the smallest subtree that covers its attributes, using the calibrated
clique marginals (a connected subtree of a junction tree factorises as
``Π μ_C / Π μ_separator``). Sampling walks the tree clique by clique, each column drawn given
the clique's columns before it (by rounded counts or i.i.d., see ``synth.model.sampling``).
Conditioning on evidence (weights on an attribute's codes) is exact too: the evidence enters the
clique marginals, one upward and one downward pass make them consistent again, and the result
(a ``ConditionedTree``) offers the same marginals and sampling.

The model is post-processing: it is built from noisy measurements (by ``fitting``) and never
sees private rows. It never builds the full joint table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from synth.columns.domain import Domain
from synth.model.factor import Factor, align
from synth.model.interface import Evidence, check_evidence, conditioned_total
from synth.model.junction_tree import JunctionTree
from synth.model.kernels import row_max, row_sum, scale_rows, shift_rows, spread_onto, sum_onto
from synth.model.sampling import DEFAULT_DRAWS, Draws, draw_given

MARGINAL_CACHE_BYTES = 128 * 2**20  # marginals and elimination factors kept per model (oldest dropped first)


@dataclass(frozen=True)
class FitSummary:
    """How a fitted model's potentials were obtained: final loss, iterations run, whether it converged."""

    loss: float
    iterations: int
    converged: bool


def marginalise(table: np.ndarray, attrs: Sequence[str], keep: Sequence[str]) -> np.ndarray:
    """Sum a table over ``attrs`` onto ``keep`` (a subset), axes of the result in ``keep``'s order.

    The result is C-contiguous (later arithmetic on it is then fast), of floats; it is ``table``
    itself when nothing is summed or moved and ``table`` is a C-contiguous float array.
    """
    attrs, keep = tuple(attrs), tuple(keep)
    if keep == attrs:
        return np.ascontiguousarray(table, dtype=float)
    return sum_onto(table, [attrs.index(a) for a in keep])


@dataclass(frozen=True)
class Calibration:
    """Every clique's marginal (counts summing to the total, laid out as in the tree's cliques) and
    the log-partition function ``log Σ_x exp(Σ_C θ_C(x_C))`` of the potentials."""

    marginals: list[np.ndarray]
    log_partition: float


def calibrate(
    tree: JunctionTree,
    log_potentials: Sequence[np.ndarray],
    total: float,
    out: list[np.ndarray] | None = None,
) -> Calibration:
    """Sum-product belief propagation on ``tree`` (``out``: C-contiguous tables to fill, reused).

    Tables are laid out as in ``tree.cliques`` (a child's separator with its parent first), so a
    child's table is a (separator configuration × own cells) matrix. Upward, each clique's
    log-belief (its potential plus its children's messages) is shifted by its maximum within each
    separator configuration and exponentiated in place; the row sums give the message to the
    parent. Downward, a child's marginal is that table divided by its row sums (its conditional
    given the separator) times the parent's separator marginal. One ``exp`` per cell, and no
    logarithm of a possibly-zero number. The row-wise and broadcast steps run in compiled
    kernels (``synth.model.kernels``).
    """
    domain, cliques = tree.domain, tree.cliques
    tables = [np.empty(domain.shape(c)) for c in cliques] if out is None else out
    started: set[int] = set()  # cliques whose table holds their potential plus messages so far

    def log_belief(index: int) -> np.ndarray:
        return tables[index] if index in started else log_potentials[index]

    row_sums: dict[int, np.ndarray] = {}
    for parent, child, separator in reversed(tree.edges):
        source = np.reshape(log_belief(child), (domain.size(separator), -1))
        rows = tables[child].reshape(source.shape)
        peak = row_max(source)
        shift_rows(source, peak, rows)
        np.exp(rows, out=rows)
        sums = row_sum(rows)
        row_sums[child] = sums
        spread_onto(tables[parent], [cliques[parent].index(a) for a in separator],
                    (np.log(sums) + peak).reshape(domain.shape(separator)),
                    base=None if parent in started else log_potentials[parent])  # the first message starts it
        started.add(parent)
    root = tables[0]
    source = log_belief(0)
    peak = source.max()
    np.subtract(source, peak, out=root)
    np.exp(root, out=root)
    mass = root.sum()
    root *= total / mass
    for parent, child, separator in tree.edges:
        sums = row_sums[child]
        scale_rows(tables[child].reshape(sums.shape[0], -1),
                   marginalise(tables[parent], cliques[parent], separator).reshape(sums.shape) / sums)
    return Calibration(tables, float(peak + np.log(mass)))


def _contract(factors: Sequence[tuple[tuple[str, ...], np.ndarray]], out: tuple[str, ...]) -> np.ndarray:
    """Sum over everything but ``out`` of the product of ``factors`` (axes of the result: ``out``)."""
    labels = {a: i for i, a in enumerate(dict.fromkeys([a for attrs, _ in factors for a in attrs] + list(out)))}
    operands: list = []
    layout = []  # each table's subscripts and shape: all that the order of contraction depends on
    for attrs, table in factors:
        subscripts = [labels[a] for a in attrs]
        operands += [table, subscripts]
        layout.append((tuple(subscripts), table.shape))
    wanted = [labels[a] for a in out]
    if len(factors) <= 2:  # a path search costs more than it saves for two tables (most calls)
        return np.einsum(*operands, wanted, optimize=False)
    return np.einsum(*operands, wanted, optimize=_greedy_path(tuple(layout), tuple(wanted)))


@lru_cache(maxsize=4096)
def _greedy_path(layout: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...], out: tuple[int, ...]) -> list:
    """The order in which ``np.einsum(..., optimize=True)`` contracts tables of these subscripts and
    shapes (its greedy search reads nothing else), found once: a model's marginals repeat a few
    hundred layouts over and over."""
    operands: list = []
    for subscripts, shape in layout:
        operands += [np.broadcast_to(0.0, shape), list(subscripts)]
    path, _ = np.einsum_path(*operands, list(out), optimize="greedy")
    return path


def elimination_steps(domain: Domain, scopes: Sequence[tuple[str, ...]], attrs: tuple[str, ...],
                      ) -> tuple[tuple[tuple[int, ...], tuple[str, ...], int], ...]:
    """The greedy plan ``eliminate`` follows for tables over ``scopes``, from sizes only: while an
    attribute outside ``attrs`` is left, pick the one whose tables span the fewest cells; the step
    multiplies those tables (their positions in the running list, where each step's result goes
    last) and keeps the attributes still wanted or held by another table. Each step also gives
    the cells its product spans (its cost). Plans are kept: a model's many marginals repeat them."""
    return _elimination_steps(domain, tuple(tuple(s) for s in scopes), tuple(attrs))


@lru_cache(maxsize=16384)
def _elimination_steps(domain: Domain, scopes_given: tuple[tuple[str, ...], ...], attrs: tuple[str, ...],
                       ) -> tuple[tuple[tuple[int, ...], tuple[str, ...], int], ...]:
    scopes = list(scopes_given)
    hidden = {a for s in scopes for a in s} - set(attrs)
    steps = []
    while hidden:
        attr = min(sorted(hidden, key=domain.index),
                   key=lambda a: domain.size({b for s in scopes if a in s for b in s}))
        involved = [i for i, s in enumerate(scopes) if attr in s]
        rest = [s for s in scopes if attr not in s]
        span = {a for i in involved for a in scopes[i]}
        kept = domain.canonical(a for a in span if a in attrs or any(a in s for s in rest))
        steps.append((tuple(involved), kept, domain.size(span)))
        scopes = rest + [kept]
        hidden -= span - set(kept)
    return tuple(steps)


def eliminate(domain: Domain, factors: Sequence[tuple[tuple[str, ...], np.ndarray]],
              attrs: tuple[str, ...]) -> np.ndarray:
    """Sum over every attribute but ``attrs`` of the product of ``factors`` (axes: ``attrs``), greedily
    (``elimination_steps``): multiply the tables of one hidden attribute at a time and sum out
    every attribute that no other table holds."""
    factors = list(factors)
    for involved, kept, _ in elimination_steps(domain, [names for names, _ in factors], attrs):
        product = _contract([factors[i] for i in involved], kept)
        factors = [f for i, f in enumerate(factors) if i not in involved] + [(kept, product)]
    return _contract(factors, attrs)


@dataclass(frozen=True)
class _Factor:
    """The key of a clique's table summed onto ``kept`` (and, when ``conditional``, divided by its
    separator's marginal): a factor of variable elimination (``CalibratedTree._eliminate_within``)."""

    clique: int
    kept: tuple[str, ...]
    conditional: bool


class CalibratedTree:
    """A distribution over ``domain`` that factorises along ``junction_tree``, given by its clique
    marginals (counts summing to ``total``): exact marginals, sampling and conditioning.
    ``marginal`` and ``clique_marginals`` return read-only arrays (copy them to modify)."""

    def __init__(self, domain: Domain, junction_tree: JunctionTree, total: float) -> None:
        if junction_tree.domain != domain:
            raise ValueError("the junction tree was built over another domain than the model's")
        if not (np.isfinite(total) and total > 0):
            raise ValueError(f"a model's total must be a positive number of rows; got {total}")
        self.domain = domain
        self.junction_tree = junction_tree
        self.total = float(total)
        self._cache: dict[tuple[str, ...] | _Factor, np.ndarray] = {}  # marginals and elimination factors
        self._cache_bytes = 0

    def _calibrated(self) -> list[np.ndarray]:
        """The clique marginals, laid out as the tree's cliques."""
        raise NotImplementedError

    @property
    def cliques(self) -> tuple[tuple[str, ...], ...]:
        """The junction tree's maximal cliques (attributes in its table layout, see ``JunctionTree``)."""
        return self.junction_tree.cliques

    def given(self, evidence: Evidence) -> ConditionedTree:
        """This distribution conditioned on ``evidence`` (see ``synth.model.interface``), computed
        exactly on the junction tree by ``enter_evidence``."""
        check_evidence(self.domain, evidence)
        tables, probability = enter_evidence(self.junction_tree, self._calibrated(), evidence, self.total)
        return ConditionedTree(self.domain, self.junction_tree, tables, conditioned_total(self.total, probability))

    @property
    def clique_marginals(self) -> dict[tuple[str, ...], np.ndarray]:
        """Each maximal clique's marginal (counts summing to ``total``), axes in the clique's order."""
        return dict(zip(self.cliques, self._calibrated()))

    def marginal(self, attrs: Sequence[str]) -> np.ndarray:
        """The model's marginal over ``attrs`` (counts summing to ``total``), axes in the order given."""
        attrs = tuple(attrs)
        key = self.domain.canonical(attrs)
        table = self._cache.get(key)
        if table is None:
            table = self._compute_marginal(key)
            table.flags.writeable = False
            self._remember(key, table)
        return table.transpose([key.index(a) for a in attrs])

    def _remember(self, key: tuple[str, ...] | _Factor, table: np.ndarray) -> None:
        self._cache[key] = table
        self._cache_bytes += table.nbytes
        while self._cache_bytes > MARGINAL_CACHE_BYTES and len(self._cache) > 1:
            self._cache_bytes -= self._cache.pop(next(iter(self._cache))).nbytes

    def _compute_marginal(self, attrs: tuple[str, ...]) -> np.ndarray:
        tables = self._calibrated()
        if not attrs:
            return np.array(self.total)
        home = self.junction_tree.containing(attrs)
        if home is not None:
            return marginalise(tables[home], self.cliques[home], attrs)
        return self._eliminate(attrs)

    def _eliminate(self, attrs: tuple[str, ...]) -> np.ndarray:
        """A marginal no clique holds: attributes in independent parts of the tree (joined only by
        empty separators) are computed part by part and multiplied (an outer product, rescaled
        to ``total``); within a part, by variable elimination over its covering subtree."""
        parts = [(inside, self._eliminate_within(inside, subtree)) for inside, subtree in self._parts(attrs)]
        if len(parts) == 1:
            return parts[0][1]
        product = _contract(parts, attrs)
        return product / self.total ** (len(parts) - 1)

    def _parts(self, attrs: tuple[str, ...]) -> list[tuple[tuple[str, ...], set[int]]]:
        """The independent parts of the tree holding ``attrs``: each part's attributes among them, and
        the connected subtree covering those."""
        parts = []
        for subtree in self.junction_tree.covering_subtrees(attrs):
            held = set().union(*(self.cliques[i] for i in subtree))
            parts.append((tuple(a for a in attrs if a in held), subtree))
        return parts

    def _subtree_walk(self, attrs: tuple[str, ...], subtree: set[int]
                      ) -> list[tuple[int | None, int, tuple[str, ...], tuple[str, ...]]]:
        """The cliques of a connected subtree covering ``attrs``, its top clique first, each as
        (parent or None, clique, separator with the parent, attributes kept): those wanted or in
        one of the clique's separators within the subtree (any other appears in no other clique
        of it, so it is summed out of that clique's table first)."""
        edges = [(p, c, sep) for p, c, sep in self.junction_tree.edges if p in subtree and c in subtree]
        (top,) = subtree - {c for _, c, _ in edges}
        shared: dict[int, set[str]] = {i: set(attrs) for i in subtree}
        for parent, child, separator in edges:
            shared[parent].update(separator)
            shared[child].update(separator)
        walk: list[tuple[int | None, int, tuple[str, ...]]] = [(None, top, ()), *edges]
        return [(above, child, separator, tuple(a for a in self.cliques[child] if a in shared[child]))
                for above, child, separator in walk]

    def _eliminate_within(self, attrs: tuple[str, ...], subtree: set[int]) -> np.ndarray:
        """Variable elimination over a connected subtree covering ``attrs``.

        The subtree's distribution is its top clique's marginal times every other clique's
        conditional given its separator with its parent (``_subtree_walk``: each clique's table
        first summed onto the attributes kept). The tables are then contracted by ``eliminate``
        (a whole separator at once, typically).
        """
        tables = self._calibrated()
        if len(subtree) == 1:
            (only,) = subtree
            return marginalise(tables[only], self.cliques[only], attrs)
        factors: list[tuple[tuple[str, ...], np.ndarray]] = []
        for above, child, separator, kept in self._subtree_walk(attrs, subtree):
            key = _Factor(child, kept, above is not None)
            table = self._cache.get(key)
            if table is None:  # many marginals share a clique's factor: it is summed from the clique once
                table = marginalise(tables[child], self.cliques[child], kept)
                if above is not None:
                    sums = align(marginalise(table, kept, separator), separator, kept)
                    table = np.divide(table, sums, out=np.zeros_like(table), where=sums > 0)
                table.flags.writeable = False
                self._remember(key, table)
            factors.append((kept, table))
        return eliminate(self.domain, factors, attrs)

    def marginal_cost(self, attrs: Sequence[str]) -> int:
        """About how many cells computing ``marginal(attrs)`` passes over, from the structure only
        (no table is touched): the cliques summed, plus the span of each elimination step's tables
        (an upper bound: ``_contract`` lets einsum choose an order that may form smaller products;
        on an aim model at ε = 10 the worst triple is priced at 1e11 cells, yet all 364 triples
        took minutes); 0 when the marginal is cached. A caller can weigh it against another way to
        the same end, and errs towards the other way."""
        key = self.domain.canonical(tuple(attrs))
        if not key or key in self._cache:
            return 0
        home = self.junction_tree.containing(key)
        if home is not None:
            return self.domain.size(self.cliques[home])
        cost = 0
        for inside, subtree in self._parts(key):
            cost += sum(self.domain.size(self.cliques[i]) for i in subtree)
            if len(subtree) > 1:
                scopes = [kept for _, _, _, kept in self._subtree_walk(inside, subtree)]
                cost += sum(span for _, _, span in elimination_steps(self.domain, scopes, inside))
        return cost

    def sample(self, n: int, rng: np.random.Generator, sampling: Draws = DEFAULT_DRAWS) -> np.ndarray:
        """``n`` rows of codes, shape (n, attributes), columns in domain order, under ``sampling``
        (``synth.model.sampling``: rounded counts by default, or i.i.d. draws).

        Clique by clique down the tree, each clique's new attributes are drawn one at a time: the
        rows are grouped by their configuration of the clique's separator with its parent and of
        the clique's attributes drawn so far, and each group gets its counts per value from the
        clique's marginal conditioned on that configuration, dealt to its rows in random order.
        With rounded counts, within each such group every value's count is within 1 of the group's
        size times its conditional probability (the first attribute of the root: within 1 of
        ``n`` times its probability), so a clique's cell is within (number of its new attributes)
        of its separator configuration's sampled rows times its conditional probability.
        """
        if n < 0:
            raise ValueError(f"cannot sample a negative number of rows ({n})")
        codes = np.zeros((n, len(self.domain)), dtype=np.int64)
        if n == 0:
            return codes
        tables = self._calibrated()
        steps = [(0, ())] + [(child, separator) for _, child, separator in self.junction_tree.edges]
        for clique_index, separator in steps:
            clique = self.cliques[clique_index]
            for position in range(len(separator), len(clique)):
                given, attr = clique[:position], clique[position]
                conditional = tables[clique_index].reshape(self.domain.size(clique[:position + 1]), -1).sum(axis=1)
                columns = [codes[:, self.domain.index(a)] for a in given]
                configs = (np.ravel_multi_index(columns, self.domain.shape(given)) if given
                           else np.zeros(n, dtype=np.int64))
                codes[:, self.domain.index(attr)] = draw_given(
                    configs, conditional.reshape(self.domain.size(given), -1), rng, sampling)
        return codes


class GraphicalModel(CalibratedTree):
    """A fitted Markov random field over ``domain`` on ``junction_tree``, scaled to ``total`` rows.

    ``potentials`` maps attribute tuples to log-potential factors; each must lie inside one of
    the tree's maximal cliques (a clique without a potential is constant). Its clique marginals
    come from belief propagation, on first use.
    """

    def __init__(
        self,
        domain: Domain,
        junction_tree: JunctionTree,
        potentials: Mapping[tuple[str, ...], Factor],
        total: float,
        fit: FitSummary | None = None,
    ) -> None:
        super().__init__(domain, junction_tree, total)
        combined = [Factor.zeros(domain.project(c)) for c in junction_tree.cliques]
        for attrs, factor in potentials.items():
            if set(attrs) != set(factor.domain.names):
                raise ValueError(f"the potential keyed {attrs} is a factor over {factor.domain.names}")
            home = junction_tree.containing(attrs)
            if home is None:
                raise ValueError(f"the potential over {attrs} lies in no clique of the junction tree")
            if not np.all(np.isfinite(factor.values)):
                raise ValueError(f"the potential over {attrs} has non-finite log-values")
            combined[home] = combined[home] + factor
        self.potentials = dict(potentials)
        self.fit = fit
        self._log_potentials = [f.values for f in combined]
        self._clique_marginals: list[np.ndarray] | None = None

    @property
    def log_potentials(self) -> tuple[np.ndarray, ...]:
        """Each clique's log-potential table (all potentials inside it added), laid out as the tree's cliques."""
        return tuple(self._log_potentials)

    def _calibrated(self) -> list[np.ndarray]:
        if self._clique_marginals is None:
            tables = calibrate(self.junction_tree, self._log_potentials, self.total).marginals
            for table in tables:
                table.flags.writeable = False
            self._clique_marginals = tables
        return self._clique_marginals


class ConditionedTree(CalibratedTree):
    """A ``CalibratedTree`` whose clique marginals are given (as ``enter_evidence`` computes them)."""

    def __init__(self, domain: Domain, junction_tree: JunctionTree, tables: Sequence[np.ndarray],
                 total: float) -> None:
        super().__init__(domain, junction_tree, total)
        self._tables = list(tables)
        for table in self._tables:
            table.flags.writeable = False

    def _calibrated(self) -> list[np.ndarray]:
        return self._tables


def enter_evidence(tree: JunctionTree, marginals: Sequence[np.ndarray], evidence: Evidence,
                   total: float) -> tuple[list[np.ndarray], float]:
    """The clique marginals of a calibrated tree distribution conditioned on ``evidence``, and the
    probability of the evidence under it.

    The distribution is the root's marginal times each other clique's conditional given its
    separator. Each attribute's weights multiply the one clique where it is new (the root, or a
    clique that does not share it with its parent), so each counts once. Upward, a clique's
    weighted table summed onto its separator and divided by the separator's marginal is the
    likelihood of the evidence below it (a number in [0, 1] per separator configuration), which
    multiplies the parent's table; the root's table then sums to ``total`` times the probability
    of the evidence, and is the root's conditioned marginal. Downward, each clique's table,
    normalised within each separator configuration, times the parent's conditioned separator
    marginal is its conditioned marginal. All in probability space: a weight of 0 is exact.
    """
    domain, cliques = tree.domain, tree.cliques
    owned = {0: cliques[0], **{child: cliques[child][len(separator):] for _, child, separator in tree.edges}}
    tables = [np.array(m, dtype=float, order="C") for m in marginals]
    for index, clique in enumerate(cliques):
        for attr in owned[index]:
            if attr in evidence:
                tables[index] *= align(np.asarray(evidence[attr], dtype=float), (attr,), clique)
    for parent, child, separator in reversed(tree.edges):
        configs = domain.size(separator)
        kept = tables[child].reshape(configs, -1).sum(axis=1)
        prior = np.reshape(marginals[child], (configs, -1)).sum(axis=1)
        likelihood = np.divide(kept, prior, out=np.zeros_like(kept), where=prior > 0)
        tables[parent] *= align(likelihood.reshape(domain.shape(separator)), separator, cliques[parent])
    probability = float(tables[0].sum()) / total
    for parent, child, separator in tree.edges:
        rows = tables[child].reshape(domain.size(separator), -1)
        sums = rows.sum(axis=1, keepdims=True)
        wanted = marginalise(tables[parent], cliques[parent], separator).reshape(sums.shape)
        rows *= np.divide(wanted, sums, out=np.zeros_like(sums), where=sums > 0)
    return tables, probability

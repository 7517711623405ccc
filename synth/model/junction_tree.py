"""Junction trees: the cliques of a graphical model arranged so that exact inference is cheap.

From a domain and the attribute sets a model must represent jointly (its cliques), build the
graph with an edge between any two attributes that share a clique, triangulate it by greedy
elimination (fewest fill-in edges first, then the smallest resulting clique in cells), keep the
maximal cliques of the triangulated graph and join them by a maximum-weight spanning tree, the
weight of an edge being the number of attributes its two cliques share. For a chordal graph this
tree has the running-intersection property, which is what belief propagation and sampling need.

Only public structure comes here (attribute names, sizes, clique lists); this module never sees
data or measurements, and ``model_size_mb`` never allocates a potential table.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

from synth.columns.domain import Domain

BYTES_PER_CELL = 8  # float64 potentials
REMEMBERED_SIZES = 20_000  # graphs whose junction-tree size ModelSizes keeps (a few MB)


def _bits(mask: int) -> Iterator[int]:
    """Positions of the set bits of ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _validated(domain: Domain, cliques: Iterable[Sequence[str]]) -> list[tuple[str, ...]]:
    out = []
    for clique in cliques:
        clique = tuple(clique)
        unknown = [a for a in clique if a not in domain]
        if unknown:
            raise ValueError(f"clique {clique} names {unknown}, which are not in the domain {list(domain.names)}")
        out.append(domain.canonical(clique))
    return out


def maximal_cliques(domain: Domain, cliques: Iterable[Sequence[str]]) -> list[tuple[str, ...]]:
    """Maximal cliques of a triangulation of the graph of ``cliques`` (attrs in domain order).

    Every attribute of the domain is covered: one never named in a clique is a clique of its own.
    Greedy elimination: at each step eliminate the attribute whose elimination adds the fewest
    fill-in edges, ties broken by the number of cells of the clique it forms. Attribute sets are
    bit masks: for 14 attributes this takes about half a millisecond.
    """
    maximal = _eliminated(domain, _adjacency(domain, cliques))
    return [tuple(domain.names[i] for i in _bits(c)) for c in maximal]


def _adjacency(domain: Domain, cliques: Iterable[Sequence[str]]) -> tuple[int, ...]:
    """For each attribute (by position), the bit mask of the attributes it shares a clique with."""
    adjacency = [0] * len(domain)
    for mask in {_mask(domain, clique) for clique in _validated(domain, cliques)}:
        for i in _bits(mask):
            adjacency[i] |= mask & ~(1 << i)
    return tuple(adjacency)


def _mask(domain: Domain, attrs: Iterable[str]) -> int:
    return sum(1 << domain.index(a) for a in set(attrs))


def _eliminated(domain: Domain, graph: Sequence[int]) -> list[int]:
    """The maximal cliques (bit masks) that greedy elimination (``maximal_cliques``) forms on ``graph``.

    Each attribute's fill-in and cells are kept between steps: eliminating an attribute changes only
    those of its neighbours (their neighbourhood changed) and of attributes next to two or more of them
    (the new edges among the neighbours may be edges they lacked), and a heap gives the least key. The
    pick is the same as recomputing every attribute at every step: the least (fill-in, cells, position)."""
    adjacency = list(graph)
    sizes = domain.sizes
    remaining = (1 << len(adjacency)) - 1

    def fill_in(v: int) -> int:  # the edges missing among v's remaining neighbours
        neighbours = adjacency[v] & remaining
        return sum((neighbours & ~adjacency[u]).bit_count() - 1 for u in _bits(neighbours)) // 2

    def cells(v: int) -> int:  # the cells of the clique eliminating v would form
        return math.prod(sizes[u] for u in _bits(adjacency[v] & remaining | 1 << v))

    key = [(fill_in(v), cells(v), v) for v in range(len(adjacency))]
    queue = list(key)  # every attribute's present key, and keys it had before (skipped when drawn)
    heapq.heapify(queue)
    formed: list[int] = []
    while remaining:
        entry = heapq.heappop(queue)
        best = entry[2]
        if not remaining >> best & 1 or entry != key[best]:
            continue  # eliminated already, or its key changed since
        neighbours = adjacency[best] & remaining
        around = 0  # the attributes next to a neighbour
        for u in _bits(neighbours):
            around |= adjacency[u]
            adjacency[u] |= neighbours & ~(1 << u)
        formed.append(neighbours | 1 << best)
        remaining &= ~(1 << best)
        for u in _bits(neighbours):
            key[u] = (fill_in(u), cells(u), u)
            heapq.heappush(queue, key[u])
        for w in _bits(around & remaining & ~neighbours):
            if (adjacency[w] & neighbours).bit_count() >= 2:
                key[w] = (fill_in(w), key[w][1], w)
                heapq.heappush(queue, key[w])
    return [c for c in formed if not any(c != d and c & d == c for d in formed)]


def _size_mb(domain: Domain, maximal: Iterable[int]) -> float:
    return sum(math.prod(domain.sizes[i] for i in _bits(c)) for c in maximal) * BYTES_PER_CELL / 2**20


def model_size_mb(domain: Domain, cliques: Iterable[Sequence[str]]) -> float:
    """Memory (MiB) of the float64 potentials of the junction tree of ``cliques``, built from sizes only."""
    return _size_mb(domain, _eliminated(domain, _adjacency(domain, cliques)))


class ModelSizes:
    """``model_size_mb`` of one clique list with one more attribute set added, for many such sets
    and many lists over one domain (aim asks it of each candidate in each round, PrivBayes with
    ``fit`` of each family it may add). The list's graph is built once (``graph``); a triangulation
    depends on nothing but the graph, so each graph's size is computed once and remembered (rounds
    whose new clique adds no edge ask the same), up to ``REMEMBERED_SIZES`` graphs (then they are
    forgotten and remembered afresh)."""

    def __init__(self, domain: Domain) -> None:
        self.domain = domain
        self._known: dict[tuple[int, ...], float] = {}

    def graph(self, cliques: Iterable[Sequence[str]]) -> tuple[int, ...]:
        """The graph of ``cliques``, to pass to ``with_clique``."""
        return _adjacency(self.domain, cliques)

    def with_clique(self, graph: tuple[int, ...], attrs: Sequence[str]) -> float:
        """``model_size_mb`` of the cliques of ``graph`` and ``attrs``."""
        mask = _mask(self.domain, attrs)
        joined = tuple(edges | (mask & ~(1 << i) if mask >> i & 1 else 0) for i, edges in enumerate(graph))
        size = self._known.get(joined)
        if size is None:
            if len(self._known) >= REMEMBERED_SIZES:
                self._known.clear()
            size = self._known[joined] = _size_mb(self.domain, _eliminated(self.domain, joined))
        return size


@dataclass(frozen=True)
class JunctionTree:
    """Maximal cliques (``cliques[0]`` is the root) and tree edges in message order.

    ``edges`` holds ``(parent, child, separator)`` triples, clique indices and the attributes the
    two cliques share (in domain order), ordered from the root outwards (every parent appears
    before its children); the upward pass of belief propagation walks them in reverse.

    Each clique's attribute order is the axis order of its tables: the root's is the domain
    order; any other clique lists its separator with its parent first, then its own attributes
    (each part in domain order), so that summing a clique onto that separator, or conditioning
    on it, works on contiguous memory.
    """

    domain: Domain
    cliques: tuple[tuple[str, ...], ...]
    edges: tuple[tuple[int, int, tuple[str, ...]], ...]

    @property
    def largest_clique_cells(self) -> int:
        """Number of cells of the largest clique: what a caller checks to refuse intractable models."""
        return max(self.domain.size(c) for c in self.cliques)

    @property
    def size_mb(self) -> float:
        """Memory (MiB) of the clique potentials as float64."""
        return sum(self.domain.size(c) for c in self.cliques) * BYTES_PER_CELL / 2**20

    def containing(self, attrs: Iterable[str]) -> int | None:
        """Index of the smallest clique holding all of ``attrs`` (the first such, on a tie), or None
        when none does."""
        held = self._holders
        holders = set(range(len(self.cliques)))
        for a in attrs:
            holders &= held.get(a, set())
            if not holders:
                return None
        return min(sorted(holders), key=self._cells.__getitem__)

    @cached_property
    def _holders(self) -> dict[str, set[int]]:
        """For each attribute, the cliques that hold it."""
        holders: dict[str, set[int]] = {}
        for i, clique in enumerate(self.cliques):
            for a in clique:
                holders.setdefault(a, set()).add(i)
        return holders


    @cached_property
    def _parents(self) -> dict[int, int]:
        return {child: parent for parent, child, _ in self.edges}

    @cached_property
    def _depths(self) -> list[int]:
        depths = [0] * len(self.cliques)
        for parent, child, _ in self.edges:  # parents come before their children
            depths[child] = depths[parent] + 1
        return depths

    @cached_property
    def _tops(self) -> dict[str, int]:
        """For each attribute, the clique nearest the root that holds it."""
        tops: dict[str, int] = {}
        for i in sorted(range(len(self.cliques)), key=self._depths.__getitem__, reverse=True):
            tops.update(dict.fromkeys(self.cliques[i], i))
        return tops

    @cached_property
    def _cells(self) -> list[int]:
        return [self.domain.size(c) for c in self.cliques]

    @cached_property
    def _components(self) -> list[int]:
        """For each clique, the top clique of its component once empty-separator edges are cut
        (attributes in different components are independent in the model)."""
        components = [0] * len(self.cliques)
        for parent, child, separator in self.edges:
            components[child] = components[parent] if separator else child
        return components

    def covering_subtrees(self, attrs: Iterable[str]) -> list[set[int]]:
        """The smallest connected sets of cliques covering ``attrs``, one per independent
        component (parts of the tree joined only by empty separators) that holds some of them.

        By running intersection the cliques holding an attribute form a connected subtree, which
        any covering subtree must enter through its top clique; so each part is the union of the
        paths from those top cliques up to where they meet.
        """
        depths, parents = self._depths, self._parents
        groups: dict[int, set[int]] = {}
        for a in attrs:
            top = self._tops[a]
            groups.setdefault(self._components[top], set()).add(top)
        subtrees = []
        for frontier in groups.values():
            covering = set(frontier)
            while len(frontier) > 1:
                deepest = max(frontier, key=depths.__getitem__)
                frontier.discard(deepest)
                frontier.add(parents[deepest])
                covering.add(parents[deepest])
            subtrees.append(covering)
        return subtrees

    def merged_size_mb(self, attrs: Sequence[str]) -> float:
        """Memory (MiB) of a junction tree that also holds ``attrs`` jointly, built by merging the
        cliques covering them into one: an upper bound on what adding ``attrs`` needs, in
        microseconds rather than a new triangulation."""
        covering = set().union(*self.covering_subtrees(attrs))
        merged = set(attrs).union(*(self.cliques[i] for i in covering))
        cells = sum(self._cells) - sum(self._cells[i] for i in covering) + self.domain.size(tuple(merged))
        return cells * BYTES_PER_CELL / 2**20


def build_junction_tree(domain: Domain, cliques: Iterable[Sequence[str]]) -> JunctionTree:
    """The junction tree of a triangulation of the graph of ``cliques`` (see the module docstring)."""
    if not len(domain):
        raise ValueError("a junction tree needs a domain with at least one attribute")
    nodes = maximal_cliques(domain, cliques)
    edges = tuple(
        (parent, child, tuple(a for a in nodes[child] if a in nodes[parent]))
        for parent, child in spanning_tree_edges(nodes)
    )
    for _, child, separator in edges:
        nodes[child] = separator + tuple(a for a in nodes[child] if a not in separator)
    return JunctionTree(domain, tuple(nodes), edges)


def spanning_tree_edges(nodes: Sequence[Sequence[str]]) -> list[tuple[int, int]]:
    """The (parent, child) edges of a maximum-weight spanning tree over ``nodes`` (an edge's weight: the
    attributes its two nodes share), listed breadth first from node 0.

    Kruskal's algorithm: every pair (i < j, taken in that order) by weight, heaviest first and equal
    weights in pair order, joins the tree when its nodes are not yet connected; the walk from node 0
    takes each node's neighbours in the order their edges joined. (The same tree and order as
    networkx's ``maximum_spanning_tree`` and ``bfs_edges``, which this replaces: importing networkx
    cost every run 60 ms.)"""
    held = [set(node) for node in nodes]
    pairs = sorted(((len(held[i] & held[j]), i, j) for i in range(len(nodes)) for j in range(i + 1, len(nodes))),
                   key=lambda pair: -pair[0])
    part = list(range(len(nodes)))

    def root(i: int) -> int:
        while part[i] != i:
            part[i] = part[part[i]]
            i = part[i]
        return i

    neighbours: list[list[int]] = [[] for _ in nodes]
    for _, i, j in pairs:
        a, b = root(i), root(j)
        if a != b:
            part[a] = b
            neighbours[i].append(j)
            neighbours[j].append(i)
    edges, seen, queue = [], {0}, deque([0])
    while queue:
        parent = queue.popleft()
        for child in neighbours[parent]:
            if child not in seen:
                seen.add(child)
                edges.append((parent, child))
                queue.append(child)
    return edges

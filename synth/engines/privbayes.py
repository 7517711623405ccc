"""Engine ``privbayes``: a Bayesian network learnt under DP (Zhang, Cormode, Procopiuc, Srivastava
& Xiao, PrivBayes, SIGMOD 2014 / TODS 2017); DataSynthesizer's "correlated attribute mode".

Budget (ε under pure or approximate DP, ρ under zCDP; exact splits, the parameters take what is
left so the total is spent exactly):

1. under add/remove, 2 % for a noisy row count n̂ (under replace-one the count is public);
2. ``structure_share`` of the rest (default 0.3, the paper's β; DataSynthesizer uses ε/2) for
   the structure: the first column is drawn uniformly (public randomness, no cost), then d − 1
   steps each pick an (unplaced column X, parent set Π) pair with the exponential mechanism on
   a dependence ``score`` (``Curator.select_by_dependence``, sensitivities derived in
   ``synth.privacy.selection_scores``): ``mi``, the count-scaled mutual information n·I(X; Π) that
   DataSynthesizer uses (sensitivity log(max_rows + 1) + 1 + log min(|X|, |Π|) under
   add/remove, the scores of a larger table scaled to ``max_rows`` rows), or ``r``, the
   paper's n·R, the L1 distance of (X, Π) from independence (sensitivity 2 under add/remove, no row bound).
   Π ranges over the sets of at most ``degree`` placed columns that are θ-useful and maximal
   (no placed column can join Π and stay θ-useful; neither score decreases when a parent is
   added, so smaller sets would only dilute the choice).
   A step whose choice cannot depend on the data (one candidate) costs nothing;
3. the rest for the parameters: the d marginals (X, Π), measured with equal shares (discrete
   Laplace under pure/approximate DP, discrete Gaussian under zCDP, as the curator chooses).

θ-usefulness (the paper's rule, generalised to any domain and noise): a noisy table is useful
when its average count per cell is at least θ times the noise scale. With n̂ rows spread over
the c cells of the (X, Π) marginal and noise of scale b per cell (b = Δ₁ d / ε_params for
Laplace, σ = Δ₂ / sqrt(2 ρ_params / d) for Gaussian, each of the d tables getting an equal
share of the planned parameter budget), a pair is allowed only if c ≤ n̂ / (θ b); under
add/remove and pure DP this is c ≤ n̂ ε_params / (d θ), the paper's bound with its replace-one
sensitivity 2 replaced by ours. A column whose own domain exceeds the bound still gets its
1-way table (no parents). So the degree adapts per column: fewer or no parents when tables
would drown in noise.

Large domains: a column with more than ``parent_bins`` codes is seen as a parent on at most
``parent_bins`` groups of adjacent codes (a public map from the domain alone); as a child it
keeps all its codes. The maps are recorded in each measurement and in the engine output.

The generator samples from the network directly (``fit = false``, the default), or with
``fit = true`` hands the measurements to the graphical-model fitter like ``mst`` and ``aim``.
Then the junction tree of the network's tables (on the full codes) must stay within
``max_model_size`` MB: a pair whose table would grow the triangulated model past it is not a
candidate (public: from the domain and the choices made so far).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np

from synth.columns.domain import Domain
from synth.defaults import FIT_ITERATIONS
from synth.engines.base import EngineBase, EngineResult
from synth.engines.options import EngineOptions, megabytes, positive, share, true_or_false, whole_number
from synth.engines.output import Structure, check_keys, output_of, read_names, read_number, read_whole, reading_output
from synth.engines.rows import COUNT_SHARE
from synth.errors import DescriptionError, EngineError
from synth.model.bayesian_network import network_from_measurements
from synth.model.fitting import Callback
from synth.model.interface import Model
from synth.model.junction_tree import ModelSizes
from synth.privacy import Notion, split_budget
from synth.privacy.boundary import Boundary
from synth.privacy.measurement import Measurement
from synth.privacy.selection_scores import DEPENDENCE_SCORES
from synth.progress import Progress

Pair = tuple[str, tuple[str, ...]]


def parent_groups(sizes: Mapping[str, int], bins: int) -> dict[str, np.ndarray]:
    """For each column with more than ``bins`` codes, the group of each code: ``bins`` runs of
    adjacent codes of (nearly) equal length. Public: from the domain only."""
    return {name: np.arange(size) * bins // size for name, size in sizes.items() if size > bins}


@dataclass(frozen=True)
class PrivBayesOptions(EngineOptions):
    """privbayes's options (README, Engines): the most parents, θ, the parents' groups, the
    structure's share of the budget, the dependence score and its row bound, and the fit."""

    degree: int = 2
    theta: float = 4.0
    parent_bins: int = 8
    structure_share: float = 0.3
    max_rows: int = 10**9
    fit: bool = False
    score: str = "r"
    max_model_size: float = 80.0

    def __post_init__(self) -> None:
        whole_number("degree", self.degree, 0)
        whole_number("parent_bins", self.parent_bins, 2)
        whole_number("max_rows", self.max_rows, 1)
        positive("theta", self.theta, "the paper uses 4")
        share("structure_share", self.structure_share, "e.g. 0.3")
        if self.score not in DEPENDENCE_SCORES:
            raise EngineError(f"score must be one of {', '.join(DEPENDENCE_SCORES)} (mutual information, or the "
                              f"PrivBayes paper's R); got {self.score!r}.")
        megabytes("max_model_size", self.max_model_size)
        true_or_false("fit", self.fit)


@dataclass(frozen=True)
class PrivBayesOutput:
    """The network ((column, parents) in topological order), the group maps of the columns seen
    on groups as parents, θ, the largest table θ allowed and the most parents a column got."""

    network: tuple[Pair, ...]
    parent_groups: dict[str, tuple[int, ...]]
    theta: float
    max_cells: float
    degree_used: int

    def to_dict(self) -> dict[str, Any]:
        return {"network": [{"attribute": child, "parents": list(parents)} for child, parents in self.network],
                "parent_groups": {name: list(groups) for name, groups in self.parent_groups.items()},
                "theta": self.theta, "max_cells": self.max_cells, "degree_used": self.degree_used}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        check_keys("privbayes", data, ("network", "parent_groups", "theta", "max_cells", "degree_used"))
        network = data["network"]
        try:
            pairs = tuple((node["attribute"], read_names(node["parents"])) for node in network)
            if not all(isinstance(child, str) for child, _ in pairs):
                raise TypeError("names must be strings")
        except (TypeError, KeyError) as error:
            raise DescriptionError(
                f"the engine output's 'network' is malformed ({error}); it must be a list of "
                '{"attribute": column, "parents": [columns]}. Use the Description exactly as synth wrote it.'
            ) from error
        with reading_output("privbayes"):
            groups = {str(name): tuple(read_whole(g) for g in codes) for name, codes in data["parent_groups"].items()}
            return cls(pairs, groups, read_number(data["theta"]), read_number(data["max_cells"]),
                       read_whole(data["degree_used"]))


class PrivBayesEngine(EngineBase):
    """Greedy DP Bayesian network with θ-useful parent sets, then its noisy conditional tables."""

    name: ClassVar[str] = "privbayes"
    options_type = PrivBayesOptions
    output_type = PrivBayesOutput
    config: PrivBayesOptions

    def check(self, names: tuple[str, ...], notion: Notion) -> None:
        if self.config.degree >= len(names):
            raise EngineError(
                f"degree {self.config.degree} is too large for a table of {len(names)} columns: a column "
                f"can have at most {len(names) - 1} parents. Lower degree in [engine_options].")

    def describe(self, curator: Boundary, progress: Progress) -> EngineResult:
        names, sizes = curator.domain.names, dict(zip(curator.domain.names, curator.domain.sizes))
        self.check(names, curator.notion)
        beta = self.config.structure_share
        measurements: list[Measurement] = []
        if curator.neighbouring.count_is_public:
            structure, planned = split_budget(curator.remaining(), [beta, 1 - beta])
            rows = float(curator.public_count())
        else:
            count, structure, planned = split_budget(
                curator.remaining(), [COUNT_SHARE, (1 - COUNT_SHARE) * beta, (1 - COUNT_SHARE) * (1 - beta)])
            measurements.append(curator.noisy_count(count))
            rows = max(float(measurements[0].values[0]), 0.0)
        max_cells = rows / (self.config.theta * curator.noise_scale(planned / len(names)))
        groups = parent_groups(sizes, self.config.parent_bins)
        parent_sizes = {name: int(groups[name].max()) + 1 if name in groups else size for name, size in sizes.items()}
        network = self._learn_network(curator, structure, parent_sizes, max_cells, groups, progress)
        used = {p for _, parents in network for p in parents if p in groups}
        budgets = split_budget(curator.remaining(), [1.0] * len(network))
        for (child, parents), budget in progress.track(zip(network, budgets), "measuring the network's tables",
                                                       len(network)):
            maps = {p: groups[p] for p in parents if p in groups}
            measurements.append(curator.measure_marginal((child, *parents), budget, coarsening=maps))
        output = PrivBayesOutput(tuple(network), {name: tuple(groups[name].tolist()) for name in names if name in used},
                                 self.config.theta, max_cells, max(len(parents) for _, parents in network))
        return EngineResult(tuple(measurements), output)

    def build_model(self, domain: Domain, result: EngineResult, iterations: int = FIT_ITERATIONS,
                    callback: Callback | None = None) -> Model:
        """The network itself, its tables turned into conditionals; with ``fit``, the fitted model."""
        if self.config.fit:
            return super().build_model(domain, result, iterations, callback)
        return network_from_measurements(domain, output_of(result.output, PrivBayesOutput).network,
                                         result.measurements)

    def fits_added_measurements(self) -> bool:
        """Only with ``fit``: otherwise the model is the network's conditional tables, one per column."""
        return bool(self.config.fit)

    def structure(self, names: Sequence[str], result: EngineResult) -> Structure:
        """The network: an arrow from each parent to its child; DescriptionError if it is not a DAG on ``names``."""
        import networkx as nx  # here, not at the top: its import costs every run 60 ms

        output = output_of(result.output, PrivBayesOutput)
        graph = nx.DiGraph()
        graph.add_nodes_from(names)
        known = set(names)
        for child, parents in output.network:
            if child not in known or not known.issuperset(parents):
                raise DescriptionError(f"the engine output's 'network' names columns the schema lacks "
                                       f"({[child, *parents]}); use the Description exactly as synth wrote it.")
            graph.add_edges_from((parent, child) for parent in parents)
        if not nx.is_directed_acyclic_graph(graph):
            raise DescriptionError("the engine output's 'network' has a cycle, so it is not a Bayesian "
                                   "network; the file is inconsistent. Use it exactly as synth wrote it.")
        coarse = sorted(output.parent_groups)
        return Structure(graph, f"Bayesian network released by engine '{self.name}': an arrow runs from each "
                                f"parent to its child ({graph.number_of_edges()} arrows)."
                         + (f" As parents, {', '.join(coarse)} are seen on groups of adjacent codes." if coarse else ""))

    def _learn_network(self, curator: Boundary, budget: float, parent_sizes: Mapping[str, int], max_cells: float,
                       groups: Mapping[str, np.ndarray], progress: Progress) -> list[Pair]:
        """The greedy network: (column, parents) pairs in topological order."""
        names = curator.domain.names
        # Every score of a pair without parents is 0 whatever the data: the curator draws the
        # first column uniformly and charges nothing.
        first = names[curator.select_by_dependence([(a, ()) for a in names], budget)]
        network: list[Pair] = [(first, ())]
        steps = split_budget(budget, [1.0] * (len(names) - 1)) if len(names) > 1 else []
        sizes = ModelSizes(curator.domain)  # the fitted model's size with one more family, from the graph of the others
        for step in progress.track(steps, "choosing the network's parents", len(steps)):
            placed = [child for child, _ in network]
            graph = sizes.graph((child, *parents) for child, parents in network) if self.config.fit else ()

            def allowed(child: str, parents: tuple[str, ...], graph: tuple[int, ...] = graph) -> bool:
                cells = curator.domain.size((child,)) * math.prod(parent_sizes[p] for p in parents)
                return cells <= max_cells and (not self.config.fit or sizes.with_clique(
                    graph, (child, *parents)) <= self.config.max_model_size)

            candidates = [(child, parents) for child in names if child not in placed
                          for parents in self._parent_sets(child, placed, allowed)]
            network.append(candidates[curator.select_by_dependence(
                candidates, step, self.config.score, self.config.max_rows, coarsening=groups)])
        return network

    def _parent_sets(self, child: str, placed: Sequence[str],
                     allowed: Callable[[str, tuple[str, ...]], bool]) -> list[tuple[str, ...]]:
        """The maximal allowed parent sets of at most ``degree`` placed columns; () when none."""
        degree = min(self.config.degree, len(placed))
        sets = [parents for k in range(1, degree + 1) for parents in itertools.combinations(placed, k)
                if allowed(child, parents) and (k == degree or not any(
                    allowed(child, (*parents, q)) for q in placed if q not in parents))]
        return sets or [()]

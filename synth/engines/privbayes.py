"""Engine ``privbayes``: a Bayesian network learnt under DP (Zhang, Cormode, Procopiuc, Srivastava
& Xiao, PrivBayes, SIGMOD 2014 / TODS 2017); DataSynthesizer's "correlated attribute mode".

Budget (ε under pure or approximate DP, ρ under zCDP; exact splits, the parameters take what is
left so the total is spent exactly):

1. under add/remove, 2 % for a noisy row count n̂ (under replace-one the count is public);
2. ``structure_share`` of the rest (default 0.3, the paper's β; DataSynthesizer uses ε/2) for
   the structure: the first column is drawn uniformly (public randomness, no cost), then d − 1
   steps each pick an (unplaced column X, parent set Π) pair with the exponential mechanism on
   a dependence ``score`` (``Curator.select_by_dependence``, sensitivities derived in the
   curator's docstring): ``mi``, the count-scaled mutual information n·I(X; Π) that
   DataSynthesizer uses (sensitivity log(max_rows + 1) + 1 under add/remove), or ``r``, the
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
from typing import Any, ClassVar

import numpy as np

from synth.curator import DEPENDENCE_SCORES, Curator
from synth.engines.base import COUNT_SHARE, EngineResult, PublicChecks, megabytes, reject_unknown_options, share, true_or_false, whole_number
from synth.errors import EngineError
from synth.measurement import Measurement
from synth.model.junction_tree import model_size_mb
from synth.privacy import split_budget
from synth.progress import Progress

DEFAULTS: dict[str, Any] = {"degree": 2, "theta": 4.0, "parent_bins": 8, "structure_share": 0.3,
                            "max_rows": 10**9, "fit": False, "score": "r",
                            "max_model_size": 80.0}

Pair = tuple[str, tuple[str, ...]]


def parent_groups(sizes: Mapping[str, int], bins: int) -> dict[str, np.ndarray]:
    """For each column with more than ``bins`` codes, the group of each code: ``bins`` runs of
    adjacent codes of (nearly) equal length. Public: from the domain only."""
    return {name: np.arange(size) * bins // size for name, size in sizes.items() if size > bins}


class PrivBayesEngine(PublicChecks):
    """Greedy DP Bayesian network with θ-useful parent sets, then its noisy conditional tables."""

    name: ClassVar[str] = "privbayes"

    def __init__(self, options: Mapping[str, Any]) -> None:
        reject_unknown_options(self.name, options, set(DEFAULTS))
        self._options = {**DEFAULTS, **options}
        whole_number(self._options, "degree", 0)
        whole_number(self._options, "parent_bins", 2)
        whole_number(self._options, "max_rows", 1)
        theta = self._options["theta"]
        if isinstance(theta, bool) or not isinstance(theta, (int, float)) or not 0 < theta < math.inf:
            raise EngineError(f"theta must be a positive number (the paper uses 4); got {theta!r}.")
        share(self._options, "structure_share", "e.g. 0.3")
        if self._options["score"] not in DEPENDENCE_SCORES:
            raise EngineError(f"score must be one of {', '.join(DEPENDENCE_SCORES)} (mutual information, or the "
                              f"PrivBayes paper's R); got {self._options['score']!r}.")
        megabytes(self._options, "max_model_size")
        true_or_false(self._options, "fit")

    @property
    def options(self) -> dict[str, Any]:
        return dict(self._options)

    def check(self, names: tuple[str, ...], budget_unit: str) -> None:
        if self._options["degree"] >= len(names):
            raise EngineError(
                f"degree {self._options['degree']} is too large for a table of {len(names)} columns: a column "
                f"can have at most {len(names) - 1} parents. Lower degree in [engine_options].")

    def describe(self, curator: Curator, progress: Progress) -> EngineResult:
        names, sizes = curator.domain.names, dict(zip(curator.domain.names, curator.domain.sizes))
        self.check(names, curator.budget_unit)
        beta = self._options["structure_share"]
        measurements: list[Measurement] = []
        if curator.neighbouring.count_is_public:
            structure, planned = split_budget(curator.remaining(), [beta, 1 - beta])
            rows = float(curator.public_count())
        else:
            count, structure, planned = split_budget(
                curator.remaining(), [COUNT_SHARE, (1 - COUNT_SHARE) * beta, (1 - COUNT_SHARE) * (1 - beta)])
            measurements.append(curator.noisy_count(count))
            rows = max(float(measurements[0].values[0]), 0.0)
        max_cells = rows / (self._options["theta"] * curator.noise_scale(planned / len(names)))
        groups = parent_groups(sizes, self._options["parent_bins"])
        parent_sizes = {name: int(groups[name].max()) + 1 if name in groups else size for name, size in sizes.items()}
        network = self._learn_network(curator, structure, parent_sizes, max_cells, groups, progress)
        used = {p for _, parents in network for p in parents if p in groups}
        budgets = split_budget(curator.remaining(), [1.0] * len(network))
        for (child, parents), budget in progress.track(zip(network, budgets), "measuring the network's tables",
                                                       len(network)):
            maps = {p: groups[p] for p in parents if p in groups}
            measurements.append(curator.measure_marginal((child, *parents), budget, coarsening=maps))
        output = {
            "network": [{"attribute": child, "parents": list(parents)} for child, parents in network],
            "parent_groups": {name: groups[name].tolist() for name in names if name in used},
            "theta": self._options["theta"],
            "max_cells": max_cells,
            "degree_used": max(len(parents) for _, parents in network),
        }
        return EngineResult(tuple(measurements), output)

    def _learn_network(self, curator: Curator, budget: float, parent_sizes: Mapping[str, int], max_cells: float,
                       groups: Mapping[str, np.ndarray], progress: Progress) -> list[Pair]:
        """The greedy network: (column, parents) pairs in topological order."""
        names = curator.domain.names
        # Every score of a pair without parents is 0 whatever the data: the curator draws the
        # first column uniformly and charges nothing.
        first = names[curator.select_by_dependence([(a, ()) for a in names], budget)]
        network: list[Pair] = [(first, ())]
        steps = split_budget(budget, [1.0] * (len(names) - 1)) if len(names) > 1 else []
        for step in progress.track(steps, "choosing the network's parents", len(steps)):
            placed = [child for child, _ in network]
            tables = [(child, *parents) for child, parents in network]

            def allowed(child: str, parents: tuple[str, ...]) -> bool:
                cells = curator.domain.size((child,)) * math.prod(parent_sizes[p] for p in parents)
                return cells <= max_cells and (not self._options["fit"] or model_size_mb(
                    curator.domain, [*tables, (child, *parents)]) <= self._options["max_model_size"])

            candidates = [(child, parents) for child in names if child not in placed
                          for parents in self._parent_sets(child, placed, allowed)]
            network.append(candidates[curator.select_by_dependence(
                candidates, step, self._options["score"], self._options["max_rows"], coarsening=groups)])
        return network

    def _parent_sets(self, child: str, placed: Sequence[str],
                     allowed: Callable[[str, tuple[str, ...]], bool]) -> list[tuple[str, ...]]:
        """The maximal allowed parent sets of at most ``degree`` placed columns; () when none."""
        degree = min(self._options["degree"], len(placed))
        sets = [parents for k in range(1, degree + 1) for parents in itertools.combinations(placed, k)
                if allowed(child, parents) and (k == degree or not any(
                    allowed(child, (*parents, q)) for q in placed if q not in parents))]
        return sets or [()]

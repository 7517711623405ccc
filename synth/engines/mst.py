"""Engine ``mst``: the NIST-2018-winning method of McKenna, Miklau & Sheldon (JPC 2021).

Under zCDP the budget ρ is split in three parts (``BUDGET_SHARES``):

1. every 1-way marginal, measured with the Gaussian mechanism (ρ/3 in all);
2. a maximum spanning tree over the columns, built greedily (Kruskal-style): d − 1 rounds, each
   choosing among the pairs not yet connected, with the exponential mechanism, the pair whose
   2-way marginal the independent 1-way estimates get most wrong (L1 error; ρ/12 in all);
3. the tree's d − 1 two-way marginals, measured with the Gaussian mechanism (7ρ/12 in all).

The published MST gives the three parts a third each. A pair's score is an error in counts, of
sensitivity 1, so the gap between a dependent pair and an independent one grows with the rows while
the exponential mechanism's noise does not: even a small share picks the tree well, and the 2-way
marginals, whose noise is what the model keeps, use the budget better. On the accuracy suite
(benchmarks/accuracy_suite.py: ``synth run`` with each table's public profile, δ = 1e-9, mean
3-way TVD, seeds 0–2) the selection's share was chosen on the tuning half: against a third, ρ/6
scored a geometric mean of 0.972 at ε = 1 and ρ/12 0.957 (every table lower, from 0.925 on doctoraus
to 0.997 on flights; ρ/30 0.956, no better), and ρ/12 0.980 at ε = 0.3 (five tables). On the checking
half ρ/12 scored 0.935, 0.971 and 0.982 at ε = 0.3, 1 and 3 (six tables each; only caravan at
ε = 0.3, 1.008 on seed 0, above 1).

Before steps 2 and 3, rare codes of each column (noisy 1-way count below three noise deviations)
are merged into one code (``synth.model.compression``), so the 2-way tables stay small and
useful. The graphical-model fitter then combines all measurements into one consistent model, and
a merged code is spread over its codes in proportion to their noisy 1-way counts clipped at 0
(post-processing of step 1; on adult_coded at ε = 1 the model's 3-way error falls from 0.1088
with an even spread to 0.1070, 5 seeds).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

import numpy as np

from synth.columns.domain import Domain
from synth.defaults import FIT_ITERATIONS
from synth.engines.base import EngineBase, EngineResult, fit_expanded
from synth.engines.output import (
    check_keys,
    output_of,
    read_expansion,
    read_names,
    reading_output,
    recorded_expansion,
    write_expansion,
)
from synth.errors import EngineError
from synth.model.compression import compress_one_way, expansion_weights
from synth.model.estimation import estimate_total, project_to_simplex
from synth.model.fitting import Callback
from synth.model.interface import Model
from synth.privacy import Notion, split_budget
from synth.privacy.boundary import Boundary
from synth.progress import Progress

# The shares of ρ for the 1-way marginals, the tree's selection and its 2-way marginals (module docstring)
BUDGET_SHARES = (4 / 12, 1 / 12, 7 / 12)


@dataclass(frozen=True)
class MSTOutput:
    """The spanning tree's pairs of columns, in the order they were chosen, and each compressed
    column's expansion weights (its noisy 1-way counts clipped at 0; none in Descriptions written
    before they were recorded, whose merged codes then spread evenly)."""

    tree: tuple[tuple[str, str], ...]
    expansion: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return write_expansion({"tree": [list(pair) for pair in self.tree]}, self.expansion)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        check_keys("mst", data, ("tree",), ("expansion",))
        with reading_output("mst"):
            pairs = [read_names(pair) for pair in data["tree"]]
            if any(len(pair) != 2 for pair in pairs):
                raise ValueError("each edge of the tree is a pair of columns")
            expansion = read_expansion(data)
        return cls(tuple((a, b) for a, b in pairs), expansion)


class MSTEngine(EngineBase):
    """1-way marginals, compression, a DP maximum spanning tree of pairs, its 2-way marginals."""

    name: ClassVar[str] = "mst"
    output_type = MSTOutput
    needs_zcdp = True

    def check(self, names: tuple[str, ...], notion: Notion) -> None:
        super().check(names, notion)
        if len(names) < 2:
            raise EngineError("engine 'mst' needs at least two columns; use 'independent' for one.")

    def describe(self, curator: Boundary, progress: Progress) -> EngineResult:
        names = curator.domain.names
        self.check(names, curator.notion)
        rho_one_way, rho_select, rho_two_way = split_budget(curator.remaining(), list(BUDGET_SHARES))
        one_way = [
            curator.measure_marginal((name,), rho)
            for name, rho in zip(names, split_budget(rho_one_way, [1.0] * len(names)))
        ]
        maps, compressed = compress_one_way(one_way)
        view = curator.compressed(maps)
        tree = self._select_tree(view, compressed, rho_select, progress)
        two_way = [
            view.measure_marginal(pair, rho)
            for pair, rho in zip(tree, split_budget(rho_two_way, [1.0] * len(tree)))
        ]
        expansion = recorded_expansion(expansion_weights(one_way, maps))
        return EngineResult(tuple(compressed + two_way), MSTOutput(tuple(tree), expansion), compression=maps)

    def build_model(self, domain: Domain, result: EngineResult, iterations: int = FIT_ITERATIONS,
                    callback: Callback | None = None) -> Model:
        """The fit of the measurements, merged codes spread in proportion to their noisy 1-way counts."""
        return fit_expanded("mst", domain, result, output_of(result.output, MSTOutput).expansion, iterations, callback)

    @staticmethod
    def _select_tree(view: Boundary, one_way: list, rho: float, progress: Progress) -> list[tuple[str, str]]:
        """Kruskal's algorithm with each edge chosen by the exponential mechanism."""
        names = view.domain.names
        total = estimate_total(one_way)
        probabilities = {}
        for m in one_way:
            counts = m.values / (m.weights if m.weights is not None else 1.0)
            probabilities[m.attrs[0]] = project_to_simplex(counts, total) / total
        import networkx as nx  # here, not at the top: its import costs every run 60 ms

        components = nx.utils.UnionFind(names)
        tree: list[tuple[str, str]] = []
        budgets = split_budget(rho, [1.0] * (len(names) - 1))
        for budget in progress.track(budgets, "selecting the tree of column pairs", len(budgets)):
            candidates = [(a, b) for a, b in itertools.combinations(names, 2)
                          if components[a] != components[b]]
            estimates = [total * np.outer(probabilities[a], probabilities[b]) for a, b in candidates]
            chosen = candidates[view.select_marginal(candidates, estimates, budget)]
            components.union(*chosen)
            tree.append(chosen)
        return tree

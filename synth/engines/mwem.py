"""Engine ``mwem``: multiplicative weights with the exponential mechanism (Hardt, Ligett & McSherry,
"A simple and practical algorithm for differentially private data release", NeurIPS 2012).

The workload (``synth.engines.workload``) is a list of tables of counting queries: every k-way
marginal (default, k = 3), or the user's queries (ranges, conjunctions). Budget (ε under pure or
approximate DP, ρ under zCDP; exact splits, the last round takes exactly what is left):

1. under add/remove, 2 % for a noisy row count n̂ (under replace-one the count is public);
2. the rest in T equal rounds (``rounds``; by default one per column the workload touches); in
   each, ``selection_share`` (default ½, as in the paper) selects and the rest measures:

   * selection: the exponential mechanism picks the candidate table the current estimate gets
     most wrong, scored by its L1 error ‖x_q − A_q‖₁ (``Curator.select_marginal``, charged before
     it draws; sensitivity: the histogram's L1 sensitivity, 1 under add/remove, 2 under
     replace-one). The estimate A depends only on earlier noisy answers: post-processing.
     Two departures from the paper, on by default, both public (budget and table sizes only,
     so the sensitivity is unchanged): the candidates are the workload tables and their
     sub-tables (``candidates = "closure"``; a sub-table's cells are sums of workload queries),
     and each score is reduced by the L1 noise that measuring the table would add, its cells
     times the mean absolute noise (``penalty``, as in AIM: McKenna et al., VLDB 2022). The
     paper's selection picks the largest tables, which at small ε per round are mostly noise
     (on adult_missing at ε = 1, histogram, 2 seeds: 0.118 against 0.255 mean 3-way TVD,
     benchmarks/RESULTS.md);
   * measurement: that table with the Laplace mechanism (discrete, pure/approximate DP) or the
     Gaussian mechanism (discrete, zCDP), through ``Curator.measure_marginal``.

3. the estimate takes in the new measurement.

Representation of the estimate (recorded in the engine output as ``representation``):

* ``histogram``: an explicit histogram over the whole domain (``synth.model.histogram``).
  Multiplicative weights with the paper's improvements: ``passes`` sweeps of the update over all
  measurements after each round (default: as many as about 3·10⁹ cell updates allow in all,
  from 10 to 1000; recorded in the engine output), and the released estimate is the last
  round's (``average = true``: the average over rounds, the paper's output, which measured
  less accurate: with the paper's selection at ε = 1, 0.414 against 0.255 mean 3-way TVD on
  adult_missing, 0.098 against 0.016 on 6 columns of adult_coded);
* ``graphical-model``: the estimate is the graphical model fitted to all measurements so far
  (MWEM+PGM, McKenna, Sheldon & Miklau 2019), warm-started each round; no averaging (the fit
  already pools every measurement).

``representation = "auto"`` (default) takes the histogram when the domain has at most
``max_cells`` cells (default 10⁷: three float arrays, about 240 MB) and the work rule gives it
the full 1000 sweeps (at most 3·10⁶ / (T(T+1)/2) cells: 142,857 for T = 6 rounds); otherwise
the graphical model. The paper's update moves a cell by its error relative to n per sweep, so
rare cells need many sweeps: with fewer, the histogram measured less accurate than the
graphical model and slower (2 seeds, ε = 0.3 / 1 / 3: 0.147 / 0.118 / 0.117 against
0.142 / 0.104 / 0.079 on adult_missing, 1.6 million cells, 95 sweeps, 19–33 s against 1 s;
0.112 / 0.124 / 0.129 against 0.067 / 0.040 / 0.029 on 8 columns of adult_coded, 1.8 million
cells, 46 sweeps). ``"histogram"`` forces the explicit one (refused beyond ``max_cells``).

The Description holds the measurements in round order, n̂ and the options, so ``synth
generate`` rebuilds the same estimate by post-processing alone.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from synth.curator import Curator
from synth.engines.base import EngineResult, count_rows, share, true_or_false, whole_number
from synth.engines.workload import MARGINALS, WorkloadEngine, WorkloadTable, downward_closure
from synth.errors import EngineError
from synth.model.domain import Domain
from synth.model.fitting import fit_graphical_model
from synth.model.histogram import MultiplicativeWeights
from synth.privacy import split_budget
from synth.progress import Progress

HISTOGRAM, GRAPHICAL = "histogram", "graphical-model"
WORKLOAD, CLOSURE = "workload", "closure"
CANDIDATES = (WORKLOAD, CLOSURE)
REPRESENTATIONS = ("auto", HISTOGRAM, GRAPHICAL)
PASS_WORK = 3 * 10**9  # cell updates that the default number of passes may spend in all (~20 s)
PASSES = (10, 1000)  # the least and most passes by default


def default_rounds(workload: list[WorkloadTable], candidates: list[WorkloadTable]) -> int:
    """Rounds by default: as many as the columns the workload touches, at most one per candidate.
    More rounds each measure with less; on adult_missing (6 columns) and 8 columns of adult_coded
    the error was lowest near one round per column (benchmarks/RESULTS.md)."""
    columns = {a for item in workload for a in item.attrs}
    return min(len(candidates), len(columns))


class MWEMEngine(WorkloadEngine):
    """Rounds of exponential-mechanism selection, noisy measurement and multiplicative weights."""

    name: ClassVar[str] = "mwem"
    defaults: ClassVar[dict[str, Any]] = {
        "workload": MARGINALS, "k": 3, "rounds": None, "selection_share": 0.5, "representation": "auto",
        "max_cells": 10**7, "passes": None, "average": False, "iterations": 100,
        "candidates": CLOSURE, "penalty": True,
    }

    def check_options(self) -> None:
        if self._options["rounds"] is not None:
            whole_number(self._options, "rounds", 1)
        if self._options["passes"] is not None:
            whole_number(self._options, "passes", 1)
        for key in ("max_cells", "iterations"):
            whole_number(self._options, key, 1)
        share(self._options, "selection_share", "the paper uses 0.5")
        true_or_false(self._options, "average")
        true_or_false(self._options, "penalty")
        if self._options["candidates"] not in CANDIDATES:
            raise EngineError(f"candidates must be one of {list(CANDIDATES)}; got {self._options['candidates']!r}.")
        if self._options["representation"] not in REPRESENTATIONS:
            raise EngineError(f"representation must be one of {list(REPRESENTATIONS)}; "
                              f"got {self._options['representation']!r}.")

    def representation(self, domain: Domain, rounds: int) -> str:
        """The estimate's representation for ``domain`` and ``rounds`` (public: from sizes alone).
        ``auto`` takes the histogram when it fits in ``max_cells`` and the work rule of ``passes``
        allows it the most sweeps (``PASSES``); otherwise the graphical model."""
        chosen, limit, cells = self._options["representation"], self._options["max_cells"], domain.size()
        if chosen == HISTOGRAM and cells > limit:
            raise EngineError(
                f"the domain has {cells:,} cells, more than max_cells = {limit:,} for an explicit histogram "
                f"(8 bytes a cell, three arrays); use representation = \"auto\" or \"{GRAPHICAL}\", or raise "
                "max_cells if the memory is there."
            )
        if chosen == "auto":
            return HISTOGRAM if cells <= limit and self.default_passes(cells, rounds) == PASSES[1] else GRAPHICAL
        return chosen

    def passes(self, cells: int, rounds: int) -> int:
        """Sweeps over the measurements per round: the option, or ``default_passes``."""
        if self._options["passes"] is not None:
            return self._options["passes"]
        return self.default_passes(cells, rounds)

    @staticmethod
    def default_passes(cells: int, rounds: int) -> int:
        """As many sweeps as ``PASS_WORK`` cell updates allow over all rounds (round t sweeps t
        measurements), within ``PASSES``: the paper's update moves slowly, so small domains get
        more sweeps."""
        updates = cells * rounds * (rounds + 1) // 2
        return min(PASSES[1], max(PASSES[0], PASS_WORK // updates))

    def describe(self, curator: Curator, progress: Progress) -> EngineResult:
        domain = curator.domain
        workload = self.workload(domain)
        candidates = downward_closure(workload) if self._options["candidates"] == CLOSURE else workload
        rounds = self._options["rounds"] or default_rounds(workload, candidates)
        representation = self.representation(domain, rounds)
        total, measurements = count_rows(curator)
        selection_share = self._options["selection_share"]
        passes = self.passes(domain.size(), rounds)
        weights = MultiplicativeWeights(domain, total, passes) if representation == HISTOGRAM else None
        model = None
        round_budgets = split_budget(curator.remaining(), [1.0] * rounds)
        selected: list[str] = []
        progress.message(f"mwem: {len(workload)} workload tables, {rounds} rounds, {representation} estimate")
        for number, budget in enumerate(progress.track(round_budgets, "mwem rounds", rounds), 1):
            if number == rounds:  # the last round takes exactly what is left
                budget = curator.remaining()
            select, measure = split_budget(budget, [selection_share, 1 - selection_share])
            estimate = weights if weights is not None else model
            estimates = [item.table(estimate.marginal(item.attrs) if estimate is not None
                                    else np.full(domain.shape(item.attrs), total / domain.size(item.attrs)))
                         for item in candidates]
            noise = curator.expected_absolute_noise(measure) if self._options["penalty"] else 0.0
            item = candidates[curator.select_marginal([c.attrs for c in candidates], estimates, select,
                                                      penalties=[noise * c.cells(domain) for c in candidates],
                                                      coarsenings=[c.groups for c in candidates])]
            measured = curator.measure_marginal(item.attrs, measure, coarsening=item.groups)
            measurements.append(measured)
            selected.append(item.label())
            if weights is not None:
                weights.add(measured)
            else:
                model = fit_graphical_model(domain, measurements, total=total, iterations=self._options["iterations"],
                                            warm_start=model)
        output = {"representation": representation, "cells": domain.size(), "total": total, "rounds": rounds,
                  **({"passes": passes} if representation == HISTOGRAM else {}),
                  "selected": selected, "workload": [item.to_dict() for item in workload]}
        return EngineResult(tuple(measurements), output)


"""Engine ``mwem``: multiplicative weights with the exponential mechanism (Hardt, Ligett & McSherry,
"A simple and practical algorithm for differentially private data release", NeurIPS 2012).

The workload (``synth.engines.workload``) is a list of tables of counting queries: every marginal
of an order (default ``"3-way"``), or the user's queries (ranges, conjunctions). Budget (ε under pure or
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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np

from synth.columns.domain import Domain
from synth.defaults import FIT_ITERATIONS
from synth.engines.base import EngineResult
from synth.engines.options import one_of, share, true_or_false, whole_number
from synth.engines.output import check_keys, output_of, read_number, read_whole, reading_output
from synth.engines.rows import count_rows
from synth.engines.workload import WorkloadEngine, WorkloadOptions, WorkloadTable, downward_closure
from synth.errors import DescriptionError, EngineError
from synth.model.fitting import Callback, fit_graphical_model
from synth.model.histogram import MultiplicativeWeights, replay_multiplicative_weights
from synth.model.interface import Model
from synth.privacy import split_budget
from synth.privacy.boundary import Boundary
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


@dataclass(frozen=True)
class MWEMOptions(WorkloadOptions):
    """mwem's options (README, Engines): the workload, the rounds and how each selects and
    measures, and how the estimate is kept."""

    workload: Any = "3-way"
    rounds: int | None = None  # None: ``default_rounds``
    selection_share: float = 0.5
    representation: str = "auto"
    max_cells: int = 10**7
    passes: int | None = None  # None: ``MWEMEngine.default_passes``
    average: bool = False
    iterations: int = 100
    candidates: str = CLOSURE
    penalty: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.rounds is not None:
            whole_number("rounds", self.rounds, 1)
        if self.passes is not None:
            whole_number("passes", self.passes, 1)
        whole_number("max_cells", self.max_cells, 1)
        whole_number("iterations", self.iterations, 1)
        share("selection_share", self.selection_share, "the paper uses 0.5")
        true_or_false("average", self.average)
        true_or_false("penalty", self.penalty)
        one_of("candidates", self.candidates, CANDIDATES)
        one_of("representation", self.representation, REPRESENTATIONS)


@dataclass(frozen=True)
class MWEMOutput:
    """How the estimate was kept (with its sweeps per round for a histogram), the domain's cells,
    the row count it was scaled to, the rounds, the tables selected and the workload."""

    representation: str
    cells: int
    total: float
    rounds: int
    selected: tuple[str, ...]
    workload: tuple[WorkloadTable, ...]
    passes: int | None = None  # histogram only

    def to_dict(self) -> dict[str, Any]:
        return {"representation": self.representation, "cells": self.cells, "total": self.total,
                "rounds": self.rounds, **({"passes": self.passes} if self.passes is not None else {}),
                "selected": list(self.selected), "workload": [item.to_dict() for item in self.workload]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        representation = data.get("representation") if isinstance(data, Mapping) else None
        if representation not in (HISTOGRAM, GRAPHICAL):
            raise DescriptionError(f"the mwem output in the Description has representation {representation!r}, not "
                                   f"{HISTOGRAM!r} or {GRAPHICAL!r}; use the file exactly as synth wrote it.")
        histogram = representation == HISTOGRAM
        check_keys("mwem", data, ("representation", "cells", "total", "rounds", "selected", "workload")
                   + (("passes",) if histogram else ()))
        with reading_output("mwem"):
            selected = data["selected"]
            if not isinstance(selected, list) or not all(isinstance(label, str) for label in selected):
                raise TypeError(f"selected must be a list of table labels, got {selected!r}")
            return cls(representation, read_whole(data["cells"]), read_number(data["total"]),
                       read_whole(data["rounds"]), tuple(selected),
                       tuple(WorkloadTable.from_dict(item) for item in data["workload"]),
                       read_whole(data["passes"]) if histogram else None)


class MWEMEngine(WorkloadEngine):
    """Rounds of exponential-mechanism selection, noisy measurement and multiplicative weights."""

    name: ClassVar[str] = "mwem"
    options_type = MWEMOptions
    output_type = MWEMOutput
    config: MWEMOptions

    def representation(self, domain: Domain, rounds: int) -> str:
        """The estimate's representation for ``domain`` and ``rounds`` (public: from sizes alone).
        ``auto`` takes the histogram when it fits in ``max_cells`` and the work rule of ``passes``
        allows it the most sweeps (``PASSES``); otherwise the graphical model."""
        chosen, limit, cells = self.config.representation, self.config.max_cells, domain.size()
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
        if self.config.passes is not None:
            return self.config.passes
        return self.default_passes(cells, rounds)

    @staticmethod
    def default_passes(cells: int, rounds: int) -> int:
        """As many sweeps as ``PASS_WORK`` cell updates allow over all rounds (round t sweeps t
        measurements), within ``PASSES``: the paper's update moves slowly, so small domains get
        more sweeps."""
        updates = cells * rounds * (rounds + 1) // 2
        return min(PASSES[1], max(PASSES[0], PASS_WORK // updates))

    def describe(self, curator: Boundary, progress: Progress) -> EngineResult:
        domain = curator.domain
        workload = self.workload(domain)
        candidates = downward_closure(workload) if self.config.candidates == CLOSURE else workload
        rounds = self.config.rounds or default_rounds(workload, candidates)
        representation = self.representation(domain, rounds)
        total, measurements = count_rows(curator)
        selection_share = self.config.selection_share
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
            noise = curator.expected_absolute_noise(measure) if self.config.penalty else 0.0
            item = candidates[curator.select_marginal([c.attrs for c in candidates], estimates, select,
                                                      penalties=[noise * c.cells(domain) for c in candidates],
                                                      coarsenings=[c.groups for c in candidates])]
            measured = curator.measure_marginal(item.attrs, measure, coarsening=item.groups)
            measurements.append(measured)
            selected.append(item.label())
            if weights is not None:
                weights.add(measured)
            else:
                model = fit_graphical_model(domain, measurements, total=total, iterations=self.config.iterations,
                                            warm_start=model)
        output = MWEMOutput(representation, domain.size(), total, rounds, tuple(selected), tuple(workload),
                            passes if representation == HISTOGRAM else None)
        return EngineResult(tuple(measurements), output)

    def build_model(self, domain: Domain, result: EngineResult, iterations: int = FIT_ITERATIONS,
                    callback: Callback | None = None) -> Model:
        """The released histogram, replayed from the measurements in round order; else the fit."""
        output = output_of(result.output, MWEMOutput)
        if output.passes is None:
            return super().build_model(domain, result, iterations, callback)
        with reading_output(self.name):
            return replay_multiplicative_weights(domain, result.measurements, float(output.total), output.passes,
                                                 self.config.average)

    def fits_added_measurements(self) -> bool:
        """False: the model replays the engine's own rounds, in their order (a measurement added after
        them would not be replayed)."""
        return False


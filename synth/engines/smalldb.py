"""Engine ``smalldb``: the small database mechanism (Blum, Ligett & Roth, STOC 2008; Dwork & Roth,
The Algorithmic Foundations of Differential Privacy, §4.1).

The exponential mechanism over every database of m rows drawn from the domain (every multiset
of m cells of the full domain), each scored by its largest error over the workload's counting
queries (``synth.engines.workload``: every cell of every marginal of an order, default
``"2-way"``, or of the user's query tables), scaled to n rows: u(x, y) = −max_q |q(x) − n·q(y)/m|
(``Curator.select_small_database``; sensitivity 1 under add/remove and replace-one, derived in
``synth.privacy.selection_scores``). The draw is exact: every candidate is enumerated and scored (vectorised), and one is
drawn with probability ∝ exp(u/β) by Gumbel report-noisy-max, which is the exponential
mechanism in log space. Budget: under add/remove, 2 % for a noisy row count n̂ (under
replace-one the count is public); the rest for the one draw.

m is the ``size`` option, or by default the theory's: Dwork & Roth, Theorem 4.5, run SmallDB with
α/2 (databases of 4 ln|Q| / α² rows) for

    α = ((16 ln|X| ln|Q| + 4 ln(1/β)) / (ε n̂))^(1/3),    β = ``THEORY_FAILURE``,

|X| the domain's cells, |Q| the workload's queries and ε the draw's ε (under zCDP the ε whose
bounded-range cost ε²/8 is the draw's ρ). Then with probability 1 − β every query's error is at
most α n̂ rows (natural logarithms throughout).

The space has C(|X| + m − 1, m) candidates: exponential in m. When that exceeds
``max_candidates`` the engine refuses (EngineError, stating the size and suggesting ``mwem``)
instead of hanging or approximating. The engine output holds the chosen database (codes, one row
each); the generator resamples its rows.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np

from synth.columns.domain import Domain
from synth.defaults import FIT_ITERATIONS
from synth.engines.base import EngineResult
from synth.engines.options import whole_number
from synth.engines.output import check_keys, output_of, read_number, read_whole, reading_output
from synth.engines.rows import count_rows
from synth.engines.workload import WorkloadEngine, WorkloadOptions, WorkloadTable
from synth.errors import EngineError
from synth.model.fitting import Callback
from synth.model.histogram import database_model
from synth.model.interface import Model
from synth.privacy import Notion
from synth.privacy.boundary import Boundary
from synth.progress import Progress

THEORY_FAILURE = 0.05  # β of the theory's accuracy bound, used to choose m


def theory_size(cells: int, queries: int, epsilon: float, rows: float) -> int:
    """m from Dwork & Roth's Theorem 4.5 (see the module docstring)."""
    log_queries = math.log(max(queries, 2))
    alpha = ((16 * math.log(max(cells, 2)) * log_queries + 4 * math.log(1 / THEORY_FAILURE))
             / (epsilon * rows)) ** (1 / 3)
    return max(1, math.ceil(4 * log_queries / alpha**2))


def multisets(cells: int, size: int) -> np.ndarray:
    """Every multiset of ``size`` cells out of ``cells`` as a sorted row of cell indices, shape
    (C(cells + size − 1, size), size), in lexicographic order."""
    count = math.comb(cells + size - 1, size)
    flat = itertools.chain.from_iterable(itertools.combinations_with_replacement(range(cells), size))
    return np.fromiter(flat, dtype=np.int64, count=count * size).reshape(count, size)


def draw_epsilon(budget: float, notion: Notion) -> float:
    """The ε of an exponential-mechanism draw given its budget (ρ under zCDP: ε = sqrt(8ρ))."""
    return math.sqrt(8 * budget) if notion is Notion.ZCDP else budget


@dataclass(frozen=True)
class SmallDBOptions(WorkloadOptions):
    """smalldb's options (README, Engines): the workload, the rows m of the small database (None:
    the theory's) and the most candidate databases it will score."""

    workload: Any = "2-way"
    size: int | None = None
    max_candidates: int = 10**6

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.size is not None:
            whole_number("size", self.size, 1)
        whole_number("max_candidates", self.max_candidates, 1)


@dataclass(frozen=True)
class SmallDBOutput:
    """The database drawn (codes, one row each), its rows m, the candidates scored, the workload's
    queries and tables, and the row count the database is scaled to."""

    database: tuple[tuple[int, ...], ...]
    size: int
    candidates: int
    queries: int
    total: float
    workload: tuple[WorkloadTable, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"database": [list(row) for row in self.database], "size": self.size, "candidates": self.candidates,
                "queries": self.queries, "total": self.total, "workload": [item.to_dict() for item in self.workload]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        check_keys("smalldb", data, ("database", "size", "candidates", "queries", "total", "workload"))
        with reading_output("smalldb"):
            database = tuple(tuple(read_whole(code) for code in row) for row in data["database"])
            return cls(database, read_whole(data["size"]), read_whole(data["candidates"]),
                       read_whole(data["queries"]), read_number(data["total"]),
                       tuple(WorkloadTable.from_dict(item) for item in data["workload"]))


class SmallDBEngine(WorkloadEngine):
    """The exponential mechanism over all small databases, scored by their worst workload answer."""

    name: ClassVar[str] = "smalldb"
    options_type = SmallDBOptions
    output_type = SmallDBOutput
    config: SmallDBOptions

    def check_space(self, cells: int, size: int, origin: str = "") -> int:
        """The number of candidate databases; EngineError when it exceeds ``max_candidates``
        (``origin``: how ``size`` was chosen, said in the message)."""
        count = math.comb(cells + size - 1, size)
        limit = self.config.max_candidates
        if count > limit:
            raise EngineError(
                f"smalldb would choose among {count:.3g} databases of {size} rows{origin} from a domain of "
                f"{cells:,} cells, more than max_candidates = {limit:,} (each is scored: time and memory grow "
                "with the count). Use engine \"mwem\" for this table, or set a smaller size, fewer columns, "
                "or a larger max_candidates. Nothing was released."
            )
        return count

    def describe(self, curator: Boundary, progress: Progress) -> EngineResult:
        domain = curator.domain
        workload = self.workload(domain)
        cells = domain.size()
        size = self.config.size
        self.check_space(cells, size or 1)  # refuse before spending when no size can fit
        if size is not None:
            self.check_space(cells, size)
        total, measurements = count_rows(curator)
        budget = curator.remaining()
        queries = sum(item.cells(domain) for item in workload)
        if size is None:
            size = theory_size(cells, queries, draw_epsilon(budget, curator.notion), total)
        count = self.check_space(cells, size, "" if self.config.size is not None else (
            f" (the theory's m for about {total:,.0f} rows: Dwork & Roth, Theorem 4.5; the option size "
            "sets m yourself)"))
        progress.message(f"smalldb: scoring {count:,} databases of {size} rows on {queries} queries")
        databases = multisets(cells, size)
        chosen = databases[curator.select_small_database(databases, [(w.attrs, w.groups) for w in workload], budget)]
        rows = np.column_stack(np.unravel_index(chosen, domain.sizes))
        output = SmallDBOutput(tuple(tuple(row) for row in rows.tolist()), size, count, queries, total, tuple(workload))
        return EngineResult(tuple(measurements), output)

    def build_model(self, domain: Domain, result: EngineResult, iterations: int = FIT_ITERATIONS,
                    callback: Callback | None = None) -> Model:
        """The small database's histogram scaled to the row count: sampling resamples its rows."""
        output = output_of(result.output, SmallDBOutput)
        with reading_output(self.name):
            return database_model(domain, np.asarray(output.database), float(output.total))

    def fits_added_measurements(self) -> bool:
        """False: the model is the selected small database, not a fit of the measurements."""
        return False

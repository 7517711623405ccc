"""Workloads of counting queries for the query-answering engines (``mwem``, ``smalldb``).

A workload is a list of ``WorkloadTable`` items. Each item is a table of counting queries over a
few columns: every cell of the marginal over ``attrs``, where a column listed in ``groups`` is
seen on groups of its codes (a public map: the group of each code, groups 0..k-1 all used). So

* a k-way marginal is an item without groups (one query per cell);
* a user query (a conjunction of per-column conditions: a range of a numeric column, a set of
  categories) is an item whose every column has two groups, 0 = "meets the condition" and
  1 = "does not" (a single group 0 when every code meets it). Its first cell, all zeros, is the
  query's count; the other cells are the counts of its complements, which cost nothing more to
  measure (one row still moves one cell of the table).

Built from the domain (marginals) or from the schema and the engine options (user queries): all
public. This module never sees private rows.

The ``workload`` option is spelt the same in every engine that has one (aim, mwem, smalldb):
``"1-way"``, ``"2-way"`` or ``"3-way"`` for every marginal of that order, or a list (of column
lists for aim, of queries for mwem and smalldb). The spelling before it, ``workload =
"marginals"`` with ``k = n``, is still read (``read_old_spelling``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

import numpy as np

from synth.columns.cells import datetime_to_seconds
from synth.columns.column import Column
from synth.columns.domain import Domain
from synth.columns.kinds import NUMERIC_KINDS, Kind
from synth.columns.schema import Schema
from synth.engines.base import EngineBase
from synth.engines.options import EngineOptions
from synth.engines.output import read_names
from synth.errors import EngineError
from synth.privacy import Notion
from synth.privacy.measurement import group_table, is_group_map

ORDERS = {"1-way": 1, "2-way": 2, "3-way": 3}  # the workload of every marginal of that order
OLD_MARGINALS = "marginals"  # the spelling before ORDERS: workload = "marginals" with k = the order


@dataclass(frozen=True)
class WorkloadTable:
    """The counting queries of one table: the cells of the marginal over ``attrs`` (in domain
    order), each column in ``groups`` taken on groups of its codes."""

    attrs: tuple[str, ...]
    groups: Mapping[str, np.ndarray] = field(default_factory=dict)

    def shape(self, domain: Domain) -> tuple[int, ...]:
        """Cells per column of the table (groups for grouped columns)."""
        return tuple(int(self.groups[a].max()) + 1 if a in self.groups else domain.size((a,)) for a in self.attrs)

    def cells(self, domain: Domain) -> int:
        return math.prod(self.shape(domain))

    def table(self, marginal: np.ndarray) -> np.ndarray:
        """This table (flat) from the marginal over ``attrs`` (axes in ``attrs`` order)."""
        return np.ravel(group_table(marginal, [self.groups.get(a) for a in self.attrs]))

    def label(self) -> str:
        grouped = "".join(f", {a} as {int(m.max()) + 1} groups" for a, m in self.groups.items())
        return f"{', '.join(self.attrs)}{grouped}"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"attrs": list(self.attrs)}
        if self.groups:
            data["groups"] = {a: m.tolist() for a, m in self.groups.items()}
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WorkloadTable:
        """A table as ``to_dict`` wrote it; ValueError or TypeError if it is not that shape."""
        attrs = read_names(data["attrs"])
        groups = {a: np.asarray(m, dtype=np.int64) for a, m in dict(data.get("groups") or {}).items()}
        if set(data) - {"attrs", "groups"} or not set(groups) <= set(attrs) \
                or not all(is_group_map(m) for m in groups.values()):
            raise ValueError(f"a workload table must be {{attrs, groups}} with a group map per grouped column; "
                             f"got {dict(data)!r}")
        return cls(attrs, groups)


def read_old_spelling(options: Mapping[str, Any], default: str) -> dict[str, Any]:
    """Options as written before the workload had one spelling: ``workload = "marginals"`` (or no
    workload) with ``k = n`` becomes ``workload = "n-way"`` (``default`` when k is left out); k
    alone was ignored beside a list of queries, and still is. Other options pass unchanged."""
    if "k" not in options and options.get("workload") != OLD_MARGINALS:
        return dict(options)
    new = {key: value for key, value in options.items() if key != "k"}
    if new.get("workload", OLD_MARGINALS) == OLD_MARGINALS:
        k = options.get("k", ORDERS[default])
        if isinstance(k, bool) or k not in (1, 2, 3):
            raise EngineError(f"k must be 1, 2 or 3 (the order of the workload's marginals); got {k!r}. "
                              'It is now written in the workload: workload = "2-way", for example.')
        new["workload"] = f"{k}-way"
    return new


def marginal_workload(domain: Domain, order: int) -> list[WorkloadTable]:
    """Every marginal of that order of the domain's columns (all columns when there are fewer)."""
    order = min(order, len(domain.names))
    return [WorkloadTable(attrs) for attrs in itertools.combinations(domain.names, order)]


def downward_closure(workload: Sequence[WorkloadTable]) -> list[WorkloadTable]:
    """The workload's tables and every table over a non-empty subset of one's columns (each column
    on the same groups), without repeats, in the order first met. A sub-table's cells are sums of
    its table's cells: counting queries that answer part of the workload at a smaller table's cost."""
    seen: dict[tuple, WorkloadTable] = {}
    for item in workload:
        for size in range(len(item.attrs), 0, -1):
            for attrs in itertools.combinations(item.attrs, size):
                groups = {a: item.groups[a] for a in attrs if a in item.groups}
                key = (attrs, tuple((a, m.tobytes()) for a, m in groups.items()))
                seen.setdefault(key, WorkloadTable(attrs, groups))
    return list(seen.values())


def listed_marginals(spec: Any, names: Sequence[str]) -> list[tuple[str, ...]]:
    """A workload given as a list of column lists, checked against the column names (a public
    fact); each marginal's columns in table order."""
    if not isinstance(spec, list) or not spec or not all(isinstance(q, list) and q for q in spec):
        raise EngineError("workload must be \"1-way\", \"2-way\", \"3-way\" or a non-empty list of non-empty "
                          "column lists.")
    workload = []
    for query in spec:
        unknown = [c for c in query if c not in names]
        if unknown or len(set(query)) != len(query):
            raise EngineError(f"workload marginal {query} names unknown or repeated columns {unknown}; "
                              f"the columns are {list(names)}.")
        workload.append(tuple(sorted(query, key=names.index)))
    return workload


def check_workload_option(spec: Any) -> None:
    """Check the form of a query engine's ``workload`` option before anything is spent: "1-way",
    "2-way", "3-way", or a non-empty list whose items are column lists (their marginals) or
    non-empty tables {column: condition} (queries)."""
    if isinstance(spec, str) and spec in ORDERS:
        return
    if not isinstance(spec, list) or not spec:
        raise EngineError(
            "workload must be \"1-way\", \"2-way\" or \"3-way\" (every marginal of that order) or a "
            "non-empty list of column lists (marginals) and queries, such as "
            "[[\"age\", \"sex\"], {age = [30, 39]}, {sex = [\"Female\"], income = [\">50K\"]}]; got "
            f"{'an empty list' if spec == [] else repr(spec)}."
        )
    for number, query in enumerate(spec, 1):
        marginal = isinstance(query, list) and query and all(isinstance(name, str) for name in query)
        if not marginal and (not isinstance(query, Mapping) or not query):
            raise EngineError(
                f"workload item {number} must be a list of columns, e.g. [\"age\", \"sex\"], or a table of "
                f"{{column = condition}} with at least one column, e.g. {{age = [30, 39]}}; got {query!r}."
            )


def _codes_in_range(column: Column, bounds: Any, number: int) -> np.ndarray:
    """The bins of a numeric or datetime column that overlap [low, high] (a boolean per code)."""
    if not isinstance(bounds, list) or len(bounds) != 2:
        raise EngineError(
            f"workload query {number}: column {column.name!r} is {column.kind.value}, so its condition is a "
            f"range [low, high], e.g. [30, 39]; got {bounds!r}."
        )
    try:
        low, high = ((datetime_to_seconds(b) if column.kind == Kind.DATETIME else float(b)) for b in bounds)
    except (TypeError, ValueError) as exc:
        raise EngineError(f"workload query {number}: the range of {column.name!r} must be two "
                          f"{'dates' if column.kind == Kind.DATETIME else 'numbers'}; got {bounds!r}.") from exc
    if not low <= high:
        raise EngineError(f"workload query {number}: the range of {column.name!r} has low > high ({bounds!r}).")
    edges = column.edges
    assert column.upper is not None  # a numeric column has bounds
    inside = np.zeros(column.size, dtype=bool)
    inside[:-1] = (edges[1:] > low) & (edges[:-1] <= high)
    inside[-2] |= low <= column.upper <= high  # the last bin also holds the upper bound
    return inside


def _codes_in_set(column: Column, values: Any, number: int) -> np.ndarray:
    """The codes of a categorical or boolean column listed in ``values`` (a boolean per code)."""
    labels: list[Any] = [False, True]
    if column.kind == Kind.CATEGORICAL:
        assert column.categories is not None  # a categorical column lists its categories
        labels = list(column.categories)
    if not isinstance(values, list) or not values:
        raise EngineError(
            f"workload query {number}: column {column.name!r} is {column.kind.value}, so its condition is a "
            f"non-empty list of its values, e.g. {labels[:2]!r}; got {values!r}."
        )
    unknown = [v for v in values if v not in labels or isinstance(v, bool) != (column.kind == Kind.BOOLEAN)]
    if unknown:
        raise EngineError(f"workload query {number}: {unknown!r} are not values of column {column.name!r}; "
                          f"its values are {labels!r}.")
    inside = np.zeros(column.size, dtype=bool)
    inside[[labels.index(v) for v in values]] = True
    return inside


def query_table(query: Mapping[str, Any], schema: Schema, number: int) -> WorkloadTable:
    """A user query (a conjunction of per-column conditions; ``number``: its place in the workload)
    as a two-group table, in the schema's column order. A numeric column's condition is a range
    [low, high]: the bins that overlap it (align ranges with bin edges for exact answers); a
    categorical or boolean column's is a list of values. Missing cells never meet a condition."""
    unknown = [name for name in query if name not in schema.names]
    if unknown:
        raise EngineError(f"workload query {number} names unknown column(s) {unknown}; the columns are "
                          f"{list(schema.names)}.")
    groups = {}
    for name in sorted(query, key=schema.names.index):
        column = schema.column(name)
        pick = _codes_in_range if column.kind in NUMERIC_KINDS else _codes_in_set
        inside = pick(column, query[name], number)
        if not inside.any():
            raise EngineError(f"workload query {number}: no value of column {name!r} meets {query[name]!r}; "
                              "widen the condition or drop the query.")
        groups[name] = np.where(inside, 0, 1).astype(np.int64)  # one group when every code meets it
    return WorkloadTable(tuple(groups), groups)


def resolve_workload(spec: Any, domain: Domain, schema: Schema | None) -> list[WorkloadTable]:
    """The workload an engine option asks for: every marginal of an order, or a list of marginals
    (column lists) and user queries (which need the schema to turn values into codes)."""
    check_workload_option(spec)
    if isinstance(spec, str):
        return marginal_workload(domain, ORDERS[spec])
    workload = []
    for number, item in enumerate(spec, 1):
        if isinstance(item, list):
            workload.append(WorkloadTable(listed_marginals([item], domain.names)[0]))
            continue
        if schema is None:
            raise EngineError("a workload of user queries needs the release's schema to find the codes of "
                              "their values; describe the table through synth.describe or the CLI.")
        workload.append(query_table(item, schema, number))
    return workload


@dataclass(frozen=True)
class WorkloadOptions(EngineOptions):
    """Base of the options of the query engines: the workload, checked when read."""

    workload: Any = "3-way"

    @classmethod
    def read(cls, engine: str, options: Mapping[str, Any]) -> Self:
        """As ``EngineOptions.read``, taking the old spelling of the workload too."""
        return super().read(engine, read_old_spelling(options, cls.workload))

    def __post_init__(self) -> None:
        check_workload_option(self.workload)


class WorkloadEngine(EngineBase):
    """Base of the engines that answer a workload of counting queries. Options are checked when
    the engine is built; a workload of user queries is turned into codes once ``with_schema`` has
    given the release's schema."""

    config: WorkloadOptions

    def __init__(self, options: Mapping[str, Any], schema: Schema | None = None) -> None:
        super().__init__(options)
        self._schema = schema

    def check(self, names: tuple[str, ...], notion: Notion) -> None:
        """Refuse, before anything is spent, a listed marginal naming columns the table lacks."""
        super().check(names, notion)
        spec = self.config.workload
        marginals = [item for item in spec if isinstance(item, list)] if isinstance(spec, list) else []
        if marginals:
            listed_marginals(marginals, names)

    def with_schema(self, schema: Schema) -> WorkloadEngine:
        return type(self)(self.options, schema)

    def workload(self, domain: Domain) -> list[WorkloadTable]:
        return resolve_workload(self.config.workload, domain, self._schema)

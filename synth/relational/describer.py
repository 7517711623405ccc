"""The relational describer: one DP release of a root table and the tables below it, per person.

The privacy unit is a root row with every row that references it, directly or through other rows;
neighbouring databases differ by one unit added or removed (``add-remove``; ``replace`` is
refused). After bounding (``synth.relational.bounding``: orphans dropped, at most ``max_children``
rows per parent row and relation), the budget of one accountant is shared by parts in proportion
to their weights (``PartAccountant``), each measured by an existing engine through a curator of its
own:

* the **root part** (the profile's ``budget_weight``, 1 by default): the root's modelled columns
  and, per child table, its number of children per parent (0 .. max_count, a public domain). One
  unit is one row: every histogram has sensitivity 1, as for a single table;
* one **part per other table** (each its ``budget_weight``; parents before children): when the profile says
  ``max_children = "dp"``, first a noisy histogram of its rows per kept parent row to choose the
  bound (``synth.relational.degree``, 5 % of the part, while bounding top down); then one noisy
  count of the parent rows that had more rows than the bound (5 % of the part); then the table's own
  columns' domains (when not given) and the engine's measurements over its rows joined with their
  parent's columns, and with its own children counts when it has children. A unit owns up to
  k = the product of the bounds from the root down to the table of its rows (k = max_children for
  a child of the root; a patient's prescriptions, at most 5 per visit and 10 visits, give k = 50),
  and up to k / max_children of its parent's rows. So the curator's relation is
  ``Neighbouring(rows_per_unit=k)``: a histogram's L1 and L2 sensitivities are both k (proof in
  ``synth.privacy.neighbours``: the k rows fall in at most k cells, each moved by its share of them,
  and Σ c_j² ≤ (Σ c_j)² ≤ k²), selections' scores scale by k, and a category must clear a
  threshold a k-row cell would clear with probability δ only; the bound's histogram and the
  over-bound count move by at most the parent's rows per unit;
* the **children counts once more** (``synth.relational.count_share``): ``COUNT_SHARE`` (5 %) of
  each child table's part, after the weights split the budget, moves to its parent's part, which
  holds it back from its engine and spends it after the engine on one more measurement of that
  child's count column's 1-way marginal (the parent's sensitivity), pooled in the parent's fit.
  On flights at ε = 1 it took the children-per-parent TVD from 0.055 to 0.042 (seeds 0–2).
* the parent's columns **given** to a child part: an engine that takes given marginals (aim) gets,
  for each marginal the parent's part measured, the parent model's table over it with the children
  count, weighted by the rows each parent keeps (``synth.relational.parent_marginals``: post-processing
  of the parent's release, nothing charged), and spends the child part only on marginals that hold a
  child column. Other engines measure the parent columns again over the join.

Parts compose as every charge does: the accountant's rule (ρ adds up under zCDP, ε under pure DP),
so the whole release is (ε, δ)-DP per person for the budget given. The parent columns a part
measures carry domains the parent's part already released (post-processing: nothing more is spent on
them). Row counts are never published: each table's size is the noisy total of its measurements.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TextIO

import numpy as np

from synth.columns.column import Column, column_from_dict
from synth.columns.kinds import Kind
from synth.columns.schema import Schema
from synth.columns.unmodelled import UnmodelledColumn
from synth.domains.discovery import needs_delta
from synth.domains.finding import (
    columns_to_discover,
    make_accountant,
    noise_source,
    public_kinds,
    stopped_after_spending,
)
from synth.domains.profile import Profile
from synth.engines import make_engine
from synth.engines.base import Engine
from synth.engines.given import TakesGivenMarginals
from synth.errors import ProfileError, SynthError
from synth.privacy import Accountant, LedgerEntry, NoiseSource, split_budget
from synth.privacy.accounting import PartAccountant
from synth.privacy.curator import CountRelease
from synth.privacy.neighbours import Neighbouring, Relation
from synth.progress import SILENT, Progress
from synth.relational import degree
from synth.relational.bounding import BoundChooser, BoundedDatabase, bound_database, parent_column
from synth.relational.count_share import COUNT_SHARE, CountMeasurements, move_count_shares
from synth.relational.degree import COUNT_CUTS
from synth.relational.keys import Structure, TableKeys
from synth.relational.parent_marginals import parent_marginals
from synth.relational.profile import DEFAULT_MAX_CHILDREN, RelationalProfile
from synth.relational.source import Database
from synth.release.describer import DescribeResult, check_domain_sources, find_schema, measure_table
from synth.release.description import Description
from synth.tables.counting import as_table

OVER_BOUND_SHARE = 0.05  # of a child part: the noisy count of parents cut to the bound
COUNT_BINS_UP_TO = 16  # a children-count column of a cap up to here has one bin per count, else COUNT_CUTS
PRIVACY_UNIT = ("a row of the root table {root!r} with every row of {children} that references it, directly or "
                "through other rows (add-remove: neighbouring databases differ by one such unit)")


@dataclass(frozen=True)
class TablePart:
    """One table's part of the release: its Description (its ledger: this part's entries), the
    most it could spend (``limit``, in the notion's unit), and for a child its bound and where the
    bound came from (``profile``, ``default`` or ``dp``)."""

    table: str
    description: Description
    limit: float
    max_children: int | None = None
    bound_source: str | None = None
    rows_per_unit: int = 1
    count_cap: int | None = None
    weight: float = 1.0
    count_cap_source: str | None = None
    count_share: float = 0.0  # moved from this child part to its parent's, for its count column (count_share)


@dataclass(frozen=True)
class RelationalRelease:
    """The whole release: the structure (keys are public schema metadata), the parts (root first),
    the root's children-count columns, the noisy counts of parents cut to their bound, and the
    accountant's budget, spending and ledger over every part."""

    structure: Structure
    parts: tuple[TablePart, ...]
    count_columns: dict[str, str]
    over_bound: dict[str, dict[str, float]]
    budget: dict[str, Any]
    spent: dict[str, Any]
    ledger: tuple[LedgerEntry, ...]
    noise: dict[str, Any]

    def part(self, table: str) -> TablePart:
        return next(p for p in self.parts if p.table == table)

    def record(self, files: Mapping[str, str], columns: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
        """The release's own record (``relational.json``): the guarantee, the keys, the bounds, each
        part's costs and the ledger; ``files`` names each table's Description file, ``columns`` each
        table's columns in order (public: the header), for generating the database again."""
        root = self.structure.root
        tables = []
        for part in self.parts:
            keys = next(t for t in self.structure.tables if t.name == part.table)
            entry: dict[str, Any] = {
                "table": part.table, "primary_key": keys.primary_key, "description": files[part.table],
                "budget_limit": part.limit, "spent": part.description.privacy["spent"],
                "measurements": len(part.description.measurements),
                **({"columns": list(columns[part.table])} if columns is not None else {}),
                "rows_per_unit": part.rows_per_unit,
                "sensitivity": "1 (one row per unit)" if part.max_children is None else
                f"{part.rows_per_unit} (histograms, L1 and L2: up to {part.rows_per_unit} rows per unit, the product "
                "of the bounds from the root down to this table)",
            }
            if keys.foreign_keys:
                fk = keys.foreign_keys[0]
                entry.update(foreign_key=fk.column, references=f"{fk.parent}.{fk.parent_column}",
                             max_children=part.max_children, max_children_source=part.bound_source,
                             max_count=part.count_cap, max_count_source=part.count_cap_source,
                             count_column=self.count_columns[part.table],
                             count_share_budget=part.count_share,
                             parents_over_bound=self.over_bound[part.table])
            tables.append(entry)
        children = [t.name for t in self.structure.children]
        return {
            "format": "synth relational release", "version": 1,
            "privacy_unit": PRIVACY_UNIT.format(root=root.name, children=children),
            "neighbouring": Relation.ADD_REMOVE.value,
            "root": root.name, "tables": tables,
            "budget_split": {"weights": {p.table: p.weight for p in self.parts},
                             "over_bound_share_of_child_part": OVER_BOUND_SHARE,
                             "count_share_of_child_part": COUNT_SHARE},
            "row_counts": "not published: each table's number of rows is estimated from its noisy measurements; "
                          "the number of child rows per parent is drawn from the root's noisy model",
            "budget": self.budget, "spent": self.spent, "noise": self.noise,
            "ledger": [e.to_dict() for e in self.ledger],
        }


def count_column_domain(name: str, cap: int) -> Column | UnmodelledColumn:
    """A children-count column: 0 .. ``cap`` (public); one bin per count when ``cap`` is at most
    ``COUNT_BINS_UP_TO`` (a panel of 8 years keeps its 8), else the public buckets 0, 1, 2, 3, 4,
    5-6, 7-8, 9-12, ... of ``COUNT_CUTS``, each about 1.5 times the last: a count of 301 or 340
    matters less than one of 1 or 2, and each bin's noise is paid in every marginal it is part of."""
    if cap <= COUNT_BINS_UP_TO:
        return column_from_dict({"name": name, "kind": Kind.INTEGER.value, "lower": 0, "upper": cap,
                                 "bins": cap + 1, "missing": False, "source": "public"})
    cuts = [c for c in COUNT_CUTS if c <= cap]
    return column_from_dict({"name": name, "kind": Kind.INTEGER.value, "lower": 0, "upper": cap, "cuts": cuts,
                             "missing": False, "source": "public"})


def count_columns_of(table: str, structure: Structure, bounded: BoundedDatabase) -> list[Column | UnmodelledColumn]:
    """``table``'s children-count columns, with their public domains (``count_column_domain``)."""
    caps = {child.name: child.count_cap for child in bounded.children}
    return [count_column_domain(bounded.counts[child.name], caps[child.name]) for child in structure.children_of(table)]


def _public_bounds(profile: RelationalProfile, structure: Structure) -> dict[str, tuple[int, str]]:
    """Each child's bound and its source ("profile" or "default"); a bound to choose under DP is left out."""
    bounds: dict[str, tuple[int, str]] = {}
    for table in structure.children:
        given = profile.max_children.get(table.name, DEFAULT_MAX_CHILDREN)
        if isinstance(given, int):
            bounds[table.name] = (given, "profile" if table.name in profile.max_children else "default")
    return bounds


def _public_caps(profile: RelationalProfile, bounds: Mapping[str, tuple[int, str]]) -> dict[str, tuple[int, str]]:
    """Each child's count cap the profile settles and its source: its ``max_count`` ("profile"), else
    a bound it gives ("max_children"). Without either (no profile, or ``max_children = "dp"``) the
    cap is chosen under DP and left out here."""
    caps = {name: (cap, "profile") for name, cap in profile.max_count.items()}
    for name, (bound, source) in bounds.items():
        if name not in caps and source == "profile":
            caps[name] = (bound, "max_children")
    return caps


def _dp_chooser(parts: Mapping[str, Accountant], noise: NoiseSource, bounds: dict[str, tuple[int, str]],
                caps: dict[str, tuple[int, str]], progress: Progress) -> BoundChooser:
    """Chooses, while bounding, each bound and count cap the profile leaves to DP from one histogram on
    the child's part (``synth.relational.degree``), and records them as "dp" in ``bounds`` and
    ``caps``: one unit owns up to its parent table's rows per unit of the parent rows counted, so the
    histogram's sensitivity is that."""
    def choose(table: TableKeys, degrees: np.ndarray, parent_rows_per_unit: int) -> tuple[int, int]:
        choosing = " and ".join(what for what, known in (("max_children", bounds), ("max_count", caps))
                                if table.name not in known)
        progress.message(f"choosing {choosing} of {table.name!r} under DP")
        part = parts[table.name]
        budget = part.notion.unit_of(part.remaining()) * degree.SHARE
        counts = CountRelease(part, noise, Neighbouring(Relation.ADD_REMOVE, parent_rows_per_unit))
        bound, cap = degree.dp_choice(degrees, counts, budget, table.name, table.foreign_keys[0].parent, choosing)
        bounds.setdefault(table.name, (bound, "dp"))
        caps.setdefault(table.name, (cap, "dp"))  # bound_database keeps counts up to max(cap, bound)
        return bound, cap
    return choose


@dataclass(frozen=True)
class ParentRelease:
    """A child part's parent table as released: its name, Description, own columns (with its
    children counts), the count column of this child and the child's bound."""

    name: str
    description: Description
    columns: tuple[str, ...]
    count: str
    bound: int


def _engine_of(profile: Profile) -> Engine:
    return make_engine(profile.engine_name, profile.engine_options)


def _check_profile(profile: Profile, table: str) -> None:
    """Refuse, before anything is spent, what a table's profile asks that a relational release cannot do."""
    _engine_of(profile)  # bad options fail here
    if profile.schema is not None:
        check_domain_sources(profile.schema, profile)
    if profile.neighbouring != Relation.ADD_REMOVE.value:
        raise ProfileError("a relational release protects one person (a root row with its children) under the "
                           "add-remove relation only; remove neighbouring = \"replace\" from [release].")
    if profile.dp_draft is not None:
        raise ProfileError(f"the profile of table {table!r} was drafted under DP for one table; a relational "
                           "release cannot charge such a draft. Draft a relational profile (synth profile DATABASE).")


def _describe_part(frame_own: Any, frame_measured: Any, given: Sequence[Column | UnmodelledColumn], profile: Profile,
                   counts: CountRelease, delta: float, progress: Progress, notes: list[str],
                   after: CountMeasurements | None, parent: ParentRelease | None = None) -> DescribeResult:
    """Find the domains of ``frame_own``'s columns (the profile's or under DP), then measure
    ``frame_measured`` with ``given`` columns (public to this part) first and the found ones after,
    and ``after``'s count columns once more after the engine. An engine that takes given marginals
    is given ``parent``'s (``synth.relational.parent_marginals``)."""
    table = as_table(frame_own)
    to_discover = columns_to_discover(table.columns, profile, public_kinds(None, table.columns, profile))
    schema, record = find_schema(table, profile, counts, to_discover, delta, progress, notes)
    full = Schema.ordered([*given, *(c for c in schema.output_columns)], schema.missing_markers, schema.other_label)
    engine = _engine_of(profile)
    engine.check(full.names, counts.notion)
    if parent is not None and isinstance(engine, TakesGivenMarginals):
        progress.message(f"giving the engine the {parent.name} rows' columns from {parent.name}'s release")
        engine = engine.with_given(parent_marginals(parent.name, parent.description, parent.columns, parent.count,
                                                    parent.bound))
    measured = as_table(frame_measured[list(full.output_names)])
    return measure_table(measured, full, profile, engine, counts, to_discover, record, notes, progress, after)


def describe_database(database: Database, profile: RelationalProfile, structure: Structure,
                      progress: Progress = SILENT, report_to: TextIO | None = None) -> RelationalRelease:
    """Bound, then measure every table's part under one accountant (module docstring). Exact counts
    (orphans, repeated root keys) go to ``report_to`` marked private; the release holds noisy ones."""
    base = profile.base
    for table in structure.tables:  # every check that needs no noisy value, before the first charge
        _check_profile(profile.table_profile(table.name), table.name)
    frames = {t.name: database.frames[t.name].drop(columns=list(t.key_columns)) for t in structure.tables}
    discovers = any(needs_delta(columns_to_discover(list(frame.columns), profile.table_profile(name), {}))
                    for name, frame in frames.items())
    accountant, discovery_delta = make_accountant(base, discovers)
    noise = noise_source(base.seed)
    whole = accountant.notion.unit_of(accountant.remaining())
    weighted = split_budget(whole, [profile.budget_weight(t.name) for t in structure.tables])
    limits, moved = move_count_shares(structure, {t.name: w for t, w in zip(structure.tables, weighted, strict=True)},
                                      lambda name: _engine_of(profile.table_profile(name)).fits_added_measurements())
    deltas = [discovery_delta / len(structure.tables)] * len(structure.tables)
    parts = {t.name: PartAccountant(accountant, limits[t.name]) for t in structure.tables}
    notes: list[str] = []
    try:
        bounds = _public_bounds(profile, structure)
        caps = _public_caps(profile, bounds)
        rng = np.random.default_rng(None if base.seed is None else [base.seed, 33])
        bounded = bound_database(database.frames, structure, {c: b for c, (b, _) in bounds.items()}, rng,
                                 _dp_chooser(parts, noise, bounds, caps, progress),
                                 {c: cap for c, (cap, _) in caps.items()})
        _private_notes(bounded, structure, report_to)
        released, over_bound = _measure_parts(bounded, bounds, caps, profile, structure, parts, moved, noise, deltas,
                                              progress, notes, report_to)
    except SynthError as error:
        if accountant.ledger:
            error.args = (f"{error} {stopped_after_spending(accountant.spent(), len(accountant.ledger))}",)
        raise
    if report_to is not None:
        for line in notes:
            print(f"note: {line}", file=report_to)
        for name, found in over_bound.items():
            parent = structure.parent(structure.table(name)).name
            print(f"note: about {max(found['noisy'], 0):.0f} (noise deviation {found['std']:.1f}) {parent} "
                  f"rows had more than {bounds[name][0]} {name} rows ({bounds[name][1]} bound); "
                  "the rest were dropped before measuring. Raise max_children in the profile if that is many.",
                  file=report_to)
    return RelationalRelease(structure, tuple(released), dict(bounded.counts), over_bound, accountant.budget_dict(),
                             accountant.spent(), accountant.ledger, noise.description())


def _private_notes(bounded: BoundedDatabase, structure: Structure, report_to: TextIO | None) -> None:
    if report_to is None:
        return
    if bounded.repeated_keys:
        print(f"note (private, not released): {bounded.repeated_keys} {structure.root.name} row(s) with a missing or "
              "repeated primary key were dropped, with the rows that reference them.", file=report_to)
    for child in bounded.children:
        if child.orphans:
            print(f"note (private, not released): {child.orphans} {child.name} row(s) reference no "
                  f"{child.parent} row (orphans) and were dropped.", file=report_to)
        if child.cut_with_parent:
            print(f"note (private, not released): {child.cut_with_parent} {child.name} row(s) were dropped with their "
                  f"{child.parent} row, which was beyond its own bound.", file=report_to)
        if child.repeated_keys:
            print(f"note (private, not released): {child.repeated_keys} {child.name} row(s) with a missing or repeated "
                  "primary key were dropped, with the rows that reference them.", file=report_to)


def _count_measurements(table: str, structure: Structure, bounded: BoundedDatabase,
                        moved: Mapping[str, float]) -> CountMeasurements | None:
    """The count columns ``table``'s part measures once more after its engine (``count_share``), if any."""
    columns = tuple((c.name, bounded.counts[c.name], moved[c.name]) for c in structure.children_of(table)
                    if c.name in moved)
    return CountMeasurements(columns, table) if columns else None


def _measure_parts(bounded: BoundedDatabase, bounds: Mapping[str, tuple[int, str]],
                   caps: Mapping[str, tuple[int, str]], profile: RelationalProfile,
                   structure: Structure, parts: Mapping[str, PartAccountant], moved: Mapping[str, float],
                   noise: NoiseSource, deltas: Sequence[float], progress: Progress, notes: list[str],
                   report_to: TextIO | None) -> tuple[list[TablePart], dict[str, dict[str, float]]]:
    """The root part, then each other table's part (parents first), each on its share of the budget
    (``moved``: what each child's part gave its parent's for its count column, ``count_share``)."""
    root = structure.root.name
    root_part = parts[root]
    progress.message(f"measuring the root table {root!r} with its children counts")
    root_result = _describe_part(bounded.root, bounded.root_with_counts,
                                 count_columns_of(root, structure, bounded), profile.table_profile(root),
                                 CountRelease(root_part, noise, Neighbouring()), deltas[0], progress, notes,
                                 _count_measurements(root, structure, bounded, moved))
    _encoding_notes(root_result, report_to)
    released = [TablePart(root, root_result.description, root_part.limit, weight=profile.budget_weight(root))]
    own_columns = {root: list(root_result.description.schema.columns)}  # a table's own columns and its counts
    over_bound: dict[str, dict[str, float]] = {}
    for child, delta in zip(bounded.children, deltas[1:], strict=True):
        part = parts[child.name]
        parent_units = child.rows_per_unit // child.max_children
        progress.message(f"measuring the table {child.name!r} with its {child.parent} rows' columns "
                         f"(at most {child.max_children} rows per {child.parent} row, {child.rows_per_unit} per person)")
        over = CountRelease(part, noise, Neighbouring(Relation.ADD_REMOVE, parent_units)).release(
            np.array([int(child.over.sum())]), part.limit * OVER_BOUND_SHARE,
            query=f"count of {child.parent} rows with more than {child.max_children} {child.name} rows")
        over_bound[child.name] = {"noisy": float(over.values[0]), "std": over.std}
        counts = CountRelease(part, noise, Neighbouring(Relation.ADD_REMOVE, child.rows_per_unit))
        from_parent = [replace(c, name=parent_column(child.parent, c.name)) for c in own_columns[child.parent]]
        given = [*from_parent, *count_columns_of(child.name, structure, bounded)]
        parent_description = next(p.description for p in released if p.table == child.parent)
        parent = ParentRelease(child.parent, parent_description, tuple(c.name for c in own_columns[child.parent]),
                               bounded.counts[child.name], child.max_children)
        result = _describe_part(child.own, child.joined, given, profile.table_profile(child.name), counts,
                                delta, progress, notes, _count_measurements(child.name, structure, bounded, moved),
                                parent)
        _encoding_notes(result, report_to)
        inherited = {c.name for c in from_parent}
        own_columns[child.name] = [c for c in result.description.schema.columns if c.name not in inherited]
        released.append(TablePart(child.name, result.description, part.limit, child.max_children,
                                  bounds[child.name][1], child.rows_per_unit, child.count_cap,
                                  profile.budget_weight(child.name), caps[child.name][1], moved.get(child.name, 0.0)))
    return released, over_bound


def _encoding_notes(result: DescribeResult, report_to: TextIO | None) -> None:
    """What encoding clipped or mapped to OTHER: exact, private, for the data owner's console only."""
    if report_to is not None:
        for line in result.encoding_report.lines():
            print(f"note (private, not released): {line}", file=report_to)

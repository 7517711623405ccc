"""Relational profiles: the release settings, each table's keys, bounds and columns, as a TOML file.

Format: a single-table profile's ``[release]`` and ``[engine_options]`` (shared by every table),
and one ``[tables.NAME]`` per table::

    [release]
    epsilon = 1.0
    delta = 1e-9

    [tables.patients]
    primary_key = "patient_id"
    [tables.patients.columns.age]          # as [columns.age] in a single-table profile
    kind = "integer"
    lower = 0
    upper = 110
    bins = 22

    [tables.visits]
    primary_key = "visit_id"
    foreign_key = "patient_id"             # the column holding the parent's key
    references = "patients"                # the parent table (its primary key)
    max_children = 10                      # public bound: visits kept per patient, or "dp"
    max_count = 50                         # public: the most visits a patient can have (optional)
    budget_weight = 1                      # this table's weight in the split of the budget (optional)

A table without ``columns`` has every non-key column's kind and domain estimated under DP. Key
columns are never modelled and must not be listed under ``columns``. ``max_children`` is public
(chosen from public knowledge, never by looking at the data); ``"dp"`` has it chosen under DP from a
noisy quantile of the children per parent (``synth.relational.degree``, charged on the child's
share); without it ``DEFAULT_MAX_CHILDREN``. ``max_children`` bounds the rows of a parent that are
*measured* (the child part's sensitivity grows with it); ``max_count`` (public, at least
``max_children``; default: the profile's ``max_children``, else chosen under DP by
``synth.relational.degree``) is the range of the parent's count of children, which
the parent's part measures at the parent's sensitivity: a parent with 300 children and
``max_children = 20`` has 20 of them measured, and is generated with about 300.
``draft_relational_profile`` drafts such a file from a database, every domain read from the data
(marked data-derived, as ``synth profile`` does for one table): a starting point to review.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from synth.domains.drafting import draft_profile
from synth.domains.profile import Profile, profile_from_dict
from synth.domains.toml_tables import reject_unknown_keys, toml_table
from synth.errors import InputFileError, ProfileError
from synth.relational.keys import ForeignKey, Structure, TableKeys
from synth.relational.source import Database

# Without a public bound, a parent keeps at most this many children per relation. Noise grows with
# the bound (a unit moves a child histogram by up to the bound), so it is kept small: at 10 a child
# table's noise is ten times a one-row table's, while a unit with more children keeps its first 10
# (in a seeded random order) and the console says about how many parents were cut (noisy count).
DEFAULT_MAX_CHILDREN = 10
DP_BOUND = "dp"  # max_children = "dp": chosen under DP (synth.relational.degree)
TABLE_KEYS = ("primary_key", "foreign_key", "references", "max_children", "max_count", "budget_weight", "columns")


@dataclass(frozen=True)
class RelationalProfile:
    """The settings shared by every table (``base``: a profile without columns), each table's own
    profile (its columns; the base's settings), the keys declared (empty: the database's own) and
    each child's public ``max_children`` (absent: not given; ``DP_BOUND``: to choose under DP) and
    public ``max_count`` (absent: ``max_children``), and each table's ``budget_weight`` (absent: 1)."""

    base: Profile
    tables: dict[str, Profile]
    keys: tuple[TableKeys, ...]
    max_children: dict[str, int | str]
    max_count: dict[str, int] = field(default_factory=dict)
    budget_weights: dict[str, float] = field(default_factory=dict)

    def budget_weight(self, name: str) -> float:
        """Table ``name``'s weight in the split of the budget between tables (default 1)."""
        return self.budget_weights.get(name, 1.0)

    def table_profile(self, name: str) -> Profile:
        """The profile of table ``name``: its own, or the base (every column estimated under DP)."""
        return self.tables.get(name, self.base)


def is_relational_profile(path: str | os.PathLike[str]) -> bool:
    """Whether the TOML file at ``path`` declares tables (``[tables.NAME]``)."""
    try:
        return "tables" in tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False


def _bound(where: str, value: Any) -> int | str:
    if value == DP_BOUND:
        return DP_BOUND
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ProfileError(f"{where}: max_children must be a whole number of at least 1 (public knowledge), or "
                           f"\"{DP_BOUND}\" to choose it under DP; got {value!r}.")
    return value


def _count_cap(where: str, value: Any, bound: int | str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ProfileError(f"{where}: max_count must be a whole number of at least 1 (public knowledge: the most "
                           f"children a parent can have); got {value!r}.")
    if isinstance(bound, int) and value < bound:
        raise ProfileError(f"{where}: max_count ({value}) is below max_children ({bound}); a parent's count of "
                           "children is kept up to max_count, so it must be at least max_children.")
    return value


def relational_from_dict(data: Mapping[str, Any], path: str | None = None) -> RelationalProfile:
    """A RelationalProfile from parsed TOML; ProfileError naming the key at fault."""
    reject_unknown_keys(data, ("release", "engine_options", "tables"), "the file")
    shared = {k: data[k] for k in ("release", "engine_options") if k in data}
    base = profile_from_dict(shared, path)
    tables = toml_table(data.get("tables", {}), "[tables]")
    profiles, keys = {}, []
    bounds: dict[str, int | str] = {}
    counts: dict[str, int] = {}
    weights: dict[str, float] = {}
    for name, entry in tables.items():
        where = f"[tables.{name}]"
        entry = toml_table(entry, where)
        reject_unknown_keys(entry, TABLE_KEYS, where)
        for key in ("primary_key", "foreign_key", "references"):
            if key in entry and (not isinstance(entry[key], str) or not entry[key]):
                raise ProfileError(f"{where}: {key} must be a column or table name (a string).")
        if ("foreign_key" in entry) != ("references" in entry):
            raise ProfileError(f"{where}: give foreign_key (the column) and references (the parent table) together.")
        foreign: tuple[ForeignKey, ...] = ()
        if "foreign_key" in entry:
            foreign = (ForeignKey(entry["foreign_key"], entry["references"], ""),)
            if "max_children" in entry:
                bounds[name] = _bound(where, entry["max_children"])
            if "max_count" in entry:
                counts[name] = _count_cap(where, entry["max_count"], bounds.get(name, DEFAULT_MAX_CHILDREN))
        elif "max_children" in entry or "max_count" in entry:
            raise ProfileError(f"{where}: max_children and max_count apply to a child table (one with foreign_key); "
                               "remove them.")
        if "budget_weight" in entry:
            weight = entry["budget_weight"]
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 < weight < float("inf"):
                raise ProfileError(f"{where}: budget_weight must be a positive number (the table's share of the budget "
                                   f"against the others' weights, 1 by default); got {weight!r}.")
            weights[name] = float(weight)
        keys.append(TableKeys(name, entry.get("primary_key"), foreign))
        if "columns" in entry:
            listed = toml_table(entry["columns"], f"{where}.columns")
            clash = [c for c in listed if c in keys[-1].key_columns]
            if clash:
                raise ProfileError(f"{where}: key column(s) {clash} are listed under columns; keys are never modelled "
                                   "(they are written as fresh keys), so remove them from columns.")
            profiles[name] = profile_from_dict({**shared, "columns": listed}, path)
    primaries = {t.name: t.primary_key for t in keys}
    resolved = tuple(TableKeys(t.name, t.primary_key, tuple(
        ForeignKey(fk.column, fk.parent, primaries.get(fk.parent) or "") for fk in t.foreign_keys)) for t in keys)
    return RelationalProfile(base, profiles, resolved, bounds, counts, weights)


def load_relational_profile(path: str | os.PathLike[str]) -> RelationalProfile:
    """Read a relational profile; InputFileError when unreadable, ProfileError when invalid."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise InputFileError(f"cannot read the profile {p} ({type(error).__name__}); check the path.") from None
    except tomllib.TOMLDecodeError as error:
        raise ProfileError(f"{p} is not valid TOML: {error}. Fix the syntax there.") from None
    return relational_from_dict(data, str(p))


DRAFT_HEADER = """\
# Drafted by `synth profile` from a database: tables and keys from its declared schema (public),
# every column's domain READ FROM THE DATA (data-derived): not DP. Review it: replace the domains
# with public knowledge and set source = "public", or keep only a column's kind with
# source = "dp-estimated" (no domain keys) to have it estimated under DP. Choose max_children from
# public knowledge (what a parent may reasonably have), not from the data.
"""


def draft_relational_profile(database: Database, structure: Structure, epsilon: float = 1.0) -> str:
    """The TOML text of a relational profile for ``database``: its tables and keys, a
    ``max_children`` per child (the default), and every column's domain read from the data
    (``synth.domains.drafting.draft_profile``, marked data-derived)."""
    parts = [DRAFT_HEADER, tomli_w.dumps({"release": {"epsilon": epsilon, "delta": 1e-9,
                                                      "accept_data_derived_domains": False}})]
    for table in structure.tables:
        frame = database.frames[table.name].drop(columns=list(table.key_columns))
        drafted = draft_profile(frame)
        entry: dict[str, Any] = {"primary_key": table.primary_key}
        if table.foreign_keys:
            fk = table.foreign_keys[0]
            entry.update(foreign_key=fk.column, references=fk.parent, max_children=DEFAULT_MAX_CHILDREN)
        schema = drafted.schema
        entry["columns"] = {} if schema is None else {
            c.name: {k: v for k, v in c.to_dict().items() if k != "name"} for c in schema.output_columns}
        parts.append(tomli_w.dumps({"tables": {table.name: entry}}))
    return "\n".join(parts)

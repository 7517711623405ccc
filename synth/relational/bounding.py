"""Contribution bounding: the rows each privacy unit keeps, and the tables the describer measures.

The privacy unit is a row of the root table with every row that references it, directly or through
other rows (a patient, their visits, the prescriptions of those visits). Tables are bounded top
down, parents before children (``Structure.children``'s order), before anything is measured:

* an **orphan** (a row whose foreign key is missing or names no row of its parent) belongs to no
  unit and is dropped. Rows of a referenced table whose key is missing or repeated (possible in a
  folder of files, which declares no keys) are all dropped, and their children become orphans: were
  the first of them kept, adding one unit could displace another and change two units at once.
  Their exact numbers go to the data owner's console only, never into the release;
* each parent row keeps at most ``max_children`` rows of each child table. Which ones is decided by
  a random order drawn from ``rng`` (seeded or fresh public randomness, independent of the rows'
  values): the child rows are shuffled and each parent keeps its first ``max_children``. Nothing
  about the rows' contents picks the survivors. A row whose parent was cut at the parent's own bound
  goes with it (``cut_with_parent``). A unit then owns at most the product of the bounds from the
  root down to a table (``rows_per_unit``) of that table's rows;
* a bound may be chosen while bounding (``choose``: the describer's noisy quantile), from the number
  of rows each *kept* parent row has, so that one unit moves that histogram by at most its parent
  table's ``rows_per_unit``.

Every table that has children gets, per child table, a column holding its number of children, up
to a public cap (``count_caps``: the profile's ``max_count``, at least ``max_children``): the
count is the parent row's own attribute, measured in the parent's part, so it may exceed the rows
kept for measuring. Each kept child row gets its parent's columns (the parent's
modelled columns and counts, named ``PARENT.COLUMN``), so that rows are measured jointly with their
parent's attributes. Key columns are dropped from every measured table: a key is never data.
Whether a parent row had more children than its bound is kept (per parent row) for one noisy count.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synth.relational.keys import Structure, TableKeys


def count_column(child: str, taken: Sequence[str]) -> str:
    """The root's column holding a parent's number of ``child`` rows: ``CHILD_count``, with
    underscores added until it is not one of ``taken``."""
    name = f"{child}_count"
    while name in taken:
        name = "_" + name
    return name


def parent_column(parent: str, name: str) -> str:
    """How a parent's column is named in its child table's measured part."""
    return f"{parent}.{name}"


@dataclass(frozen=True)
class BoundedChild:
    """One non-root table after bounding: its kept rows' own modelled columns (``own``), the same rows
    with their parent's columns first and their own children counts last (``joined``), per kept parent
    row whether it had more children than the bound (``over``: private, only ever counted with noise),
    and the rows one unit can own (``rows_per_unit``). ``orphans``, ``cut_with_parent`` and
    ``repeated_keys`` are exact and private: for the data owner's console."""

    name: str
    parent: str
    max_children: int
    rows_per_unit: int
    count_cap: int
    own: pd.DataFrame
    joined: pd.DataFrame
    over: np.ndarray
    orphans: int
    cut_with_parent: int
    repeated_keys: int


@dataclass(frozen=True)
class BoundedDatabase:
    """The root's modelled columns (``root``), the same with its children counts (``root_with_counts``),
    each other table after bounding (parents first), each child's count column (in its parent's part),
    and the exact number of root rows dropped for a missing or repeated key (private)."""

    root: pd.DataFrame
    root_with_counts: pd.DataFrame
    counts: dict[str, str]  # child table -> its count column in its parent's part
    children: tuple[BoundedChild, ...]
    repeated_keys: int


#: chooses a child's bound and its parents' count cap while bounding, where either is not given: (the
#: child table, each kept parent row's number of its rows, the parent's rows per unit) -> (max_children,
#: count cap); a given value is kept and the chosen one for it ignored
BoundChooser = Callable[[TableKeys, np.ndarray, int], tuple[int, int]]


def _keyed(values: pd.Series) -> pd.Series:
    """Key cells as comparable text (an integer key read as 7 and as 7.0 are one key; missing stays missing)."""
    def text(v: object) -> object:
        if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
            return None
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            return str(int(v))
        return str(v)
    return values.map(text)


@dataclass
class _Kept:
    """A table's kept rows while bounding: their key (as text) → row position, their modelled columns
    with the counts added so far, the keys cut at this table's bound, and its rows per unit."""

    position: pd.Series
    with_counts: pd.DataFrame
    cut_keys: frozenset[str]
    rows_per_unit: int


def _single_keys(frame: pd.DataFrame, key: str | None) -> tuple[pd.DataFrame, pd.Series, int]:
    """The rows whose ``key`` is present and unique, their keys as text, and how many were dropped
    (every row, with no keys, when ``key`` is None: a table nothing references)."""
    if key is None:
        return frame, pd.Series([None] * len(frame), dtype=object), 0
    text = _keyed(frame[key])
    single = (~text.duplicated(keep=False) & text.notna()).to_numpy()
    return frame[single], text[single], int((~single).sum())


def _kept_rank(at: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each row's place among its parent's rows in a random order (public randomness, not the values)."""
    order = rng.permutation(len(at))
    rank = np.empty(len(at), dtype=np.int64)
    rank[order] = pd.Series(at[order]).groupby(at[order]).cumcount().to_numpy()
    return rank


def bound_database(frames: Mapping[str, pd.DataFrame], structure: Structure, max_children: Mapping[str, int],
                   rng: np.random.Generator, choose: BoundChooser | None = None,
                   count_caps: Mapping[str, int] | None = None) -> BoundedDatabase:
    """Drop orphans and rows of repeated keys, keep at most ``max_children[child]`` rows of each child
    table per parent row (in a random order from ``rng``), top down, and build the tables to measure
    (module docstring). A parent's count of children is kept up to ``count_caps[child]`` (at least the
    bound). ``choose`` gives the bounds and caps these lack; without it a cap defaults to the bound."""
    root_keys = structure.root
    root_frame, root_text, repeated = _single_keys(frames[root_keys.name], root_keys.primary_key)
    root = root_frame.drop(columns=list(root_keys.key_columns)).reset_index(drop=True)
    kept = {root_keys.name: _Kept(pd.Series(np.arange(len(root)), index=root_text.to_numpy()), root.copy(),
                                  frozenset(), 1)}
    counts: dict[str, str] = {}
    cut: list[tuple[TableKeys, int, int, pd.DataFrame, np.ndarray, np.ndarray, int, int, int]] = []
    for child_keys in structure.children:
        parent = kept[child_keys.foreign_keys[0].parent]
        referenced = bool(structure.children_of(child_keys.name))
        frame, own_text, repeated_here = _single_keys(frames[child_keys.name],
                                                      child_keys.primary_key if referenced else None)
        parent_text = _keyed(frame[child_keys.foreign_keys[0].column])
        parent_at = parent_text.map(parent.position)
        linked = parent_at.notna().to_numpy()
        with_cut_parent = int(parent_text[~linked].isin(parent.cut_keys).sum())
        at = parent_at[linked].to_numpy(dtype=np.int64)
        every = np.bincount(at, minlength=len(parent.with_counts))
        given_bound, given_cap = max_children.get(child_keys.name), (count_caps or {}).get(child_keys.name)
        if choose is not None and (given_bound is None or given_cap is None):
            chosen_bound, chosen_cap = choose(child_keys, every, parent.rows_per_unit)
            given_bound = chosen_bound if given_bound is None else given_bound
            given_cap = chosen_cap if given_cap is None else given_cap
        if given_bound is None:
            raise KeyError(f"no bound for {child_keys.name!r}")
        bound = int(given_bound)
        keep = _kept_rank(at, rng) < bound
        cap = max(bound, bound if given_cap is None else int(given_cap))
        name = count_column(child_keys.name, list(parent.with_counts.columns))
        counts[child_keys.name] = name
        parent.with_counts[name] = np.minimum(every, cap)
        kept_rows = frame[linked][keep]
        own = kept_rows.drop(columns=list(child_keys.key_columns)).reset_index(drop=True)
        kept_text = own_text[linked][keep]
        cut_text = own_text[linked][~keep]
        kept[child_keys.name] = _Kept(pd.Series(np.arange(len(own)), index=kept_text.to_numpy()), own.copy(),
                                      frozenset(cut_text.dropna()), parent.rows_per_unit * bound)
        orphans = int((~linked).sum()) - with_cut_parent
        cut.append((child_keys, bound, cap, own, at[keep], every > bound, orphans, with_cut_parent, repeated_here))
    children = []
    for keys, bound, cap, own, at, over, orphans, with_cut_parent, repeated_here in cut:
        parent_name = keys.foreign_keys[0].parent
        parent_part = kept[parent_name].with_counts
        parent_part = parent_part.rename(columns={c: parent_column(parent_name, c) for c in parent_part.columns})
        joined = pd.concat([parent_part.iloc[at].reset_index(drop=True), kept[keys.name].with_counts], axis=1)
        children.append(BoundedChild(keys.name, parent_name, bound, kept[keys.name].rows_per_unit, cap, own, joined,
                                     over, orphans, with_cut_parent, repeated_here))
    return BoundedDatabase(root, kept[root_keys.name].with_counts, counts, tuple(children), repeated)

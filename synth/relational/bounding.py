"""Contribution bounding: the rows each privacy unit keeps, and the tables the describer measures.

The privacy unit is a row of the root table with every child row that references it. Before
anything is measured:

* an **orphan** (a child row whose foreign key is missing or names no root row) belongs to no unit
  and is dropped. Root rows whose key is missing or repeated (possible in a folder of files, which
  declares no keys) are all dropped, and their children become orphans: were the first of them
  kept, adding one unit could displace another and change two units at once. Their exact numbers go
  to the data owner's console only, never into the release;
* each parent keeps at most ``max_children`` rows of each child table. Which ones is decided by a
  random order drawn from ``rng`` (seeded or fresh public randomness, independent of the rows'
  values): the child rows are shuffled and each parent keeps its first ``max_children``. Nothing
  about the rows' contents picks the survivors.

The root table's measured part gets, per child table, a column holding its number of kept children
(0 .. max_children, a public domain). Each kept child row gets its parent's columns (the root's
modelled columns and counts, named ``ROOT.COLUMN``), so that child rows are measured jointly with
their parent's attributes. Key columns are dropped from every measured table: a key is never data.
Whether a parent had more children than its bound is kept (per parent) for one noisy count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synth.relational.keys import Structure


def count_column(child: str, taken: Sequence[str]) -> str:
    """The root's column holding a parent's number of ``child`` rows: ``CHILD_count``, with
    underscores added until it is not one of ``taken``."""
    name = f"{child}_count"
    while name in taken:
        name = "_" + name
    return name


def parent_column(root: str, name: str) -> str:
    """How a root column is named in a child table's measured part."""
    return f"{root}.{name}"


@dataclass(frozen=True)
class BoundedChild:
    """One child table after bounding: its kept rows' own modelled columns (``own``), the same rows
    with their parent's columns first (``joined``), and per root row whether it had more children
    than the bound (``over``: private, only ever counted with noise). ``orphans``: exact, private."""

    name: str
    max_children: int
    own: pd.DataFrame
    joined: pd.DataFrame
    over: np.ndarray
    orphans: int


@dataclass(frozen=True)
class BoundedDatabase:
    """The root's modelled columns (``root``), the same with the children counts (``root_with_counts``),
    each child after bounding, and the exact number of root rows dropped for a missing or repeated key (private)."""

    root: pd.DataFrame
    root_with_counts: pd.DataFrame
    counts: dict[str, str]  # child table -> its count column in the root
    children: tuple[BoundedChild, ...]
    repeated_keys: int


def _keyed(values: pd.Series) -> pd.Series:
    """Key cells as comparable text (an integer key read as 7 and as 7.0 are one key; missing stays missing)."""
    def text(v: object) -> object:
        if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
            return None
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            return str(int(v))
        return str(v)
    return values.map(text)


def bound_database(frames: Mapping[str, pd.DataFrame], structure: Structure, max_children: Mapping[str, int],
                   rng: np.random.Generator) -> BoundedDatabase:
    """Drop orphans and repeated root keys, keep at most ``max_children[child]`` children per parent
    (in a random order from ``rng``), and build the tables to measure (module docstring)."""
    root_keys = structure.root
    root_frame = frames[root_keys.name]
    keys = _keyed(root_frame[root_keys.primary_key])
    single = ~keys.duplicated(keep=False) & keys.notna()
    repeated = int((~single).sum())
    root_frame, keys = root_frame[single.to_numpy()], keys[single.to_numpy()]
    position = pd.Series(np.arange(len(keys)), index=keys.to_numpy())
    root = root_frame.drop(columns=list(root_keys.key_columns)).reset_index(drop=True)
    with_counts = root.copy()
    counts: dict[str, str] = {}
    cut: list[tuple[str, int, pd.DataFrame, np.ndarray, np.ndarray, int]] = []
    for child_keys in structure.children:
        fk = child_keys.foreign_keys[0]
        frame = frames[child_keys.name]
        parent_at = _keyed(frame[fk.column]).map(position)
        orphans = int(parent_at.isna().sum())
        linked = parent_at.notna().to_numpy()
        at = parent_at[linked].to_numpy(dtype=np.int64)
        bound = max_children[child_keys.name]
        order = rng.permutation(len(at))  # public randomness: the rows' values play no part
        rank = np.empty(len(at), dtype=np.int64)
        rank[order] = pd.Series(at[order]).groupby(at[order]).cumcount().to_numpy()
        keep = rank < bound
        every = np.bincount(at, minlength=len(root))
        name = count_column(child_keys.name, [*root.columns, *counts.values()])
        counts[child_keys.name] = name
        with_counts[name] = np.minimum(every, bound)
        own = frame[linked][keep].drop(columns=list(child_keys.key_columns)).reset_index(drop=True)
        cut.append((child_keys.name, bound, own, at[keep], every > bound, orphans))
    parent_part = with_counts.rename(columns={c: parent_column(root_keys.name, c) for c in with_counts.columns})
    children = []
    for name, bound, own, at, over, orphans in cut:
        joined = pd.concat([parent_part.iloc[at].reset_index(drop=True), own], axis=1)
        children.append(BoundedChild(name, bound, own, joined, over, orphans))
    return BoundedDatabase(root, with_counts, counts, tuple(children), repeated)

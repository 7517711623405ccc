"""Evaluating a relational release against the original database (NOT DP: for the data owner).

``evaluate_database`` reads the original database and a release folder (``synth run DATABASE``'s
output: ``relational.json``, each table's Description and the synthetic database) and measures:

* **each table on its own**, as ``synth evaluate`` does for one table (key columns left out), on a
  discretisation drafted from the original and on the release's own schema;
* **referential integrity**: the share of synthetic child rows whose foreign key names an existing
  synthetic parent, and whether every synthetic primary key is unique;
* **children per parent**: the distribution of each parent row's number of children (0 included), in
  the public buckets ``DEGREE_EDGES``, original against synthetic (TVD), and jointly with each parent
  column (the mean TVD of the 2-way marginals parent column × bucket);
* **marginals across the relation**: each 2-way marginal (parent column × child column) over the
  join of child rows with their parent, coded on the child part's schema (which holds both);
* the **naive release** beside them: the same synthetic tables with each child row's foreign key
  drawn uniformly from the synthetic parents, which is what releasing each table on its own and
  linking them at random gives. Its per-table scores equal the release's; the links are what differ.

The original is scored as it is (all of its rows, before bounding): what a user gets back is
compared with what they hold. ``cross_relation_tvd`` scores any synthetic joined table (child rows
with their parent's columns as ``ROOT.COLUMN``) on the same pairs, e.g. a single-table release of the
join.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from synth.columns.schema import Schema
from synth.errors import RelationalError
from synth.evaluate import Evaluation, evaluate
from synth.evaluate.fidelity import tvds
from synth.progress import SILENT, Progress
from synth.relational.bounding import parent_column
from synth.relational.keys import ForeignKey, TableKeys
from synth.relational.source import Database, read_database, shown
from synth.relational.stored import StoredRelease, read_release

#: children per parent are compared in these buckets: bucket i holds EDGES[i] .. EDGES[i+1] - 1
DEGREE_EDGES = (0, 1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 101, 151, 201, 301, 501, 1001)


def degree_buckets() -> list[str]:
    """The buckets' labels: "0", "1", ..., "5-6", ..., "1001+"."""
    labels = []
    for low, high in itertools.pairwise(DEGREE_EDGES):
        labels.append(str(low) if high == low + 1 else f"{low}-{high - 1}")
    return labels + [f"{DEGREE_EDGES[-1]}+"]


def degree_histogram(degrees: np.ndarray) -> np.ndarray:
    """Shares of parent rows per degree bucket."""
    bucket = np.searchsorted(np.array(DEGREE_EDGES), np.asarray(degrees, dtype=np.int64), side="right") - 1
    counts = np.bincount(bucket, minlength=len(DEGREE_EDGES)).astype(float)
    return counts / max(counts.sum(), 1.0)


def _tvd(a: np.ndarray, b: np.ndarray) -> float:
    return 0.5 * float(np.abs(a - b).sum())


@dataclass(frozen=True)
class Degrees:
    """Children per parent for one child table: the bucket shares of the original, the release and the
    naive release, their TVDs, and the mean TVD of parent column × bucket (``joint_*``)."""

    child: str
    parent: str
    original: np.ndarray
    synthetic: np.ndarray
    naive: np.ndarray
    joint_tvd: float
    naive_joint_tvd: float
    original_mean: float
    synthetic_mean: float

    @property
    def tvd(self) -> float:
        return _tvd(self.original, self.synthetic)

    @property
    def naive_tvd(self) -> float:
        return _tvd(self.original, self.naive)

    def to_dict(self) -> dict[str, Any]:
        return {"tvd": self.tvd, "naive_tvd": self.naive_tvd, "joint_with_parent_mean_tvd": self.joint_tvd,
                "naive_joint_with_parent_mean_tvd": self.naive_joint_tvd, "buckets": degree_buckets(),
                "original": self.original.tolist(), "synthetic": self.synthetic.tolist(), "naive": self.naive.tolist(),
                "original_mean": self.original_mean, "synthetic_mean": self.synthetic_mean}


@dataclass(frozen=True)
class CrossRelation:
    """The 2-way marginals parent column × child column over the join, for one child table."""

    child: str
    parent: str
    pairs: tuple[tuple[str, str], ...]
    tvds: np.ndarray
    naive_tvds: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        mean = float(self.tvds.mean()) if self.tvds.size else None
        naive = float(self.naive_tvds.mean()) if self.naive_tvds.size else None
        return {"mean_tvd": mean, "naive_mean_tvd": naive,
                "pairs": [{"parent": p, "child": c, "tvd": float(t), "naive_tvd": float(n)}
                          for (p, c), t, n in zip(self.pairs, self.tvds, self.naive_tvds)]}


@dataclass(frozen=True)
class Integrity:
    """Referential integrity of one child table in the synthetic database."""

    child: str
    rows: int
    linked: int
    unique_keys: bool

    @property
    def share(self) -> float:
        return self.linked / self.rows if self.rows else 1.0


@dataclass(frozen=True)
class DatabaseEvaluation:
    """Everything ``evaluate_database`` measured (module docstring)."""

    root: str
    tables: dict[str, Evaluation]
    rows: dict[str, tuple[int, int]]  # table → (original rows, synthetic rows)
    degrees: dict[str, Degrees]
    cross: dict[str, CrossRelation]
    integrity: dict[str, Integrity]
    release: dict[str, Any]  # the record's guarantee: privacy unit, budget, spent, bounds
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root, "seed": self.seed, "release": self.release,
            "rows": {t: {"original": o, "synthetic": s} for t, (o, s) in self.rows.items()},
            "tables": {t: e.summary() for t, e in self.tables.items()},
            "children_per_parent": {c: d.to_dict() for c, d in self.degrees.items()},
            "cross_relation": {c: x.to_dict() for c, x in self.cross.items()},
            "referential_integrity": {c: i.share for c, i in self.integrity.items()},
            "unique_primary_keys": {c: i.unique_keys for c, i in self.integrity.items()},
            "naive_release": "the same synthetic tables with each child row's foreign key drawn uniformly from the "
                             "synthetic parents (each table released on its own, linked at random)",
        }

    def lines(self) -> list[str]:
        """The headline, for the console."""
        out = []
        for table, (original, synthetic) in self.rows.items():
            two_way = self.tables[table].summary().get("2_way_mean_tvd")
            shown = "" if two_way is None else f", 2-way mean TVD {two_way:.4f}"
            out.append(f"{table}: {original:,} original rows, {synthetic:,} synthetic{shown}")
        for child in self.degrees:
            d, x, i = self.degrees[child], self.cross[child], self.integrity[child]
            out.append(f"{child} per {d.parent}: TVD {d.tvd:.4f} (naive {d.naive_tvd:.4f}); mean "
                       f"{d.original_mean:.2f} original, {d.synthetic_mean:.2f} synthetic")
            cross = x.to_dict()
            if cross["mean_tvd"] is not None:
                out.append(f"{d.parent} × {child} 2-way marginals over the join: mean TVD {cross['mean_tvd']:.4f} "
                           f"(naive {cross['naive_mean_tvd']:.4f}, {len(x.pairs)} pairs)")
            out.append(f"{child} referential integrity: {i.share:.2%} of {i.rows:,} rows"
                       + ("" if i.unique_keys else "; primary keys NOT unique"))
        return out


def _without_keys(frame: pd.DataFrame, keys: TableKeys) -> pd.DataFrame:
    return frame.drop(columns=[c for c in keys.key_columns if c in frame.columns])


def _degrees(parent: pd.DataFrame, parent_key: str, child: pd.DataFrame, foreign_key: str) -> np.ndarray:
    """Each parent row's number of child rows (0 where none; rows naming no parent row are not counted)."""
    per_key = child[foreign_key].dropna().value_counts()
    return parent[parent_key].map(per_key).fillna(0).to_numpy(dtype=np.int64)


def _joined(parent: pd.DataFrame, parent_keys: TableKeys, child: pd.DataFrame, fk: ForeignKey,
            parent_names: Sequence[str]) -> pd.DataFrame:
    """Child rows with their parent's columns (``PARENT.COLUMN``); rows naming no parent are left out."""
    key = parent_keys.primary_key
    parents = parent[[key, *parent_names]]
    parents = parents[parents[key].notna()].drop_duplicates(subset=[key], keep=False)
    parents = parents.rename(columns={n: parent_column(parent_keys.name, n) for n in parent_names})
    return child.merge(parents, how="inner", left_on=fk.column, right_on=key, suffixes=("", "__parent"))


def _pair_tvds(schema: Schema, pairs: Sequence[tuple[str, str]], original: pd.DataFrame,
               synthetic: pd.DataFrame) -> np.ndarray:
    """TVD of each (parent column, child column) marginal, both tables coded on ``schema``."""
    if not pairs:
        return np.zeros(0)
    names = list(dict.fromkeys(n for pair in pairs for n in pair))
    coded = schema.select(names)
    a, _ = coded.encode(original)
    b, _ = coded.encode(synthetic)
    positions = [(names.index(p), names.index(c)) for p, c in pairs]
    return tvds(a, b, coded.sizes, positions)


def _naive_links(synthetic_parent: pd.DataFrame, parent_key: str, child: pd.DataFrame, foreign_key: str,
                 rng: np.random.Generator) -> pd.DataFrame:
    """The child table with each row's parent drawn uniformly from the synthetic parents."""
    naive = child.copy()
    keys = synthetic_parent[parent_key].to_numpy()
    naive[foreign_key] = keys[rng.integers(0, len(keys), len(child))] if len(keys) else pd.NA
    return naive


class _Comparison:
    """The original database and a release, with what both scores share: which pairs cross each
    relation, and the original's join."""

    def __init__(self, original: Database, release: StoredRelease) -> None:
        missing = [t.name for t in release.structure.tables if t.name not in original.frames]
        if missing:
            raise RelationalError(f"the original database lacks table(s) {missing} that the release holds; pass the "
                                  "database the release was made from.")
        self.original, self.release = original, release
        self._original_joins: dict[str, pd.DataFrame] = {}

    def parent(self, child: TableKeys) -> TableKeys:
        return self.release.structure.parent(child)

    def pairs(self, child: TableKeys) -> list[tuple[str, str]]:
        parent = self.parent(child).name
        own = self.release.own_columns(child.name)
        return [(parent_column(parent, p), c) for p in self.release.own_columns(parent) for c in own]

    def joined(self, frames: Mapping[str, pd.DataFrame], child: TableKeys, child_frame: pd.DataFrame) -> pd.DataFrame:
        parent = self.parent(child)
        return _joined(frames[parent.name], parent, child_frame, child.foreign_keys[0],
                       self.release.own_columns(parent.name))

    def cross_tvds(self, child: TableKeys, synthetic_joined: pd.DataFrame) -> np.ndarray:
        """The pairs' TVDs of ``synthetic_joined`` against the original's join (joined once per child)."""
        if child.name not in self._original_joins:
            self._original_joins[child.name] = self.joined(self.original.frames, child, self.original.frames[child.name])
        schema = self.release.descriptions[child.name].schema
        return _pair_tvds(schema, self.pairs(child), self._original_joins[child.name], synthetic_joined)


def cross_relation_tvd(original: str | os.PathLike[str], release: str | os.PathLike[str], child: str,
                       synthetic_joined: pd.DataFrame) -> float:
    """Mean TVD of the (parent column × child column) marginals of ``synthetic_joined`` (child rows
    with their parent's columns named ``ROOT.COLUMN``, e.g. a single-table release of the join)
    against the original database's join, on the pairs and schema of ``release``'s child part."""
    files = read_release(release)
    comparison = _Comparison(read_database(original, _markers(files)), files)
    keys = next((t for t in files.structure.children if t.name == child), None)
    if keys is None:
        raise RelationalError(f"the release has no child table {child!r}; its children are "
                              f"{[t.name for t in files.structure.children]}.")
    values = comparison.cross_tvds(keys, synthetic_joined)
    return float(values.mean()) if values.size else float("nan")


def _markers(files: StoredRelease) -> tuple[str, ...]:
    return files.descriptions[files.structure.root.name].schema.missing_markers


def evaluate_database(original: str | os.PathLike[str], release: str | os.PathLike[str], *, seed: int = 0,
                      progress: Progress = SILENT) -> DatabaseEvaluation:
    """Compare the release in the folder ``release`` with the database at ``original`` (module docstring)."""
    files = read_release(release)
    progress.message(f"reading the original database {shown(original)}")
    comparison = _Comparison(read_database(original, _markers(files)), files)
    source, synthetic = comparison.original.frames, read_database(files.synthetic).frames
    root = files.structure.root
    rng = np.random.default_rng(seed)
    tables, rows = {}, {}
    for keys in files.structure.tables:
        own = files.own_columns(keys.name)
        progress.message(f"evaluating the table {keys.name}")
        schema = files.descriptions[keys.name].schema.select(own)
        tables[keys.name] = evaluate(_without_keys(source[keys.name], keys)[own], _without_keys(synthetic[keys.name], keys)[own],
                                     schema, schema.missing_markers, seed=seed, progress=progress)
        rows[keys.name] = (len(source[keys.name]), len(synthetic[keys.name]))
    degrees, cross, integrity = {}, {}, {}
    for child in files.structure.children:
        parent = comparison.parent(child)
        fk, key = child.foreign_keys[0], parent.primary_key or ""
        progress.message(f"comparing {child.name} rows per {parent.name} row and the marginals across the relation")
        naive_child = _naive_links(synthetic[parent.name], key, synthetic[child.name], fk.column, rng)
        found = {which: _degrees(frames[parent.name], key, child_frame, fk.column)
                 for which, frames, child_frame in (("original", source, source[child.name]),
                                                    ("synthetic", synthetic, synthetic[child.name]),
                                                    ("naive", synthetic, naive_child))}
        parent_schema = files.descriptions[parent.name].schema.select(files.own_columns(parent.name))
        codes = {which: parent_schema.encode(frames[parent.name])[0] for which, frames in
                 (("original", source), ("synthetic", synthetic))}
        joint = {which: _joint_degree_tvd(codes["original"], found["original"], codes["synthetic"], found[which],
                                          parent_schema.sizes) for which in ("synthetic", "naive")}
        degrees[child.name] = Degrees(child.name, parent.name, degree_histogram(found["original"]),
                                      degree_histogram(found["synthetic"]), degree_histogram(found["naive"]),
                                      joint["synthetic"], joint["naive"], float(found["original"].mean()),
                                      float(found["synthetic"].mean()))
        cross[child.name] = CrossRelation(child.name, parent.name, tuple(comparison.pairs(child)),
                                          comparison.cross_tvds(child, comparison.joined(synthetic, child, synthetic[child.name])),
                                          comparison.cross_tvds(child, comparison.joined(synthetic, child, naive_child)))
        integrity[child.name] = _integrity(synthetic[parent.name], parent, synthetic[child.name], child)
    guarantee = {k: files.record.get(k) for k in ("privacy_unit", "neighbouring", "budget", "spent")}
    guarantee["bounds"] = {t["table"]: {"max_children": t.get("max_children"), "source": t.get("max_children_source")}
                           for t in files.record["tables"] if t.get("foreign_key")}
    return DatabaseEvaluation(root.name, tables, rows, degrees, cross, integrity, guarantee, seed)


def _joint_degree_tvd(original_codes: np.ndarray, original_degrees: np.ndarray, synthetic_codes: np.ndarray,
                      synthetic_degrees: np.ndarray, sizes: Sequence[int]) -> float:
    """Mean TVD of the 2-way marginals (parent column × degree bucket) over the parent rows."""
    if not len(sizes):
        return float("nan")
    buckets = len(DEGREE_EDGES)
    edges = np.array(DEGREE_EDGES)

    def with_bucket(codes: np.ndarray, found: np.ndarray) -> np.ndarray:
        bucket = np.searchsorted(edges, found, side="right") - 1
        return np.column_stack([codes, bucket]).astype(np.int64)

    last = len(sizes)
    values = tvds(with_bucket(original_codes, original_degrees), with_bucket(synthetic_codes, synthetic_degrees),
                  [*sizes, buckets], [(j, last) for j in range(last)])
    return float(values.mean())


def _integrity(parent_frame: pd.DataFrame, parent: TableKeys, child_frame: pd.DataFrame, child: TableKeys) -> Integrity:
    fk = child.foreign_keys[0]
    parents = set(parent_frame[parent.primary_key].dropna().tolist()) if parent.primary_key else set()
    linked = int(child_frame[fk.column].isin(parents).sum())
    unique = bool(parent_frame[parent.primary_key].is_unique) if parent.primary_key else True
    if child.primary_key:
        unique = unique and bool(child_frame[child.primary_key].is_unique)
    return Integrity(child.name, len(child_frame), linked, unique)

"""The synthetic database: rows of the root from its model, then each table's rows from its model
conditioned on their parent row, parents before children at any depth. Post-processing of the
release: it reads the Descriptions only.

The model follows the idea of PrivLava (Cai et al., SIGMOD 2023) and of the relational models that
came before it: a child's attributes depend on its parent's attributes and on how many siblings it
has (its parent's degree), so the child table is modelled jointly with its parent's columns, and the
degree is a column of the parent's model. Generation walks the tree top down:

1. the root model (its columns and one children-count column per child table) gives the synthetic
   parents (drawn with the ``sampling`` asked for), as many as its noisy total, each with its number of children per child table;
2. for each other table (parents first), parent rows that share every code of the parent's own
   modelled columns (children counts included) are one group; the child model, conditioned on those codes as evidence
   (``Model.given``, exact conditioning on the junction tree), gives the group's children in one
   draw (rounded, or i.i.d. when asked), dealt to the group's parents in a random order by their counts. Where the child model gives
   a group's codes no probability (it was fitted to noisy measurements), the group's children are drawn
   from the child model unconditioned, and counted in a note.

A table with children has children-count columns of its own in its model, so its drawn rows carry
their own numbers of children for the next level. Primary keys are fresh (1, 2, 3, ... per table)
and every foreign key holds the key of an existing synthetic parent: referential integrity by
construction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synth.columns.domain import Domain
from synth.errors import ConditionError
from synth.generation.generate import FittedModel, fit
from synth.model import matching
from synth.model.sampling import check_sampling
from synth.progress import SILENT, Progress
from synth.relational.bounding import parent_column
from synth.relational.keys import Structure
from synth.release.description import Description


@dataclass(frozen=True)
class SyntheticDatabase:
    """Each table's synthetic rows (keys included, in the original's column order) and how many
    parent groups' children were drawn unconditioned (``unconditioned``, per child table)."""

    tables: dict[str, pd.DataFrame]
    unconditioned: dict[str, int]


def _draw_codes(fitted: FittedModel, n: int, rng: np.random.Generator, sampling: str,
                evidence: Mapping[str, np.ndarray] | None = None, progress: Progress = SILENT) -> np.ndarray:
    schema = fitted.description.schema
    model = fitted.model.given(dict(evidence)) if evidence else fitted.model
    return matching.sample_codes(model, Domain(schema.names, schema.sizes), n, rng, check_sampling(sampling), progress)


def _ordered(frame: pd.DataFrame, original: tuple[str, ...]) -> pd.DataFrame:
    return frame[[c for c in original if c in frame.columns]]


@dataclass(frozen=True)
class _Drawn:
    """One table's synthetic rows while walking down: their codes, the names and positions of the
    table's own columns in them (children counts included, its parent's columns left out), their
    decoded values and their fresh keys."""

    codes: np.ndarray
    own_names: list[str]
    own_positions: list[int]
    decoded: pd.DataFrame
    keys: np.ndarray


def _children(fitted: FittedModel, parent_name: str, parent: _Drawn, counts: np.ndarray, rng: np.random.Generator,
              per_group: str, progress: Progress, label: str) -> tuple[np.ndarray, np.ndarray, int]:
    """The child rows of every parent row (``counts`` each), drawn group by group conditioned on the
    parent's codes: the rows' codes, the key of each row's parent, and the groups drawn unconditioned."""
    schema = fitted.description.schema
    where = [schema.names.index(parent_column(parent_name, name)) for name in parent.own_names]
    sizes = [schema.sizes[j] for j in where]
    groups: dict[tuple[int, ...], list[int]] = {}
    for i in np.nonzero(counts)[0]:
        groups.setdefault(tuple(int(v) for v in parent.codes[i, parent.own_positions]), []).append(int(i))
    blocks, owners, missed = [], [], 0
    with progress.counter(label.format(groups=len(groups)), len(groups)) as step:
        for config, members in groups.items():
            m = int(counts[members].sum())
            evidence = {schema.names[j]: np.eye(size)[config[k]] for k, (j, size) in enumerate(zip(where, sizes))}
            try:
                codes = _draw_codes(fitted, m, rng, per_group, evidence)
            except ConditionError:
                missed += 1
                codes = _draw_codes(fitted, m, rng, per_group)
            blocks.append(codes[rng.permutation(m)])
            owners.append(np.repeat(parent.keys[members], counts[members]))
            step(1)
    width = len(schema.names)
    codes = np.concatenate(blocks) if blocks else np.zeros((0, width), dtype=np.int64)
    owner = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)
    return codes, owner, missed


def generate_database(descriptions: Mapping[str, Description], structure: Structure, count_columns: Mapping[str, str],
                      columns: Mapping[str, tuple[str, ...]], seed: int | None = None, sampling: str = "rounded",
                      progress: Progress = SILENT, rows: int | None = None) -> SyntheticDatabase:
    """Fit each table's Description and draw the synthetic database, parents first (module docstring).
    ``columns``: each table's original columns in order (public), so the output keeps them;
    ``count_columns``: each child table's count column in its parent's part; ``rows``: the root's rows
    (default: its noisy total)."""
    rng = np.random.default_rng(seed)
    root = structure.root
    fitted_root = fit(descriptions[root.name], progress=progress)
    n = fitted_root.rows_to_sample(rows)
    progress.message(f"sampling {n:,} {root.name} rows")
    root_codes = _draw_codes(fitted_root, n, rng, sampling, progress=progress)
    root_schema = fitted_root.description.schema
    drawn = {root.name: _Drawn(root_codes, list(root_schema.names), list(range(len(root_schema.names))),
                               root_schema.decode(root_codes, rng), np.arange(1, n + 1, dtype=np.int64))}
    unconditioned = {}
    per_group = "iid" if sampling == "iid" else "rounded"  # a group holds few rows: matching them gains nothing
    for child in structure.children:
        fk = child.foreign_keys[0]
        parent = drawn[fk.parent]
        counts = np.clip(parent.decoded[count_columns[child.name]].to_numpy(dtype=np.int64), 0, None)
        fitted = fit(descriptions[child.name], progress=progress)
        label = f"sampling {child.name} rows for {{groups:,}} kinds of {fk.parent} row"
        codes, owner, unconditioned[child.name] = _children(fitted, fk.parent, parent, counts, rng, per_group,
                                                            progress, label)
        schema = fitted.description.schema
        inherited = {parent_column(fk.parent, name) for name in parent.own_names}
        own = [j for j, name in enumerate(schema.names) if name not in inherited]
        decoded = schema.decode(codes, rng)
        drawn[child.name] = _Drawn(codes, [schema.names[j] for j in own], own, decoded,
                                   np.arange(1, len(decoded) + 1, dtype=np.int64))
        drawn[child.name].decoded.insert(0, fk.column, owner)
    tables = {}
    for table in structure.tables:
        frame = drawn[table.name].decoded
        counts_here = [count_columns[c.name] for c in structure.children_of(table.name)]
        from_parent = [] if not table.foreign_keys else [parent_column(table.foreign_keys[0].parent, name)
                                                           for name in drawn[table.foreign_keys[0].parent].own_names]
        frame = frame.drop(columns=[c for c in (*counts_here, *from_parent) if c in frame.columns])
        if table.primary_key:
            frame.insert(0, table.primary_key, drawn[table.name].keys)
        tables[table.name] = _ordered(frame, columns[table.name])
    return SyntheticDatabase(tables, unconditioned)

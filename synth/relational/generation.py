"""The synthetic database: parents from the root's model, then each parent's children from the child
model conditioned on that parent. Post-processing of the release: it reads the Descriptions only.

The model follows the idea of PrivLava (Cai et al., SIGMOD 2023) and of the relational models that
came before it: a child's attributes depend on its parent's attributes and on how many siblings it
has (its parent's degree), so the child table is modelled jointly with its parent's columns, and the
degree is a column of the parent's model. Generation walks the tree top down:

1. the root model (its columns and one children-count column per child table) gives the synthetic
   parents (drawn with the ``sampling`` asked for), as many as its noisy total, each with its number of children per child table;
2. for each child table, parents that share every modelled column's code (children counts
   included) are one group; the child model, conditioned on those codes as evidence
   (``Model.given``, exact conditioning on the junction tree), gives the group's children in one
   draw (rounded, or i.i.d. when asked), dealt to the group's parents in a random order by their counts. Where the child model gives
   a group's codes no probability (it was fitted to noisy measurements), the group's children are drawn
   from the child model unconditioned, and counted in a note.

Primary keys are fresh (1, 2, 3, ... per table) and every foreign key holds the key of an existing
synthetic parent: referential integrity by construction.
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


def generate_database(descriptions: Mapping[str, Description], structure: Structure, count_columns: Mapping[str, str],
                      columns: Mapping[str, tuple[str, ...]], seed: int | None = None, sampling: str = "rounded",
                      progress: Progress = SILENT) -> SyntheticDatabase:
    """Fit each table's Description and draw the synthetic database (module docstring). ``columns``:
    each table's original columns in order (public), so the output keeps them."""
    rng = np.random.default_rng(seed)
    root = structure.root
    assert root.primary_key is not None  # Structure.of checks it
    fitted_root = fit(descriptions[root.name], progress=progress)
    n = fitted_root.rows_to_sample(None)
    progress.message(f"sampling {n:,} {root.name} rows")
    root_codes = _draw_codes(fitted_root, n, rng, sampling, progress=progress)
    root_schema = fitted_root.description.schema
    decoded = root_schema.decode(root_codes, rng)
    parent_keys = np.arange(1, n + 1, dtype=np.int64)
    tables = {}
    root_table = decoded.drop(columns=[c for c in count_columns.values() if c in decoded.columns])
    root_table.insert(0, root.primary_key, parent_keys)
    tables[root.name] = _ordered(root_table, columns[root.name])
    unconditioned = {}
    per_group = "iid" if sampling == "iid" else "rounded"  # a group holds few rows: matching them gains nothing
    for child in structure.children:
        fk = child.foreign_keys[0]
        bound_column = count_columns[child.name]
        counts = np.clip(decoded[bound_column].to_numpy(dtype=np.int64), 0, None)
        fitted = fit(descriptions[child.name], progress=progress)
        schema = fitted.description.schema
        given = [c.name for c in root_schema.columns]
        where = [schema.names.index(parent_column(root.name, name)) for name in given]
        sizes = [schema.sizes[j] for j in where]
        groups: dict[tuple[int, ...], list[int]] = {}
        for i in np.nonzero(counts)[0]:
            groups.setdefault(tuple(int(v) for v in root_codes[i]), []).append(int(i))
        blocks, owners, missed = [], [], 0
        with progress.counter(f"sampling {child.name} rows for {len(groups):,} kinds of {root.name}", len(groups)) as step:
            for config, members in groups.items():
                m = int(counts[members].sum())
                evidence = {schema.names[j]: np.eye(size)[config[k]] for k, (j, size) in enumerate(zip(where, sizes))}
                try:
                    codes = _draw_codes(fitted, m, rng, per_group, evidence)
                except ConditionError:
                    missed += 1
                    codes = _draw_codes(fitted, m, rng, per_group)
                blocks.append(codes[rng.permutation(m)])
                owners.append(np.repeat(parent_keys[members], counts[members]))
                step(1)
        unconditioned[child.name] = missed
        width = len(schema.names)
        codes = np.concatenate(blocks) if blocks else np.zeros((0, width), dtype=np.int64)
        owner = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)
        rows = schema.decode(codes, rng).drop(columns=[parent_column(root.name, name) for name in given])
        rows.insert(0, fk.column, owner)
        if child.primary_key:
            rows.insert(0, child.primary_key, np.arange(1, len(rows) + 1, dtype=np.int64))
        tables[child.name] = _ordered(rows, columns[child.name])
    return SyntheticDatabase(tables, unconditioned)

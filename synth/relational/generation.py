"""The synthetic database: rows of the root from its model, then each table's rows from its model
conditioned on their parent row, parents before children at any depth, a chunk of root rows at a
time. Post-processing of the release: it reads the Descriptions only.

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

A child depends on its parent row and the models only, so the database is drawn in chunks of root
rows (``DatabaseDraw``): a chunk's root rows, then all their descendants, handed on as one piece per
table before the next chunk is drawn; keys run on from chunk to chunk. Memory then holds one chunk,
however many rows the database has. A chunk has as many root rows as bring about ``CHUNK_ROWS`` rows
(the single-table chunk) across all tables, by the rows each root row is expected to bring
(``DatabaseModel.rows_per_root``: from the children counts of the models). A database of one chunk is
drawn as it would be whole (the same rows under one seed); with several, each chunk draws from its
own seed of the seed's sequence, and its root rows are rounded (or matched) within the chunk.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from synth.columns.domain import Domain
from synth.columns.unmodelled import KeyRange
from synth.errors import ConditionError
from synth.generation.generate import CHUNK_ROWS, FittedModel, fit
from synth.model import matching
from synth.model.sampling import check_sampling
from synth.progress import SILENT, Progress
from synth.relational.bounding import parent_column
from synth.relational.keys import Structure
from synth.release.description import Description


@dataclass(frozen=True)
class SyntheticDatabase:
    """What a draw gave: each table's number of synthetic rows (parents first) and how many parent
    groups' children were drawn unconditioned (``unconditioned``, per child table)."""

    rows: dict[str, int]
    unconditioned: dict[str, int]


def _draw_codes(fitted: FittedModel, n: int, rng: np.random.Generator, sampling: str,
                evidence: Mapping[str, np.ndarray] | None = None, progress: Progress = SILENT) -> np.ndarray:
    schema = fitted.description.schema
    model = fitted.model.given(dict(evidence)) if evidence else fitted.model
    return matching.sample_codes(model, Domain(schema.names, schema.sizes), n, rng, check_sampling(sampling), progress)


def _ordered(frame: pd.DataFrame, original: tuple[str, ...]) -> pd.DataFrame:
    return frame[[c for c in original if c in frame.columns]]


def _mean_count(fitted: FittedModel, name: str) -> float:
    """The mean of the children-count column ``name`` under the model (a bin's count is drawn
    uniformly among its whole numbers, so the bin stands for their middle)."""
    column = fitted.description.schema.column(name)
    edges = column.edges
    middles = (edges[:-1] + edges[1:] - 1) / 2
    weights = np.clip(np.asarray(fitted.model.marginal([name]), dtype=float)[:len(middles)], 0, None)
    total = weights.sum()
    return float(weights @ middles / total) if total > 0 else 0.0


@dataclass(frozen=True)
class _Drawn:
    """One table's synthetic rows of a chunk while walking down: their codes, the names and positions
    of the table's own columns in them (children counts included, its parent's columns left out),
    their decoded values and their keys."""

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


class DatabaseModel:
    """Each table's model, fitted to its Description (``fit``), with the structure that links them:
    draws synthetic databases (``draw``). ``columns``: each table's original columns in order
    (public), so the output keeps them; ``count_columns``: each child table's count column in its
    parent's part."""

    def __init__(self, descriptions: Mapping[str, Description], structure: Structure,
                 count_columns: Mapping[str, str], columns: Mapping[str, tuple[str, ...]],
                 progress: Progress = SILENT) -> None:
        self.structure, self.count_columns, self.columns = structure, dict(count_columns), dict(columns)
        self.fitted = {t.name: fit(descriptions[t.name], progress=progress) for t in structure.tables}

    @cached_property
    def rows_per_root_by_table(self) -> dict[str, float]:
        """The rows of each table one root row brings, as the models expect them: a table's rows per
        root row are its parent's times the mean of the parent's count column for it (public:
        post-processing of the models; computed once, as every chunk's keys ask for it)."""
        per_root = {self.structure.root.name: 1.0}
        for child in self.structure.children:
            parent = child.foreign_keys[0].parent
            per_root[child.name] = per_root[parent] * _mean_count(self.fitted[parent], self.count_columns[child.name])
        return per_root

    def rows_per_root(self) -> float:
        """The rows one root row brings across all tables, itself included (``rows_per_root_by_table``)."""
        return sum(self.rows_per_root_by_table.values())

    def roots_per_chunk(self, chunk_rows: int | None = None) -> int:
        """The root rows of a chunk: as many as bring about ``chunk_rows`` (default ``CHUNK_ROWS``) rows
        across all tables, at least one."""
        return max(1, int((chunk_rows or CHUNK_ROWS) // self.rows_per_root()))

    def draw(self, rows: int | None = None, seed: int | None = None, sampling: str = "rounded",
             progress: Progress = SILENT, chunk_rows: int | None = None) -> DatabaseDraw:
        """A synthetic database of ``rows`` root rows (default: the root's noisy total) with their
        descendants, to be drawn chunk by chunk of about ``chunk_rows`` rows (``roots_per_chunk``)."""
        check_sampling(sampling)
        n = self.fitted[self.structure.root.name].rows_to_sample(rows)
        return DatabaseDraw(self, n, self.roots_per_chunk(chunk_rows), seed, sampling, progress)


class DatabaseDraw:
    """A synthetic database being drawn, once, by iterating over it: each chunk maps every table to
    its rows of the chunk (parents first, the original's columns, keys included), and is drawn when
    the one before has been handed on. ``database()`` says what was drawn once every chunk was."""

    def __init__(self, model: DatabaseModel, roots: int, roots_per_chunk: int, seed: int | None, sampling: str,
                 progress: Progress) -> None:
        self.model, self.roots, self.roots_per_chunk = model, roots, roots_per_chunk
        self.seed, self.sampling, self.progress = seed, sampling, progress
        self.rows = {t.name: 0 for t in model.structure.tables}
        self.unconditioned = {t.name: 0 for t in model.structure.children}
        self.chunks = -(-roots // roots_per_chunk)
        self._started, self._drawn = False, False
        self._keys_seed: int | None = None  # set when the draw has several chunks

    def _piece(self, table: str) -> KeyRange | None:
        """Where the next rows of ``table`` lie in it, for the fresh keys of its unmodelled id columns
        (None for a draw of one chunk: its keys are those of a whole draw). The bound on the table's
        rows is twice those the models expect, the same for every chunk (the keys' templates are widened
        by it, and hold a hundred times more)."""
        if self._keys_seed is None:
            return None
        bound = int(2 * self.roots * self.model.rows_per_root_by_table[table]) + 1
        return KeyRange(self.rows[table], bound, self._keys_seed)

    def database(self) -> SyntheticDatabase:
        """Each table's rows and the groups drawn unconditioned; ValueError before every chunk was drawn."""
        if not self._drawn:
            raise ValueError("the synthetic database has not been drawn yet: iterate over its chunks first")
        return SyntheticDatabase(dict(self.rows), dict(self.unconditioned))

    def __iter__(self) -> Iterator[dict[str, pd.DataFrame]]:
        if self._started:
            raise ValueError("a synthetic database is drawn once: call DatabaseModel.draw again for another")
        self._started = True
        root = self.model.structure.root.name
        if self.chunks == 1:
            self.progress.message(f"sampling {self.roots:,} {root} rows")
            seeds = iter([self.seed])
        else:
            self.progress.message(f"sampling {self.roots:,} {root} rows in {self.chunks:,} chunks of up to "
                                  f"{self.roots_per_chunk:,} {root} rows and their rows in other tables")
            sequence = np.random.SeedSequence(self.seed)
            seeds = (int(sequence.spawn(1)[0].generate_state(1)[0]) for _ in range(self.chunks))
            self._keys_seed = int(sequence.generate_state(1)[0])  # one for every chunk: fresh ids stay distinct
        with self.progress.counter(f"chunks of {root} rows with their rows in other tables", self.chunks) as step:
            for index, start in enumerate(range(0, self.roots, self.roots_per_chunk)):
                size = min(self.roots_per_chunk, self.roots - start)
                # a chunk too large to match only repeats the first chunk's note saying so: keep it quiet
                shown = self.progress if index == 0 or size <= matching.MAX_ROWS else SILENT
                chunk = self._chunk(size, np.random.default_rng(next(seeds)), shown)
                yield chunk
                del chunk  # this draw keeps no chunk across its yield
                step(index + 1)
        self._drawn = True

    def _chunk(self, size: int, rng: np.random.Generator, progress: Progress) -> dict[str, pd.DataFrame]:
        """Every table's rows of one chunk of ``size`` root rows (module docstring), keys after the
        rows drawn so far."""
        structure, fitted = self.model.structure, self.model.fitted
        root = structure.root.name
        root_codes = _draw_codes(fitted[root], size, rng, self.sampling, progress=progress)
        root_schema = fitted[root].description.schema
        drawn = {root: _Drawn(root_codes, list(root_schema.names), list(range(len(root_schema.names))),
                              root_schema.decode(root_codes, rng, self._piece(root)), self._keys(root, size))}
        per_group = "iid" if self.sampling == "iid" else "rounded"  # a group holds few rows: matching them gains nothing
        for child in structure.children:
            fk = child.foreign_keys[0]
            parent = drawn[fk.parent]
            counts = np.clip(parent.decoded[self.model.count_columns[child.name]].to_numpy(dtype=np.int64), 0, None)
            label = f"sampling {child.name} rows for {{groups:,}} kinds of {fk.parent} row"
            codes, owner, missed = _children(fitted[child.name], fk.parent, parent, counts, rng, per_group,
                                             progress, label)
            self.unconditioned[child.name] += missed
            schema = fitted[child.name].description.schema
            inherited = {parent_column(fk.parent, name) for name in parent.own_names}
            own = [j for j, name in enumerate(schema.names) if name not in inherited]
            decoded = schema.decode(codes, rng, self._piece(child.name))
            decoded.insert(0, fk.column, owner)
            drawn[child.name] = _Drawn(codes, [schema.names[j] for j in own], own, decoded,
                                       self._keys(child.name, len(decoded)))
        tables = {}
        for table in structure.tables:
            frame = drawn[table.name].decoded
            counts_here = [self.model.count_columns[c.name] for c in structure.children_of(table.name)]
            from_parent = [] if not table.foreign_keys else [parent_column(table.foreign_keys[0].parent, name)
                                                               for name in drawn[table.foreign_keys[0].parent].own_names]
            frame = frame.drop(columns=[c for c in (*counts_here, *from_parent) if c in frame.columns])
            if table.primary_key:
                frame.insert(0, table.primary_key, drawn[table.name].keys)
            tables[table.name] = _ordered(frame, self.model.columns[table.name])
        return tables

    def _keys(self, table: str, n: int) -> np.ndarray:
        """Fresh keys for ``n`` more rows of ``table``, after those drawn so far; counts them."""
        start = self.rows[table]
        self.rows[table] += n
        return np.arange(start + 1, start + n + 1, dtype=np.int64)

"""A workload of random range and counting queries, answered on both tables.

Each query is a conjunction of one to three predicates on distinct random columns: a numeric or
datetime column must fall in a random range of consecutive bins of the schema, a categorical or
boolean column in a random non-empty subset of its codes. A query's answer is the share of rows that
satisfy it, so tables of different sizes compare; its error is the absolute difference between the
two tables' answers. The queries draw their columns from ``COLUMN_SETS`` random sets of columns
(each with at most ``MAX_CELLS`` cells), whose marginal counts over every row are computed once, so
each query is answered exactly from counts (of every row: ``Table.counted``). Reads the original data: NOT differentially private.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from synth.columns.kinds import NUMERIC_KINDS
from synth.columns.schema import Schema
from synth.evaluate.fidelity import marginal_counts
from synth.evaluate.tables import Tables

QUERIES = 1000
COLUMN_SETS = 50
MAX_PREDICATES = 3
MAX_CELLS = 1_000_000


@dataclass(frozen=True)
class QueryErrors:
    """Answers of the workload on both tables (shares of rows) and their absolute differences."""

    original: np.ndarray
    synthetic: np.ndarray
    predicates: np.ndarray  # how many columns each query constrains

    @property
    def errors(self) -> np.ndarray:
        return np.abs(self.synthetic - self.original)

    def to_dict(self) -> dict[str, Any]:
        e = self.errors
        return {"queries": int(e.size), "mean_abs_error": float(e.mean()), "median_abs_error": float(np.median(e)),
                "p90_abs_error": float(np.quantile(e, 0.9)), "max_abs_error": float(e.max()),
                "mean_original_answer": float(self.original.mean()),
                "by_predicates": {str(k): float(e[self.predicates == k].mean())
                                  for k in np.unique(self.predicates).tolist()}}


def column_sets(schema: Schema, rng: np.random.Generator, count: int = COLUMN_SETS) -> list[tuple[int, ...]]:
    """``count`` random sets of one to MAX_PREDICATES distinct columns with at most MAX_CELLS cells."""
    out: list[tuple[int, ...]] = []
    while len(out) < count:
        size = int(rng.integers(1, min(MAX_PREDICATES, len(schema.columns)) + 1))
        chosen = tuple(sorted(rng.choice(len(schema.columns), size=size, replace=False).tolist()))
        if np.prod([schema.sizes[j] for j in chosen]) <= MAX_CELLS or size == 1:
            out.append(chosen)
    return out


def random_predicates(schema: Schema, columns: tuple[int, ...], rng: np.random.Generator) -> list[np.ndarray]:
    """For each column, the mask of codes it allows: a range of bins (numeric) or a non-empty subset."""
    masks = []
    for j in columns:
        column = schema.columns[j]
        mask = np.zeros(column.size, dtype=bool)
        if column.kind in NUMERIC_KINDS:
            low, high = np.sort(rng.integers(0, column.bins, size=2))  # bins, not the missing code
            mask[low:high + 1] = True
        else:
            mask[:] = rng.random(column.size) < 0.5
            mask[rng.integers(0, column.size)] = True
        masks.append(mask)
    return masks


def answer(counts: np.ndarray, masks: list[np.ndarray]) -> float:
    """The share of rows satisfying every mask, from the counts tensor of the masks' columns."""
    kept = counts
    for axis, mask in enumerate(masks):
        kept = kept.compress(mask, axis=axis)
    return float(kept.sum()) / max(float(counts.sum()), 1.0)


def query_errors(tables: Tables, rng: np.random.Generator, count: int = QUERIES) -> QueryErrors:
    """Answer ``count`` random queries on both tables."""
    schema = tables.schema
    sets = column_sets(schema, rng)
    counts = {which: [marginal_counts(counted.codes, schema.sizes, c, counted.weights).reshape([schema.sizes[j] for j in c])
                      for c in sets]
              for which, counted in (("original", tables.original.counted), ("synthetic", tables.synthetic.counted))}
    answers: dict[str, list[float]] = {"original": [], "synthetic": []}
    predicates = []
    for _ in range(count):
        pick = int(rng.integers(len(sets)))
        masks = random_predicates(schema, sets[pick], rng)
        for which in answers:
            answers[which].append(answer(counts[which][pick], masks))
        predicates.append(len(masks))
    return QueryErrors(np.array(answers["original"]), np.array(answers["synthetic"]), np.array(predicates))

"""What the inspection report shows, computed from a Description alone: numbers, no drawing.

Everything here is post-processing of the release: its noisy measurements, the engine's public
output and the model fitted to them. Nothing reads private data, so every number is exactly as
private as the Description. Drawing is ``figures``' job, the page is ``report``'s.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import networkx as nx
import numpy as np

from synth.columns.kinds import NUMERIC_KINDS
from synth.engines import released_by
from synth.engines.output import Structure
from synth.evaluate.association import cramers_v
from synth.generation.generate import Model
from synth.model.compression import expand_marginal
from synth.model.estimation import combine_measurements
from synth.progress import SILENT, Progress
from synth.release.description import Description

MAX_BARS = 30  # codes drawn per column; the others are counted in the caption
MAX_HEATMAP_COLUMNS = 40


@dataclass(frozen=True)
class Distribution:
    """One column's distribution over its (original) codes, with labels decoded from the schema."""

    name: str
    labels: tuple[str, ...]
    values: np.ndarray  # noisy counts when ``measured``, else the fitted model's shares
    measured: bool  # the column's own 1-way measurement(s); False: the fitted model's marginal
    noise_std: float | None  # of one measured count (measured columns only)
    merged: int  # codes that compression merged into one noisy count, spread evenly over them
    ordered: bool  # numeric bins keep their order when only some are shown

    def shown(self, limit: int = MAX_BARS) -> np.ndarray:
        """The codes to draw: all of them, or the ``limit`` largest (bins kept in code order)."""
        if self.values.size <= limit:
            return np.arange(self.values.size)
        top = np.argsort(-self.values, kind="stable")[:limit]
        return np.sort(top) if self.ordered else top


@dataclass(frozen=True)
class Dependence:
    """Cramér's V of the fitted model's 2-way marginals between ``names`` (NaN: diagonal, undefined)."""

    names: tuple[str, ...]
    values: np.ndarray
    left_out: tuple[str, ...]


def _measured_counts(description: Description, name: str) -> tuple[np.ndarray, float] | None:
    """The column's 1-way noisy counts on its original codes (several measurements combined by
    inverse variance), and the noise deviation of one count; None if it was never measured alone."""
    own = [replace(m, values=m.values / m.weights, weights=None) if m.weights is not None else m
           for m in description.measurements if m.attrs == (name,) and not m.coarsening]
    if not own:
        return None
    counts, std = combine_measurements(own)
    return expand_marginal(counts, (name,), description.compression), std


def distributions(description: Description, model: Model) -> list[Distribution]:
    """Every column's distribution: its noisy 1-way counts, else the fitted model's shares."""
    out = []
    for column in description.schema.columns:
        measured = _measured_counts(description, column.name)
        if measured is None:
            marginal = model.marginal([column.name])
            values, std = marginal / marginal.sum(), None
        else:
            values, std = measured
        mapping = description.compression.get(column.name)
        merged = 0 if mapping is None else int(np.count_nonzero(mapping == mapping.max()))
        out.append(Distribution(column.name, column.labels(description.schema.other_label), values,
                                measured is not None, std, merged if merged > 1 else 0,
                                column.kind in NUMERIC_KINDS))
    return out


def structure(description: Description) -> Structure:
    """What the release's engine learnt (its ``structure``: e.g. a network, or the columns measured together)."""
    engine = released_by(description.engine, description.engine_options)
    return engine.structure(description.schema.names, description.result)


def heatmap_columns(names: Sequence[str], graph: nx.Graph, limit: int = MAX_HEATMAP_COLUMNS) -> tuple[str, ...]:
    """All columns if at most ``limit``, else the ``limit`` most connected in the structure (by
    weighted degree; ties in table order), in table order."""
    if len(names) <= limit:
        return tuple(names)
    degree = dict(graph.degree(weight="weight"))
    keep = set(sorted(names, key=lambda n: -degree[n])[:limit])
    return tuple(n for n in names if n in keep)


def dependence(model: Model, all_names: Sequence[str], names: Sequence[str],
               progress: Progress = SILENT) -> Dependence:
    """Cramér's V between every pair of ``names`` (a selection of ``all_names``) in the model."""
    values = np.full((len(names), len(names)), math.nan)
    pairs = list(itertools.combinations(range(len(names)), 2))
    for i, j in progress.track(pairs, "dependence between pairs of columns"):
        values[i, j] = values[j, i] = cramers_v(model.marginal((names[i], names[j])))
    shown = set(names)
    return Dependence(tuple(names), values, tuple(n for n in all_names if n not in shown))

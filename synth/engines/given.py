"""Marginals an engine is given rather than measures: tables derived from an earlier release
(post-processing, nothing charged), over some of the columns it describes.

A relational child table's part describes its own columns jointly with its parent row's columns;
the parent's part has already released a model of those (``synth.relational.parent_marginals``).
An engine that takes given marginals (``TakesGivenMarginals``, aim) fits them with its own
measurements and spends its budget only where they do not reach: no 1-way marginal of a given
column, and no candidate made of given columns only (``touches_own``). Every given marginal is a
``Measurement`` of mechanism ``PARENT_RELEASE``, kept in the Description with the engine's own
measurements so that generation refits the same model; the ledger has no entry for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from synth.columns.domain import Domain
from synth.engines.base import Engine
from synth.model.compression import compress_one_way, expansion_weights
from synth.privacy.measurement import PARENT_RELEASE, Measurement, sum_groups


@runtime_checkable
class TakesGivenMarginals(Protocol):
    """An engine able to fit marginals it is given (``with_given``) beside its own measurements."""

    def with_given(self, given: Sequence[Measurement]) -> Engine:
        """The same engine, describing with ``given`` (their columns among the curator's)."""


def given_columns(given: Iterable[Measurement]) -> frozenset[str]:
    """The columns the given marginals cover."""
    return frozenset(a for m in given for a in m.attrs)


def touches_own(marginal: Sequence[str], given: frozenset[str]) -> bool:
    """Whether ``marginal`` holds a column that no given marginal covers: only such a marginal is
    worth a measurement when the given ones hold the rest."""
    return any(a not in given for a in marginal)


def check_given(given: Sequence[Measurement], names: Sequence[str]) -> None:
    """ValueError when a given marginal is not of ``PARENT_RELEASE`` or names a column not in ``names``."""
    for m in given:
        if m.mechanism != PARENT_RELEASE:
            raise ValueError(f"a given marginal over {m.attrs} has mechanism {m.mechanism!r}, not {PARENT_RELEASE!r}")
        missing = [a for a in m.attrs if a not in names]
        if missing:
            raise ValueError(f"a given marginal over {m.attrs} names column(s) {missing} that the table lacks")


def compress_given(given: Sequence[Measurement], domain: Domain,
                   ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], tuple[Measurement, ...]]:
    """Compression of the given columns as ``compress_one_way`` compresses measured ones: a code whose
    given mass (its 1-way table, summed from the first given table holding it) is below
    ``SUPPORT_THRESHOLD`` deviations of that table is merged with the column's other such codes.
    Returns the maps, the expansion weights (``expansion_weights`` on those masses) and the given
    tables on the merged codes (merged cells summed, each scaled by 1/√(cells merged) with that weight,
    so every value keeps its deviation). Without it, a column such as a children count, whose large
    buckets hold no parent, would cost every candidate holding it noise in cells no row can reach."""
    one_ways: dict[str, Measurement] = {}
    for m in given:
        table = m.values.reshape(tuple(domain.size((a,)) for a in m.attrs))
        for axis, name in enumerate(m.attrs):
            if name not in one_ways:
                mass = table.sum(axis=tuple(i for i in range(table.ndim) if i != axis))
                one_ways[name] = Measurement((name,), mass, m.mechanism, m.noise_scale)
    maps, _ = compress_one_way(list(one_ways.values()))
    expansion = expansion_weights(list(one_ways.values()), maps)
    return maps, expansion, tuple(merged_codes(m, maps, domain) for m in given)


def merged_codes(measurement: Measurement, maps: Mapping[str, np.ndarray], domain: Domain) -> Measurement:
    """A given table on merged codes (``compress_given``)."""
    mapped = [a for a in measurement.attrs if a in maps]
    if not mapped:
        return measurement
    table = measurement.values.reshape(tuple(domain.size((a,)) for a in measurement.attrs))
    merged = np.ones(table.shape)
    for axis, name in enumerate(measurement.attrs):
        if name in maps:
            table = sum_groups(table, maps[name], axis)
            merged = sum_groups(merged, maps[name], axis)
    scale = 1.0 / np.sqrt(merged)
    return Measurement(measurement.attrs, (table * scale).ravel(), measurement.mechanism, measurement.noise_scale,
                       scale.ravel())

"""Coarse measurements fitted through derived columns, so that they cost what they measure.

A measurement of columns on coarse groups of their codes (``Measurement.coarsening``) says nothing
about the codes within a group. Fitted as it stands, it still needs the model to hold its columns
jointly at full resolution: a coarse measurement of age × hours × weight (8 × 8 × 8 groups) would
force a clique of 85 × 99 × 100 cells into the junction tree, and the fit's cost with it.

Instead, each coarsened column ``a`` with map ``g`` gets a derived column ``a~g`` in the model's
domain, whose code is ``g(a)``: the measurement is taken over the derived columns (a table as
small as what was measured), and a clique (a, a~g) ties the derived column to its source with
structural zeros (log-potential of the smallest float where the group is not the code's group),
which every later step of the fit keeps (they only move by bounded amounts). The fitted model is
then a distribution in which each derived column equals its source's group; ``DerivedModel``
shows it on the original columns only (marginals sum the derived columns out, samples drop them).
Among the distributions that match the measurements, this is the one the maximum-entropy fit
prefers anyway: within a group, a code relates to the other columns only through its group.

Post-processing only: this module sees measurements, never private rows.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from synth.columns.domain import Domain
from synth.model.fitting import Callback, fit_graphical_model
from synth.model.graphical import CalibratedTree, GraphicalModel
from synth.model.interface import Evidence
from synth.model.sampling import DEFAULT_DRAWS, Draws
from synth.privacy.measurement import Measurement

DERIVED_MARK = "~"  # a derived column is named source~groups.checksum (of its map)


def derived_name(attr: str, mapping: np.ndarray) -> str:
    """The name of ``attr``'s derived column on ``mapping``, from the map itself (its groups and a
    CRC-32 of its codes), so that two sets of derived columns name the same column alike: a model
    aim fitted with every coarse map it offered can start the fit of the maps it measured."""
    codes = np.asarray(mapping, dtype=np.int64)
    return f"{attr}{DERIVED_MARK}{int(codes.max()) + 1}.{zlib.crc32(codes.tobytes()):08x}"


@dataclass(frozen=True)
class DerivedColumns:
    """The derived columns of a domain: for each, its source column and the source's map of codes
    to groups (its codes)."""

    base: Domain
    sources: tuple[str, ...]
    maps: tuple[np.ndarray, ...]
    names: tuple[str, ...]

    @classmethod
    def of(cls, base: Domain, maps: Sequence[tuple[str, np.ndarray]]) -> DerivedColumns:
        """One derived column per distinct (column, map), in the order first met."""
        seen: dict[tuple[str, bytes], int] = {}
        sources: list[str] = []
        kept: list[np.ndarray] = []
        for attr, mapping in maps:
            key = (attr, np.asarray(mapping, dtype=np.int64).tobytes())
            if key not in seen:
                seen[key] = len(sources)
                sources.append(attr)
                kept.append(np.asarray(mapping, dtype=np.int64))
        taken = set(base.names)
        names = []
        for attr, mapping in zip(sources, kept):
            name = derived_name(attr, mapping)
            while name in taken:
                name += DERIVED_MARK
            taken.add(name)
            names.append(name)
        return cls(base, tuple(sources), tuple(kept), tuple(names))

    @property
    def domain(self) -> Domain:
        """The base domain with the derived columns appended."""
        return Domain(self.base.names + self.names,
                      self.base.sizes + tuple(int(m.max()) + 1 for m in self.maps))

    def name(self, attr: str, mapping: np.ndarray) -> str:
        """The derived column of ``attr`` on ``mapping``; KeyError when there is none."""
        wanted = np.asarray(mapping, dtype=np.int64)
        for source, m, name in zip(self.sources, self.maps, self.names):
            if source == attr and np.array_equal(m, wanted):
                return name
        raise KeyError(f"no derived column of {attr!r} on this map")

    def rewrite(self, m: Measurement) -> Measurement:
        """``m`` with each coarsened column replaced by its derived column (no coarsening left)."""
        if not m.coarsening:
            return m
        attrs = tuple(self.name(a, m.coarsening[a]) if a in m.coarsening else a for a in m.attrs)
        return replace(m, attrs=attrs, coarsening={})

    def links(self) -> list[tuple[tuple[str, str], np.ndarray]]:
        """Each derived column's tie to its source: the pair (source, derived) and the log-potential
        over it, 0 where the derived code is the source code's group and the log of the smallest
        float elsewhere (a structural zero that stays finite)."""
        floor = float(np.log(np.finfo(float).tiny))
        out = []
        for source, mapping, name in zip(self.sources, self.maps, self.names):
            table = np.full((mapping.size, int(mapping.max()) + 1), floor)
            table[np.arange(mapping.size), mapping] = 0.0
            out.append(((source, name), table))
        return out


def coarse_maps(measurements: Sequence[Measurement]) -> list[tuple[str, np.ndarray]]:
    """The (column, map) pairs that the measurements coarsen, in the order met."""
    return [(a, np.asarray(m.coarsening[a])) for m in measurements for a in m.attrs if a in m.coarsening]


@dataclass(frozen=True)
class DerivedModel:
    """A model fitted with derived columns, seen on the base domain's columns only."""

    model: CalibratedTree
    base: Domain

    @property
    def total(self) -> float:
        return self.model.total

    def marginal(self, attrs: Sequence[str]) -> np.ndarray:
        return self.model.marginal(attrs)

    def marginal_cost(self, attrs: Sequence[str]) -> int:
        return self.model.marginal_cost(attrs)

    def sample(self, n: int, rng: np.random.Generator, sampling: Draws = DEFAULT_DRAWS) -> np.ndarray:
        return np.ascontiguousarray(self.model.sample(n, rng, sampling)[:, :len(self.base)])

    def given(self, evidence: Evidence) -> DerivedModel:
        return DerivedModel(self.model.given(evidence), self.base)


def derived_for(domain: Domain, measurements: Sequence[Measurement],
                extra: Mapping[str, np.ndarray] | None = None) -> DerivedColumns | None:
    """The derived columns that ``measurements`` (and the ``extra`` maps) need, or None when
    nothing is coarsened."""
    maps = coarse_maps(measurements) + list((extra or {}).items())
    return DerivedColumns.of(domain, maps) if maps else None


def fit_derived(domain: Domain, measurements: Sequence[Measurement], derived: DerivedColumns, *,
                iterations: int = 1000, tolerance: float = 1e-6, warm_start: GraphicalModel | None = None,
                callback: Callback | None = None) -> GraphicalModel:
    """The graphical model over ``derived.domain`` fitted to ``measurements`` with their coarsened
    columns read as derived columns (the other arguments as in ``fit_graphical_model``)."""
    return fit_graphical_model(derived.domain, [derived.rewrite(m) for m in measurements], iterations=iterations,
                               tolerance=tolerance, warm_start=warm_start, callback=callback, links=derived.links())

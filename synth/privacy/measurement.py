"""Noisy measurements of marginals: what the describer releases and the fitter consumes.

A ``Measurement`` is the noisy count vector of one marginal (the cells of the listed columns, in
C order over their code sizes), the mechanism that produced it and its noise scale. The empty
marginal ``()`` is the noisy row count. Optional per-cell ``weights`` say the values measure
``weights * marginal`` (each with the same noise std): this is how a marginal re-expressed by
post-processing, e.g. with several noisy cells summed into one, keeps an honest noise level.
Optional ``coarsening`` maps say some attributes were measured on coarse codes: ``coarsening[a][code]``
is the group of each code of ``a`` (groups 0..k-1, all used), and the cells of ``a`` are its
groups (PrivBayes measures parents this way). Measurements are public (they went through a DP
mechanism, or, of mechanism ``PARENT_RELEASE``, were derived from a release without charge: a
relational child's given marginals, ``synth.engines.given``); this module never sees private rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from synth.columns.domain import Domain
from synth.errors import DescriptionError
from synth.privacy import DiscreteGaussian, DiscreteLaplace

# A table derived from a parent table's release (post-processing, never charged): its noise scale is
# the deviation the fit gives each of its cells
PARENT_RELEASE = "parent_release"
# The standard deviation of one cell's noise per unit of the mechanism's scale, by the name a
# Description gives; the continuous laws' names are read too (the same deviation per unit).
STD_PER_SCALE = {
    **{noise.name: noise.std_per_scale for noise in (DiscreteGaussian, DiscreteLaplace)},
    "gaussian": DiscreteGaussian.std_per_scale,
    "laplace": DiscreteLaplace.std_per_scale,
    PARENT_RELEASE: 1.0,
}


def is_group_map(mapping: np.ndarray) -> bool:
    """Whether ``mapping`` gives each code a group 0..k-1 with every group used: a valid coarsening map."""
    return (mapping.ndim == 1 and mapping.size > 0 and np.issubdtype(mapping.dtype, np.integer)
            and np.array_equal(np.unique(mapping), np.arange(mapping.max() + 1)))


def table_cells(codes: np.ndarray, domain: Domain, attrs: Sequence[str],
                maps: Mapping[str, np.ndarray]) -> tuple[np.ndarray, list[int]]:
    """The flat index of each row of ``codes`` (columns in the order of ``domain``) in the table
    over ``attrs``, on the groups of ``maps`` for the columns they map, and that table's shape.
    The curator applies it to its codes, SmallDB's score to the public list of every cell."""
    columns, sizes = [], []
    for a in attrs:
        column = codes[:, domain.names.index(a)]
        mapping = maps.get(a)
        columns.append(column if mapping is None else mapping[column])
        sizes.append(domain.size((a,)) if mapping is None else int(mapping.max()) + 1)
    return np.ravel_multi_index(tuple(columns), sizes), sizes


def sum_groups(table: np.ndarray, mapping: np.ndarray, axis: int) -> np.ndarray:
    """``table`` summed along ``axis`` over the groups of ``mapping`` (the group of each code):
    how the cells of a coarsened attribute relate to its codes."""
    order = np.argsort(mapping, kind="stable")
    starts = np.searchsorted(mapping[order], np.arange(mapping.max() + 1))
    return np.add.reduceat(np.take(table, order, axis=axis), starts, axis=axis)


def group_table(marginal: np.ndarray, maps: Sequence[np.ndarray | None]) -> np.ndarray:
    """A marginal summed, along each axis whose map is not None, over the groups of that map (the
    group of each code): the table that a coarsened measurement measures."""
    for axis, mapping in enumerate(maps):
        if mapping is not None:
            marginal = sum_groups(marginal, mapping, axis)
    return marginal


def spread_groups(table: np.ndarray, maps: Sequence[np.ndarray | None]) -> np.ndarray:
    """A table over groups laid back over the codes (each code gets its group's value) along each
    axis whose map is not None: the transpose of ``group_table``."""
    for axis, mapping in enumerate(maps):
        if mapping is not None:
            table = np.take(table, mapping, axis=axis)
    return table


@dataclass(frozen=True)
class Measurement:
    """Noisy counts of the marginal over ``attrs`` (flattened, C order)."""

    attrs: tuple[str, ...]
    values: np.ndarray
    mechanism: str
    noise_scale: float
    weights: np.ndarray | None = None
    coarsening: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        maps = {str(a): np.asarray(m) for a, m in self.coarsening.items()}
        for a, m in maps.items():
            if a not in self.attrs or not is_group_map(m):
                raise DescriptionError(
                    f"measurement of {self.attrs} coarsens {a!r} with an invalid map (it must be one of "
                    "the measured columns, with a group 0..k-1 for each code, every group used). "
                    "The Description is corrupt."
                )
        object.__setattr__(self, "coarsening", {a: maps[a].astype(np.int64) for a in self.attrs if a in maps})
        if self.weights is not None and (np.shape(self.weights) != np.shape(self.values)
                                         or not np.all(np.asarray(self.weights) > 0)):
            raise DescriptionError(
                f"measurement of {self.attrs} has weights that do not match its values (one positive "
                "weight per value is needed). The Description is corrupt."
            )
        if self.mechanism not in STD_PER_SCALE:
            raise DescriptionError(
                f"measurement of {self.attrs} names an unknown mechanism {self.mechanism!r}; "
                f"known: {sorted(STD_PER_SCALE)}. The Description may come from a newer synth."
            )
        if not (math.isfinite(self.noise_scale) and self.noise_scale > 0):
            raise DescriptionError(
                f"measurement of {self.attrs} has a noise scale of {self.noise_scale}; "
                "it must be a positive number. The Description is corrupt."
            )

    @property
    def std(self) -> float:
        """Standard deviation of the noise added to each cell."""
        return float(STD_PER_SCALE[self.mechanism] * self.noise_scale)

    def measured_shape(self, sizes: Sequence[int]) -> tuple[int, ...]:
        """Numbers of cells per attribute, given the attributes' numbers of codes ``sizes`` (in
        ``attrs`` order): the number of groups for a coarsened attribute. ValueError when a
        coarsening map does not have one group per code."""
        shape = []
        for a, size in zip(self.attrs, sizes, strict=True):
            mapping = self.coarsening.get(a)
            if mapping is not None and mapping.size != size:
                raise ValueError(f"the coarsening map of {a!r} in the measurement of {self.attrs} has "
                                 f"{mapping.size} codes where the column has {size}")
            shape.append(size if mapping is None else int(mapping.max()) + 1)
        return tuple(shape)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "attrs": list(self.attrs),
            "mechanism": self.mechanism,
            "noise_scale": self.noise_scale,
            "values": [int(v) if float(v).is_integer() else float(v) for v in self.values.tolist()],
        }
        if self.weights is not None:
            data["weights"] = self.weights.tolist()
        if self.coarsening:
            data["coarsening"] = {a: m.tolist() for a, m in self.coarsening.items()}
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Measurement:
        try:
            values = np.asarray(data["values"], dtype=float)
            return cls(
                attrs=tuple(str(a) for a in data["attrs"]),
                values=values,
                mechanism=str(data["mechanism"]),
                noise_scale=float(data["noise_scale"]),
                weights=None if data.get("weights") is None else np.asarray(data["weights"], dtype=float),
                coarsening={str(a): np.asarray(m, dtype=np.int64) for a, m in (data.get("coarsening") or {}).items()},
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise DescriptionError(
                f"a measurement in the Description is malformed ({exc}); "
                "each needs attrs, mechanism, noise_scale and a list of numeric values."
            ) from exc

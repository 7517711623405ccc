"""Log-space factors: a non-negative function of a few attributes, stored as its logarithm.

A ``Factor`` is the potential of one clique of a graphical model. Multiplying factors adds
their log-values, broadcast over the union of their attributes; ``align`` lays any table along
a larger set of attributes (how messages and gradients reach a clique's table). Factors are
built from model parameters or from noisy measurements only; this module never sees private
data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from synth.columns.domain import Domain


def align(values: np.ndarray, attrs: Sequence[str], target: Sequence[str]) -> np.ndarray:
    """A table over ``attrs`` as a view broadcastable along ``target`` (a superset of ``attrs``):
    its axes put in ``target``'s order, with length-1 axes for the attributes it lacks."""
    missing = [a for a in attrs if a not in target]
    if missing:
        raise ValueError(f"cannot lay a table over {tuple(attrs)} along {tuple(target)}: {missing} missing")
    present = [a for a in target if a in attrs]
    moved = values.transpose([list(attrs).index(a) for a in present])
    sizes = dict(zip(attrs, values.shape))
    return moved.reshape([sizes.get(a, 1) for a in target])


@dataclass(frozen=True)
class Factor:
    """Log-values over ``domain`` (array axes in the domain's order)."""

    domain: Domain
    values: np.ndarray

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype=float)
        if values.shape != self.domain.sizes:
            raise ValueError(
                f"a factor over {self.domain.names} needs an array of shape {self.domain.sizes}; "
                f"got {values.shape}"
            )
        object.__setattr__(self, "values", values)

    @classmethod
    def zeros(cls, domain: Domain) -> Factor:
        """The constant factor 1 (log-value 0) over ``domain``."""
        return cls(domain, np.zeros(domain.sizes))

    def __add__(self, other: Factor) -> Factor:
        """The product of two factors (sum of log-values) over the union of their attributes.

        The result's attributes are this factor's, then the other's new ones in their order.
        """
        extra = [a for a in other.domain.names if a not in self.domain]
        union = Domain(
            self.domain.names + tuple(extra),
            self.domain.sizes + tuple(other.domain.sizes[other.domain.index(a)] for a in extra),
        )
        for a in self.domain.names:
            if a in other.domain and other.domain.shape([a]) != self.domain.shape([a]):
                raise ValueError(f"attribute {a!r} has different sizes in the two factors")
        return Factor(union, align(self.values, self.domain.names, union.names)
                      + align(other.values, other.domain.names, union.names))

"""Log-space factors: a non-negative function of a few attributes, stored as its logarithm.

A ``Factor`` is the potential of one clique of a graphical model (or a message between
cliques). Multiplying factors adds their log-values, broadcast over the union of their
attributes. Factors are built from model parameters or from noisy measurements only; this
module never sees private data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from synth.model.domain import Domain


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

    def _aligned(self, names: Sequence[str]) -> np.ndarray:
        """The values as a view broadcastable over ``names`` (a superset of the factor's attributes)."""
        missing = [a for a in self.domain.names if a not in names]
        if missing:
            raise ValueError(f"cannot expand a factor over {self.domain.names} to {tuple(names)}: {missing} missing")
        present = [a for a in names if a in self.domain.names]
        moved = self.values.transpose([self.domain.index(a) for a in present])
        return moved.reshape([self.domain.sizes[self.domain.index(a)] if a in self.domain else 1 for a in names])

    def expand(self, domain: Domain) -> Factor:
        """The same function seen on a larger ``domain`` (constant along the new attributes)."""
        return Factor(domain, np.broadcast_to(self._aligned(domain.names), domain.sizes).copy())

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
        return Factor(union, self._aligned(union.names) + other._aligned(union.names))

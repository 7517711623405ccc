"""Noisy measurements of marginals: what the describer releases and the fitter consumes.

A ``Measurement`` is the noisy count vector of one marginal (the cells of the listed columns, in
C order over their code sizes), the mechanism that produced it and its noise scale. The empty
marginal ``()`` is the noisy row count. Optional per-cell ``weights`` say the values measure
``weights * marginal`` (each with the same noise std): this is how a marginal re-expressed by
post-processing, e.g. with several noisy cells summed into one, keeps an honest noise level. Measurements are public (they went through a DP
mechanism); this module never sees private rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from synth.errors import DescriptionError

MECHANISM_STD = {
    # standard deviation of one cell's noise as a function of the mechanism's scale parameter
    "discrete_gaussian": lambda scale: scale,
    "gaussian": lambda scale: scale,
    "discrete_laplace": lambda scale: math.sqrt(2.0) * scale,
    "laplace": lambda scale: math.sqrt(2.0) * scale,
}


@dataclass(frozen=True)
class Measurement:
    """Noisy counts of the marginal over ``attrs`` (flattened, C order)."""

    attrs: tuple[str, ...]
    values: np.ndarray
    mechanism: str
    noise_scale: float
    weights: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.weights is not None and (np.shape(self.weights) != np.shape(self.values)
                                         or not np.all(np.asarray(self.weights) > 0)):
            raise DescriptionError(
                f"measurement of {self.attrs} has weights that do not match its values (one positive "
                "weight per value is needed). The Description is corrupt."
            )
        if self.mechanism not in MECHANISM_STD:
            raise DescriptionError(
                f"measurement of {self.attrs} names an unknown mechanism {self.mechanism!r}; "
                f"known: {sorted(MECHANISM_STD)}. The Description may come from a newer synth."
            )
        if not (math.isfinite(self.noise_scale) and self.noise_scale > 0):
            raise DescriptionError(
                f"measurement of {self.attrs} has a noise scale of {self.noise_scale}; "
                "it must be a positive number. The Description is corrupt."
            )

    @property
    def std(self) -> float:
        """Standard deviation of the noise added to each cell."""
        return float(MECHANISM_STD[self.mechanism](self.noise_scale))

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "attrs": list(self.attrs),
            "mechanism": self.mechanism,
            "noise_scale": self.noise_scale,
            "values": [int(v) if float(v).is_integer() else float(v) for v in self.values.tolist()],
        }
        if self.weights is not None:
            data["weights"] = self.weights.tolist()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Measurement":
        try:
            values = np.asarray(data["values"], dtype=float)
            return cls(
                attrs=tuple(str(a) for a in data["attrs"]),
                values=values,
                mechanism=str(data["mechanism"]),
                noise_scale=float(data["noise_scale"]),
                weights=None if data.get("weights") is None else np.asarray(data["weights"], dtype=float),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise DescriptionError(
                f"a measurement in the Description is malformed ({exc}); "
                "each needs attrs, mechanism, noise_scale and a list of numeric values."
            ) from exc

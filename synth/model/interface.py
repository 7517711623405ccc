"""What every model of the generator offers, and the evidence that conditions one.

A model is a distribution over the codes of a domain, scaled to ``total`` rows: ``marginal(attrs)``
gives counts, ``sample(n, rng, sampling)`` rows of codes (rounded counts or i.i.d. draws, see
``synth.model.sampling``), and ``given(evidence)`` the same model
conditioned on evidence. A model may also estimate what a marginal costs (``marginal_cost``). Evidence maps an attribute to one weight per code in [0, 1]: 1 for a
code a condition keeps whole, 0 for one it excludes, a fraction for a numeric bin it keeps in
part (the share of the bin's values that lie inside a range). The conditioned model is

    P(x | evidence) ∝ P(x) · Π_a w_a(x_a),

scaled to ``total · P(evidence)`` rows (the rows the model expects to meet the evidence). Each
model computes it exactly; none samples by rejection. Evidence the model gives (practically) no
probability is refused with a ``ConditionError``.

Models are post-processing of a Description: nothing here sees private data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from synth.columns.domain import Domain
from synth.errors import ConditionError
from synth.model.sampling import Draws

Evidence = Mapping[str, np.ndarray]

# Below this probability a condition counts as impossible: a fitted graphical model gives cells it
# fitted as empty a weight near the smallest float (about 1e-308), not an exact zero.
MIN_PROBABILITY = 1e-15


class Model(Protocol):
    @property
    def total(self) -> float: ...

    def marginal(self, attrs: Sequence[str]) -> np.ndarray: ...

    def sample(self, n: int, rng: np.random.Generator, sampling: Draws = ...) -> np.ndarray: ...

    def given(self, evidence: Evidence) -> Model: ...


def marginal_cost(model: Model, attrs: Sequence[str]) -> int | None:
    """About how many cells ``model.marginal(attrs)`` passes over, when the model can tell from its
    structure (a junction tree can: ``CalibratedTree.marginal_cost``); None when it cannot."""
    estimate = getattr(model, "marginal_cost", None)
    return None if estimate is None else estimate(attrs)


def check_evidence(domain: Domain, evidence: Evidence) -> None:
    """ValueError unless every attribute of ``evidence`` is in ``domain`` with one weight in [0, 1] per code."""
    for attr, weights in evidence.items():
        size = domain.shape([attr])[0]
        if np.shape(weights) != (size,) or not np.all((np.asarray(weights) >= 0) & (np.asarray(weights) <= 1)):
            raise ValueError(f"the evidence on {attr!r} needs {size} weights in [0, 1], one per code")


def conditioned_total(total: float, probability: float) -> float:
    """The rows a model of ``total`` rows expects to meet evidence of ``probability``; ConditionError
    when that probability is (practically) zero."""
    if not (math.isfinite(probability) and probability >= MIN_PROBABILITY):
        raise ConditionError(
            "the model gives these conditions zero probability: no synthetic row can meet them. "
            "Loosen a condition (another value, a wider range) or drop one."
        )
    return total * probability

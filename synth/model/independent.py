"""A product model: columns independent, each with its own 1-way distribution.

Fitted from 1-way measurements alone (post-processing): each column's noisy counts (combined
when measured more than once) are projected onto the simplex scaled to the estimated total.
Conditioning reweights the conditioned columns alone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from synth.columns.domain import Domain
from synth.model.estimation import combine_measurements, estimate_total, project_to_simplex
from synth.model.interface import Evidence, check_evidence, conditioned_total
from synth.model.sampling import DEFAULT_DRAWS, Draws, draw
from synth.privacy.measurement import Measurement


@dataclass(frozen=True)
class ProductModel:
    """Independent columns with distributions ``probabilities`` (one vector per domain column)."""

    domain: Domain
    probabilities: tuple[np.ndarray, ...]
    total: float

    def marginal(self, attrs: Sequence[str]) -> np.ndarray:
        """The model's joint distribution over ``attrs`` (an outer product), shaped by their sizes."""
        result = np.ones(())
        for a in attrs:
            result = np.multiply.outer(result, self.probabilities[self.domain.names.index(a)])
        return result

    def given(self, evidence: Evidence) -> ProductModel:
        """The columns conditioned one by one: the columns stay independent, each weighted column's
        distribution is its weighted distribution renormalised, and the probability of the evidence
        is the product of the columns'."""
        check_evidence(self.domain, evidence)
        probabilities, probability = list(self.probabilities), 1.0
        for name, weights in evidence.items():
            j = self.domain.index(name)
            weighted = probabilities[j] * weights
            mass = float(weighted.sum())
            probability *= mass
            probabilities[j] = weighted / mass if mass > 0 else weighted
        return ProductModel(self.domain, tuple(probabilities), conditioned_total(self.total, probability))

    def sample(self, n: int, rng: np.random.Generator, sampling: Draws = DEFAULT_DRAWS) -> np.ndarray:
        """``n`` rows of codes, shape (n, columns), each column drawn on its own under ``sampling``
        (``synth.model.sampling``) and shuffled on its own, so the columns stay independent."""
        codes = np.empty((n, len(self.probabilities)), dtype=np.int64)
        for j, p in enumerate(self.probabilities):
            codes[:, j] = draw(n, p, rng, sampling)
        return codes


def fit_product_model(domain: Domain, measurements: Sequence[Measurement]) -> ProductModel:
    """Fit independent columns to 1-way measurements; a column never measured is uniform."""
    by_column: dict[str, list[Measurement]] = defaultdict(list)
    for m in measurements:
        if len(m.attrs) == 1:
            by_column[m.attrs[0]].append(m)
    total = estimate_total(measurements)
    probabilities = []
    for name, size in zip(domain.names, domain.sizes):
        if by_column[name]:
            counts, _ = combine_measurements(by_column[name])
            probabilities.append(project_to_simplex(counts, total) / total)
        else:
            probabilities.append(np.full(size, 1.0 / size))
    return ProductModel(domain, tuple(probabilities), total)

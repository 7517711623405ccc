"""What one privacy-audit case produces and the guarantee it is held to: a statistic per run on each of
two neighbouring data sets (``Sample``), and the claim read from synth's own accounting.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from auditing import Claim

from synth.privacy import Accountant, NoiseSource, zcdp_to_approx_epsilon

DELTA = 0.01  # the δ at which ρ-zCDP claims are converted to (ε, δ): where the conversion is least loose

NoiseFactory = Callable[[int], NoiseSource]  # stream number -> a fresh noise source
Sampler = Callable[[NoiseFactory, int], "Sample"]


@dataclass(frozen=True)
class Sample:
    """One statistic per run on each data set, and the guarantee synth claims for one run."""

    first: np.ndarray
    second: np.ndarray
    claim: Claim


def zcdp_claim(rho: float, delta: float = DELTA) -> Claim:
    """The (ε, δ) that synth's conversion gives for ρ-zCDP."""
    return Claim(zcdp_to_approx_epsilon(rho, delta), delta)


def spent_claim(accountant: Accountant) -> Claim:
    """What an accountant says was spent, as (ε, δ)."""
    spent = accountant.spent()
    return Claim(spent["epsilon"], spent["delta"])


def largest(claims: list[Claim]) -> Claim:
    """The largest of the claims made on the two data sets (they are equal unless a bug says otherwise)."""
    return max(claims, key=lambda claim: claim.epsilon)

"""The noise mechanisms on counts: discrete Laplace (pure and approximate DP) and discrete Gaussian
(zCDP), as objects. One is calibrated from a budget and a query's sensitivities, and knows its noise
scale and deviation, its cost, its tail, and how to draw from a ``NoiseSource``; ``COUNT_NOISE``
says which one each notion uses. ``name`` is how the ledger and the Description spell it.

This module never charges (the caller charges ``cost`` before it calls ``draw``) and sees no data
but the exact counts handed to ``draw``.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Self

import numpy as np

from synth.privacy.budget import Cost, Notion
from synth.privacy.costs import gaussian_cost, gaussian_sigma, laplace_cost, laplace_scale
from synth.privacy.mechanisms import NoiseSource


@dataclass(frozen=True)
class CountNoise(ABC):
    """Noise of parameter ``scale`` on counts whose sensitivity, in the norm the mechanism is
    calibrated to, is ``sensitivity``."""

    sensitivity: float
    scale: float
    name: ClassVar[str]
    std_per_scale: ClassVar[float]  # the standard deviation of one count's noise per unit of scale

    @classmethod
    @abstractmethod
    def calibrate(cls, budget: float, l1: float, l2: float) -> Self:
        """The noise that costs at most ``budget`` on counts of L1 and L2 sensitivities ``l1``, ``l2``."""

    @classmethod
    @abstractmethod
    def budget_for_std(cls, std: float, l1: float, l2: float) -> float:
        """The budget at which each count gets noise of standard deviation ``std`` (about the inverse
        of ``calibrate``, which rounds the scale up)."""

    @property
    @abstractmethod
    def cost(self) -> Cost:
        """The exact cost, rounded up."""

    @property
    @abstractmethod
    def mean_absolute(self) -> float:
        """The mean absolute noise per count (the continuous law's: the discrete one's is within a
        few per cent once the scale exceeds 1)."""

    @abstractmethod
    def tail(self, t: int) -> float:
        """P[noise ≥ t]."""

    @abstractmethod
    def draw(self, source: NoiseSource, counts: np.ndarray) -> np.ndarray:
        """``counts`` (whole numbers) plus this noise from ``source``, as int64."""

    @property
    def std(self) -> float:
        """The standard deviation of the noise added to each count."""
        return self.std_per_scale * self.scale


@dataclass(frozen=True)
class DiscreteLaplace(CountNoise):
    """P(k) ∝ exp(−|k|/scale) on counts of L1 sensitivity Δ: ε = Δ/scale (pure DP)."""

    name: ClassVar[str] = "discrete_laplace"
    std_per_scale: ClassVar[float] = math.sqrt(2.0)

    @classmethod
    def calibrate(cls, budget: float, l1: float, l2: float) -> Self:
        return cls(l1, laplace_scale(l1, budget))

    @classmethod
    def budget_for_std(cls, std: float, l1: float, l2: float) -> float:
        return math.sqrt(2.0) * l1 / std

    @property
    def cost(self) -> Cost:
        return laplace_cost(self.sensitivity, self.scale)

    @property
    def mean_absolute(self) -> float:
        return self.scale

    def tail(self, t: int) -> float:
        """For t ≥ 1: q^t / (1 + q), q = e^(−1/scale)."""
        q = math.exp(-1.0 / self.scale)
        return q**t / (1.0 + q)

    def draw(self, source: NoiseSource, counts: np.ndarray) -> np.ndarray:
        return source.discrete_laplace(counts, self.scale)


@dataclass(frozen=True)
class DiscreteGaussian(CountNoise):
    """P(k) ∝ exp(−k²/(2σ²)), σ = scale, on counts of L2 sensitivity Δ: ρ = Δ²/(2σ²) (zCDP)."""

    name: ClassVar[str] = "discrete_gaussian"
    std_per_scale: ClassVar[float] = 1.0

    @classmethod
    def calibrate(cls, budget: float, l1: float, l2: float) -> Self:
        return cls(l2, gaussian_sigma(l2, budget))

    @classmethod
    def budget_for_std(cls, std: float, l1: float, l2: float) -> float:
        return l2**2 / (2.0 * std**2)

    @property
    def cost(self) -> Cost:
        return gaussian_cost(self.sensitivity, self.scale)

    @property
    def mean_absolute(self) -> float:
        return math.sqrt(2 / math.pi) * self.scale

    def tail(self, t: int) -> float:
        """Summed over the support where the weights are not negligible (exact up to float rounding)."""
        reach = int(math.ceil(40 * self.scale)) + abs(t) + 1
        k = np.arange(-reach, reach + 1)
        weights = np.exp(-(k.astype(float) ** 2) / (2 * self.scale**2))  # the largest weight is exactly 1
        return float(weights[k >= t].sum() / weights.sum())

    def draw(self, source: NoiseSource, counts: np.ndarray) -> np.ndarray:
        return source.discrete_gaussian(counts, self.scale)


COUNT_NOISE: Mapping[Notion, type[CountNoise]] = {
    Notion.PURE: DiscreteLaplace,
    Notion.APPROX: DiscreteLaplace,
    Notion.ZCDP: DiscreteGaussian,
}

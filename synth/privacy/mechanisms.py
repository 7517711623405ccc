"""Noise sources: the samplers behind every released number.

``SecureNoise`` draws through OpenDP (exact, floating-point-safe samplers fed by OS entropy) and is
the only source fit for real releases. ``SeededNoise`` is a reproducible numpy twin with the same
distributions for tests and benchmarks; a release made with it is marked as seeded.

Both only draw noise: they never charge the budget (the caller charges the accountant first), never
choose a noise scale, and never put input values into error messages (inputs are private).
"""

from __future__ import annotations

import math
import numbers
from importlib.metadata import version
from typing import Any, Protocol

import numpy as np
from opendp import domains, measurements, measures, metrics
from opendp.mod import enable_features

from synth.errors import BudgetError, DataError
from synth.privacy.costs import check_randomized_response

enable_features("contrib")  # OpenDP's prelude is not imported: it pulls in scikit-learn (1.5 s)


class NoiseSource(Protocol):
    """What a sampler must offer. All methods take and return whole arrays (shapes preserved)."""

    seeded: bool

    def description(self) -> dict[str, Any]:
        """How the noise was drawn, for the release."""
        ...

    def discrete_laplace(self, counts: np.ndarray, scale: float) -> np.ndarray:
        """counts + noise with P(k) ∝ exp(−|k|/scale), as int64."""
        ...

    def discrete_gaussian(self, counts: np.ndarray, sigma: float) -> np.ndarray:
        """counts + noise with P(k) ∝ exp(−k²/(2σ²)), as int64."""
        ...

    def laplace(self, values: np.ndarray, scale: float) -> np.ndarray:
        """values + Laplace(scale) noise, as float64."""
        ...

    def gaussian(self, values: np.ndarray, sigma: float) -> np.ndarray:
        """values + Normal(0, σ²) noise, as float64."""
        ...

    def noisy_max(self, scores: np.ndarray, scale: float) -> int:
        """Index of the largest score after adding Gumbel(scale) noise to each.

        This samples index i with probability exactly exp(s_i/scale) / Σ_j exp(s_j/scale): it is the
        exponential mechanism, ε-DP with ε = 2Δ/scale for scores of sensitivity Δ (Δ/scale if the
        scores are monotonic) and (ε²/8)-zCDP by bounded range (see ``exponential_cost``).
        """
        ...

    def randomized_response(self, values: np.ndarray, k: int, p_true: float) -> np.ndarray:
        """k-ary randomized response on codes 0..k−1: keep each code with probability p_true,
        otherwise replace it by one of the other k−1 codes chosen uniformly; int64."""
        ...


# --------------------------------------------------------------------------------------------
# Input checks (messages never quote the values: they are private)
# --------------------------------------------------------------------------------------------


def _check_scale(name: str, scale: float) -> float:
    if (not isinstance(scale, numbers.Real) or isinstance(scale, bool) or not math.isfinite(scale)
            or scale <= 0):
        raise BudgetError(f"the noise {name} must be a positive finite number such as 1.0; got {scale!r}.")
    return float(scale)


def _integer_array(counts: np.ndarray) -> np.ndarray:
    array = np.asarray(counts)
    if array.dtype.kind in "iu":
        return array.astype(np.int64)
    if array.dtype.kind == "f" and (array.size == 0 or
                                    (np.isfinite(array).all() and (array == np.round(array)).all())):
        return array.astype(np.int64)
    raise DataError("discrete noise needs whole-number counts (an integer array); convert the counts "
                    "to integers before adding discrete noise.")


def _float_array(values: np.ndarray) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if not np.isfinite(array).all():
        raise DataError("noise can only be added to finite numbers; the input holds NaN or infinity. "
                        "Clip or impute the values first.")
    return array


def _scores_array(scores: np.ndarray) -> np.ndarray:
    array = _float_array(scores).ravel()
    if array.size == 0:
        raise DataError("noisy_max needs at least one candidate score; got none.")
    return array


def _codes_array(values: np.ndarray, k: int) -> np.ndarray:
    array = np.asarray(values)
    if array.dtype.kind not in "iu" or (array.size and (array.min() < 0 or array.max() >= k)):
        raise DataError(f"randomized response needs integer codes in 0..{k - 1}; encode the values first.")
    return array.astype(np.int64)


# --------------------------------------------------------------------------------------------
# OpenDP
# --------------------------------------------------------------------------------------------


class SecureNoise:
    """Floating-point-safe noise from OpenDP's samplers (OS entropy). Use this for every release.

    Vectors are passed to OpenDP in one call each (about 1 to 3 s per 100,000 integer cells, more
    for continuous Gaussian noise). Randomized response has no vector form in OpenDP, so it calls
    OpenDP once per value (about 0.2 ms each).
    """

    def __init__(self) -> None:
        self.seeded = False

    def description(self) -> dict[str, Any]:
        return {"sampler": "opendp", "opendp_version": version("opendp"), "seeded": False}

    @staticmethod
    def _integer_noise(counts: np.ndarray, scale: float, gaussian: bool) -> np.ndarray:
        array = _integer_array(counts)
        if array.size == 0:
            return array
        domain = domains.vector_domain(domains.atom_domain(T="i64"))
        if gaussian:
            measurement = measurements.make_gaussian(domain, metrics.l2_distance(T="i64"), scale)
        else:
            measurement = measurements.make_laplace(domain, metrics.l1_distance(T="i64"), scale)
        return np.asarray(measurement(array.ravel().tolist()), dtype=np.int64).reshape(array.shape)

    @staticmethod
    def _float_noise(values: np.ndarray, scale: float, gaussian: bool) -> np.ndarray:
        array = _float_array(values)
        if array.size == 0:
            return array
        domain = domains.vector_domain(domains.atom_domain(T=float, nan=False))
        if gaussian:
            measurement = measurements.make_gaussian(domain, metrics.l2_distance(T=float), scale)
        else:
            measurement = measurements.make_laplace(domain, metrics.l1_distance(T=float), scale)
        return np.asarray(measurement(array.ravel().tolist()), dtype=np.float64).reshape(array.shape)

    def discrete_laplace(self, counts: np.ndarray, scale: float) -> np.ndarray:
        return self._integer_noise(counts, _check_scale("scale", scale), gaussian=False)

    def discrete_gaussian(self, counts: np.ndarray, sigma: float) -> np.ndarray:
        return self._integer_noise(counts, _check_scale("sigma", sigma), gaussian=True)

    def laplace(self, values: np.ndarray, scale: float) -> np.ndarray:
        return self._float_noise(values, _check_scale("scale", scale), gaussian=False)

    def gaussian(self, values: np.ndarray, sigma: float) -> np.ndarray:
        return self._float_noise(values, _check_scale("sigma", sigma), gaussian=True)

    def noisy_max(self, scores: np.ndarray, scale: float) -> int:
        """Gumbel report-noisy-max through OpenDP (its zCDP-measure variant draws Gumbel noise;
        only the sampler is used here, the cost is charged by the caller)."""
        scale = _check_scale("scale", scale)
        array = _scores_array(scores)
        measurement = measurements.make_noisy_max(
            domains.vector_domain(domains.atom_domain(T=float, nan=False)),
            metrics.linf_distance(T=float),
            measures.zero_concentrated_divergence(),
            scale,
        )
        return int(measurement(array.tolist()))

    def randomized_response(self, values: np.ndarray, k: int, p_true: float) -> np.ndarray:
        k, p_true = check_randomized_response(k, p_true)
        codes = _codes_array(values, k)
        if codes.size == 0:
            return codes
        measurement = measurements.make_randomized_response(list(range(k)), p_true, T="i64")
        flat = [measurement(code) for code in codes.ravel().tolist()]
        return np.asarray(flat, dtype=np.int64).reshape(codes.shape)


# --------------------------------------------------------------------------------------------
# numpy, seeded
# --------------------------------------------------------------------------------------------


class SeededNoise:
    """Reproducible noise from a seeded ``numpy.random.Generator``, for tests and benchmarks only.

    NOT floating-point safe: it samples with ordinary floating-point arithmetic, whose rounding
    artefacts can leak information (Mironov 2012), and its seed makes the noise reproducible by
    anyone who knows it. It must never be used for a real release; releases made with it record
    ``seeded: True`` and carry no privacy guarantee. The seed itself is never written into a
    release (with it, anyone holding the Description could replay the noise and recover the exact
    counts); whoever ran synth keeps it to reproduce the run.
    """

    def __init__(self, seed: int) -> None:
        if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
            raise BudgetError(f"the noise seed must be a non-negative integer such as 7; got {seed!r}.")
        self.seed = int(seed)
        self.seeded = True
        self._rng: np.random.Generator = np.random.default_rng(self.seed)

    def description(self) -> dict[str, Any]:
        return {"sampler": "numpy", "seeded": True}

    def _discrete_laplace_noise(self, scale: float, size: int) -> np.ndarray:
        """Difference of two geometric variables on {1, 2, ...} with success probability
        1 − e^{−1/scale}: P(k) ∝ exp(−|k|/scale)."""
        success = -math.expm1(-1.0 / scale)
        return self._rng.geometric(success, size) - self._rng.geometric(success, size)

    def discrete_laplace(self, counts: np.ndarray, scale: float) -> np.ndarray:
        scale = _check_scale("scale", scale)
        array = _integer_array(counts)
        noisy: np.ndarray = array + self._discrete_laplace_noise(scale, array.size).reshape(array.shape)
        return noisy

    def discrete_gaussian(self, counts: np.ndarray, sigma: float) -> np.ndarray:
        """Rejection sampling from discrete Laplace (Canonne, Kamath & Steinke 2020, Algorithm 3):
        draw Y with scale t = ⌊σ⌋ + 1 and keep it with probability exp(−(|Y| − σ²/t)²/(2σ²))."""
        sigma = _check_scale("sigma", sigma)
        array = _integer_array(counts)
        t = math.floor(sigma) + 1
        variance = sigma * sigma
        noise = np.empty(array.size, dtype=np.int64)
        pending = np.arange(array.size)
        while pending.size:
            draws = self._discrete_laplace_noise(t, pending.size)
            keep = self._rng.random(pending.size) < np.exp(-((np.abs(draws) - variance / t) ** 2)
                                                           / (2 * variance))
            noise[pending[keep]] = draws[keep]
            pending = pending[~keep]
        return array + noise.reshape(array.shape)

    def laplace(self, values: np.ndarray, scale: float) -> np.ndarray:
        scale = _check_scale("scale", scale)
        array = _float_array(values)
        return array + self._rng.laplace(0.0, scale, array.shape)

    def gaussian(self, values: np.ndarray, sigma: float) -> np.ndarray:
        sigma = _check_scale("sigma", sigma)
        array = _float_array(values)
        return array + self._rng.normal(0.0, sigma, array.shape)

    def noisy_max(self, scores: np.ndarray, scale: float) -> int:
        """Argmax of scores + Gumbel(scale); scores are shifted by their maximum first (no softmax).
        A score more than the float range below the maximum becomes −inf and is never selected."""
        scale = _check_scale("scale", scale)
        array = _scores_array(scores)
        with np.errstate(over="ignore"):
            shifted = array - array.max()
        return int(np.argmax(shifted + self._rng.gumbel(0.0, scale, array.size)))

    def randomized_response(self, values: np.ndarray, k: int, p_true: float) -> np.ndarray:
        k, p_true = check_randomized_response(k, p_true)
        codes = _codes_array(values, k)
        keep = self._rng.random(codes.shape) < p_true
        other = self._rng.integers(0, k - 1, codes.shape)
        other = other + (other >= codes)  # uniform over the k − 1 codes other than the true one
        return np.where(keep, codes, other).astype(np.int64)

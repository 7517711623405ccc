"""Statistical tests of the noise sources in synth.privacy.mechanisms.

SeededNoise is checked with about 200k draws against the exact distributions, and each test also
checks that a noise scale 1.5 times off would fail it. SecureNoise (OpenDP, slow, OS entropy) is
checked with smaller samples and tolerances of about five standard errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from synth.errors import BudgetError, DataError
from synth.privacy import NoiseSource, SecureNoise, SeededNoise

N = 200_000


def discrete_laplace_pmf(support: np.ndarray, scale: float) -> np.ndarray:
    q = math.exp(-1.0 / scale)
    return (1 - q) / (1 + q) * np.exp(-np.abs(support) / scale)


def discrete_gaussian_pmf(support: np.ndarray, sigma: float) -> np.ndarray:
    wide = np.arange(-int(40 * sigma) - 40, int(40 * sigma) + 41)
    normaliser = np.exp(-(wide.astype(float) ** 2) / (2 * sigma**2)).sum()
    return np.exp(-(support.astype(float) ** 2) / (2 * sigma**2)) / normaliser


def discrete_laplace_variance(scale: float) -> float:
    q = math.exp(-1.0 / scale)
    return 2 * q / (1 - q) ** 2


def chi_square_p(draws: np.ndarray, pmf) -> float:  # type: ignore[no-untyped-def]
    """Chi-square goodness of fit on the integers, pooling cells with expected count below 5."""
    support = np.arange(draws.min(), draws.max() + 1)
    observed = np.bincount(draws - draws.min()).astype(float)
    expected = pmf(support) * draws.size
    keep = expected >= 5
    pooled_obs = np.append(observed[keep], observed[~keep].sum())
    pooled_exp = np.append(expected[keep], draws.size - expected[keep].sum())
    return float(stats.chisquare(pooled_obs, pooled_exp).pvalue)


def softmax(scores: np.ndarray, scale: float) -> np.ndarray:
    weights = np.exp((scores - scores.max()) / scale)
    return weights / weights.sum()


# ---------------------------------------------------------------------------------------------
# SeededNoise: distributions
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [0.7, 3.0])
def test_seeded_discrete_laplace_distribution(scale: float) -> None:
    draws = SeededNoise(1).discrete_laplace(np.zeros(N, dtype=np.int64), scale)
    assert draws.dtype == np.int64
    assert chi_square_p(draws, lambda k: discrete_laplace_pmf(k, scale)) > 1e-3
    assert chi_square_p(draws, lambda k: discrete_laplace_pmf(k, 1.5 * scale)) < 1e-6
    assert np.var(draws) == pytest.approx(discrete_laplace_variance(scale), rel=0.03)


@pytest.mark.parametrize("sigma", [0.5, 2.0, 10.0])
def test_seeded_discrete_gaussian_distribution(sigma: float) -> None:
    draws = SeededNoise(2).discrete_gaussian(np.zeros(N, dtype=np.int64), sigma)
    assert draws.dtype == np.int64
    assert chi_square_p(draws, lambda k: discrete_gaussian_pmf(k, sigma)) > 1e-3
    assert chi_square_p(draws, lambda k: discrete_gaussian_pmf(k, 1.5 * sigma)) < 1e-6
    if sigma >= 1:
        assert np.var(draws) == pytest.approx(sigma**2, rel=0.02)


@pytest.mark.parametrize("scale", [0.5, 4.0])
def test_seeded_laplace_distribution(scale: float) -> None:
    draws = SeededNoise(3).laplace(np.full(N, 10.0), scale) - 10.0
    assert stats.kstest(draws, stats.laplace(scale=scale).cdf).pvalue > 1e-3
    assert stats.kstest(draws, stats.laplace(scale=1.5 * scale).cdf).pvalue < 1e-6


@pytest.mark.parametrize("sigma", [0.5, 4.0])
def test_seeded_gaussian_distribution(sigma: float) -> None:
    draws = SeededNoise(4).gaussian(np.full(N, -3.0), sigma) + 3.0
    assert stats.kstest(draws, stats.norm(scale=sigma).cdf).pvalue > 1e-3
    assert stats.kstest(draws, stats.norm(scale=1.5 * sigma).cdf).pvalue < 1e-6


@pytest.mark.parametrize("scores, scale", [([0.0, 1.0, 2.0, 2.5], 1.0), ([3.0, -1.0, 0.0], 2.0),
                                           ([1e15, 1e15 + 1, 1e15 + 3], 1.5)])
def test_seeded_noisy_max_is_the_exponential_mechanism(scores: list[float], scale: float) -> None:
    noise = SeededNoise(5)
    array = np.array(scores)
    picks = np.array([noise.noisy_max(array, scale) for _ in range(50_000)])
    observed = np.bincount(picks, minlength=array.size)
    expected = softmax(array - array.max(), scale) * picks.size
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    wrong = softmax(array - array.max(), 1.5 * scale) * picks.size
    assert stats.chisquare(observed, wrong).pvalue < 1e-6


def test_seeded_noisy_max_extreme_scores() -> None:
    noise = SeededNoise(6)
    assert noise.noisy_max(np.array([-1e300, 0.0, -1e300]), 1.0) == 1
    assert noise.noisy_max(np.array([1e308, -1e308]), 1.0) == 0
    assert noise.noisy_max(np.array([5]), 1.0) == 0


def test_seeded_randomized_response() -> None:
    k, p = 5, 0.6
    codes = np.random.default_rng(0).integers(0, k, N)
    released = SeededNoise(7).randomized_response(codes, k, p)
    kept = released == codes
    assert kept.mean() == pytest.approx(p, abs=5 * math.sqrt(p * (1 - p) / N))
    shift = (released[~kept] - codes[~kept]) % k  # 1..k-1, uniform when the others are uniform
    assert stats.chisquare(np.bincount(shift, minlength=k)[1:]).pvalue > 1e-3
    assert released.min() >= 0 and released.max() < k


# ---------------------------------------------------------------------------------------------
# SeededNoise: behaviour
# ---------------------------------------------------------------------------------------------


def test_seeded_is_reproducible_and_described() -> None:
    counts = np.arange(12).reshape(3, 4)
    first, second, other = SeededNoise(7), SeededNoise(7), SeededNoise(8)
    assert np.array_equal(first.discrete_gaussian(counts, 3.0), second.discrete_gaussian(counts, 3.0))
    assert not np.array_equal(first.discrete_gaussian(counts, 3.0), other.discrete_gaussian(counts, 3.0))
    assert first.seeded is True
    assert first.description() == {"sampler": "numpy", "seeded": True}  # never the seed itself
    noise: NoiseSource = first
    assert noise.seeded


NOISES = [SeededNoise(11), SecureNoise()]


@pytest.mark.parametrize("noise", NOISES, ids=["seeded", "secure"])
def test_shapes_dtypes_and_empty_inputs(noise: NoiseSource) -> None:
    counts = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    for out in (noise.discrete_laplace(counts, 2.0), noise.discrete_gaussian(counts, 2.0)):
        assert out.shape == counts.shape and out.dtype == np.int64
    values = np.linspace(0, 1, 6).reshape(3, 2)
    for out in (noise.laplace(values, 0.5), noise.gaussian(values, 0.5)):
        assert out.shape == values.shape and out.dtype == np.float64
    codes = np.array([[0, 1], [2, 0]])
    out = noise.randomized_response(codes, 3, 0.8)
    assert out.shape == codes.shape and out.dtype == np.int64
    empty_int, empty_float = np.zeros((0, 3), dtype=np.int64), np.zeros(0)
    assert noise.discrete_laplace(empty_int, 1.0).shape == (0, 3)
    assert noise.discrete_gaussian(empty_int, 1.0).shape == (0, 3)
    assert noise.laplace(empty_float, 1.0).shape == (0,)
    assert noise.gaussian(empty_float, 1.0).shape == (0,)
    assert noise.randomized_response(np.zeros(0, dtype=np.int64), 3, 0.8).shape == (0,)
    assert noise.discrete_laplace(np.array([1.0, 2.0]), 1.0).dtype == np.int64  # whole floats accepted


@pytest.mark.parametrize("noise", NOISES, ids=["seeded", "secure"])
def test_invalid_inputs_raise(noise: NoiseSource) -> None:
    for scale in (0.0, -1.0, math.nan, math.inf, True):
        with pytest.raises(BudgetError):
            noise.discrete_laplace(np.array([1]), scale)  # type: ignore[arg-type]
        with pytest.raises(BudgetError):
            noise.noisy_max(np.array([1.0]), scale)  # type: ignore[arg-type]
    with pytest.raises(DataError):
        noise.discrete_gaussian(np.array([1.5]), 1.0)
    with pytest.raises(DataError):
        noise.laplace(np.array([1.0, math.nan]), 1.0)
    with pytest.raises(DataError):
        noise.gaussian(np.array([math.inf]), 1.0)
    with pytest.raises(DataError):
        noise.noisy_max(np.array([]), 1.0)
    with pytest.raises(DataError) as error:
        noise.randomized_response(np.array([0, 3]), 3, 0.8)
    assert "3" not in str(error.value).replace("0..2", "")  # the bad value is not quoted
    with pytest.raises(BudgetError):
        noise.randomized_response(np.array([0, 1]), 3, 1.0)
    with pytest.raises(BudgetError):
        noise.randomized_response(np.array([0, 1]), 1, 0.9)


def test_seeded_rejects_bad_seed() -> None:
    for seed in (-1, 1.5, "7", True):
        with pytest.raises(BudgetError):
            SeededNoise(seed)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# SecureNoise (OpenDP): smaller samples
# ---------------------------------------------------------------------------------------------


def test_secure_discrete_laplace_variance() -> None:
    n, scale = 20_000, 3.0
    counts = np.full(n, 1000, dtype=np.int64)
    noisy = SecureNoise().discrete_laplace(counts, scale)
    noise = noisy - counts
    # relative standard error of a Laplace-like sample variance: sqrt((kurtosis - 1) / n) ≈ 1.6%
    assert np.var(noise) == pytest.approx(discrete_laplace_variance(scale), rel=0.08)
    assert abs(noise.mean()) < 5 * math.sqrt(discrete_laplace_variance(scale) / n)
    assert np.count_nonzero(noise) > 0.8 * n


def test_secure_discrete_gaussian_variance() -> None:
    n, sigma = 20_000, 3.0
    noise = SecureNoise().discrete_gaussian(np.zeros(n, dtype=np.int64), sigma)
    assert np.var(noise) == pytest.approx(sigma**2, rel=0.05)  # relative SE ≈ 1%
    assert abs(noise.mean()) < 5 * sigma / math.sqrt(n)


def test_secure_continuous_noise() -> None:
    secure = SecureNoise()
    laplace = secure.laplace(np.full(5_000, 2.0), 1.5) - 2.0
    assert stats.kstest(laplace, stats.laplace(scale=1.5).cdf).pvalue > 1e-4
    assert stats.kstest(laplace, stats.laplace(scale=3.0).cdf).pvalue < 1e-4
    gaussian = secure.gaussian(np.zeros(3_000), 2.0)
    assert stats.kstest(gaussian, stats.norm(scale=2.0).cdf).pvalue > 1e-4
    assert stats.kstest(gaussian, stats.norm(scale=4.0).cdf).pvalue < 1e-4


def test_secure_noisy_max_frequencies() -> None:
    secure, scores, scale = SecureNoise(), np.array([0.0, 1.0, 2.0]), 1.0
    picks = np.array([secure.noisy_max(scores, scale) for _ in range(2_000)])
    observed = np.bincount(picks, minlength=3)
    assert stats.chisquare(observed, softmax(scores, scale) * picks.size).pvalue > 1e-4
    assert secure.noisy_max(np.array([-1e300, 7.0, -1e300]), 1.0) == 1


def test_secure_randomized_response_keep_rate() -> None:
    n, k, p = 2_000, 4, 0.7
    codes = np.arange(n) % k
    released = SecureNoise().randomized_response(codes, k, p)
    assert (released == codes).mean() == pytest.approx(p, abs=5 * math.sqrt(p * (1 - p) / n))
    assert released.min() >= 0 and released.max() < k


def test_secure_description() -> None:
    secure = SecureNoise()
    assert secure.seeded is False
    description = secure.description()
    assert description["sampler"] == "opendp" and description["seeded"] is False
    assert description["opendp_version"].startswith("0.16")

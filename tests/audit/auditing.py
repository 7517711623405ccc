"""Statistical privacy auditing: a high-confidence lower bound on the privacy loss ε of a mechanism.

A mechanism M is (ε, δ)-DP when, for neighbouring data sets D and D' and every output event S,
P[M(D) ∈ S] ≤ e^ε P[M(D') ∈ S] + δ. So an event S with p = P[M(D) ∈ S] and p' = P[M(D') ∈ S]
proves ε ≥ log((p − δ) / p'). An audit runs the mechanism many times on both data sets and
reduces each output to one number (a statistic: the output itself, a log-likelihood ratio of
the released counts, or, for categorical outputs, a ranking of the categories). It then

1. chooses the event on the first half of the samples: among the threshold events
   {statistic ≥ t} and {statistic ≤ t} (for every t seen, in both directions D/D' and D'/D), the
   one whose bound, computed on that half, is the largest;
2. evaluates that one event on the second half, which played no part in choosing it: p is
   bounded below and p' above with Clopper–Pearson intervals, each at level α/2 for an overall
   confidence 1 − α, and ε_lb = log((p_lo − δ) / p'_hi) (0 when p_lo ≤ δ).

With probability at least 1 − α, ε_lb is below the true ε of the mechanism. An audit *fails*
when ε_lb exceeds the claimed ε: then the claim is false with that confidence. The same event
gives a lower bound on δ at the claimed ε: δ_lb = p_lo − e^ε p'_hi.

This module knows nothing of synth: it only turns samples into bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta

MAX_THRESHOLDS = 4000  # candidate thresholds tried when choosing the event (quantiles beyond)


@dataclass(frozen=True)
class Claim:
    """The guarantee a mechanism claims: (ε, δ)-DP, δ = 0 for pure ε-DP."""

    epsilon: float
    delta: float = 0.0


@dataclass(frozen=True)
class Event:
    """{statistic ≥ threshold} (``upper``) or {statistic ≤ threshold}; ``first_likelier`` says which
    data set is expected to fall in it more often (the numerator of the bound)."""

    threshold: float
    upper: bool
    first_likelier: bool

    def holds(self, statistic: np.ndarray) -> np.ndarray:
        return statistic >= self.threshold if self.upper else statistic <= self.threshold

    def __str__(self) -> str:
        side = ">=" if self.upper else "<="
        likelier = "D" if self.first_likelier else "D'"
        return f"s {side} {self.threshold:.6g}, likelier on {likelier}"


@dataclass(frozen=True)
class AuditResult:
    """One audit: the claim, the audited lower bounds, and what they rest on."""

    claim: Claim
    epsilon_lb: float
    delta_lb: float  # lower bound on δ at the claimed ε, from the same event
    samples: int  # runs on each data set (half chose the event, half measured it)
    confidence: float
    event: Event
    rate_likelier: float  # empirical rates of the event on the evaluation half
    rate_other: float

    @property
    def violates(self) -> bool:
        """The audited ε lower bound exceeds the claimed ε: the claim is false (at ``confidence``)."""
        return self.epsilon_lb > self.claim.epsilon

    def summary(self) -> str:
        return (f"claimed eps {self.claim.epsilon:.4g} (delta {self.claim.delta:.3g}), audited eps >= "
                f"{self.epsilon_lb:.4g}, delta >= {self.delta_lb:.3g} at the claimed eps; {self.samples} runs "
                f"per data set, confidence {self.confidence}; event {self.event}: "
                f"{self.rate_likelier:.4g} vs {self.rate_other:.4g}")


def clopper_pearson(hits: np.ndarray, trials: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper–Pearson bounds, each holding with probability ≥ 1 − alpha: the lower bound
    on a success probability from ``hits`` successes and the upper bound, elementwise."""
    hits = np.asarray(hits, dtype=float)
    with np.errstate(invalid="ignore"):
        lower = np.where(hits > 0, beta.ppf(alpha, hits, trials - hits + 1), 0.0)
        upper = np.where(hits < trials, beta.ppf(1 - alpha, hits + 1, trials - hits), 1.0)
    return lower, upper


def epsilon_bound(hits_likelier: np.ndarray, hits_other: np.ndarray, trials: int, delta: float,
                  confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ε lower bounds log((p_lo − δ) / p'_hi) (0 where p_lo ≤ δ), with p_lo and p'_hi, elementwise."""
    alpha = (1 - confidence) / 2  # one half for each of the two bounds
    p_lo, _ = clopper_pearson(hits_likelier, trials, alpha)
    _, p_hi = clopper_pearson(hits_other, trials, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(p_lo > delta, np.log((p_lo - delta) / p_hi), 0.0)
    return np.maximum(bound, 0.0), p_lo, p_hi


def _thresholds(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    values = np.unique(np.concatenate([first, second]))
    if values.size > MAX_THRESHOLDS:
        values = np.unique(np.quantile(values, np.linspace(0, 1, MAX_THRESHOLDS)))
    return values


def choose_event(first: np.ndarray, second: np.ndarray, delta: float, confidence: float) -> Event:
    """The threshold event with the largest ε bound on these samples (the choosing half)."""
    thresholds = _thresholds(first, second)
    n = first.size
    first_sorted, second_sorted = np.sort(first), np.sort(second)
    counts = {  # (upper, data set) -> hits for each threshold
        (True, 0): n - np.searchsorted(first_sorted, thresholds, side="left"),
        (True, 1): n - np.searchsorted(second_sorted, thresholds, side="left"),
        (False, 0): np.searchsorted(first_sorted, thresholds, side="right"),
        (False, 1): np.searchsorted(second_sorted, thresholds, side="right"),
    }
    best: tuple[float, Event] | None = None
    for upper in (True, False):
        for first_likelier in (True, False):
            likelier, other = (0, 1) if first_likelier else (1, 0)
            bounds, _, _ = epsilon_bound(counts[upper, likelier], counts[upper, other], n, delta, confidence)
            i = int(np.argmax(bounds))
            if best is None or bounds[i] > best[0]:
                best = (float(bounds[i]), Event(float(thresholds[i]), upper, first_likelier))
    assert best is not None
    return best[1]


def rank_categories(first: np.ndarray, second: np.ndarray) -> dict[int, float]:
    """For categorical outputs (integer codes): each code's smoothed log ratio of its frequencies
    on the two data sets, so that threshold events on it are the likelihood-ratio-ordered sets."""
    codes = np.union1d(first, second)
    hits_first = np.array([np.count_nonzero(first == c) for c in codes], dtype=float)
    hits_second = np.array([np.count_nonzero(second == c) for c in codes], dtype=float)
    ratios = np.log((hits_first + 0.5) / (hits_second + 0.5))
    return dict(zip(codes.tolist(), ratios.tolist()))


def _ranked(outputs: np.ndarray, ranks: dict[int, float]) -> np.ndarray:
    return np.array([ranks.get(int(code), 0.0) for code in outputs.tolist()])


def audit(first: np.ndarray, second: np.ndarray, claim: Claim, confidence: float,
          categorical: bool = False) -> AuditResult:
    """Audit ``claim`` from statistics of runs on two neighbouring data sets (one value per run,
    the same number of runs on each). ``categorical``: the values are codes with no order, ranked
    on the choosing half by how much likelier each is on one data set than on the other."""
    first, second = np.asarray(first).ravel(), np.asarray(second).ravel()
    if first.size != second.size or first.size < 4:
        raise ValueError("an audit needs the same number (at least 4) of runs on each data set")
    half = first.size // 2
    choose_first, choose_second = first[:half], second[:half]
    test_first, test_second = first[half:2 * half], second[half:2 * half]
    if categorical:
        ranks = rank_categories(choose_first, choose_second)
        choose_first, choose_second = _ranked(choose_first, ranks), _ranked(choose_second, ranks)
        test_first, test_second = _ranked(test_first, ranks), _ranked(test_second, ranks)
    event = choose_event(choose_first.astype(float), choose_second.astype(float), claim.delta, confidence)
    in_first = int(np.count_nonzero(event.holds(test_first)))
    in_second = int(np.count_nonzero(event.holds(test_second)))
    likelier, other = (in_first, in_second) if event.first_likelier else (in_second, in_first)
    bound, p_lo, p_hi = epsilon_bound(np.array([likelier]), np.array([other]), half, claim.delta, confidence)
    delta_lb = max(0.0, float(p_lo[0]) - math.exp(claim.epsilon) * float(p_hi[0]))
    return AuditResult(claim, float(bound[0]), delta_lb, first.size, confidence, event,
                       likelier / half, other / half)


def log_likelihood_ratio(values: np.ndarray, mean_first: np.ndarray, mean_second: np.ndarray,
                         mechanism: str, scale: float) -> np.ndarray:
    """log p(values | mean_second) − log p(values | mean_first), summed over the last axis, for
    values released with additive (discrete) Laplace noise of scale b or (discrete) Gaussian noise
    of parameter σ: the most powerful statistic to tell the two means apart (Neyman–Pearson)."""
    values = np.asarray(values, dtype=float)
    a, b = np.asarray(mean_first, dtype=float), np.asarray(mean_second, dtype=float)
    if mechanism in ("laplace", "discrete_laplace"):
        per_cell = (np.abs(values - a) - np.abs(values - b)) / scale
    elif mechanism in ("gaussian", "discrete_gaussian"):
        per_cell = (b - a) * (2 * values - a - b) / (2 * scale**2)
    else:
        raise ValueError(f"no likelihood ratio for mechanism {mechanism!r}")
    return per_cell.sum(axis=-1)

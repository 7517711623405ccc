"""A membership-inference attack on a synthetic table, and the empirical ε lower bound it implies.

The attack is distance-based, a nearest-neighbour form of a density-ratio attack (the idea of
DOMIAS, van Breugel et al. 2023, with the distances GAN-Leaks, Chen et al. 2020, uses): a row that
helped train the generator tends to sit closer to some synthetic row than the population's density
alone explains. A target's score is

    log(d_ref + c) − log(d_syn + c),

d_syn its distance to the closest synthetic row, d_ref its distance to the closest row of a
reference sample of the population (real rows that are neither targets nor members), c a small
constant. A high score means "closer to the synthetic table than the population is": member. It
needs no model and no knowledge of the generator, only a reference sample, which a holdout gives.

The attack is measured as a statistical test: the targets are equal numbers of members and non-
members drawn at random; the decision threshold is chosen on one half of them and the true- and
false-positive rates are measured on the other half, never on the rows that chose it. Under
(ε, δ)-DP any test satisfies TPR ≤ e^ε·FPR + δ and 1 − FPR ≤ e^ε·(1 − TPR) + δ, so two-sided
Clopper–Pearson intervals at ``CONFIDENCE`` (TPR's lower end, FPR's upper end; each end misses with
probability at most half the rest, so both hold together at ``CONFIDENCE``) give a lower bound on
the ε of whatever made the table. It assumes members and non-members are a random split of one
population. Reads original rows: NOT differentially private, for the data owner; it must never
choose the threshold on the rows it measures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import betaincinv
from sklearn.metrics import pairwise_distances_argmin_min, roc_auc_score

CONFIDENCE = 0.95
DISTANCE_FLOOR = 1e-6  # c: keeps the log finite for a distance of 0 (an exact copy)
THRESHOLD_CANDIDATES = 200  # quantiles of the calibration scores tried as thresholds
ATTACK = ("distance-based membership inference (a nearest-neighbour density ratio in the spirit of DOMIAS, "
          "van Breugel et al. 2023): a target scores high when it is closer to the synthetic table than to a "
          "reference sample of real non-member rows; chosen because it needs no model of the generator, only "
          "real rows of the population, and catches copies and near-copies of training rows")
ASSUMPTION = "members and non-members are a random split of one population"


def clopper_pearson(successes: int | np.ndarray, trials: int | np.ndarray,
                    confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """The two-sided Clopper–Pearson interval of a binomial proportion (exact: beta quantiles)."""
    k, n = np.asarray(successes, dtype=float), np.asarray(trials, dtype=float)
    tail = (1.0 - confidence) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = np.where(k > 0, betaincinv(k, n - k + 1, tail), 0.0)
        upper = np.where(k < n, betaincinv(k + 1, n - k, 1.0 - tail), 1.0)
    return lower, upper


def epsilon_lower_bound(true_positives: int | np.ndarray, members: int, false_positives: int | np.ndarray,
                        non_members: int, delta: float = 0.0, confidence: float = CONFIDENCE) -> np.ndarray:
    """The ε that a test's counts prove at ``confidence`` (0 when they prove none).

    With TPR's lower and FPR's upper Clopper–Pearson ends, (ε, δ)-DP requires
    ε ≥ ln((TPR_lo − δ) / FPR_hi) and ε ≥ ln((1 − FPR_hi − δ) / (1 − TPR_lo))."""
    tpr_lo, _ = clopper_pearson(true_positives, members, confidence)
    _, fpr_hi = clopper_pearson(false_positives, non_members, confidence)
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.log(np.maximum(tpr_lo - delta, 0.0) / fpr_hi)
        second = np.log(np.maximum(1.0 - fpr_hi - delta, 0.0) / (1.0 - tpr_lo))
    return np.maximum(np.nan_to_num(np.maximum(first, second), nan=0.0, neginf=0.0), 0.0)


@dataclass(frozen=True)
class MembershipResult:
    """The attack on one synthetic table: AUC over every target, and the test measured on the half
    of the targets that did not choose its threshold."""

    auc: float
    tpr: float
    fpr: float
    threshold: float
    epsilon_lower_bound: float
    targets: int  # members + non-members, both halves
    measured: int  # of which measured the rates

    def reading(self) -> str:
        if self.epsilon_lower_bound > 0:
            return (f"Distinguishes members from non-members: AUC {self.auc:.3f}, TPR {self.tpr:.1%} at FPR "
                    f"{self.fpr:.1%}, which proves epsilon >= {self.epsilon_lower_bound:.2f} at "
                    f"{CONFIDENCE:.0%} confidence.")
        return (f"No membership advantage measurable: AUC {self.auc:.3f} (0.5 is guessing), TPR {self.tpr:.1%} at "
                f"FPR {self.fpr:.1%}; the epsilon these rates prove at {CONFIDENCE:.0%} confidence is 0.")

    def to_dict(self) -> dict[str, Any]:
        return {"auc": self.auc, "tpr": self.tpr, "fpr": self.fpr, "threshold": self.threshold,
                "epsilon_lower_bound": self.epsilon_lower_bound, "confidence": CONFIDENCE,
                "reading": self.reading()}


def nearest_distances(queries: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Each query's Euclidean distance to the closest of ``rows``."""
    return pairwise_distances_argmin_min(queries, rows)[1]


def membership_scores(targets: np.ndarray, synthetic: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The attack's score of each target (feature vectors): high = closer to the synthetic table than
    the reference sample of the population explains."""
    return (np.log(nearest_distances(targets, reference) + DISTANCE_FLOOR)
            - np.log(nearest_distances(targets, synthetic) + DISTANCE_FLOOR))


def _counts(member_scores: np.ndarray, other_scores: np.ndarray, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each threshold, how many members and how many non-members score at or above it."""
    def at_or_above(scores: np.ndarray) -> np.ndarray:
        return scores.size - np.searchsorted(np.sort(scores), thresholds, side="left")
    return at_or_above(member_scores), at_or_above(other_scores)


def choose_threshold(member_scores: np.ndarray, other_scores: np.ndarray, delta: float = 0.0) -> float:
    """The threshold (score at or above it: member) whose ε bound is largest on these scores; when
    none proves any ε, the one that maximises TPR − FPR."""
    every = np.concatenate([member_scores, other_scores])
    thresholds = np.unique(np.quantile(every, np.linspace(0, 1, THRESHOLD_CANDIDATES + 1)[1:]))
    tp, fp = _counts(member_scores, other_scores, thresholds)
    bounds = epsilon_lower_bound(tp, member_scores.size, fp, other_scores.size, delta)
    if bounds.max() > 0:
        return float(thresholds[int(np.argmax(bounds))])
    return float(thresholds[int(np.argmax(tp / member_scores.size - fp / other_scores.size))])


def split_halves(members: int, non_members: int, rng: np.random.Generator) -> tuple[tuple[np.ndarray, np.ndarray],
                                                                                    tuple[np.ndarray, np.ndarray]]:
    """Member and non-member positions cut into a calibration half and a measurement half, disjoint."""
    m, o = rng.permutation(members), rng.permutation(non_members)
    return (m[:members // 2], o[:non_members // 2]), (m[members // 2:], o[non_members // 2:])


def measure_attack(member_scores: np.ndarray, other_scores: np.ndarray, rng: np.random.Generator,
                   delta: float = 0.0) -> MembershipResult:
    """AUC over every target; the threshold chosen on one random half of the targets, TPR, FPR and
    the ε bound measured on the other half."""
    labels = np.concatenate([np.ones(member_scores.size), np.zeros(other_scores.size)])
    auc = float(roc_auc_score(labels, np.concatenate([member_scores, other_scores])))
    (cal_m, cal_o), (mes_m, mes_o) = split_halves(member_scores.size, other_scores.size, rng)
    threshold = choose_threshold(member_scores[cal_m], other_scores[cal_o], delta)
    tp, fp = _counts(member_scores[mes_m], other_scores[mes_o], np.array([threshold]))
    bound = float(epsilon_lower_bound(tp, mes_m.size, fp, mes_o.size, delta)[0])
    return MembershipResult(auc, float(tp[0] / mes_m.size), float(fp[0] / mes_o.size), threshold, bound,
                            int(labels.size), int(mes_m.size + mes_o.size))


def membership_attack(members: np.ndarray, non_members: np.ndarray, synthetic: np.ndarray, reference: np.ndarray,
                      rng: np.random.Generator, delta: float = 0.0) -> MembershipResult:
    """The attack on one synthetic table: member and non-member targets, the synthetic rows and the
    reference rows as feature vectors (the reference disjoint from the targets)."""
    return measure_attack(membership_scores(members, synthetic, reference),
                          membership_scores(non_members, synthetic, reference), rng, delta)

"""The membership-inference attack and its empirical ε lower bound: Clopper–Pearson bounds, the bound
on a mechanism of known ε, and the attack on tables that leak and tables that do not."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta

from synth.evaluate import membership
from synth.evaluate.membership import (
    clopper_pearson,
    epsilon_lower_bound,
    measure_attack,
    membership_attack,
    split_halves,
)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (1, 1000), (517, 1000), (999, 1000)])
def test_clopper_pearson_is_the_beta_quantiles(k, n):
    lower, upper = clopper_pearson(k, n, 0.95)
    assert lower == pytest.approx(0.0 if k == 0 else beta.ppf(0.025, k, n - k + 1), abs=1e-12)
    assert upper == pytest.approx(1.0 if k == n else beta.ppf(0.975, k + 1, n - k), abs=1e-12)


def test_clopper_pearson_covers_the_true_proportion_at_least_as_often_as_stated():
    rng = np.random.default_rng(3)
    for p, n in ((0.3, 40), (0.02, 200), (0.9, 25)):
        k = rng.binomial(n, p, size=4000)
        lower, upper = clopper_pearson(k, np.full(k.size, n), 0.95)
        coverage = np.mean((lower <= p) & (p <= upper))
        assert coverage >= 0.94  # exact intervals are conservative: 95 % or more (4000 draws: ± 0.007)


def randomized_response(epsilon: float, trials: int, rng: np.random.Generator) -> tuple[int, int]:
    """A mechanism with exactly ε: it says "member" with probability e^ε/(1+e^ε) for a member and
    1/(1+e^ε) for a non-member; the counts of "member" answers of each."""
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    return int(rng.binomial(trials, p)), int(rng.binomial(trials, 1 - p))


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_the_bound_on_a_mechanism_of_known_epsilon_holds_at_95_percent(epsilon):
    rng = np.random.default_rng(int(epsilon * 10))
    bounds = []
    for _ in range(400):
        tp, fp = randomized_response(epsilon, 1000, rng)
        bounds.append(float(epsilon_lower_bound(tp, 1000, fp, 1000)))
    # at most 5 % of the bounds may exceed the true epsilon (400 runs: 8 % allows for chance); point
    # estimates instead of the confidence bounds exceed it about half of the time
    assert np.mean(np.array(bounds) > epsilon) <= 0.08
    assert np.mean(bounds) > 0.5 * epsilon  # and the bound is not trivially 0


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_the_bound_approaches_epsilon_with_many_trials(epsilon):
    tp, fp = randomized_response(epsilon, 2_000_000, np.random.default_rng(1))
    bound = float(epsilon_lower_bound(tp, 2_000_000, fp, 2_000_000))
    assert epsilon - 0.03 < bound <= epsilon + 1e-9  # swapped rates would give 0


def test_the_complementary_pair_counts_and_delta_lowers_the_bound():
    # a test that rarely says "member" to non-members and misses few members: the second inequality
    assert float(epsilon_lower_bound(990, 1000, 500, 1000)) > math.log(0.45 / 0.02)
    assert float(epsilon_lower_bound(600, 1000, 50, 1000, delta=0.1)) < float(epsilon_lower_bound(600, 1000, 50, 1000))
    assert float(epsilon_lower_bound(500, 1000, 500, 1000)) == 0.0


def test_the_threshold_is_chosen_on_targets_disjoint_from_those_that_measure_it(monkeypatch):
    rng = np.random.default_rng(0)
    members, others = rng.normal(1.0, 1.0, 400), rng.normal(0.0, 1.0, 300)
    seen = {}
    choose = membership.choose_threshold

    def spy(m, o, delta=0.0):
        seen["m"], seen["o"] = m.copy(), o.copy()
        return choose(m, o, delta)

    monkeypatch.setattr(membership, "choose_threshold", spy)
    result = measure_attack(members, others, np.random.default_rng(5))
    assert seen["m"].size == 200 and seen["o"].size == 150
    rest_m = np.setdiff1d(members, seen["m"])
    rest_o = np.setdiff1d(others, seen["o"])
    assert rest_m.size == 200 and rest_o.size == 150  # the measuring half holds none of the choosing half
    assert result.tpr == pytest.approx(np.mean(rest_m >= result.threshold))
    assert result.fpr == pytest.approx(np.mean(rest_o >= result.threshold))
    (cm, co), (mm, mo) = split_halves(400, 300, np.random.default_rng(1))
    assert not set(cm) & set(mm) and not set(co) & set(mo) and len(set(cm) | set(mm)) == 400


def population(rows: int, rng: np.random.Generator) -> np.ndarray:
    """Rows of a population with some structure: a mixture of Gaussians in 6 dimensions."""
    centres = np.random.default_rng(99).normal(0, 2, (5, 6))
    return centres[rng.integers(0, 5, rows)] + rng.normal(0, 1, (rows, 6))


def test_the_attack_finds_a_bootstrap_of_the_members_and_nothing_in_a_fresh_sample():
    rng = np.random.default_rng(7)
    members = population(2000, rng)
    targets_in = members[rng.choice(2000, 1000, replace=False)]
    targets_out, reference, fresh = population(1000, rng), population(2000, rng), population(2000, rng)
    bootstrap = members[rng.integers(0, 2000, 2000)]
    leaky = membership_attack(targets_in, targets_out, bootstrap, reference, np.random.default_rng(0))
    assert leaky.auc > 0.75  # ~63 % of the targets are in the bootstrap, at distance 0
    assert leaky.epsilon_lower_bound > 1.0
    clean = membership_attack(targets_in, targets_out, fresh, reference, np.random.default_rng(0))
    assert abs(clean.auc - 0.5) < 0.045  # 1000 + 1000 targets: the AUC's standard error is about 0.013
    assert clean.epsilon_lower_bound == 0.0
    assert "No membership advantage" in clean.reading() and "proves epsilon" in leaky.reading()

"""Choosing max_children and the count cap under DP from one noisy histogram of children per parent."""

from __future__ import annotations

import numpy as np

from synth.privacy import Accountant, Budget, SeededNoise
from synth.privacy.curator import CountRelease
from synth.privacy.neighbours import Neighbouring
from synth.relational.degree import MOST_CHILDREN, dp_choice


def _choice(degrees: np.ndarray, budget: float, seed: int) -> tuple[int, int]:
    counts = CountRelease(Accountant(Budget(10.0, 1e-6)), SeededNoise(seed), Neighbouring())
    return dp_choice(degrees, counts, budget, "ratings", "students")


def test_the_cap_covers_the_many_children_the_bound_does_not_and_tail_noise_does_not_push_it_up():
    rng = np.random.default_rng(0)
    degrees = rng.poisson(25, 3000)  # 3,000 students with about 25 ratings each, none above 49
    choices = [_choice(degrees, 3e-4, seed) for seed in range(20)]  # a histogram cell's noise: about 40
    assert all(bound <= cap for bound, cap in choices)
    assert all(32 <= bound <= 48 for bound, _ in choices)  # 95 % of Poisson(25) is about 33: bucket 33-48
    # the cap reads only buckets clear of the noise: the ten empty buckets up to 10,001 never move it
    assert all(32 <= cap <= 64 for _, cap in choices)


def test_the_bound_stops_at_the_most_children_while_the_cap_follows_the_counts():
    degrees = np.full(2000, 400)  # every parent has 400 children
    bound, cap = _choice(degrees, 1.0, 0)
    assert bound == MOST_CHILDREN and cap == 500  # the bucket 301-500


def test_no_parent_with_children_gives_the_smallest_bound():
    assert _choice(np.zeros(50, dtype=np.int64), 1.0, 0) == (1, 1)

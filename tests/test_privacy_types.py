"""Privacy concepts as types: the count-noise mechanism objects, the composition rule of each notion,
and ``Notion`` where engines and the curator once passed the budget's unit as a string."""

from __future__ import annotations

import math

import numpy as np
import pytest

from synth.columns.domain import Domain
from synth.engines import make_engine
from synth.errors import BudgetError, DescriptionError, EngineError
from synth.privacy import (
    COUNT_NOISE,
    Accountant,
    Budget,
    Cost,
    DiscreteGaussian,
    DiscreteLaplace,
    Notion,
    SeededNoise,
    gaussian_cost,
    gaussian_sigma,
    laplace_cost,
    laplace_scale,
)
from synth.privacy.composition import ApproxRule, PureRule, Totals, ZcdpRule, composition_rule
from synth.privacy.curator import CountRelease, Curator
from synth.privacy.measurement import Measurement
from synth.privacy.neighbours import Neighbouring

# --------------------------------------------------------------------------------------------
# Count noise
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [0.05, 1.0, 7.5])
@pytest.mark.parametrize("l1,l2", [(1.0, 1.0), (2.0, math.sqrt(2.0))])
def test_count_noise_is_calibrated_and_charged_as_the_cost_functions_say(budget, l1, l2):
    laplace = DiscreteLaplace.calibrate(budget, l1, l2)
    assert laplace == DiscreteLaplace(l1, laplace_scale(l1, budget))  # the L1 sensitivity
    assert laplace.cost == laplace_cost(l1, laplace.scale) and laplace.cost.epsilon <= budget
    gaussian = DiscreteGaussian.calibrate(budget, l1, l2)
    assert gaussian == DiscreteGaussian(l2, gaussian_sigma(l2, budget))  # the L2 sensitivity
    assert gaussian.cost == gaussian_cost(l2, gaussian.scale) and gaussian.cost.rho <= budget


def test_count_noise_knows_its_deviation_mean_and_inverse_calibration():
    laplace, gaussian = DiscreteLaplace(1.0, 3.0), DiscreteGaussian(1.0, 3.0)
    assert laplace.std == math.sqrt(2.0) * 3.0 and laplace.mean_absolute == 3.0
    assert gaussian.std == 3.0 and gaussian.mean_absolute == math.sqrt(2 / math.pi) * 3.0
    for kind in (DiscreteLaplace, DiscreteGaussian):
        assert kind.calibrate(kind.budget_for_std(4.0, 1.0, 1.0), 1.0, 1.0).std == pytest.approx(4.0, rel=1e-12)


def test_count_noise_draws_from_its_own_sampler():
    counts = np.arange(50, dtype=np.int64)
    assert np.array_equal(DiscreteLaplace(1.0, 2.0).draw(SeededNoise(4), counts),
                          SeededNoise(4).discrete_laplace(counts, 2.0))
    assert np.array_equal(DiscreteGaussian(1.0, 2.0).draw(SeededNoise(4), counts),
                          SeededNoise(4).discrete_gaussian(counts, 2.0))


def test_each_notion_has_its_count_noise_spelt_as_the_description_spells_it():
    assert COUNT_NOISE == {Notion.PURE: DiscreteLaplace, Notion.APPROX: DiscreteLaplace,
                           Notion.ZCDP: DiscreteGaussian}
    assert (DiscreteLaplace.name, DiscreteGaussian.name) == ("discrete_laplace", "discrete_gaussian")


@pytest.mark.parametrize("budget,notion,name", [(Budget(1.0), Notion.PURE, "discrete_laplace"),
                                                (Budget(1.0, 1e-6), Notion.APPROX, "discrete_laplace"),
                                                (Budget(1.0, 1e-6), Notion.ZCDP, "discrete_gaussian")])
def test_a_release_records_the_noise_object_and_its_name(budget, notion, name):
    release = CountRelease(Accountant(budget, notion), SeededNoise(2), Neighbouring("replace"))
    noisy = release.release(np.array([5, 0, 7]), 0.01, query="histogram")
    (entry,) = release.accountant.ledger
    assert noisy.noise == release.calibrate(0.01, 2.0, math.sqrt(2.0)) and noisy.mechanism == name == entry.mechanism
    assert (entry.sensitivity, entry.noise_scale) == (noisy.noise.sensitivity, noisy.noise_scale)
    assert noisy.std == noisy.noise.std and release.notion is notion


@pytest.mark.parametrize("mechanism,std", [("discrete_gaussian", 2.0), ("gaussian", 2.0),
                                           ("discrete_laplace", 2.0 * math.sqrt(2.0)),
                                           ("laplace", 2.0 * math.sqrt(2.0))])
def test_a_description_names_its_measurements_mechanism_as_before(mechanism, std):
    data = {"attrs": ["a"], "mechanism": mechanism, "noise_scale": 2.0, "values": [3, 4]}
    measurement = Measurement.from_dict(data)
    assert measurement.std == std and measurement.to_dict() == data


def test_an_unknown_mechanism_name_is_refused_with_the_known_ones():
    with pytest.raises(DescriptionError, match=r"known: \['discrete_gaussian', 'discrete_laplace', 'gaussian', "
                                               r"'laplace', 'parent_release'\]"):
        Measurement.from_dict({"attrs": ["a"], "mechanism": "uniform", "noise_scale": 2.0, "values": [3]})


# --------------------------------------------------------------------------------------------
# Composition rules
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("budget,notion,kind", [(Budget(1.0), None, PureRule), (Budget(1.0, 1e-6), None, ZcdpRule),
                                                (Budget(1.0, 1e-6), Notion.APPROX, ApproxRule)])
def test_each_notion_composes_by_its_own_rule(budget, notion, kind):
    rule = composition_rule(budget, notion, "basic", 0.0, None)
    assert type(rule) is kind and Accountant(budget, notion).notion is kind.notion


def test_the_rules_say_which_settings_their_notion_takes():
    assert [(r.needs_delta, r.composes_advanced, r.reserves_delta) for r in (PureRule, ApproxRule, ZcdpRule)] == [
        (False, False, False), (True, True, False), (True, False, True)]
    with pytest.raises(BudgetError, match="delta_reserve applies only to notion zcdp \\(under approx"):
        composition_rule(Budget(1.0, 1e-6), Notion.APPROX, "basic", 1e-7, None)
    with pytest.raises(BudgetError, match="advanced composition applies only to notion approx"):
        composition_rule(Budget(1.0, 1e-6), Notion.ZCDP, "advanced", 0.0, None)


def test_a_rule_composes_totals_without_keeping_them():
    rule = composition_rule(Budget(1.0, 1e-5), Notion.APPROX, "advanced", 0.0, 5e-6)
    assert isinstance(rule, ApproxRule) and rule.composition == "advanced"
    totals = Totals()
    for _ in range(3):
        totals = totals.plus(Cost(epsilon=0.1, delta=1e-7))
    assert rule.fits(totals) and rule.spent(totals)[0] == pytest.approx(0.3) and rule.spent(totals)[2] is None
    assert rule.remaining(totals).delta == pytest.approx(1e-5 - 5e-6 - 3e-7)
    zcdp = composition_rule(Budget(1.0, 1e-6), Notion.ZCDP, "basic", 2e-7, None)
    recorded, note = zcdp.record(Cost(epsilon=0.1))
    assert recorded.rho == pytest.approx(0.005) and "Bun & Steinke" in note
    assert zcdp.spent(Totals()) == (0.0, 0.0, 0.0)


def test_notion_gives_the_unit_engines_split():
    cost = Cost(epsilon=0.5, delta=1e-7, rho=0.02)
    assert [notion.unit_of(cost) for notion in Notion] == [0.5, 0.5, 0.02]


# --------------------------------------------------------------------------------------------
# Engines and the curator speak Notion
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("notion", [Notion.PURE, Notion.APPROX])
def test_an_engine_that_needs_zcdp_refuses_the_other_notions(notion):
    with pytest.raises(EngineError, match="accounts in zero-concentrated DP"):
        make_engine("mst").check(("a", "b"), notion)
    make_engine("independent").check(("a", "b"), notion)


@pytest.mark.parametrize("budget,notion", [(Budget(1.0), Notion.PURE), (Budget(1.0, 1e-6), Notion.ZCDP)])
def test_the_curator_reports_its_notion_and_what_is_left_in_its_unit(budget, notion):
    accountant = Accountant(budget)
    curator = Curator(np.zeros((10, 1), dtype=np.int64), Domain(("a",), (2,)),
                      CountRelease(accountant, SeededNoise(0), Neighbouring()))
    assert curator.notion is notion
    assert curator.remaining() == notion.unit_of(accountant.remaining()) > 0

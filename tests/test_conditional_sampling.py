"""Conditional sampling through the user's paths (issue 15, item 4): ``model.sample(n, conditions=...)``
and ``synth generate --condition``. Conditioned rows hold only what the conditions allow (values
inside a numeric range too) and follow the model's conditional distribution, computed here from
the unconditioned model's joint marginals (chi-square, fixed seeds); every wrong condition is a
clear error, before any fit."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chisquare

import synth
import synth.api
from synth.columns.schema import Schema
from synth.columns.textshape import decimals_for
from synth.columns.unmodelled import UnmodelledColumn
from synth.errors import ConditionError
from synth.generation.conditions import read_conditions
from synth.generation.generate import fit
from tests.conftest import mixed_table
from tests.test_cli import assert_clean_error, run_cli
from tests.test_kept_model import small_description

ALPHA = 1e-3
ENGINES = ["aim", "mst", "privbayes", "independent"]  # graphical, compressed graphical, network, product


def with_rare_cities(df: pd.DataFrame) -> pd.DataFrame:
    """The mixed table with 8 % of its cities replaced by rare ones (one row each), so the city
    list found under DP is open: it keeps an <OTHER> code to condition on."""
    rare = np.random.default_rng(11).random(len(df)) < 0.08
    return df.assign(city=df["city"].where(~rare, [f"Town {i}" for i in range(len(df))]))


@pytest.fixture(scope="module")
def models():
    return {engine: fit(synth.describe(with_rare_cities(mixed_table()), epsilon=3.0, seed=1, engine=engine,
                                       report_to=None), iterations=300)
            for engine in ENGINES}


def expected_distribution(fitted, attr: str, conditions) -> np.ndarray:
    """P(attr | conditions) from the unconditioned model's joint marginal over ``attr`` and the
    conditioned columns, each weighted by its condition's weights (numeric bins by the share of
    the bin inside the range)."""
    read = read_conditions(fitted.description.schema, conditions)
    names = [c.column for c in read if c.column != attr]
    joint = np.asarray(fitted.model.marginal([attr, *names]), dtype=float)
    for axis, condition in enumerate(read):
        shape = [1] * joint.ndim
        axis = 0 if condition.column == attr else 1 + names.index(condition.column)
        shape[axis] = condition.weights.size
        joint = joint * condition.weights.reshape(shape)
    table = joint.sum(axis=tuple(range(1, joint.ndim)))
    return table / table.sum()


def assert_follows(fitted, synthetic: pd.DataFrame, attr: str, conditions) -> None:
    schema = fitted.description.schema
    codes, _ = schema.encode(synthetic)
    observed = np.bincount(codes[:, schema.names.index(attr)], minlength=schema.column(attr).size)
    expected = expected_distribution(fitted, attr, conditions) * len(synthetic)
    assert observed[expected == 0].sum() == 0
    live = expected > 0
    assert chisquare(observed[live], expected[live]).pvalue > ALPHA, (observed, expected.round(1))


@pytest.mark.parametrize("engine", ENGINES)
def test_conditioned_rows_meet_the_conditions_and_follow_the_models_conditional(models, engine):
    fitted = models[engine]
    conditions = {"member": True, "age": "30..45"}
    synthetic = fitted.sample(20_000, conditions=conditions, seed=5)
    assert synthetic["member"].eq(True).all()
    # every age in the range is drawn whose bin the model gives mass under the conditions (a bin
    # whose noisy measurement came out empty, as 41's under privbayes at this seed, has none)
    edges = fitted.description.schema.column("age").edges
    live = expected_distribution(fitted, "age", conditions) > 0
    possible = {age for age in range(30, 46) if live[np.searchsorted(edges, age, side="right") - 1]}
    assert synthetic["age"].between(30, 45).all() and set(synthetic["age"]) == possible and len(possible) >= 14
    for attr in ("city", "age", "income"):  # a column left free, the ranged one, one that depends on it
        assert_follows(fitted, synthetic, attr, conditions)


def test_a_condition_changes_what_the_other_columns_hold():
    """In the data half the men and no woman earn >50K: the model conditioned on each sex says so."""
    fitted = fit(small_description("aim", delta=1e-9, workload="2-way"))
    women = fitted.sample(4000, conditions={"sex": "Female"}, seed=1)["income"].eq(">50K").mean()
    men = fitted.sample(4000, conditions={"sex": "Male"}, seed=1)["income"].eq(">50K").mean()
    assert women < 0.05 and 0.4 < men < 0.6


def test_float_and_date_ranges_hold_only_values_inside_them(models):
    fitted = models["mst"]
    conditions = {"income": (2000.5, 2500.25), "joined": "2016-01-01..2016-12-31"}
    synthetic = fitted.sample(5000, conditions=conditions, seed=2)
    income, joined = synthetic["income"], synthetic["joined"]
    assert income.between(2000.5, 2500.25).all() and income.min() < 2010 and income.max() > 2490
    column = fitted.description.schema.column("income")  # drawn in the range, written in the column's shape
    widths = np.diff(column.edges)
    decimals = decimals_for(column.shape, float(widths[widths > 0].min()))
    assert decimals < 12 and (income == income.round(decimals)).all()
    assert joined.between(pd.Timestamp("2016-01-01"), pd.Timestamp("2016-12-31 23:59:59")).all()
    assert joined.max().normalize() == pd.Timestamp("2016-12-31")  # a date alone as the upper end holds its day
    assert fitted.description.schema.column("joined").shape.date_only  # voted: the data holds dates only ...
    assert (joined == joined.dt.normalize()).all()  # ... so a range condition draws whole days as well
    for attr in ("income", "joined", "city"):
        assert_follows(fitted, synthetic, attr, conditions)


def test_lists_of_categories_other_and_missing_cells_are_conditions_too(models):
    fitted = models["aim"]
    assert set(fitted.sample(3000, conditions={"city": ["Lyon", "Quito"]}, seed=3)["city"]) == {"Lyon", "Quito"}
    assert fitted.sample(200, conditions={"city": None}, seed=3)["city"].isna().all()
    assert fitted.sample(200, conditions={"city": "<OTHER>"}, seed=3)["city"].eq("<OTHER>").all()
    assert fitted.sample(200, conditions={"income": ""}, seed=3)["income"].isna().all()  # a missing marker
    assert not fitted.sample(200, conditions={"member": "no"}, seed=3)["member"].any()


def test_generate_takes_conditions_and_a_seed_reproduces_them(models):
    description = models["independent"].description
    first = synth.generate(description, 100, seed=9, conditions={"city": "Oslo"})
    assert first["city"].eq("Oslo").all() and first.equals(synth.generate(description, 100, seed=9,
                                                                            conditions={"city": "Oslo"}))


def test_wrong_conditions_are_clear_errors(models):
    fitted = models["aim"]
    cases = [
        ({"town": "Oslo"}, "there is no column 'town'; the modelled columns are city, age"),
        ({"city": "Paris"}, "has no value 'Paris'; its values are Lyon, Oslo, Porto, Quito, <OTHER>"),
        ({"city": []}, "the list of values is empty"),
        ({"member": "maybe"}, "a boolean column holds true or false"),
        ({"income": 2000.0}, "one exact value has no probability; give a range"),
        ({"age": "40..30"}, "the range ends before it starts"),
        ({"age": "200..300"}, "the range holds no value of the column, whose values lie in"),
        ({"age": "old"}, "'old' is not a finite number"),
        ({"joined": "yesterday"}, "is not an ISO date"),
        ({"joined": 5}, "a datetime end is an ISO date"),
    ]
    for conditions, needle in cases:
        with pytest.raises(ConditionError, match=needle.replace("(", r"\(")):
            fitted.sample(10, conditions=conditions)


def test_a_condition_the_model_rules_out_is_refused():
    """privbayes fits some age bins of the mixed table as empty (exact zeros in its table, at this
    seed): asking for one is refused."""
    network = fit(synth.describe(mixed_table(), epsilon=3.0, seed=1, engine="privbayes", report_to=None))
    age = network.description.schema.column("age")
    empty = int(np.flatnonzero(np.asarray(network.model.marginal(["age"]))[:age.bins] == 0)[0])
    low, high = int(age.edges[empty]), int(age.edges[empty + 1]) - 1
    with pytest.raises(ConditionError, match=rf"age={low}..{high}, city=Oslo: the model gives these conditions "
                                             "zero probability"):
        network.sample(10, conditions={"age": f"{low}..{high}", "city": "Oslo"})


def test_closed_domains_and_unmodelled_columns_say_why_they_cannot_be_conditioned():
    description = small_description("smalldb", size=6)
    fitted = fit(description)
    with pytest.raises(ConditionError, match="no missing cells"):
        fitted.sample(5, conditions={"sex": None})
    schema = description.schema
    with_key = dataclasses.replace(description, schema=Schema(schema.columns, unmodelled=(
        UnmodelledColumn("key", "id"),)))
    with pytest.raises(ConditionError, match="column 'key' is not modelled"):
        fit(with_key).sample(5, conditions={"key": "7"})
    assert (0, 1) not in description.engine_output.database  # the 6-row database has no woman earning >50K
    with pytest.raises(ConditionError, match="zero probability"):
        fitted.sample(5, conditions={"sex": "Female", "income": ">50K"})


def test_the_command_line_takes_repeated_conditions(capsys, tmp_path, models):
    path = synth.save_description(models["mst"].description, tmp_path / "d.json")
    out = tmp_path / "s.csv"
    code, _, err = run_cli(capsys, "generate", str(path), "--rows", "400", "--condition", "city=Oslo",
                           "--condition", "age=30..40", "-o", str(out), "--quiet")
    assert code == 0, err
    synthetic = pd.read_csv(out)
    assert len(synthetic) == 400 and synthetic["city"].eq("Oslo").all() and synthetic["age"].between(30, 40).all()


@pytest.mark.parametrize("argv,needle", [
    (["--condition", "city=Oslo", "--condition", "city=Lyon"], "names column 'city' twice"),
    (["--condition", "cityOslo"], "is not of the form COLUMN=VALUE"),
    (["--condition", "town=Oslo"], "there is no column 'town'"),
    (["--condition", "age=abc"], "'abc' is not a finite number"),
])
def test_the_command_line_refuses_a_wrong_condition_before_fitting(capsys, tmp_path, monkeypatch, models, argv,
                                                                    needle):
    path = synth.save_description(models["mst"].description, tmp_path / "d.json")

    def refuse(*args, **kwargs):
        raise AssertionError("the model was fitted")

    monkeypatch.setattr(synth.api, "fit", refuse)
    code, _, err = run_cli(capsys, "generate", str(path), *argv, "-o", str(tmp_path / "s.csv"))
    assert_clean_error(code, err, needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.json"]

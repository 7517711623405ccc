"""Engine ``mwem``: budget, accuracy against ε, rounds and a uniform histogram, the explicit and
graphical-model estimates, user query workloads, reproduction from the Description, bad input."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synth.api import describe
from synth.cli import main
from synth.columns.column import Column
from synth.columns.domain import Domain
from synth.columns.schema import Schema
from synth.domains.profile import Profile
from synth.engines import make_engine
from synth.engines.workload import WorkloadTable, downward_closure, marginal_workload, resolve_workload
from synth.errors import EngineError
from synth.generation.generate import fit_model, generate
from synth.model.histogram import HistogramModel, replay_multiplicative_weights
from synth.model.measured import fit_measurements
from synth.privacy import Accountant, Budget, Notion, SeededNoise
from synth.privacy.curator import CountRelease, Curator
from synth.privacy.neighbours import Neighbouring
from synth.progress import SILENT
from synth.release.description import Description
from tests.test_engines import chain_data


def curator_for(codes: np.ndarray, domain: Domain, epsilon: float, delta: float = 1e-6, seed: int = 0,
                relation: str = "add-remove") -> Curator:
    accountant = Accountant(Budget(epsilon, delta))
    return Curator(codes, domain, CountRelease(accountant, SeededNoise(seed), Neighbouring(relation)))


def workload_error(codes: np.ndarray, domain: Domain, marginal, workload: list[WorkloadTable]) -> float:
    """Mean total-variation distance over the workload's tables between the data and a model."""
    errors = []
    for item in workload:
        columns = [domain.names.index(a) for a in item.attrs]
        flat = np.ravel_multi_index(tuple(codes[:, j] for j in columns), domain.shape(item.attrs))
        truth = item.table(np.bincount(flat, minlength=domain.size(item.attrs)).reshape(domain.shape(item.attrs)))
        estimate = item.table(np.asarray(marginal(item.attrs)))
        errors.append(0.5 * np.abs(truth / truth.sum() - estimate / estimate.sum()).sum())
    return float(np.mean(errors))


def mwem_error(codes, domain, epsilon, seed, **options) -> float:
    """Workload error of the estimate `synth generate` rebuilds from the engine's measurements."""
    curator = curator_for(codes, domain, epsilon, seed=seed)
    engine = make_engine("mwem", {"workload": "2-way", "passes": 50, **options})
    result = engine.describe(curator, SILENT)
    model = replay_multiplicative_weights(domain, result.measurements, result.output.total, result.output.passes,
                                          engine.options["average"])
    return workload_error(codes, domain, model.marginal, marginal_workload(domain, 2))


@pytest.mark.parametrize("delta", [1e-6, 0.0])
def test_the_ledger_adds_up_to_the_budget_and_alternates_selection_and_measurement(delta):
    codes, domain = chain_data(3000)
    curator = curator_for(codes, domain, 1.0, delta=delta)
    total = curator.remaining()
    make_engine("mwem", {"rounds": 6, "workload": "2-way"}).describe(curator, SILENT)
    ledger = curator.accountant.ledger
    unit = "rho" if delta else "epsilon"
    spent = sum(Fraction(getattr(e.cost, unit)) for e in ledger)  # exact, as the accountant adds
    assert float(spent) == pytest.approx(total, rel=1e-9) and spent <= Fraction(total)
    assert ledger[0].query == "count(*)"
    kinds = [e.mechanism for e in ledger[1:]]
    measure = "discrete_gaussian" if delta else "discrete_laplace"
    assert kinds == ["exponential", measure] * 6  # every measurement chosen (and charged) first


def test_error_falls_with_epsilon_and_beats_a_uniform_histogram():
    codes, domain = chain_data(20_000)
    uniform = HistogramModel(domain, np.ones(domain.sizes))
    uniform_error = workload_error(codes, domain, uniform.marginal, marginal_workload(domain, 2))
    low = np.mean([mwem_error(codes, domain, 0.01, seed) for seed in range(3)])
    high = np.mean([mwem_error(codes, domain, 5.0, seed) for seed in range(3)])
    assert high < 0.5 * low and low < uniform_error
    assert high < 0.3 * uniform_error


def test_error_falls_with_rounds():
    codes, domain = chain_data(20_000)
    one = np.mean([mwem_error(codes, domain, 20.0, seed, rounds=1) for seed in range(3)])
    ten = np.mean([mwem_error(codes, domain, 20.0, seed, rounds=10) for seed in range(3)])
    assert ten < 0.5 * one


def test_more_passes_fit_the_measurements_better_and_the_last_estimate_beats_the_average():
    codes, domain = chain_data(20_000)
    few, many = (mwem_error(codes, domain, 200.0, 0, rounds=10, passes=p, average=True) for p in (5, 200))
    last = mwem_error(codes, domain, 200.0, 0, rounds=10, passes=200)  # the default: the last estimate
    assert many < 0.5 * few and last < 0.01 and last < 0.2 * many


def test_graphical_model_estimate_for_large_domains_and_generation_from_it():
    codes, domain = chain_data(20_000)
    curator = curator_for(codes, domain, 20.0)
    engine = make_engine("mwem", {"workload": "2-way", "rounds": 10, "max_cells": 100, "iterations": 50})
    result = engine.describe(curator, SILENT)
    assert result.output.representation == "graphical-model" and result.output.cells == domain.size()
    model = fit_measurements(domain, result.measurements, {}, iterations=200)
    assert workload_error(codes, domain, model.marginal, marginal_workload(domain, 2)) < 0.05


def test_forcing_a_histogram_on_a_large_domain_is_refused_before_spending():
    codes, domain = chain_data(100)
    curator = curator_for(codes, domain, 1.0)
    with pytest.raises(EngineError, match=r"768 cells, more than max_cells = 100.*graphical-model"):
        make_engine("mwem", {"representation": "histogram", "max_cells": 100}).describe(curator, SILENT)
    assert curator.accountant.ledger == ()


def test_selection_scores_a_grouped_table_on_its_groups():
    """A two-group query table the estimate gets badly wrong is picked at large ε."""
    codes, domain = chain_data(5000)
    curator = curator_for(codes, domain, 1e4)
    query = WorkloadTable(("a",), {"a": np.array([0, 1, 1, 1])})  # a = 0, or not
    marginal = WorkloadTable(("b",))
    truth_a = np.bincount(codes[:, 0], minlength=4).astype(float)
    truth_b = np.bincount(codes[:, 1], minlength=4).astype(float)
    good_on_groups = query.table(truth_a)  # right on the groups, though wrong per code below
    wrong_b = truth_b[::-1] + 500.0
    chosen = curator.select_marginal([query.attrs, marginal.attrs], [good_on_groups, wrong_b], 10.0,
                                     coarsenings=[query.groups, marginal.groups])
    assert chosen == 1
    wrong_groups = good_on_groups + np.array([900.0, -900.0])
    chosen = curator.select_marginal([query.attrs, marginal.attrs], [wrong_groups, truth_b], 10.0,
                                     coarsenings=[query.groups, marginal.groups])
    assert chosen == 0


def adult_like(n: int = 4000, seed: int = 0) -> tuple[pd.DataFrame, Schema]:
    rng = np.random.default_rng(seed)
    age = rng.integers(17, 91, n)
    sex = rng.choice(["Female", "Male"], n)
    income = np.where((age > 40) & (sex == "Male") & (rng.random(n) < 0.6), ">50K", "<=50K")
    schema = Schema((Column("age", "integer", lower=17, upper=90, bins=8),
                     Column("sex", "categorical", categories=("Female", "Male")),
                     Column("income", "categorical", categories=("<=50K", ">50K"))))
    return pd.DataFrame({"age": age, "sex": sex, "income": income}), schema


def test_user_queries_become_two_group_tables():
    _, schema = adult_like(10)
    (ranged, conjunction) = resolve_workload([{"age": [17, 35]}, {"income": [">50K"], "sex": ["Male", "Female"]}],
                                             Domain(schema.names, schema.sizes), schema)
    edges = schema.column("age").edges  # 8 bins of 9 or 10 years, then the missing code
    inside = (edges[1:] > 17) & (edges[:-1] <= 35)
    assert ranged.attrs == ("age",) and ranged.groups["age"].tolist() == [0 if b else 1 for b in inside] + [1]
    assert conjunction.attrs == ("sex", "income")  # schema order
    assert conjunction.groups["sex"].tolist() == [0, 0, 1, 1]  # both sexes meet it; other and missing do not
    assert conjunction.groups["income"].tolist() == [1, 0, 1, 1]


@pytest.mark.parametrize("workload,needle", [
    ([{"height": [1, 2]}], r"unknown column\(s\) \['height'\]"),
    ([{"sex": ["Unknown"]}], "not values of column 'sex'"),
    ([{"age": [50, 20]}], "low > high"),
    ([{"age": [200, 300]}], "no value of column 'age'"),
    ([{"age": ["old", "young"]}], "two numbers"),
    ([{"age": 30}], r"range \[low, high\]"),
])
def test_bad_user_queries_are_refused(workload, needle):
    df, schema = adult_like(500)
    profile = Profile(schema=schema, epsilon=1.0, delta=1e-6, engine="mwem", engine_options={"workload": workload},
                      seed=1)
    with pytest.raises(EngineError, match=needle):
        describe(df, profile, report_to=None)


def test_user_query_workload_end_to_end():
    df, schema = adult_like(8000)
    # age bins start at 17, 26, 35, 44, 54, ...: these ranges are unions of bins
    queries = [{"age": [44, 90], "sex": ["Male"], "income": [">50K"]}, {"age": [17, 43]}, {"income": [">50K"]}]
    profile = Profile(schema=schema, epsilon=5.0, delta=1e-6, engine="mwem", seed=3,
                      engine_options={"workload": queries, "rounds": 6, "passes": 50, "average": False})
    description = describe(df, profile, report_to=None)
    assert description.engine_output.representation == "histogram"
    assert all(m.coarsening for m in description.measurements if m.attrs)
    synthetic = generate(description, rows=8000, seed=2)
    true = ((df.age >= 44) & (df.sex == "Male") & (df.income == ">50K")).mean()
    ages = pd.to_numeric(synthetic.age, errors="coerce")
    fake = ((ages >= 44) & (synthetic.sex == "Male") & (synthetic.income == ">50K")).mean()
    assert abs(true - fake) < 0.02


@pytest.mark.parametrize("average", [False, True])
def test_generate_rebuilds_the_engine_estimate_from_the_description(average):
    df, schema = adult_like(3000)
    profile = Profile(schema=schema, epsilon=2.0, delta=1e-6, engine="mwem", seed=5,
                      engine_options={"workload": "2-way", "rounds": 4, "passes": 3, "average": average})
    description = describe(df, profile, report_to=None)
    model = fit_model(description)
    again = replay_multiplicative_weights(description.model_domain, description.measurements,
                                          description.engine_output.total, 3, average)
    np.testing.assert_array_equal(model.counts, again.counts)
    assert model.total == pytest.approx(description.engine_output.total)
    synthetic = generate(description, seed=1)
    assert len(synthetic) == round(description.engine_output.total)


def test_replace_one_uses_the_public_count_and_spends_all_on_rounds():
    codes, domain = chain_data(2000)
    curator = curator_for(codes, domain, 1.0, relation="replace")
    result = make_engine("mwem", {"rounds": 3, "workload": "2-way"}).describe(curator, SILENT)
    assert result.output.total == 2000 and all(m.attrs for m in result.measurements)
    assert curator.accountant.ledger[0].sensitivity == 2.0  # the L1 error of a histogram, replace-one


@pytest.mark.parametrize("options,needle", [
    ({"workload": []}, "non-empty list"),
    ({"workload": "all"}, "workload must be"),
    ({"workload": [{}]}, "at least one column"),
    ({"rounds": 0}, "rounds must be a whole number of at least 1"),
    ({"rounds": -3}, "rounds must be a whole number of at least 1"),
    ({"k": 4}, "k must be 1, 2 or 3"),
    ({"selection_share": 1.0}, "selection_share"),
    ({"representation": "sparse"}, "representation must be one of"),
    ({"candidates": "all"}, "candidates must be one of"),
    ({"penalty": "yes"}, "penalty must be true or false"),
    ({"magic": 1}, "no option"),
])
def test_bad_options_are_refused_when_the_engine_is_built(options, needle):
    with pytest.raises(EngineError, match=needle):
        make_engine("mwem", options)


def test_the_cli_prints_bad_workloads_without_a_traceback(capsys, tmp_path: Path):
    df, _ = adult_like(3000)
    data = tmp_path / "data.csv"
    df.to_csv(data, index=False)
    profile = tmp_path / "p.toml"
    profile.write_text('[release]\nepsilon = 1.0\ndelta = 1e-6\nengine = "mwem"\n\n[engine_options]\n'
                       'workload = [{ height = [1, 2] }]\n\n[columns.age]\nkind = "integer"\nlower = 17\n'
                       'upper = 90\nbins = 8\n\n[columns.sex]\nkind = "categorical"\ncategories = ["Female", "Male"]\n'
                       '\n[columns.income]\nkind = "categorical"\ncategories = ["<=50K", ">50K"]\n')
    code = main(["run", str(data), "--profile", str(profile), "-o", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "unknown column(s) ['height']" in err
    code = main(["run", str(data), "--epsilon", "1", "--engine", "mwem", "--seed", "1", "-o",
                 str(tmp_path / "ok"), "--quiet"])
    assert code == 0 and (tmp_path / "ok" / "synthetic.csv").exists()


def test_default_passes_spend_more_sweeps_on_small_domains():
    engine = make_engine("mwem")
    assert engine.passes(20, 1) == 1000 and engine.passes(1_555_200, 20) == 10
    assert engine.passes(100_000, 10) == 3 * 10**9 // (100_000 * 55) == 545
    assert make_engine("mwem", {"passes": 7}).passes(20, 1) == 7


def test_auto_takes_the_histogram_only_when_it_gets_every_sweep():
    engine = make_engine("mwem")
    small, edge, large = (Domain(("a", "b"), (cells, 1)) for cells in (20, 142_857, 142_858))
    assert engine.representation(small, 6) == engine.representation(edge, 6) == "histogram"  # 1000 sweeps
    assert engine.representation(large, 6) == "graphical-model"  # 999 sweeps
    assert engine.representation(Domain(("a",), (1_555_200,)), 6) == "graphical-model"  # adult_missing
    assert make_engine("mwem", {"representation": "histogram"}).representation(large, 6) == "histogram"
    assert make_engine("mwem", {"max_cells": 10}).representation(small, 1) == "graphical-model"


def test_the_downward_closure_lists_every_sub_table_once_with_its_groups():
    domain = Domain(("a", "b", "c"), (3, 4, 5))
    closure = downward_closure(marginal_workload(domain, 2))
    assert [t.attrs for t in closure] == [("a", "b"), ("a",), ("b",), ("a", "c"), ("c",), ("b", "c")]
    query = WorkloadTable(("a", "c"), {"a": np.array([0, 0, 1])})
    tables = downward_closure([query, WorkloadTable(("a",))])
    assert [(t.attrs, sorted(t.groups)) for t in tables] == [(("a", "c"), ["a"]), (("a",), ["a"]), (("c",), []),
                                                            (("a",), [])]  # "a" on groups and "a" whole differ
    assert tables[1].cells(domain) == 2 and tables[3].cells(domain) == 3


def wide_data(n: int, seed: int = 0) -> tuple[np.ndarray, Domain]:
    """A 60-code column w that drives three binary columns x, y, z: its 3-way tables are large."""
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 60, n)
    x, y = (w < 20).astype(int), (w % 2 == 0).astype(int)
    z = np.where(rng.random(n) < 0.9, x ^ y, rng.integers(0, 2, n))
    return np.column_stack([w, x, y, z]), Domain(("w", "x", "y", "z"), (60, 2, 2, 2))


def test_sub_tables_and_the_noise_penalty_steer_selection_to_tables_worth_measuring():
    codes, domain = wide_data(4000)

    def selected_cells(seed: int, **options) -> list[int]:
        curator = curator_for(codes, domain, 0.5, seed=seed)
        output = make_engine("mwem", {"workload": "3-way", "passes": 10, **options}).describe(curator, SILENT).output
        return [domain.size(tuple(label.split(", "))) for label in output.selected]

    default = [selected_cells(seed) for seed in range(4)]
    no_penalty = [selected_cells(seed, penalty=False) for seed in range(4)]
    paper = [selected_cells(seed, candidates="workload", penalty=False) for seed in range(4)]
    # noise of about 16 rows a cell: a 240-cell table costs about 3,900 rows of error, the whole table
    # is 4,000 rows; the defaults measure the 60-cell column w, 2-way tables and the binary columns
    assert all(cells == 240 or cells == 8 for run in paper for cells in run)
    assert np.mean(default) < 0.5 * np.mean(no_penalty) and max(max(run) for run in default) <= 120


def test_rounds_default_to_the_columns_the_workload_touches_at_most_one_per_candidate():
    codes, domain = chain_data(2000)
    result = make_engine("mwem", {"workload": "3-way"}).describe(curator_for(codes, domain, 1.0), SILENT)
    assert result.output.rounds == 5 == len(result.output.selected)  # 5 columns, 25 candidates
    three = Domain(domain.names[:3], domain.sizes[:3])
    alone = make_engine("mwem", {"workload": "3-way", "candidates": "workload"}).describe(
        curator_for(codes[:, :3], three, 1.0), SILENT)
    assert alone.output.rounds == 1  # one 3-way table is the only candidate


def test_the_old_workload_spelling_is_read_in_profiles_and_descriptions():
    assert make_engine("mwem", {"workload": "marginals", "k": 2}).options["workload"] == "2-way"
    assert make_engine("smalldb", {"workload": "marginals"}).options["workload"] == "2-way"  # smalldb's order
    assert "k" not in make_engine("mwem", {"k": 1}).options and make_engine("mwem", {"k": 1}).config.workload == "1-way"
    df, schema = adult_like(2000)
    profile = Profile(schema=schema, epsilon=2.0, delta=1e-6, engine="mwem", seed=5,
                      engine_options={"workload": "2-way", "rounds": 3, "passes": 3})
    description = describe(df, profile, report_to=None)
    data = description.to_dict()
    data["engine"]["options"] = {**{k: v for k, v in data["engine"]["options"].items() if k != "workload"},
                                 "workload": "marginals", "k": 2}  # as synth wrote it before the new spelling
    old = Description.from_dict(data)
    assert old.to_dict() == data  # read as written: a model saved with it still matches its digest
    np.testing.assert_array_equal(fit_model(old).counts, fit_model(description).counts)
    with pytest.raises(EngineError, match=r'k must be 1, 2 or 3.*workload = "2-way"'):
        make_engine("mwem", {"workload": "marginals", "k": 5})


@pytest.mark.parametrize("name", ["aim", "mwem", "smalldb"])
@pytest.mark.parametrize("workload", ["1-way", "2-way", "3-way", [["a", "b"], ["c"]]])
def test_every_workload_engine_takes_the_same_spellings(name, workload):
    engine = make_engine(name, {"workload": workload})
    assert engine.options["workload"] == workload
    engine.check(("a", "b", "c"), Notion.ZCDP)
    with pytest.raises(EngineError, match=r"workload marginal \['a', 'ghost'\] names unknown or repeated columns"):
        make_engine(name, {"workload": [["a", "ghost"]]}).check(("a", "b", "c"), Notion.ZCDP)  # before anything is spent


def test_mwem_measures_listed_marginals_beside_queries():
    df, schema = adult_like(3000)
    profile = Profile(schema=schema, epsilon=2.0, delta=1e-6, engine="mwem", seed=2,
                      engine_options={"workload": [["sex", "age"], {"income": [">50K"]}], "rounds": 2,
                      "candidates": "workload"})
    description = describe(df, profile, report_to=None)
    marginal, query = description.engine_output.workload
    assert marginal.attrs == ("age", "sex") and not marginal.groups  # a whole marginal, in table order
    assert query.attrs == ("income",) and query.groups["income"].tolist() == [1, 0, 1, 1]
    measured = [m.attrs for m in description.measurements if m.attrs]
    assert sorted(measured) == [("age", "sex"), ("income",)]

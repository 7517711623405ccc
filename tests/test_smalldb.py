"""Engine ``smalldb``: the exact exponential-mechanism distribution over candidates (chi-square),
accuracy within the exponential mechanism's bound, the theory's m, refusing spaces too large,
budget, generation from the small database, and the CLI's error."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from synth.api import describe
from synth.cli import main
from synth.columns.column import Column
from synth.columns.domain import Domain
from synth.columns.schema import Schema
from synth.domains.profile import Profile
from synth.engines import make_engine
from synth.engines.smalldb import multisets, theory_size
from synth.engines.workload import marginal_workload
from synth.errors import DescriptionError, EngineError
from synth.generation.generate import fit_model, generate
from synth.privacy import Accountant, Budget, SeededNoise, exponential_scale
from synth.privacy.curator import CountRelease, Curator
from synth.privacy.neighbours import Neighbouring
from synth.progress import SILENT
from tests.conftest import mixed_table

BINARY = Domain(("a", "b", "c"), (2, 2, 2))


def binary_rows(n: int, seed: int = 0) -> np.ndarray:
    """Three binary columns: b copies a 80 % of the time, c is independent and rare."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    b = np.where(rng.random(n) < 0.8, a, 1 - a)
    c = (rng.random(n) < 0.2).astype(np.int64)
    return np.column_stack([a, b, c])


def curator_for(codes: np.ndarray, domain: Domain, epsilon: float, delta: float = 0.0, seed: int = 0,
                relation: str = "add-remove") -> Curator:
    accountant = Accountant(Budget(epsilon, delta))
    return Curator(codes, domain, CountRelease(accountant, SeededNoise(seed), Neighbouring(relation)))


def brute_force_errors(codes: np.ndarray, domain: Domain, databases: np.ndarray, k: int) -> np.ndarray:
    """Largest error, in rows, of each candidate scaled to n rows over every cell of every k-way
    marginal, one candidate at a time (an independent check of the curator's vectorised scores)."""
    n, m = len(codes), databases.shape[1]
    cell_codes = np.array(list(itertools.product(*(range(s) for s in domain.sizes))))
    errors = []
    for database in databases:
        rows = cell_codes[database]
        worst = 0.0
        for columns in itertools.combinations(range(len(domain.sizes)), k):
            for values in itertools.product(*(range(domain.sizes[j]) for j in columns)):
                truth = np.all(codes[:, columns] == values, axis=1).sum()
                fake = np.all(rows[:, columns] == values, axis=1).sum()
                worst = max(worst, abs(truth - n * fake / m))
        errors.append(worst)
    return np.array(errors)


def tables(domain: Domain, k: int) -> list:
    return [(w.attrs, w.groups) for w in marginal_workload(domain, k)]


def test_multisets_are_every_sorted_choice_once():
    sets = multisets(5, 3)
    assert sets.shape == (math.comb(7, 3), 3)
    assert len({tuple(r) for r in sets}) == len(sets) and np.all(np.diff(sets, axis=1) >= 0)


def test_draws_follow_the_exact_exponential_mechanism_probabilities():
    codes = binary_rows(30)
    databases = multisets(BINARY.size(), 3)  # 120 candidates
    epsilon, draws = 0.3, 12_000
    beta = exponential_scale(1.0, epsilon=epsilon)
    scores = -brute_force_errors(codes, BINARY, databases, 2)
    curator = curator_for(codes, BINARY, epsilon * draws)
    chosen = [curator.select_small_database(databases, tables(BINARY, 2), epsilon) for _ in range(draws)]
    observed = np.bincount(chosen, minlength=len(databases))

    def chi_square_p(scale: float) -> float:
        expected = np.exp((scores - scores.max()) / scale)
        expected *= draws / expected.sum()
        order = np.argsort(expected)  # the rarest candidates pooled until the pool expects ≥ 5 draws
        pooled = order[:np.searchsorted(np.cumsum(expected[order]), 5.0) + 1]
        kept = np.setdiff1d(order, pooled)
        return float(stats.chisquare(np.append(observed[kept], observed[pooled].sum()),
                                     np.append(expected[kept], expected[pooled].sum())).pvalue)

    assert chi_square_p(beta) > 1e-3
    assert chi_square_p(2 * beta) < 1e-6  # the test has the power to see a mechanism at half the ε
    assert len(curator.accountant.ledger) == draws  # every draw was charged


def test_accuracy_is_within_the_exponential_mechanism_bound():
    """Dwork & Roth, Theorem 3.11: with probability at least 1 − e^{−t} the chosen candidate's error
    is at most OPT + (2Δ/ε)(ln N + t), Δ = 1, OPT the best candidate's error."""
    codes = binary_rows(200, seed=1)
    databases = multisets(BINARY.size(), 4)
    errors = brute_force_errors(codes, BINARY, databases, 2)
    epsilon, failure, runs = 1.0, 0.05, 200
    bound = errors.min() + 2 / epsilon * (math.log(len(databases)) + math.log(1 / failure))
    chosen = [errors[curator_for(codes, BINARY, epsilon, seed=seed).select_small_database(
        databases, tables(BINARY, 2), epsilon)] for seed in range(runs)]
    assert np.mean(np.array(chosen) > bound) <= failure
    assert np.mean(chosen) < np.mean(errors)  # and far better than a candidate drawn uniformly


def test_theory_size_follows_dwork_and_roth():
    # α = ((16 ln 8 ln 12 + 4 ln 20) / (1 · 100))^(1/3), m = ⌈4 ln 12 / α²⌉
    alpha = ((16 * math.log(8) * math.log(12) + 4 * math.log(20)) / 100) ** (1 / 3)
    assert theory_size(8, 12, 1.0, 100.0) == math.ceil(4 * math.log(12) / alpha**2) == 11
    assert theory_size(8, 12, 10.0, 10_000.0) > theory_size(8, 12, 1.0, 100.0)


def test_engine_spends_exactly_its_budget_and_the_generator_resamples_its_database():
    codes = binary_rows(500)
    curator = curator_for(codes, BINARY, 2.0)
    engine = make_engine("smalldb", {"size": 6})
    result = engine.describe(curator, SILENT)
    spent = sum(Fraction(e.cost.epsilon) for e in curator.accountant.ledger)
    assert float(spent) == pytest.approx(2.0, rel=1e-9) and spent <= 2
    assert [e.mechanism for e in curator.accountant.ledger] == ["discrete_laplace", "exponential"]
    database = np.array(result.output.database)
    assert database.shape == (6, 3) and result.output.candidates == math.comb(8 + 5, 6)


def test_replace_one_spends_everything_on_the_draw():
    codes = binary_rows(300)
    curator = curator_for(codes, BINARY, 1.0, relation="replace")
    result = make_engine("smalldb", {"size": 3}).describe(curator, SILENT)
    assert result.measurements == () and result.output.total == 300
    (entry,) = curator.accountant.ledger
    assert entry.mechanism == "exponential" and entry.sensitivity == 1.0


def test_a_space_too_large_is_refused_before_anything_is_spent():
    codes = binary_rows(100)
    curator = curator_for(codes, BINARY, 1.0)
    with pytest.raises(EngineError, match=r"among 120 databases of 3 rows .* max_candidates = 100.*\"mwem\""):
        make_engine("smalldb", {"size": 3, "max_candidates": 100}).describe(curator, SILENT)
    assert curator.accountant.ledger == ()


def test_the_theory_size_on_a_larger_domain_is_refused_with_the_space_size():
    rng = np.random.default_rng(0)
    domain = Domain(("a", "b", "c", "d"), (4, 4, 4, 4))
    codes = rng.integers(0, 4, (5000, 4))
    with pytest.raises(EngineError, match=r"among \d\.\d+e\+\d+ databases of \d+ rows \(the theory's m for about "
                       r"\d,\d{3} rows.*option size.*from a domain of 256 cells.*Nothing was released"):
        make_engine("smalldb").describe(curator_for(codes, domain, 1.0), SILENT)


@pytest.mark.parametrize("options,needle", [
    ({"size": 0}, "size must be a whole number of at least 1"),
    ({"max_candidates": -1}, "max_candidates"),
    ({"workload": []}, "non-empty list"),
    ({"k": 0}, "k must be 1, 2 or 3"),
])
def test_bad_options_are_refused(options, needle):
    with pytest.raises(EngineError, match=needle):
        make_engine("smalldb", options)


def test_end_to_end_release_and_generation():
    rng = np.random.default_rng(3)
    n = 2000
    sex = rng.choice(["Female", "Male"], n)
    income = np.where((sex == "Male") & (rng.random(n) < 0.5), ">50K", "<=50K")
    df = pd.DataFrame({"sex": sex, "income": income})
    schema = Schema((Column("sex", "categorical", categories=("Female", "Male")),
                     Column("income", "categorical", categories=("<=50K", ">50K"))))
    profile = Profile(schema=schema, epsilon=3.0, delta=0.0, engine="smalldb", seed=2,
                      engine_options={"size": 8, "workload": [{"sex": ["Male"], "income": [">50K"]}]})
    description = describe(df, profile, report_to=None)
    totals = description.ledger_totals()
    assert totals["epsilon"] == pytest.approx(3.0, rel=1e-9)
    database = {tuple(r) for r in description.engine_output.database}
    model = fit_model(description)
    assert model.total == pytest.approx(description.engine_output.total)
    synthetic = generate(description, rows=1000, seed=0)
    codes, _ = schema.encode(synthetic)
    assert {tuple(r) for r in codes} <= database
    true = ((df.sex == "Male") & (df.income == ">50K")).mean()
    fake = ((synthetic.sex == "Male") & (synthetic.income == ">50K")).mean()
    assert abs(true - fake) < 0.15  # 8 rows answer the one query to within about 1/8


def test_the_cli_refuses_a_space_too_large_without_a_traceback(capsys, tmp_path: Path):
    data = tmp_path / "mixed.csv"
    mixed_table().to_csv(data, index=False)
    code = main(["run", str(data), "--epsilon", "1", "--engine", "smalldb", "--seed", "1", "-o",
                 str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "mwem" in err and "databases" in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_description_whose_database_leaves_the_domain_is_refused():
    codes = binary_rows(200)
    df = pd.DataFrame({"a": codes[:, 0].astype(bool), "b": codes[:, 1].astype(bool)})
    schema = Schema((Column("a", "boolean"), Column("b", "boolean")))
    description = describe(df, Profile(schema=schema, epsilon=1.0, engine="smalldb", seed=0,
                                       engine_options={"size": 2}), report_to=None)
    broken = replace(description, engine_output=replace(description.engine_output, database=((0, 7), (1, 1))))
    with pytest.raises(DescriptionError, match="does not fit its domain"):
        fit_model(broken)

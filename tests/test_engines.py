"""The marginal engines: MST's tree, AIM's budget and size cap, option checks, end to end."""

from __future__ import annotations

import ast
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import synth
from synth.api import describe
from synth.columns.domain import Domain
from synth.engines import make_engine
from synth.engines.aim_plan import ONE_WAY_SIGNAL, one_way_share, signal_of
from synth.errors import EngineError
from synth.generation.generate import fit_model, generate
from synth.privacy import Accountant, Budget, Notion, SeededNoise
from synth.privacy.curator import CountRelease, Curator
from synth.privacy.neighbours import Neighbouring
from synth.progress import SILENT
from tests.conftest import mixed_table


def chain_data(n: int = 20_000, seed: int = 0) -> tuple[np.ndarray, Domain]:
    """Columns a → b → c → d, each a noisy copy of the previous one, plus an independent e."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n)
    b = np.where(rng.random(n) < 0.8, a, rng.integers(0, 4, n))
    c = np.where(rng.random(n) < 0.8, b, rng.integers(0, 4, n))
    d = np.where(rng.random(n) < 0.8, c, rng.integers(0, 4, n))
    e = rng.integers(0, 3, n)
    return np.column_stack([a, b, c, d, e]), Domain(("a", "b", "c", "d", "e"), (4, 4, 4, 4, 3))


def curator_for(codes: np.ndarray, domain: Domain, epsilon: float, delta: float = 1e-6, seed: int = 0) -> Curator:
    accountant = Accountant(Budget(epsilon, delta))
    return Curator(codes, domain, CountRelease(accountant, SeededNoise(seed), Neighbouring()))


def test_mst_finds_the_true_chain_at_large_epsilon():
    codes, domain = chain_data()
    result = make_engine("mst").describe(curator_for(codes, domain, 200.0), SILENT)
    edges = {frozenset(e) for e in result.output.tree}
    assert {frozenset("ab"), frozenset("bc"), frozenset("cd")} <= edges and len(edges) == 4


def _mst_ledger() -> tuple[float, list]:
    """The budget of an mst run on a 5-column chain at ε = 1, and its ledger."""
    codes, domain = chain_data(5000)
    curator = curator_for(codes, domain, 1.0)
    total = curator.remaining()
    make_engine("mst").describe(curator, SILENT)
    return total, list(curator.accountant.ledger)


def test_mst_spends_exactly_its_budget_in_three_parts():
    total, ledger = _mst_ledger()
    spent = sum(Fraction(e.cost.rho) for e in ledger)  # exact, as the accountant adds
    assert float(spent) == pytest.approx(total, rel=1e-9) and spent <= Fraction(total)
    kinds = [e.mechanism for e in ledger]
    assert kinds.count("exponential") == 4 and kinds.count("discrete_gaussian") == 5 + 4


def test_mst_gives_the_tree_selection_a_twelfth_of_the_budget_and_the_pairs_seven_twelfths():
    total, ledger = _mst_ledger()
    selection = sum(e.cost.rho for e in ledger if e.mechanism == "exponential")
    measured = [e.cost.rho for e in ledger if e.mechanism == "discrete_gaussian"]
    assert selection == pytest.approx(total / 12, rel=1e-9)
    assert sum(measured[:5]) == pytest.approx(total / 3, rel=1e-9)  # the five 1-way marginals first
    assert sum(measured[5:]) == pytest.approx(7 * total / 12, rel=1e-9)  # then the tree's four pairs


def test_aim_spends_exactly_its_budget_and_never_more():
    codes, domain = chain_data(5000)
    curator = curator_for(codes, domain, 1.0)
    total = curator.remaining()
    result = make_engine("aim", {"rounds": 8, "iterations": 50}).describe(curator, SILENT)
    spent = sum(Fraction(e.cost.rho) for e in curator.accountant.ledger)
    assert float(spent) == pytest.approx(total, rel=1e-9) and spent <= Fraction(total)
    assert result.output.rounds == len(result.measurements) - 5  # after the 5 one-way marginals


def test_aim_with_a_tiny_model_cap_falls_back_to_what_the_model_covers():
    codes, domain = chain_data(3000)
    curator = curator_for(codes, domain, 1.0)
    result = make_engine("aim", {"max_model_size": 1e-9, "rounds": 6, "iterations": 20}).describe(curator, SILENT)
    assert all(len(m.attrs) == 1 for m in result.measurements)  # nothing joint fits the cap


def test_aim_prefers_the_dependent_pairs():
    codes, domain = chain_data(20_000)
    result = make_engine("aim", {"workload": "2-way", "rounds": 6, "iterations": 50}).describe(
        curator_for(codes, domain, 10.0), SILENT)
    pairs = [frozenset(c) for c in result.output.selected if len(c) == 2]
    assert set(pairs[:3]) == {frozenset("ab"), frozenset("bc"), frozenset("cd")}  # the chain first, then the rest


@pytest.mark.parametrize("name,options,needle", [
    ("mst", {"rounds": 3}, "no option"),
    ("aim", {"workload": "4-way"}, "workload"),
    ("aim", {"workload": [["a", "zz"]]}, "unknown"),
    ("aim", {"max_model_size": 0}, "max_model_size"),
    ("aim", {"rounds": 0}, "rounds"),
    ("aim", {"rounds": 5}, "needs at least 6 rounds"),  # 5 columns measured one by one first
])
def test_bad_options_are_refused(name, options, needle):
    codes, domain = chain_data(100)
    with pytest.raises(EngineError, match=needle):
        make_engine(name, options).describe(curator_for(codes, domain, 1.0), SILENT)


def test_marginal_engines_need_zcdp():
    codes, domain = chain_data(100)
    curator = curator_for(codes, domain, 1.0, delta=0.0)
    with pytest.raises(EngineError, match="delta"):
        make_engine("mst").describe(curator, SILENT)


@pytest.mark.parametrize("name", ["mst", "aim"])
def test_marginal_engines_need_zcdp_before_anything_is_spent(name):
    with pytest.raises(EngineError, match=f"engine '{name}' accounts in zero-concentrated DP and needs delta > 0"):
        make_engine(name).check(("a", "b"), Notion.PURE)
    make_engine(name).check(("a", "b"), Notion.ZCDP)


@pytest.mark.parametrize("workload", ["4-way", {"a": 1}, 3, "marginals"])
def test_aim_names_the_workload_spellings_it_knows(workload):
    with pytest.raises(EngineError, match=r'is not known; use "1-way", "2-way", "3-way" or a list of column lists'):
        make_engine("aim", {"workload": workload})


def test_aim_measures_a_1_way_workload_like_the_other_engines_spell_it():
    codes, domain = chain_data(2000)
    result = make_engine("aim", {"workload": "1-way", "rounds": 8, "iterations": 20}).describe(
        curator_for(codes, domain, 1.0), SILENT)
    assert result.output.workload == tuple((name,) for name in domain.names)
    assert all(len(m.attrs) == 1 for m in result.measurements)


@pytest.mark.parametrize("engine", ["mst", "aim"])
def test_end_to_end_release_decodes_to_the_original_domain(engine):
    df = mixed_table(3000)
    options = {"engine": engine, "epsilon": 2.0, "delta": 1e-6, "seed": 4, "report_to": None}
    description = describe(df, **options)
    assert description.engine == engine and any(len(m.attrs) >= 2 for m in description.measurements)
    model = fit_model(description)
    for column in description.schema.columns:
        assert model.marginal([column.name]).shape == (column.size,)
    synthetic = generate(description, rows=500, seed=1)
    assert list(synthetic.columns) == list(df.columns) and len(synthetic) == 500
    assert set(synthetic["city"].dropna()) <= set(description.schema.column("city").categories) | {"<OTHER>"}


def test_engines_are_typed_against_the_boundary_protocol_not_the_curator() -> None:
    """Engines import ``synth.privacy.boundary.Boundary`` (the curator's public API), never ``synth.privacy.curator``."""
    folder = Path(synth.__file__).resolve().parent / "engines"
    importers = sorted(path.name for path in folder.glob("*.py")
                       if any(isinstance(node, ast.ImportFrom) and node.module == "synth.privacy.curator"
                              for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))))
    assert importers == []


def test_aim_refits_fewer_iterations_only_beyond_four_rounds_per_column(monkeypatch):
    import synth.engines.aim as aim
    from synth.engines.aim_plan import planned_iterations
    assert [planned_iterations(15, t) for t in (30, 60, 125, 240, 10_000)] == [100, 100, 48, 25, 25]
    codes, domain = chain_data(2000)
    used = []
    real = aim.fit_graphical_model

    def recording(*args, **kwargs):
        used.append(kwargs["iterations"])
        return real(*args, **kwargs)

    monkeypatch.setattr(aim, "fit_graphical_model", recording)
    options = {"coarse_groups": 0, "rounds": 40}  # 5 columns: 8 rounds per column, so 50 iterations
    make_engine("aim", options).describe(curator_for(codes, domain, 1.0), SILENT)
    assert used and set(used) == {50}
    used.clear()
    make_engine("aim", {**options, "iterations": 7}).describe(curator_for(codes, domain, 1.0), SILENT)
    assert used and set(used) == {7}


def test_aim_plans_its_rounds_by_the_budget_within_2_and_16_per_column():
    from synth.engines.aim_plan import planned_rounds
    from synth.privacy import gaussian_sigma
    assert planned_rounds(15, 1e-6) == 30 and planned_rounds(15, 0.12) == 60 and planned_rounds(15, 1e6) == 240
    plans = [planned_rounds(15, rho) for rho in np.geomspace(1e-4, 100, 60)]
    assert plans == sorted(plans) and len(set(plans)) > 20  # grows with the budget, not in a few jumps
    codes, domain = chain_data(5000)
    curator = curator_for(codes, domain, 1.0)
    total = curator.remaining()
    result = make_engine("aim", {"iterations": 20}).describe(curator, SILENT)  # rounds unset
    first = result.measurements[0]  # a 1-way marginal, measured with its round's 90 %
    rounds = planned_rounds(5, total)
    assert 10 <= rounds < 80 and first.noise_scale == pytest.approx(gaussian_sigma(1.0, 0.9 * total / rounds), rel=1e-6)


def test_aims_1_way_marginals_take_at_most_the_rules_signal_over_the_tables_of_the_budget():
    assert signal_of(50_000, 25.0) == 2000.0  # rows in units of a round's noise deviation
    for per_column in (2.0, 4.0, 16.0):
        assert one_way_share(1.0, per_column) == 1.0 and one_way_share(ONE_WAY_SIGNAL * per_column, per_column) == 1.0
        for signal in (2 * ONE_WAY_SIGNAL * per_column, 50 * ONE_WAY_SIGNAL * per_column):
            share = one_way_share(signal, per_column)
            # d columns at share s of one of T = per_column × d rounds take s / per_column of the budget
            assert share < 1 and share / per_column == pytest.approx(ONE_WAY_SIGNAL / signal, rel=1e-12)
    assert one_way_share(40_000, 2.0) > one_way_share(80_000, 2.0)  # the stronger the signal, the smaller the share


def test_aim_measures_a_small_tables_1_way_marginals_each_with_a_rounds_budget():
    from synth.privacy import gaussian_sigma
    codes, domain = chain_data(5000)  # below 48,842 rows
    curator = curator_for(codes, domain, 1.0)
    total = curator.remaining()
    result = make_engine("aim", {"rounds": 10, "iterations": 20}).describe(curator, SILENT)
    assert [m.attrs for m in result.measurements[:5]] == [(a,) for a in domain.names]
    assert all(m.noise_scale == pytest.approx(gaussian_sigma(1.0, 0.9 * total / 10), rel=1e-9)
               for m in result.measurements[:5])


def test_aims_1_way_share_follows_the_first_columns_noisy_total_and_the_rest_goes_to_the_rounds(monkeypatch):
    from synth.engines import aim_plan
    from synth.privacy import gaussian_sigma
    monkeypatch.setattr(aim_plan, "ONE_WAY_SIGNAL", 1.0)  # as if the signal of 5,000 rows (about 80) were strong
    codes, domain = chain_data(5000)
    curator = curator_for(codes, domain, 1.0)
    total = curator.remaining()
    result = make_engine("aim", {"rounds": 10, "iterations": 20}).describe(curator, SILENT)
    first, others = result.measurements[0], result.measurements[1:5]
    assert first.attrs == ("a",) and first.noise_scale == pytest.approx(gaussian_sigma(1.0, 0.9 * total / 10), rel=1e-9)
    rows = first.values.sum()  # the noisy total, not the true 5,000 rows
    assert rows != 5000 and abs(rows - 5000) < 5 * first.noise_scale * 2  # four codes: deviation 2 sigma
    share = 1.0 * 2 / (rows / first.noise_scale)  # ONE_WAY_SIGNAL × rounds per column (10 / 5) / signal
    assert all(len(m.attrs) == 1 and m.noise_scale == pytest.approx(gaussian_sigma(1.0, 0.9 * total / 10 * share),
                                                                       rel=1e-9) for m in others)
    assert all(e.query != "count(*)" for e in curator.accountant.ledger)  # nothing more is spent on the rows
    # what the 1-way marginals left buys more rounds than planned (10 - 5 without the share), and all is spent
    assert result.output.rounds > 5 and len(result.measurements) == 5 + result.output.rounds
    spent = sum(Fraction(e.cost.rho) for e in curator.accountant.ledger)
    assert float(spent) == pytest.approx(total, rel=1e-9) and spent <= Fraction(total)


def test_aim_reads_the_public_row_count_under_replace(monkeypatch):
    from synth.engines import aim_plan
    codes, domain = chain_data(5000)

    def second_1_way_noise() -> float:
        accountant = Accountant(Budget(1.0, 1e-6))
        curator = Curator(codes, domain, CountRelease(accountant, SeededNoise(0), Neighbouring("replace")))
        result = make_engine("aim", {"rounds": 10, "iterations": 20}).describe(curator, SILENT)
        return result.measurements[1].noise_scale

    full = second_1_way_noise()
    # exactly 5,000 public rows: a quarter of a round (signal 5,000 / σ, 2 rounds per column), twice the noise
    monkeypatch.setattr(aim_plan, "ONE_WAY_SIGNAL", 5000 / full / 8)
    assert second_1_way_noise() == pytest.approx(2 * full, rel=1e-12)

"""The describer: accounting notions chosen from the profile, end to end through the curator."""

from __future__ import annotations

import io
from dataclasses import replace

import pandas as pd
import pytest

from synth.api import describe
from synth.columns.kinds import DomainSource, Kind
from synth.domains.drafting import draft_profile
from synth.domains.profile import Profile
from synth.errors import BudgetError, DataError, EngineError, ProfileError, SchemaError, SynthError
from synth.privacy import Accountant
from synth.release.description import load_description, save_description
from tests.conftest import mixed_table


def _mechanisms(description) -> set[str]:
    return {e.mechanism for e in description.ledger}


def test_default_with_delta_is_zcdp_and_aim():
    d = describe(mixed_table(), epsilon=1.0, delta=1e-8, seed=1, report_to=None)
    assert d.engine == "aim"
    assert d.privacy["spent"]["notion"] == "zcdp" and _mechanisms(d) == {"discrete_gaussian", "exponential"}
    assert d.privacy["spent"]["epsilon"] <= 1.0 and d.privacy["spent"]["delta"] <= 1e-8


def test_approx_with_advanced_composition_uses_laplace_and_charges_delta_for_discovery():
    # Laplace noise needs high thresholds for categories: the city column may be lost at this budget
    profile = Profile(schema=None, epsilon=1.0, delta=1e-6, accounting="approx", composition="advanced", seed=2,
                      accept_rough_domains=True)
    d = describe(mixed_table(), profile, report_to=None)
    assert d.privacy["spent"]["notion"] == "approx" and _mechanisms(d) == {"discrete_laplace"}
    category_queries = [e for e in d.ledger if e.query.startswith("categories(")]
    assert category_queries and all(e.cost.delta > 0 for e in category_queries)
    assert d.privacy["spent"]["epsilon"] <= 1.0 and d.privacy["spent"]["delta"] <= 1e-6


def test_pure_dp_with_a_public_schema_spends_no_delta():
    df = mixed_table()
    schema = draft_profile(df).schema
    public = replace(schema, columns=tuple(replace(c, source=DomainSource.PUBLIC) for c in schema.columns))
    d = describe(df, Profile(schema=public, epsilon=0.5, seed=3), report_to=None)
    assert d.privacy["spent"]["notion"] == "pure" and _mechanisms(d) == {"discrete_laplace"}
    assert d.privacy["spent"]["delta"] == 0 and d.privacy["spent"]["epsilon"] == pytest.approx(0.5)
    assert d.end_to_end_dp


def test_inconsistent_accounting_settings_are_refused():
    with pytest.raises(ProfileError, match="accounting"):
        Profile(schema=None, epsilon=1.0, accounting="renyi")
    with pytest.raises(BudgetError):
        describe(mixed_table(), Profile(schema=None, epsilon=1.0, delta=1e-6, accounting="pure", seed=1),
                 report_to=None)


# --- a column's kind is decided under DP, never read from a dtype -------------------------------

def _csv_table(extra_cell: str | None) -> str:
    """A CSV with a whole-number column n, a decimal column x and a text column t, optionally with
    one more person whose n cell is ``extra_cell`` (blank: pandas reads n as float64; text: as object)."""
    lines = ["n,x,t"] + [f"{i % 70},{(i % 13) / 4},{'abc'[i % 3]}" for i in range(3000)]
    if extra_cell is not None:
        lines.append(f"{extra_cell},1.5,a")
    return "\n".join(lines) + "\n"


def _release_facts(description) -> tuple:
    """What one person's cell must not change deterministically: kinds, queries, noise scales. A
    text column's distinct count is priced from the vote's noisy cell count, and its categories
    get what that left: their scales follow that noise (post-processing), and are left out."""
    kinds = tuple((c.name, c.kind) for c in description.schema.columns)
    adaptive = ("distinct(", "categories(", "key shapes(")
    queries = tuple((e.query, e.mechanism, e.sensitivity, None if e.query.startswith(adaptive) else e.noise_scale)
                    for e in description.ledger)
    return kinds, queries


@pytest.mark.parametrize("odd_cell", ["", "not a number"])
@pytest.mark.parametrize("source", ["dataframe", "parquet"])
def test_one_persons_cell_cannot_flip_a_typed_columns_kind(tmp_path, odd_cell, source):
    # pandas reads the neighbour's n as float64 (blank cell) or object (text cell); the Parquet file
    # keeps that dtype. Taking the dtype as the kind would change the release with certainty.
    tables = []
    for name, extra in (("base", None), ("neighbour", odd_cell)):
        csv = tmp_path / f"{name}.csv"
        csv.write_text(_csv_table(extra))
        df = pd.read_csv(csv)
        if source == "parquet":
            df.to_parquet(tmp_path / f"{name}.parquet")
            tables.append(tmp_path / f"{name}.parquet")
        else:
            tables.append(df)
    assert pd.read_csv(tmp_path / "base.csv")["n"].dtype != pd.read_csv(tmp_path / "neighbour.csv")["n"].dtype
    base, neighbour = (describe(t, epsilon=1.0, delta=1e-6, seed=4, engine="independent", report_to=None)
                       for t in tables)
    assert _release_facts(base) == _release_facts(neighbour)
    assert dict(_release_facts(base)[0]) == {"n": Kind.INTEGER, "x": Kind.FLOAT, "t": Kind.CATEGORICAL}
    assert [e.query.split(":")[0] for e in base.ledger][:5] == ["feasibility", "kind(n)", "kind(x)", "kind(t)",
                                                                "bounds(n)"]
    assert base.privacy["kind_sources"] == {"n": "dp-estimated", "x": "dp-estimated", "t": "dp-estimated"}


def test_kinds_declared_in_public_are_not_voted_and_are_recorded(tmp_path):
    df = pd.read_csv(io.StringIO(_csv_table(None)))
    d = describe(df, epsilon=1.0, delta=1e-6, seed=4, engine="independent", kinds={"n": "integer"}, report_to=None)
    queries = [e.query.split(":")[0] for e in d.ledger]
    assert "kind(n)" not in queries and "bounds(n)" in queries and "kind(x)" in queries
    assert d.privacy["kind_sources"] == {"n": "public", "x": "dp-estimated", "t": "dp-estimated"}
    save_description(d, tmp_path / "d.json")
    assert load_description(tmp_path / "d.json").privacy["kind_sources"] == d.privacy["kind_sources"]


def test_kinds_that_cannot_apply_are_refused_before_spending():
    df = pd.read_csv(io.StringIO(_csv_table(None)))
    with pytest.raises(DataError, match="'nope'"):
        describe(df, epsilon=1.0, kinds={"nope": "integer"}, report_to=None)
    with pytest.raises(SchemaError, match="'number'"):
        describe(df, epsilon=1.0, kinds={"n": "number"}, report_to=None)
    public = Profile(schema=draft_profile(df).schema, epsilon=1.0, accept_data_derived_domains=True)
    with pytest.raises(ProfileError, match="kinds="):
        describe(df, public, kinds={"n": "integer"}, report_to=None)


def test_a_profiles_kinds_are_recorded_as_public_unless_drafted():
    df = mixed_table()
    drafted = draft_profile(df).schema
    public = replace(drafted, columns=tuple(replace(c, source=DomainSource.PUBLIC) for c in drafted.columns))
    d = describe(df, Profile(schema=public, epsilon=1.0, delta=1e-6, engine="independent", seed=1), report_to=None)
    assert set(d.privacy["kind_sources"].values()) == {"public"}
    d = describe(df, Profile(schema=drafted, epsilon=1.0, delta=1e-6, engine="independent", seed=1,
                             accept_data_derived_domains=True), report_to=None)
    assert set(d.privacy["kind_sources"].values()) == {"data-derived"}


# --- checks before spending; what a run that stops after spending says ---------------------------

@pytest.mark.parametrize("settings,message", [
    ({"engine": "mst", "delta": 0.0}, "needs delta > 0"),
    ({"engine": "aim", "delta": 0.0}, "needs delta > 0"),
    ({"engine": "privbayes", "engine_options": {"degree": 3}}, "degree 3 is too large"),
    ({"engine": "aim", "delta": 1e-6, "engine_options": {"workload": [["n", "zz"]]}}, "unknown or repeated"),
])
def test_checks_that_need_no_data_come_before_the_first_charge(monkeypatch, settings, message):
    df = pd.read_csv(io.StringIO(_csv_table(None)))
    charged = []
    monkeypatch.setattr(Accountant, "charge", lambda self, *a, **k: charged.append(a))
    with pytest.raises(SynthError, match=message) as caught:
        describe(df, Profile(schema=None, epsilon=1.0, seed=1, **settings), report_to=None)
    assert charged == [] and "already spent" not in str(caught.value)


def test_mst_needs_two_columns_before_spending(monkeypatch):
    charged = []
    monkeypatch.setattr(Accountant, "charge", lambda self, *a, **k: charged.append(a))
    with pytest.raises(EngineError, match="at least two columns"):
        describe(pd.DataFrame({"a": ["x", "y"] * 50}), epsilon=1.0, engine="mst", report_to=None)
    assert charged == []


def test_a_run_that_stops_after_spending_says_what_it_spent():
    # Under pure DP a column voted text cannot have its categories discovered: that is known only
    # after the (noisy) vote, so the error says what the votes and bounds had spent.
    df = pd.read_csv(io.StringIO(_csv_table(None)))
    with pytest.raises(BudgetError, match="delta > 0") as caught:
        describe(df, Profile(schema=None, epsilon=1.0, seed=1), report_to=None)
    message = str(caught.value)
    assert "This run had already spent epsilon = " in message and "running it again spends" in message
    spent = float(message.split("spent epsilon = ")[1].split(",")[0])
    assert 0 < spent <= 0.1  # the votes and n's bounds, inside the discovery share


def test_a_drafted_profile_never_gives_an_end_to_end_dp_release():
    # An all-boolean table: its drafted domains are fixed, but its kinds were read from the data.
    df = pd.DataFrame({"a": ["yes", "no"] * 200, "b": ["true", "false", "false", "true"] * 100})
    drafted = draft_profile(df)
    with pytest.raises(ProfileError, match="data-derived"):
        describe(df, replace(drafted, engine="independent", seed=1), report_to=None)
    d = describe(df, replace(drafted, engine="independent", seed=1, accept_data_derived_domains=True), report_to=None)
    assert not d.end_to_end_dp and set(d.domain_sources.values()) == {"data-derived"}


def test_a_release_that_fails_after_describing_says_what_was_spent(tmp_path, monkeypatch):
    import synth.api

    def failing_fit(*args, **kwargs):
        raise SynthError("sampling failed.")

    monkeypatch.setattr(synth.api, "fit", failing_fit)
    with pytest.raises(SynthError, match=r"sampling failed\. This run had already spent rho = ") as caught:
        synth.api.run(mixed_table(), tmp_path / "out", epsilon=1.0, engine="independent", seed=1, report_to=None)
    assert "released nothing" in str(caught.value) and list((tmp_path / "out").iterdir()) == []

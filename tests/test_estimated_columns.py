"""Profile columns with a public kind and a domain estimated under DP (``source = "dp-estimated"``
with no domain keys): parsed, saved, and released beside the columns whose domain is given."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import synth
from synth.columns.column import Column
from synth.columns.kinds import DomainSource, Kind
from synth.columns.schema import Schema
from synth.domains.drafting import draft_profile
from synth.domains.profile import READ_KEYS, Profile, load_profile, profile_from_dict, profile_to_toml, save_profile
from synth.errors import BudgetError, DataError, DiscoveryError, EngineError, ProfileError
from synth.privacy import Accountant

SEX = """
[columns.sex]
kind = "categorical"
categories = ["F", "M"]
"""
AGE = """
[columns.age]
kind = "integer"
source = "dp-estimated"
"""
RELEASE = "[release]\nepsilon = 2.0\ndelta = 1e-9\n"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "profile.toml"
    path.write_text(text, encoding="utf-8")
    return path


def people(rows: int, seed: int = 0) -> pd.DataFrame:
    """A public-domain column ``sex``, an ``age`` uniform on 20..70, and a column no profile lists."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"sex": rng.choice(["F", "M"], rows), "age": rng.integers(20, 71, rows),
                         "extra": rng.normal(size=rows)})


SEX_SCHEMA = Schema((Column("sex", Kind.CATEGORICAL, categories=("F", "M")),))


# --- the profile ---------------------------------------------------------------------------------

def test_an_estimated_column_loads_beside_given_ones_and_round_trips(tmp_path):
    hours = '\n[columns.hours]\nkind = "integer"\nlower = 0\nupper = 99\nbins = 10\nsource = "dp-estimated"\n'
    profile = load_profile(write(tmp_path, RELEASE + AGE + SEX + hours))
    assert profile.schema.names == ("sex", "hours") and profile.to_estimate == {"age": Kind.INTEGER}
    assert profile.column_names == ("age", "sex", "hours") and profile.lists_columns
    assert profile.schema.column("hours").source == DomainSource.DP_ESTIMATED  # a full domain: as before
    text = profile_to_toml(profile)
    assert list(tomllib.loads(text)["columns"]) == ["age", "sex", "hours"]
    assert tomllib.loads(text)["columns"]["age"] == {"kind": "integer", "source": "dp-estimated"}
    again = load_profile(save_profile(profile, tmp_path / "copy.toml"))
    assert replace(again, path=None) == replace(profile, path=None)
    assert profile.with_overrides(epsilon=3.0).column_names == ("age", "sex", "hours")
    with pytest.raises(ProfileError, match=r"\[columns\.age\].*needs upper"):  # part of a domain: all of it
        load_profile(write(tmp_path, RELEASE + AGE + "lower = 0\n"))
    with pytest.raises(ProfileError, match=r"\[columns\.age\].*needs lower"):  # other sources: a domain
        load_profile(write(tmp_path, RELEASE + AGE.replace("dp-estimated", "public")))


def test_a_profile_of_estimated_columns_only_has_no_schema():
    profile = profile_from_dict(tomllib.loads(RELEASE + AGE))
    assert profile.schema is None and profile.lists_columns and profile.column_names == ("age",)
    assert not Profile(schema=None, epsilon=1.0).lists_columns


@pytest.mark.parametrize("line, key", [("complete = true", "complete"), ("missing = false", "missing"),
                                       ("decimals = 2", "decimals"), ("format = \"%d/%m/%Y\"", "format")])
def test_complete_or_missing_on_an_estimated_column_is_refused(tmp_path, line, key):
    with pytest.raises(ProfileError, match=rf"\[columns\.age\] has {key}.*estimated under DP"):
        load_profile(write(tmp_path, RELEASE + AGE + line + "\n"))


MEMBER = '\n[columns.member]\nkind = "boolean"\nsource = "dp-estimated"\n'


def members(rows: int, seed: int = 0) -> pd.DataFrame:
    """``people`` with a flag written yes/no and never missing."""
    return people(rows, seed).assign(member=np.random.default_rng(seed + 1).choice(["yes", "no"], rows))


@pytest.mark.parametrize("text, keys", [
    (MEMBER + 'labels = ["yes", "no"]\nmissing = false\n', "labels, missing"),
    (MEMBER + 'labels = ["yes", "no"]\n', "labels"),
    (MEMBER.replace("boolean", "datetime") + "date_only = true\ndayfirst = true\n", "date_only, dayfirst"),
    (MEMBER.replace("boolean", "id") + 'template = "A99"\n', "template"),
])
def test_a_dp_estimated_column_of_any_kind_refuses_keys_read_from_the_data(tmp_path, text, keys):
    """A drafted column's labels, missing, shape or key template were read exactly from the rows: on a
    dp-estimated column (which a boolean or id column always is: it has no domain keys) they would be
    released while the release claims end-to-end DP, so they are refused, naming them and the way out."""
    with pytest.raises(ProfileError, match=rf"\[columns\.member\] has {keys}") as caught:
        load_profile(write(tmp_path, RELEASE + SEX + text))
    assert "estimated under DP" in str(caught.value) and 'source = "public"' in str(caught.value)


def test_a_dp_estimated_boolean_keeps_nothing_read_from_the_data():
    """The leak: a drafted ``labels`` and ``missing = false`` on a dp-estimated boolean were released as
    they were read while the manifest said end-to-end DP. Now they are refused, and without them the
    labels are voted under DP (and the missing code kept), charged to the discovery share."""
    with pytest.raises(ProfileError, match=r"labels, missing"):
        profile_from_dict(tomllib.loads(RELEASE + SEX + MEMBER + 'labels = ["yes", "no"]\nmissing = false\n'))
    profile = profile_from_dict(tomllib.loads(RELEASE + SEX + MEMBER))
    assert profile.to_estimate == {"member": Kind.BOOLEAN}
    d = synth.describe(members(4000), replace(profile, seed=3), report_to=None)
    member = d.schema.column("member")
    assert member.shape.labels == ("yes", "no") and member.missing  # voted under DP; a missing code kept
    assert any(e.query.startswith("shape(member)") for e in d.ledger)
    assert d.end_to_end_dp and d.privacy["kind_sources"]["member"] == "public"


def test_a_profiles_columns_to_estimate_are_checked():
    assert Profile(schema=None, epsilon=1.0, to_estimate={"age": "integer"}).to_estimate == {"age": Kind.INTEGER}
    with pytest.raises(ProfileError, match=r"\['sex'\] are listed both"):
        Profile(schema=SEX_SCHEMA, epsilon=1.0, to_estimate={"sex": "categorical"})
    with pytest.raises(ProfileError, match="'number'"):
        Profile(schema=None, epsilon=1.0, to_estimate={"age": "number"})
    assert Profile(schema=None, epsilon=1.0, to_estimate={"member": "boolean"}).to_estimate == {"member": Kind.BOOLEAN}
    with pytest.raises(ProfileError, match="column_order"):
        Profile(schema=SEX_SCHEMA, epsilon=1.0, to_estimate={"age": "integer"}, column_order=("age",))


# --- describing ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, names", [(AGE + SEX, ["age", "sex"]), (SEX + AGE, ["sex", "age"])])
def test_an_estimated_column_is_released_in_file_order_with_its_declared_kind(text, names):
    profile = profile_from_dict(tomllib.loads(RELEASE + text))
    d = synth.describe(people(4000), profile, seed=5, report_to=None)
    assert list(d.schema.names) == names  # extra is not in the profile: not released
    age = d.schema.column("age")
    assert age.kind == Kind.INTEGER and age.source == DomainSource.DP_ESTIMATED
    assert 0 <= age.lower < age.upper <= 128
    assert d.schema.column("sex") == SEX_SCHEMA.column("sex")
    assert d.privacy["kind_sources"] == {"age": "public", "sex": "public"}
    assert d.privacy["discovery_share"] == 0.1 and d.privacy["domain_verdicts"] == {"age": "located"}
    queries = [e.query for e in d.ledger]
    assert any(q.startswith("bounds(age)") for q in queries)
    assert not any(q.startswith("kind(") for q in queries)  # declared, not voted
    assert d.end_to_end_dp


def test_a_declared_categorical_column_has_its_categories_found_with_delta(monkeypatch):
    rng = np.random.default_rng(1)
    df = people(4000).assign(city=rng.choice(["Oslo", "Bergen", "Other"], 4000))
    profile = Profile(schema=replace(SEX_SCHEMA, other_label="Other"), epsilon=2.0, delta=1e-9, seed=2,
                      to_estimate={"city": "categorical"})
    d = synth.describe(df, profile, report_to=None)
    # "Other" is written back as the other label anyway: it is left out of the categories found
    assert d.schema.names == ("sex", "city") and d.schema.column("city").categories == ("Bergen", "Oslo")
    assert [e.cost.delta > 0 for e in d.ledger if e.query.startswith("categories(city)")] == [True]
    charged = []
    monkeypatch.setattr(Accountant, "charge", lambda self, *a, **k: charged.append(a))
    with pytest.raises(BudgetError, match="delta > 0"):
        synth.describe(df, replace(profile, delta=0.0), report_to=None)
    assert charged == []


def test_a_lost_estimated_column_is_refused_unless_rough_domains_are_accepted():
    profile = Profile(schema=SEX_SCHEMA, epsilon=0.1, delta=1e-9, seed=1, to_estimate={"age": "integer"})
    with pytest.raises(DiscoveryError, match="age"):
        synth.describe(people(30), profile, report_to=None)
    d = synth.describe(people(30), profile, accept_rough_domains=True, report_to=None)
    assert d.schema.names == ("sex",) and d.privacy["domain_verdicts"] == {"age": "lost"}


def test_checks_before_spending_see_every_listed_column(monkeypatch):
    charged = []
    monkeypatch.setattr(Accountant, "charge", lambda self, *a, **k: charged.append(a))
    alone = Profile(schema=None, epsilon=1.0, delta=1e-9, engine="mst", to_estimate={"age": "integer"})
    with pytest.raises(EngineError, match="at least two columns"):
        synth.describe(people(100), alone, report_to=None)
    absent = Profile(schema=SEX_SCHEMA, epsilon=1.0, to_estimate={"height": "float"})
    with pytest.raises(DataError, match=r"\['height'\]"):
        synth.describe(people(100), absent, report_to=None)
    with pytest.raises(ProfileError, match="kinds="):
        synth.describe(people(100), alone, kinds={"age": "integer"}, report_to=None)
    assert charged == []


def test_the_refusal_of_data_derived_domains_points_to_dp_estimation():
    df = people(200)
    drafted = draft_profile(df)
    with pytest.raises(ProfileError, match="data-derived") as caught:
        synth.describe(df, replace(drafted, engine="independent"), report_to=None)
    assert 'source = "dp-estimated"' in str(caught.value) and "delete" not in str(caught.value)
    header = profile_to_toml(drafted)
    assert 'source = "dp-estimated"' in header and "delete" not in header
    assert all(key in str(caught.value) and key in header for key in READ_KEYS)  # every key to remove is named


def test_following_the_advice_on_a_drafted_profile_gives_an_end_to_end_dp_release(tmp_path):
    """A drafted profile, edited as its refusal says (keep each column's kind, source = "dp-estimated",
    remove the rest), is accepted, and nothing in the release was read from the data without noise."""
    rng = np.random.default_rng(4)
    df = members(3000).assign(score=rng.normal(50, 10, 3000).round(2),
                              joined=pd.to_datetime("2020-01-01") + pd.to_timedelta(rng.integers(0, 900, 3000), "D"),
                              key=[f"K{i:05d}" for i in rng.permutation(3000)])
    data = tomllib.loads(profile_to_toml(draft_profile(df)))
    assert data["columns"]["member"]["labels"] == ["yes", "no"] and data["columns"]["key"]["template"] == "A99999"
    data["release"].update(seed=3, engine="independent")
    data["columns"] = {name: {"kind": column["kind"], "source": "dp-estimated"} for name, column in data["columns"].items()}
    profile = load_profile(save_profile(profile_from_dict(data), tmp_path / "edited.toml"))
    d = synth.describe(df, profile, report_to=None)
    assert d.end_to_end_dp and "data-derived" not in d.domain_sources.values()
    assert d.schema.column("member").shape.labels == ("yes", "no")  # voted under DP
    assert any(e.query.startswith("shape(member)") for e in d.ledger)


def test_shape_sources_say_where_each_written_form_came_from():
    """The release records, per column and shape key, where it came from: the profile (public), the
    noisy vote of discovery (dp-estimated), the data (data-derived: not end-to-end DP), or unset (default)."""
    rng = np.random.default_rng(5)
    df = members(3000).assign(score=rng.uniform(0, 100, 3000).round(1), key=[f"K{i:05d}" for i in range(3000)])
    score = '\n[columns.score]\nkind = "float"\nlower = 0\nupper = 100\nbins = 10\ndecimals = 1\n'
    key = '\n[columns.key]\nkind = "id"\nsource = "dp-estimated"\n'
    profile = replace(profile_from_dict(tomllib.loads(RELEASE + SEX + MEMBER + score + key)), seed=2)
    d = synth.describe(df, profile, engine="independent", report_to=None)
    assert d.privacy["shape_sources"] == {"sex": {}, "member": {"labels": "dp-estimated"},
                                          "score": {"decimals": "public"}, "key": {"template": "default"}}
    assert d.end_to_end_dp
    drafted = replace(draft_profile(df[["sex", "member", "score"]]), engine="independent", seed=2,
                      accept_data_derived_domains=True)
    d = synth.describe(df, drafted, report_to=None)
    assert d.privacy["shape_sources"] == {"sex": {}, "member": {"labels": "data-derived"},
                                          "score": {"decimals": "data-derived"}}
    assert not d.end_to_end_dp

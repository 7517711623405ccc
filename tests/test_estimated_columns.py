"""Profile columns with a public kind and a domain estimated under DP (``source = "dp-estimated"``
with no domain keys): parsed, saved, and released beside the columns whose domain is given."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from synth.errors import ProfileError
from synth.profile import Profile, load_profile, profile_from_dict, profile_to_toml, save_profile
from synth.schema import Column, DomainSource, Kind, Schema

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


@pytest.mark.parametrize("line, key", [("complete = true", "complete"), ("missing = false", "missing")])
def test_complete_or_missing_on_an_estimated_column_is_refused(tmp_path, line, key):
    with pytest.raises(ProfileError, match=rf"\[columns\.age\] has {key}.*estimated under DP"):
        load_profile(write(tmp_path, RELEASE + AGE + line + "\n"))


def test_a_profiles_columns_to_estimate_are_checked():
    assert Profile(schema=None, epsilon=1.0, to_estimate={"age": "integer"}).to_estimate == {"age": Kind.INTEGER}
    with pytest.raises(ProfileError, match=r"\['sex'\] are listed both"):
        Profile(schema=SEX_SCHEMA, epsilon=1.0, to_estimate={"sex": "categorical"})
    with pytest.raises(ProfileError, match="'number'"):
        Profile(schema=None, epsilon=1.0, to_estimate={"age": "number"})
    with pytest.raises(ProfileError, match="boolean"):
        Profile(schema=None, epsilon=1.0, to_estimate={"member": "boolean"})
    with pytest.raises(ProfileError, match="column_order"):
        Profile(schema=SEX_SCHEMA, epsilon=1.0, to_estimate={"age": "integer"}, column_order=("age",))

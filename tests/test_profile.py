"""Tests of synth.domains.profile and synth.domains.drafting: loading, validating, saving and drafting release profiles."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synth.columns.column import Column
from synth.columns.kinds import DomainSource, Kind
from synth.columns.schema import Schema
from synth.domains.drafting import draft_profile
from synth.domains.finding import make_accountant
from synth.domains.profile import MAX_DELTA, Profile, load_profile, profile_to_toml, save_profile
from synth.errors import BudgetError, InputFileError, OutputError, ProfileError
from synth.privacy import zcdp_to_approx_epsilon
from synth.tables.source import read_table

DATA = Path(__file__).resolve().parents[1] / "synth" / "data"

GOOD = """\
[release]
epsilon = 1.0
delta = 1e-9
neighbouring = "add-remove"
engine = "independent"
rows = 100
missing_markers = ["", "<NULL>"]

[engine_options]
iterations = 3

[columns.age]
kind = "integer"
lower = 17
upper = 90
bins = 74
source = "public"

[columns."work class"]
kind = "categorical"
categories = ["Private", "Self-emp-not-inc"]

[columns.joined]
kind = "datetime"
lower = 2020-01-01
upper = "2021-01-01T00:00:00"
bins = 12

[columns.member]
kind = "boolean"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "profile.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_load_profile(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, GOOD))
    assert profile.epsilon == 1.0 and profile.delta == 1e-9 and profile.rows == 100
    assert profile.engine_options == {"iterations": 3}
    assert profile.missing_markers == ("", "<NULL>") == profile.schema.missing_markers
    assert profile.schema.names == ("age", "work class", "joined", "member")
    assert profile.schema.column("joined").kind == Kind.DATETIME
    assert profile.schema.column("work class").source == DomainSource.PUBLIC
    assert profile.path == str(tmp_path / "profile.toml")


def test_save_load_round_trip(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, GOOD))
    out = save_profile(profile, tmp_path / "copy.toml")
    again = load_profile(out)
    assert again.schema == profile.schema
    assert (again.epsilon, again.delta, again.rows, again.engine_options) == (1.0, 1e-9, 100, {"iterations": 3})
    with pytest.raises(OutputError, match="exists"):
        save_profile(profile, out)
    save_profile(profile, out, force=True)


CUTS = """\
[release]
epsilon = 1.0

[columns.gain]
kind = "integer"
lower = 0
upper = 99999
cuts = [1, 1000, 5000, 99999]

[columns.ratio]
kind = "float"
lower = -1.5
upper = 2.5
cuts = [0.0, 0.1, 2.25]
bins = 4

[columns.joined]
kind = "datetime"
lower = 2020-01-01
upper = "2021-01-01"
cuts = [2020-02-01, "2020-06-01T12:00:00", 2020-09-01T00:00:00Z]
"""


def test_cuts_load_and_save_round_trip(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, CUTS))
    gain, ratio, joined = profile.schema.columns
    assert gain.cuts == (1.0, 1000.0, 5000.0, 99999.0) and gain.bins == 5
    assert ratio.cuts == (0.0, 0.1, 2.25) and ratio.bins == 4
    assert joined.bins == 4 and list(joined.edges[2:4]) == [1591012800.0, 1598918400.0]
    text = profile_to_toml(profile)
    saved = tomllib.loads(text)["columns"]
    assert saved["gain"]["cuts"] == [1, 1000, 5000, 99999] and "bins" not in saved["gain"]
    assert saved["joined"]["cuts"] == ["2020-02-01", "2020-06-01T12:00:00", "2020-09-01"]
    again = load_profile(save_profile(profile, tmp_path / "copy.toml"))
    assert again.schema == profile.schema


def test_profile_without_columns(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, "[release]\nepsilon = 2\n"))
    assert profile.schema is None and profile.missing_markers == ("",) and profile.delta == 0.0
    assert load_profile(save_profile(profile, tmp_path / "again.toml")).schema is None


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("[release\nepsilon = 1\n", r"not valid TOML.*line 1"),
        ("[release]\nepsilon = 1\n[extras]\n", r"unknown key\(s\) \['extras'\].*release, engine_options, columns"),
        ("[release]\nepsilon = 1\nepsilonn = 2\n", r"unknown key\(s\) \['epsilonn'\]"),
        ("[release]\ndelta = 0.1\n", "no epsilon"),
        ("epsilon = 1\n", r"unknown key|no \[release\]"),
        ("[release]\nepsilon = 0\n", "greater than 0"),
        ("[release]\nepsilon = \"abc\"\n", "epsilon must be a number"),
        ("[release]\nepsilon = true\n", "epsilon must be a number"),
        ("[release]\nepsilon = inf\n", "finite"),
        ("[release]\nepsilon = 1\ndelta = 1\n", "0 <= delta < 1"),
        ("[release]\nepsilon = 1\ndelta = 0.01\n", r"delta = 0.01 is above the ceiling of 0.0001.*"
         r"fails outright.*far below 1/rows.*1e-9 or smaller.*accept_large_delta = true in the profile's \[release\]"),
        ("[release]\nepsilon = 1\ndelta = 0.01\naccept_large_delta = false\n", "accept_large_delta = true"),
        ("[release]\nepsilon = 1\ndelta = 0.01\naccept_large_delta = \"yes\"\n",
         "accept_large_delta must be true or false"),
        ("[release]\nepsilon = 1\nneighbouring = \"swap\"\n", "add-remove"),
        ("[release]\nepsilon = 1\nrows = 0\n", "rows"),
        ("[release]\nepsilon = 1\ndiscovery_share = 1.5\n", "discovery_share"),
        ("[release]\nepsilon = 1\ndiscovery_share = 0.2\ndiscovery_reserve = 0.8\n", r"discovery_reserve .* 1 - discovery_share = 0.8"),
        ("[release]\nepsilon = 1\ndiscovery_reserve = -0.1\n", "discovery_reserve"),
        ("[release]\nepsilon = 1\n[columns.a]\nkind = \"string\"\n", r"\[columns.a\].*one of 'categorical'"),
        ("[release]\nepsilon = 1\n[columns.a]\nkind = \"integer\"\nlower = 5\nupper = 5\nbins = 2\n",
         r"\[columns.a\].*lower must be smaller"),
        ("[release]\nepsilon = 1\n[columns.a]\nkind = \"float\"\nlower = 0\nupper = 1\nbins = 2\n"
         "categories = [\"x\"]\n", "cannot have categories"),
        ("[release]\nepsilon = 1\n[columns.a]\nkind = \"float\"\nlower = 0\nupper = 1\nbin = 2\n",
         r"unknown key\(s\) \['bin'\].*kind, categories, lower, upper, bins, cuts, complete, missing, template, source"),
        ("[release]\nepsilon = 1\n[columns.a]\nkind = \"float\"\nlower = \"zero\"\nupper = 1\nbins = 2\n",
         "lower: a finite number"),
        ("[release]\nepsilon = 1\n[columns.a]\nkind = \"categorical\"\ncategories = \"x\"\n", "wrong type"),
        ("[release]\nepsilon = 1\n[columns.a]\nkind = \"categorical\"\ncategories = [1, 2]\n", "Quote"),
        ("[release]\nepsilon = 1\n[columns.a]\nkind = \"datetime\"\nlower = \"soon\"\nupper = \"2020-01-01\"\n"
         "bins = 1\n", "ISO 8601"),
        ("[release]\nepsilon = 1\n[columns.a]\nkind = \"boolean\"\nsource = \"guess\"\n", "source"),
        ("[release]\nepsilon = 1\nmissing_markers = \"NA\"\n", "list of strings"),
        ("[release]\nepsilon = 1\n[columns.a]\nkind = \"integer\"\nlower = 0\nupper = 9\ncuts = [1, 5]\n"
         "bins = 2\n", r"\[columns.a\].*bins = 2 but its cuts make 3 bins.*set bins = 3"),
        ("[release]\nepsilon = 1\n[columns.a]\nkind = \"integer\"\nlower = 0\nupper = 9\ncuts = 5\n",
         r"\[columns.a\]: cuts has the wrong type"),
        ("[release]\nepsilon = 1\n[columns.a]\nkind = \"integer\"\nlower = 0\nupper = 9\ncuts = [5, 1]\n",
         "strictly increasing"),
        ("[release]\nepsilon = 1\n[columns.a]\nkind = \"integer\"\nlower = 0\nupper = 9\ncuts = [1.5]\n",
         "whole numbers"),
        ("[release]\nepsilon = 1\n[columns.a]\nkind = \"float\"\nlower = 0\nupper = 9\ncuts = [9.5]\n",
         "outside the bounds"),
        ("[release]\nepsilon = 1\n[columns.a]\nkind = \"datetime\"\nlower = 2020-01-01\nupper = 2021-01-01\n"
         "cuts = [\"June\"]\n", "ISO 8601"),
        ("[release]\nepsilon = 1\n[columns.a]\nkind = \"categorical\"\ncategories = [\"x\"]\ncuts = [1]\n",
         "cannot have cuts"),
    ],
)
def test_malformed_profiles_raise_profile_error(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(ProfileError, match=fragment):
        load_profile(write(tmp_path, text))


def test_missing_profile_file(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="no profile"):
        load_profile(tmp_path / "nope.toml")


def test_budget_checks_and_overrides() -> None:
    for bad in (0, -1.0, float("nan"), "1", True, None):
        with pytest.raises(BudgetError):
            Profile(schema=None, epsilon=bad)
    for bad in (1, 1.5, -1e-9, "0"):
        with pytest.raises(BudgetError):
            Profile(schema=None, epsilon=1, delta=bad)
    base = Profile(schema=None, epsilon=1)
    changed = base.with_overrides(epsilon=3, delta=None, engine="mst", rows=5, seed=None)
    assert (changed.epsilon, changed.delta, changed.engine, changed.rows, changed.seed) == (3.0, 0.0, "mst", 5, None)
    with pytest.raises(BudgetError):
        base.with_overrides(epsilon=-2)
    with pytest.raises(TypeError, match="no setting"):
        base.with_overrides(epsilonn=2)
    schema = Schema((Column("b", Kind.BOOLEAN),))
    marked = Profile(schema=schema, epsilon=1).with_overrides(missing_markers=("", "NA"))
    assert marked.schema.missing_markers == marked.missing_markers == ("", "NA")
    with pytest.raises(ProfileError, match="differ"):
        Profile(schema=schema, epsilon=1, missing_markers=("NA",))


def test_delta_above_the_ceiling_needs_accept_large_delta(tmp_path: Path) -> None:
    assert Profile(schema=None, epsilon=1, delta=MAX_DELTA).delta == MAX_DELTA == 1e-4
    for delta in (0.5, 0.01, 1.01e-4):
        with pytest.raises(BudgetError, match="accept_large_delta = true"):
            Profile(schema=None, epsilon=1, delta=delta)
    with pytest.raises(BudgetError, match="above the ceiling"):  # --delta is checked like the profile's
        Profile(schema=None, epsilon=1, delta=1e-9).with_overrides(delta=0.5)
    accepted = load_profile(write(tmp_path, "[release]\nepsilon = 1\ndelta = 0.01\naccept_large_delta = true\n"))
    assert (accepted.delta, accepted.accept_large_delta) == (0.01, True)
    assert accepted.with_overrides(delta=0.5).delta == 0.5
    again = load_profile(save_profile(accepted, tmp_path / "again.toml"))
    assert (again.delta, again.accept_large_delta) == (0.01, True)
    assert "accept_large_delta" not in profile_to_toml(Profile(schema=None, epsilon=1, delta=1e-9))


def test_draft_profile_marks_data_derived(tmp_path: Path) -> None:
    df = pd.DataFrame({
        "age": ["34", "<NULL>", "51", "17"],
        "city": ["Oslo", "Bergen", "Oslo", ""],
        "score": [0.5, 2.25, np.nan, 1.0],
        "member": ["yes", "no", "yes", "no"],
        "when": ["2020-01-05", "2020-03-01", "2021-12-31", "<NULL>"],
        "nothing": ["", "<NULL>", "", ""],
    })
    draft = draft_profile(df, missing_markers=("", "<NULL>"))
    schema = draft.schema
    assert [c.kind for c in schema.columns] == [Kind.INTEGER, Kind.CATEGORICAL, Kind.FLOAT, Kind.BOOLEAN,
                                                Kind.DATETIME, Kind.CATEGORICAL]
    # every kind was read from the data, a boolean's too (its domain False/True is fixed)
    assert all(c.source == DomainSource.DATA_DERIVED for c in schema.columns)
    assert (schema.column("age").lower, schema.column("age").upper) == (17.0, 51.0)
    assert schema.column("city").categories == ("Bergen", "Oslo")
    assert not draft.accept_data_derived_domains
    _, report = schema.encode(df)
    assert report.clean
    text = profile_to_toml(draft)
    assert "READ FROM THE PRIVATE DATA" in text and "accept_data_derived_domains = true" in text
    assert text.count("# data-derived: read from the data") == 5
    assert text.count("# data-derived: the kind was read from the data") == 1
    tomllib.loads(text)
    path = save_profile(draft, tmp_path / "draft.toml")
    assert load_profile(path).schema == schema


def test_draft_caps_categories() -> None:
    values = [f"v{i:04d}" for i in range(1100)] * 2 + ["v0001"] * 3  # two rows a value: not unique per row
    draft = draft_profile(pd.DataFrame({"c": values}))
    categories = draft.schema.column("c").categories
    assert len(categories) == 1000 and "v0001" in categories
    assert "most frequent values are listed" in profile_to_toml(draft)


def test_bundled_adult_profile_encodes_cleanly() -> None:
    profile = load_profile(DATA / "adult.toml")
    assert (profile.epsilon, profile.delta, profile.engine_name) == (1.0, 1e-9, "aim")
    assert all(c.source == DomainSource.PUBLIC for c in profile.schema.columns)
    df = read_table(DATA / "adult.csv.gz", profile.missing_markers)
    assert df.shape == (30162, 15)
    assert profile.schema.names == tuple(df.columns)
    codes, report = profile.schema.encode(df)
    assert report.clean, report.lines()
    assert codes.shape == (30162, 15)
    # the demo data has no missing cells, and the profile says so: no column has a missing code
    assert all(not c.missing and c.missing_code == -1 for c in profile.schema.columns)
    for name in ("capital_gain", "capital_loss"):  # 0 has a bin of its own
        column = profile.schema.column(name)
        assert column.cuts is not None and list(column.edges[:2]) == [0, 1]


def test_default_engine_is_aim_under_zcdp_and_independent_otherwise():
    assert Profile(schema=None, epsilon=1.0, delta=1e-9).engine_name == "aim"
    assert Profile(schema=None, epsilon=1.0).engine_name == "independent"  # delta = 0: pure DP
    assert Profile(schema=None, epsilon=1.0, delta=1e-9, accounting="approx").engine_name == "independent"
    assert Profile(schema=None, epsilon=1.0, engine="mst").engine_name == "mst"
    # an unset engine stays unset in the file, so the rule applies again when delta changes
    text = profile_to_toml(Profile(schema=None, epsilon=1.0, delta=1e-9))
    assert "engine" not in text
    assert profile_to_toml(Profile(schema=None, epsilon=1.0, engine="mst")).count('engine = "mst"') == 1


def test_the_readme_documents_the_delta_ceiling() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    privacy = readme.split("## The privacy guarantee", 1)[1].split("\n## ", 1)[0]
    assert MAX_DELTA == 1e-4 and "above 1e-4" in privacy and "accept_large_delta = true" in privacy


def test_the_readme_gives_discovery_shares_of_rho_in_epsilon_as_the_accountant_does() -> None:
    """discovery_share is a share of rho under zCDP: the README's figures at epsilon 1, delta 1e-9
    are the accountant's own (with and without half of delta set aside for text categories)."""
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8").split())
    profile = Profile(schema=None, epsilon=1.0, delta=1e-9)
    for reserves, rho_text in ((True, "ρ ≈ {:.4f}"), (False, "{:.4f} without")):
        accountant, reserved = make_accountant(profile, reserves)
        rho = accountant.notion.unit_of(accountant.remaining())
        assert rho_text.format(rho) in readme
        share, rest = (zcdp_to_approx_epsilon(part * rho, profile.delta - reserved) for part in (0.1, 0.9))
        assert f"10 % amounts on its own to ε ≈ {share:.2f}, the other 90 % to ε ≈ {rest:.2f}" in readme


def test_a_draft_proposes_missing_markers_seen_in_number_columns() -> None:
    df = pd.DataFrame({"income": ["1200", "NA", "3400", "?", "560", "780"],
                       "code": ["A1", "B2", "NA", "C3", "D4", "E5"],  # text: NA stays one of its values
                       "count": ["3", "-", "7", "9", "1", "0"]})
    draft = draft_profile(df)
    assert draft.missing_markers == ("", "NA", "?", "-")
    assert draft.schema.column("income").kind == Kind.INTEGER and draft.schema.column("count").kind == Kind.INTEGER
    assert (draft.schema.column("income").lower, draft.schema.column("income").upper) == (560, 3400)
    assert "missing_markers may list markers" in profile_to_toml(draft)

"""A profile drafted under DP (`synth profile --epsilon`), reviewed, then used by `synth run`: one
release of two steps, within one budget (issue 30, item 8), and the data-derived draft's bins."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tomli_w

import synth
from synth import api
from synth.columns.column import Column
from synth.domains.drafting import DRAFT_BINS, draft_profile
from synth.domains.profile import load_profile, profile_to_toml
from synth.errors import BudgetError, DataError, ProfileError
from synth.release.description import load_description
from tests.test_cli import assert_clean_error, run_cli


def _table(n: int = 6000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "region": rng.choice(["north", "south", "east", "west"], n, p=[0.4, 0.3, 0.2, 0.1]),
        "income": np.round(rng.lognormal(10, 1, n), 2),
        "member": rng.choice(["yes", "no"], n),
    })


@pytest.fixture
def table_csv(tmp_path: Path) -> Path:
    path = tmp_path / "table.csv"
    _table().to_csv(path, index=False)
    return path


def _draft(capsys, data: Path, profile: Path, *extra: str) -> None:
    code, out, err = run_cli(capsys, "profile", str(data), "--epsilon", "1", "--seed", "3", "-o", str(profile), *extra)
    assert code == 0, err
    assert "drafted under DP" in out


def test_profile_under_dp_then_run_is_one_release_within_the_budget(capsys, tmp_path, table_csv):
    profile, out = tmp_path / "p.toml", tmp_path / "out"
    _draft(capsys, table_csv, profile)
    drafted = load_profile(profile)
    draft = drafted.dp_draft
    assert draft is not None and draft.data_file == "table.csv" and draft.share == 0.2
    assert set(draft.columns) == {"age", "region", "income", "member"}
    assert {c.source.value for c in drafted.schema.output_columns} == {"dp-estimated"}
    assert drafted.schema.column("region").categories == ("east", "north", "south", "west")
    assert drafted.schema.column("member").shape.labels == ("yes", "no")  # kept: found by the recorded draft
    # the draft spent at most its share of rho
    assert draft.spent["rho"] <= 0.2 * draft.budget["rho"] * (1 + 1e-12)
    code, _, err = run_cli(capsys, "run", str(table_csv), "--profile", str(profile), "--seed", "3", "-o", str(out),
                           "--quiet")
    assert code == 0, err
    description = load_description(out / "description.json")  # validates the ledger against spent and budget
    privacy = description.privacy
    assert privacy["spent"]["epsilon"] <= privacy["budget"]["epsilon"] + 1e-12
    assert privacy["spent"]["delta"] <= privacy["budget"]["delta"]
    steps = privacy["steps"]
    assert [s["step"] for s in steps] == ["profile draft", "release"]
    assert steps[0]["spent"] == {k: v for k, v in draft.spent.items()}
    assert steps[0]["ledger_entries"] == {"first": 0, "count": len(draft.ledger)}
    assert steps[1]["ledger_entries"] == {"first": len(draft.ledger), "count": len(description.ledger) - len(draft.ledger)}
    assert all("profile's draft under DP" in e.note for e in description.ledger[:len(draft.ledger)])
    assert [e.query for e in description.ledger[:len(draft.ledger)]] == [e.query for e in draft.ledger]
    # rho adds up: the draft's and the release's own spending make the total
    assert steps[0]["spent"]["rho"] + steps[1]["spent"]["rho"] == pytest.approx(privacy["spent"]["rho"], rel=1e-9)
    assert description.end_to_end_dp and set(description.domain_sources.values()) == {"dp-estimated"}
    assert set(privacy["kind_sources"].values()) == {"dp-estimated"}
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["privacy"]["end_to_end_dp"] is True
    assert [s["step"] for s in manifest["privacy"]["steps"]] == ["profile draft", "release"]
    assert "drafting the release profile under DP" in manifest["statement"]
    synthetic = pd.read_csv(out / "synthetic.csv", keep_default_na=False)
    assert set(synthetic["member"]) <= {"yes", "no"} and set(synthetic["region"]) <= {"east", "north", "south", "west"}


def test_a_run_whose_budget_is_below_what_the_draft_spent_is_refused_before_reading(capsys, tmp_path, table_csv,
                                                                                     monkeypatch):
    profile = tmp_path / "p.toml"
    _draft(capsys, table_csv, profile)

    def no_reading(*args, **kwargs):
        raise AssertionError("the data was read")

    monkeypatch.setattr(api, "load_data", no_reading)
    monkeypatch.setattr(api, "read_table_chunks", no_reading)
    code, _, err = run_cli(capsys, "run", str(table_csv), "--profile", str(profile), "--seed", "3", "--epsilon", "0.2",
                           "-o", str(tmp_path / "out"))
    assert_clean_error(code, err, "drafted under DP", "cannot cover", "nothing was read or spent")
    assert not (tmp_path / "out").exists()
    with pytest.raises(BudgetError, match="cannot cover"):
        api.describe(table_csv, profile, epsilon=0.2, seed=3)


def test_a_run_on_other_data_or_without_the_drafts_seed_is_refused(capsys, tmp_path, table_csv):
    profile = tmp_path / "p.toml"
    _draft(capsys, table_csv, profile)
    renamed = tmp_path / "other.csv"
    renamed.write_bytes(table_csv.read_bytes())
    code, _, err = run_cli(capsys, "run", str(renamed), "--profile", str(profile), "--seed", "3", "-o", str(tmp_path / "a"))
    assert_clean_error(code, err, "'table.csv', not 'other.csv'")
    wider = tmp_path / "wide" / "table.csv"
    wider.parent.mkdir()
    _table().assign(extra=1).to_csv(wider, index=False)
    code, _, err = run_cli(capsys, "run", str(wider), "--profile", str(profile), "--seed", "3", "-o", str(tmp_path / "b"))
    assert_clean_error(code, err, "other columns", "extra")
    with pytest.raises(DataError, match="other columns"):
        api.describe(_table().assign(extra=1), profile, seed=3)
    code, _, err = run_cli(capsys, "run", str(table_csv), "--profile", str(profile), "-o", str(tmp_path / "c"))
    assert_clean_error(code, err, "seeded noise")
    code, _, err = run_cli(capsys, "run", str(table_csv), "--profile", str(profile), "--seed", "3", "--delta", "0",
                           "-o", str(tmp_path / "d"))
    assert_clean_error(code, err, "accounted as zcdp")
    assert not any((tmp_path / name).exists() for name in "abcd")


def test_the_reviewed_domains_are_used_as_written(capsys, tmp_path, table_csv):
    """The person narrows a category list and an upper bound: the release uses them (public edits)."""
    profile, out = tmp_path / "p.toml", tmp_path / "out"
    _draft(capsys, table_csv, profile)
    data = tomllib.loads(profile.read_text())
    data["columns"]["region"]["categories"] = ["north", "south"]
    data["columns"]["region"].pop("complete", None)
    age = data["columns"]["age"]
    age["upper"] = 60
    age["cuts"] = [c for c in age["cuts"] if c <= 60]
    profile.write_text(tomli_w.dumps(data))
    code, _, err = run_cli(capsys, "run", str(table_csv), "--profile", str(profile), "--seed", "3", "-o", str(out),
                           "--quiet")
    assert code == 0, err
    schema = load_description(out / "description.json").schema
    assert schema.column("region").categories == ("north", "south")
    assert schema.column("age").upper == 60
    synthetic = pd.read_csv(out / "synthetic.csv", keep_default_na=False)
    assert set(synthetic["region"]) <= {"north", "south", "<OTHER>", ""}
    assert synthetic["age"].astype(int).max() <= 60


def test_the_draft_record_is_checked(tmp_path, table_csv):
    """Read back as written; keys of columns the draft found are kept only with its record, and an
    altered record is refused."""
    profile = api.draft_profile(table_csv, epsilon=1.0, seed=2, report_to=None)
    text = profile_to_toml(profile)
    path = tmp_path / "p.toml"
    path.write_text(text)
    assert load_profile(path).dp_draft == profile.dp_draft
    data = tomllib.loads(text)
    without = {k: v for k, v in data.items() if k != "dp_draft"}
    path.write_text(tomli_w.dumps(without))
    with pytest.raises(ProfileError, match="labels"):  # a boolean's words: refused unless the draft found them
        load_profile(path)
    data["dp_draft"]["ledger"][0]["cost"]["rho"] /= 2
    path.write_text(tomli_w.dumps(data))
    with pytest.raises(ProfileError, match="altered"):
        api.describe(table_csv, path, seed=2)
    data = tomllib.loads(text)
    data["dp_draft"]["columns"].append("nowhere")
    path.write_text(tomli_w.dumps(data))
    with pytest.raises(ProfileError, match="altered"):
        load_profile(path)


def test_draft_profile_from_python_and_the_data_derived_draft_second(capsys, tmp_path, table_csv):
    df = _table()
    profile = synth.draft_profile(df, epsilon=1.0, seed=5, report_to=None)
    assert profile.dp_draft is not None and profile.dp_draft.data_file is None
    result = synth.run(df, tmp_path / "out", profile, seed=5, report_to=None)
    assert result.description.privacy["spent"]["epsilon"] <= 1.0 + 1e-12
    assert len(result.description.privacy["steps"]) == 2
    derived = synth.draft_profile(df)
    assert derived.dp_draft is None and {c.source.value for c in derived.schema.output_columns} == {"data-derived"}
    code, out, _ = run_cli(capsys, "profile", str(table_csv), "-o", str(tmp_path / "d.toml"))
    assert code == 0 and "DATA-DERIVED" in out and "--epsilon" in out
    code, _, err = run_cli(capsys, "profile", str(table_csv), "--seed", "1", "-o", str(tmp_path / "e.toml"))
    assert_clean_error(code, err, "--epsilon")
    code, _, err = run_cli(capsys, "profile", str(table_csv), "--epsilon", "1", "--share", "1.5", "-o",
                           str(tmp_path / "f.toml"))
    assert_clean_error(code, err, "--share")
    assert "--epsilon" in run_cli(capsys, "profile", "--help")[1]


def _bin_of(column: Column, value: float) -> tuple[float, float]:
    edges = column.edges
    k = min(int(np.searchsorted(edges, value, side="right")) - 1, column.bins - 1)
    return edges[k], edges[k + 1]


def test_drafted_integers_of_few_values_get_one_bin_per_value():
    rng = np.random.default_rng(0)
    values = [0, 10, 20, 30, 40, 50]
    df = pd.DataFrame({"steps": rng.choice(values, 500), "rating": rng.integers(1, 6, 500),
                       "many": rng.integers(0, 1000, 500)})
    schema = draft_profile(df).schema
    steps = schema.column("steps")
    for v in values:  # the bin holding v holds no other integer: no value is drawn that never occurs
        low, high = _bin_of(steps, v)
        assert low == v and (high == v + 1 or high == v == steps.upper), (v, low, high)
    assert schema.column("rating").bins == 5
    assert schema.column("many").bins <= DRAFT_BINS + 1


def test_a_drafted_skewed_column_is_cut_at_its_quantiles():
    rng = np.random.default_rng(1)
    income = np.round(rng.lognormal(10, 1.5, 20_000), 2)
    column = draft_profile(pd.DataFrame({"income": income})).schema.column("income")
    assert column.cuts is not None and column.bins >= DRAFT_BINS - 2
    shares = np.histogram(income, bins=np.asarray(column.edges))[0] / income.size
    assert shares.max() < 2 / DRAFT_BINS  # equal-width bins held over 90 % in the first bin
    expected = np.quantile(income, np.arange(1, DRAFT_BINS) / DRAFT_BINS, method="inverted_cdf")
    assert np.allclose(sorted(column.cuts), expected)
    zeros = np.concatenate([np.zeros(5000), income[:15_000]])
    with_zero = draft_profile(pd.DataFrame({"x": zeros})).schema.column("x")
    assert _bin_of(with_zero, 0.0)[1] == np.min(zeros[zeros > 0])  # a heavy zero: a bin of its own

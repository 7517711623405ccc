"""No decision reads an exact count (issue 29, item 2): a table of no rows and its neighbour of one
row go the same way, decided from noisy values only; PrivBayes's mutual-information scores
decide nothing from the row count."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

import synth.api
from synth.cli import main
from synth.drafting import draft_profile
from synth.errors import DiscoveryError
from synth.kinds import DomainSource
from synth.profile import Profile, save_profile
from synth.tableio import parquet_available, read_table, read_table_chunks
from tests.conftest import mixed_table


def _public_profile(df: pd.DataFrame, engine: str, seed: int = 3) -> Profile:
    """``df``'s drafted profile with every domain marked public (as a user who knows them would)."""
    drafted = draft_profile(df)
    assert drafted.schema is not None
    schema = replace(drafted.schema, columns=tuple(replace(c, source=DomainSource.PUBLIC) for c in drafted.schema.columns))
    return replace(drafted, schema=schema, engine=engine, seed=seed)


def _neighbours(tmp_path: Path, form: str) -> tuple[object, object]:
    """The first row of ``mixed_table`` and no row of it (its header only), as ``form`` gives them."""
    df = mixed_table(200)
    one, zero = df.iloc[:1], df.iloc[:0]
    if form == "frame":
        return zero, one
    for name, part in (("zero", zero), ("one", one)):
        if form == "csv":
            part.to_csv(tmp_path / f"{name}.csv", index=False)
        else:
            part.astype(str).to_parquet(tmp_path / f"{name}.parquet")
    suffix = "csv" if form == "csv" else "parquet"
    return tmp_path / f"zero.{suffix}", tmp_path / f"one.{suffix}"


def _ledger(description) -> list[tuple[str, str]]:
    return [(e.mechanism, e.query) for e in description.ledger]


@pytest.mark.parametrize("form", ["frame", "csv", pytest.param("parquet", marks=pytest.mark.skipif(
    not parquet_available(), reason="needs pyarrow"))])
@pytest.mark.parametrize("engine", ["independent", "privbayes", "aim"])
def test_no_rows_and_one_row_with_a_public_profile_are_released_alike(tmp_path, form, engine):
    zero, one = _neighbours(tmp_path, form)
    profile = _public_profile(mixed_table(200), engine)
    results = [synth.api.run(data, tmp_path / name, profile, report_to=None)
               for name, data in (("out0", zero), ("out1", one))]
    for result in results:
        assert result.rows >= 1 and list(result.synthetic.columns) == list(mixed_table(1).columns)
        assert result.description.end_to_end_dp
    assert _ledger(results[0].description) == _ledger(results[1].description)
    assert results[0].description.privacy["spent"] == results[1].description.privacy["spent"]


def test_no_rows_and_one_row_through_the_cli_exit_alike(tmp_path, capsys):
    zero, one = _neighbours(tmp_path, "csv")
    save_profile(_public_profile(mixed_table(200), "mst"), tmp_path / "profile.toml")
    for name, data in (("zero", zero), ("one", one)):
        assert main(["run", str(data), "--profile", str(tmp_path / "profile.toml"), "-o", str(tmp_path / name),
                     "-q"]) == 0
        description = tmp_path / f"{name}.json"
        assert main(["describe", str(data), "--profile", str(tmp_path / "profile.toml"), "-o", str(description),
                     "-q"]) == 0
        assert main(["generate", str(description), "--rows", "50", "-o", str(tmp_path / f"{name}_synthetic.csv"),
                     "-q"]) == 0
        assert len(pd.read_csv(tmp_path / f"{name}_synthetic.csv")) == 50
    capsys.readouterr()


@pytest.mark.parametrize("seed", [1, 2])
def test_discovery_on_no_rows_refuses_as_on_one_row(tmp_path, seed):
    zero, one = _neighbours(tmp_path, "frame")
    outcomes = []
    for data in (zero, one):
        with pytest.raises(DiscoveryError) as caught:
            synth.api.describe(data, epsilon=1.0, seed=seed, report_to=None)
        outcomes.append(str(caught.value).split("This run had already spent")[1])
    assert outcomes[0] == outcomes[1]  # the same charges, the same refusal: from noisy counts only


def test_a_header_without_rows_is_read_as_a_table_of_no_rows(tmp_path):
    (tmp_path / "head.csv").write_text("a,b\n")
    assert read_table(tmp_path / "head.csv").shape == (0, 2)
    chunks = list(read_table_chunks(tmp_path / "head.csv", 10))
    assert len(chunks) == 1 and list(chunks[0].columns) == ["a", "b"] and chunks[0].empty


"""``synth run --holdout``: rows set aside beside the data, never in the release, never seen by the describer."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from synth import api
from synth.errors import AttackError
from synth.release.holdout import check_holdout_place, holdout_path, parse_share, set_aside
from tests.conftest import run_cli


def rows_of(frame: pd.DataFrame) -> Counter:
    return Counter(map(tuple, frame.astype(object).fillna("").astype(str).to_numpy().tolist()))


def test_run_sets_rows_aside_beside_the_data_and_describes_only_the_rest(capsys, tmp_path, mixed_csv, monkeypatch):
    seen = []
    describe = api._describe
    monkeypatch.setattr(api, "_describe", lambda frame, *a, **k: seen.append(frame.copy()) or describe(frame, *a, **k))
    out = tmp_path / "release"
    code, _, err = run_cli(capsys, "run", str(mixed_csv), "--epsilon", "1", "--seed", "4", "--holdout", "10%",
                           "-o", str(out), "-q")
    assert code == 0, err
    held_file = tmp_path / "mixed.holdout.csv"
    assert held_file.is_file() and "private data" in err and str(held_file) in err
    assert not any("holdout" in p.name for p in out.iterdir())
    original = pd.read_csv(mixed_csv, dtype=str, keep_default_na=False)
    held = pd.read_csv(held_file, dtype=str, keep_default_na=False)
    # each row held out with probability 0.1: 200 of 2,000 expected, standard deviation 13.4
    assert list(held.columns) == list(original.columns) and abs(len(held) - 0.1 * len(original)) < 4 * 13.4
    [described] = seen
    assert rows_of(described) + rows_of(held) == rows_of(original)  # every row once: kept or held, never both
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["holdout"]["share"] == 0.1
    assert str(len(held)) not in json.dumps(manifest["holdout"]) and str(len(described)) not in json.dumps(manifest["holdout"])

    code, _, err = run_cli(capsys, "run", str(mixed_csv), "--epsilon", "1", "--holdout", "10%", "-o",
                           str(tmp_path / "again"), "-q")
    assert code == 2 and "exists already" in err and str(held_file) in err
    assert not (tmp_path / "again" / "description.json").exists()  # refused before any work


def test_a_seeded_split_is_reproducible_and_the_share_is_uniform():
    frame = pd.DataFrame({"x": np.arange(10_000)})
    a = set_aside(frame, 0.2, np.random.default_rng(1))[1]
    b = set_aside(frame, 0.2, np.random.default_rng(1))[1]
    assert a.equals(b) and abs(len(a) - 2000) < 4 * 40  # binomial: standard deviation 40
    # uniform: the held-out rows' mean position is the table's (standard error ~ 58 for 2,000 of 10,000)
    assert abs(a["x"].mean() - 4999.5) < 250
    assert not a.equals(set_aside(frame, 0.2, np.random.default_rng(2))[1])


def test_a_row_added_to_the_table_moves_no_other_row_between_kept_and_held():
    # a fixed number of held-out rows follows the row count, so one added row could swap another row
    # between the two sides and the release would differ from its neighbour's in two rows
    frame = pd.DataFrame({"x": np.arange(1_000)})
    for seed in range(20):
        kept, held = set_aside(frame, 0.1, np.random.default_rng(seed))
        kept_more, held_more = set_aside(pd.concat([frame, pd.DataFrame({"x": [1_000]})], ignore_index=True), 0.1,
                                         np.random.default_rng(seed))
        assert set(kept_more["x"]) - {1_000} == set(kept["x"]) and set(held_more["x"]) - {1_000} == set(held["x"])


@pytest.mark.parametrize(("text", "share"), [("10%", 0.1), ("0.1", 0.1), ("25 %", 0.25), (0.5, 0.5)])
def test_shares_are_read_as_percentages_or_fractions(text, share):
    assert parse_share(text) == pytest.approx(share)


@pytest.mark.parametrize("text", ["0", "60%", "ten", "-0.1", "1"])
def test_bad_shares_are_refused(text):
    with pytest.raises(AttackError, match="--holdout"):
        parse_share(text)


def test_the_holdout_is_named_after_the_data_and_never_placed_in_the_release(tmp_path):
    assert holdout_path(tmp_path / "adult.csv.gz").name == "adult.holdout.csv.gz"
    assert holdout_path(tmp_path / "a.b.parquet").name == "a.b.holdout.parquet"
    with pytest.raises(AttackError, match="inside the release folder"):
        check_holdout_place(tmp_path / "data.csv", tmp_path)


def test_a_database_and_a_bad_share_are_refused_on_the_command_line(capsys, tmp_path, mixed_csv):
    database = tmp_path / "db.sqlite"
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT)")
    code, _, err = run_cli(capsys, "run", str(database), "--epsilon", "1", "--holdout", "10%", "-o", str(tmp_path / "o"))
    assert code == 2 and "not a database" in err
    code, _, err = run_cli(capsys, "run", str(mixed_csv), "--epsilon", "1", "--holdout", "200%", "-o", str(tmp_path / "o"))
    assert code == 2 and "outside" in err and not (tmp_path / "mixed.holdout.csv").exists()

"""Evaluating a relational release: the scores are exact where the answer is known (the original
scored against itself, a broken link, a hand-made degree list), the release beats the naive one on
what links carry, and the command line prints the results or a clear error."""

from __future__ import annotations

import json
import shutil
import sqlite3

import numpy as np
import pytest
from relational_cases import hospital, write_duckdb, write_profile, write_sqlite

from synth import api
from synth.cli import main
from synth.errors import InputFileError, RelationalError
from synth.evaluate.relational import (
    DEGREE_EDGES,
    cross_relation_tvd,
    degree_buckets,
    degree_histogram,
    evaluate_database,
)
from synth.relational.stored import read_release

CASE_SEED = 3


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """A hospital database (men have more visits, wards follow age) and its release at ε = 4."""
    folder = tmp_path_factory.mktemp("released")
    database = write_sqlite(hospital(3000, seed=CASE_SEED), folder / "h.sqlite")
    api.run_database(database, folder / "release", write_profile(folder / "p.toml", epsilon=4.0, seed=5),
                     report_to=None)
    return database, folder / "release"


def test_degree_buckets_hold_each_count_once() -> None:
    degrees = np.array([0, 0, 1, 5, 6, 7, 100, 101, 5000])
    shares = degree_histogram(degrees)
    labels = degree_buckets()
    assert len(labels) == len(DEGREE_EDGES) and shares.sum() == pytest.approx(1.0)
    held = {labels[i]: round(float(s) * 9) for i, s in enumerate(shares) if s > 0}
    assert held == {"0": 2, "1": 1, "5-6": 2, "7-8": 1, "65-100": 1, "101-150": 1, "1001+": 1}


def test_the_original_scored_against_itself_is_exact_and_the_naive_links_are_not(released, tmp_path) -> None:
    database, release = released
    copy = tmp_path / "release"
    shutil.copytree(release, copy)
    shutil.copyfile(database, copy / "synthetic.sqlite")  # the "synthetic" database is the original
    evaluation = evaluate_database(database, copy)
    assert evaluation.degrees["visits"].tvd == 0.0
    assert evaluation.degrees["visits"].joint_tvd == 0.0
    assert evaluation.cross["visits"].tvds.max() == 0.0
    assert evaluation.tables["patients"].marginal(2).tvds.max() == 0.0
    assert evaluation.integrity["visits"].share == 1.0 and evaluation.integrity["visits"].unique_keys
    # random links lose what ties visits to patients: men's extra visits and the ward that follows age
    assert evaluation.cross["visits"].naive_tvds.mean() > 0.1
    assert evaluation.degrees["visits"].naive_tvd > 0.1


def test_the_release_keeps_what_the_links_carry_far_better_than_the_naive_release(released) -> None:
    database, release = released
    result = evaluate_database(database, release).to_dict()
    cross, degrees = result["cross_relation"]["visits"], result["children_per_parent"]["visits"]
    assert result["referential_integrity"] == {"visits": 1.0}
    assert cross["mean_tvd"] <= 0.5 * cross["naive_mean_tvd"]
    assert degrees["tvd"] <= 0.5 * degrees["naive_tvd"]
    assert degrees["joint_with_parent_mean_tvd"] < degrees["naive_joint_with_parent_mean_tvd"]
    assert {p["parent"] for p in cross["pairs"]} == {"patients.sex", "patients.age"}
    assert result["release"]["bounds"] == {"visits": {"max_children": 5, "source": "profile"}}


def test_a_broken_link_counts_against_referential_integrity(released, tmp_path) -> None:
    database, release = released
    copy = tmp_path / "release"
    shutil.copytree(release, copy)
    with sqlite3.connect(copy / "synthetic.sqlite") as connection:
        rows = connection.execute("SELECT COUNT(*) FROM visits").fetchone()[0]
        connection.execute("PRAGMA foreign_keys = OFF")
        connection.execute("UPDATE visits SET patient_id = -1 WHERE visit_id <= 10")
    integrity = evaluate_database(database, copy).integrity["visits"]
    assert integrity.rows == rows and integrity.linked == rows - 10


def test_a_join_released_as_one_table_is_scored_on_the_same_pairs(released) -> None:
    database, release = released
    files = read_release(release)
    with sqlite3.connect(database) as connection:
        import pandas as pd
        joined = pd.read_sql_query("SELECT v.ward, p.sex AS \"patients.sex\", p.age AS \"patients.age\" "
                                   "FROM visits v JOIN patients p ON v.patient_id = p.patient_id", connection)
    assert files.structure.children[0].name == "visits"
    assert cross_relation_tvd(database, release, "visits", joined) == 0.0
    shuffled = joined.assign(ward=joined["ward"].sample(frac=1.0, random_state=0).to_numpy())
    assert cross_relation_tvd(database, release, "visits", shuffled) > 0.1
    with pytest.raises(RelationalError, match="no child table 'wards'"):
        cross_relation_tvd(database, release, "wards", joined)


def test_synth_evaluate_on_a_database_prints_the_scores_and_writes_the_report(released, tmp_path, capsys) -> None:
    database, release = released
    report, metrics = tmp_path / "ev.html", tmp_path / "ev.json"
    assert main(["evaluate", str(database), str(release), "--report", str(report), "--json", str(metrics), "-q"]) == 0
    out = capsys.readouterr().out
    assert "visits referential integrity: 100.00%" in out and "visits per patients: TVD" in out
    page = report.read_text(encoding="utf-8")
    assert "Not a DP output" in page and "data:image/png;base64," in page and "naive" in page
    assert json.loads(metrics.read_text(encoding="utf-8"))["referential_integrity"] == {"visits": 1.0}
    assert main(["evaluate", str(database), str(release), "--report", str(report), "-q"]) != 0  # exists: refused
    assert "exists" in capsys.readouterr().err


def test_a_duckdb_release_is_evaluated_alike(tmp_path) -> None:
    database = write_duckdb(hospital(800, seed=CASE_SEED), tmp_path / "h.duckdb")
    api.run_database(database, tmp_path / "release", write_profile(tmp_path / "p.toml", epsilon=4.0), report_to=None)
    evaluation = evaluate_database(database, tmp_path / "release")
    assert evaluation.integrity["visits"].share == 1.0 and evaluation.rows["patients"][0] == 800


def test_bad_inputs_say_what_to_pass(released, tmp_path, capsys) -> None:
    database, release = released
    with pytest.raises(InputFileError, match=r"relational\.json"):
        evaluate_database(database, tmp_path)
    assert main(["evaluate", str(database), str(release), "--target", "ward"]) != 0
    assert "not supported for a database" in capsys.readouterr().err
    other = write_sqlite(hospital(50), tmp_path / "other.sqlite")
    with sqlite3.connect(other) as connection:
        connection.execute("ALTER TABLE visits RENAME TO stays")
    with pytest.raises(RelationalError, match="lacks table"):
        evaluate_database(other, release)


def test_synth_generate_draws_a_new_database_from_the_release_without_the_original(released, tmp_path, capsys) -> None:
    database, release = released
    out = tmp_path / "again.duckdb"
    assert main(["generate", str(release), "-o", str(out), "--rows", "500", "--seed", "4"]) == 0
    assert "wrote a synthetic database (patients: 500 rows" in capsys.readouterr().out
    from synth.relational.source import read_database

    again = read_database(out)
    assert again.kind == "duckdb" and len(again.frames["patients"]) == 500
    assert list(again.columns["visits"]) == ["visit_id", "patient_id", "ward"]  # the original's order, keys included
    assert set(again.frames["visits"]["patient_id"]) <= set(again.frames["patients"]["patient_id"])
    per_patient = len(again.frames["visits"]) / 500
    original_per_patient = evaluate_database(database, release).degrees["visits"].original_mean
    assert per_patient == pytest.approx(original_per_patient, rel=0.2)  # the degrees come from the model
    folder = tmp_path / "again"
    assert main(["generate", str(release), "-o", str(folder), "--seed", "4", "-q"]) == 0
    assert sorted(p.name for p in folder.iterdir()) == ["patients.csv", "visits.csv"]
    assert main(["generate", str(release), "-o", str(out)]) != 0  # exists: refused
    assert main(["generate", str(release), "-o", str(tmp_path / "x.sqlite"), "--condition", "sex=F"]) != 0
    assert "not supported for a relational release" in capsys.readouterr().err


def test_synth_inspect_on_a_release_folder_prints_its_guarantee_and_each_tables_bound(released, tmp_path, capsys) -> None:
    _, release = released
    assert main(["inspect", str(release)]) == 0
    out = capsys.readouterr().out
    assert "privacy unit: a row of the root table 'patients'" in out and "spent epsilon=4, delta=1e-09 per person" in out
    assert "- visits: primary key 'visit_id'" in out and "up to 5 row(s) per person" in out
    assert "at most 5 rows measured per parent (profile)" in out
    assert main(["inspect", str(release), "--report", str(tmp_path / "r.html")]) != 0
    assert "inspect each table's Description" in capsys.readouterr().err

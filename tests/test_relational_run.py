"""`synth run` on a database end to end: a SQLite file, a DuckDB file and a folder of CSV files give a
synthetic database of the same kind with its keys declared, every foreign key pointing at a
synthetic parent, one release record and manifest; at a large budget the synthetic children per
parent, and children's attributes given their parent's, follow the original's."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pandas as pd
import pytest
from relational_cases import hospital, read_sqlite, write_duckdb, write_folder, write_profile, write_sqlite

from synth import api
from synth.cli import main
from synth.errors import DataError
from synth.relational.stored import read_release, summary_lines
from synth.release.description import load_description


def _check_release(out, synthetic_name: str) -> dict:
    record = json.loads((out / "relational.json").read_text(encoding="utf-8"))
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert record["root"] == "patients" and "privacy_unit" in record
    visits = next(t for t in record["tables"] if t["table"] == "visits")
    assert visits["max_children"] == 5 and visits["max_children_source"] == "profile"
    assert visits["sensitivity"].startswith("5 ")
    assert set(visits["parents_over_bound"]) == {"noisy", "std"}  # never an exact count
    assert "not published" in record["row_counts"]
    for table in record["tables"]:
        load_description(out / table["description"])  # each part is a valid Description
    listed = {f["file"] for f in manifest["files"]}
    assert {"relational.json", "patients.description.json", "visits.description.json"} <= listed
    assert any(name.startswith(synthetic_name) for name in listed)
    assert "NO privacy guarantee" in manifest["guarantee"]  # seeded in tests
    return record


def _integrity(tables: dict[str, pd.DataFrame]) -> None:
    patients, visits = tables["patients"], tables["visits"]
    assert patients["patient_id"].is_unique and visits["visit_id"].is_unique
    assert visits["patient_id"].isin(patients["patient_id"]).all()  # referential integrity 100 %
    assert visits.groupby("patient_id").size().max() <= 5  # the bound holds in the output too
    assert list(patients.columns) == ["patient_id", "sex", "age"] and list(visits.columns) == ["visit_id", "patient_id", "ward"]


def test_run_on_sqlite_writes_a_sqlite_database_with_its_keys(tmp_path, capsys) -> None:
    data = write_sqlite(hospital(300), tmp_path / "hospital.sqlite")
    profile = write_profile(tmp_path / "profile.toml")
    out = tmp_path / "release"
    assert main(["run", str(data), "--profile", str(profile), "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert "released the database under DP per person" in captured.out
    _check_release(out, "synthetic.sqlite")
    connection = sqlite3.connect(out / "synthetic.sqlite")
    try:
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
        assert [r[3] for r in connection.execute("PRAGMA foreign_key_list(visits)")] == ["patient_id"]
        assert [r[1] for r in connection.execute("PRAGMA table_info(patients)") if r[5]] == ["patient_id"]
    finally:
        connection.close()
    _integrity(read_sqlite(out / "synthetic.sqlite"))
    # the output folder is complete; a second run refuses to overwrite it before spending anything
    assert main(["run", str(data), "--profile", str(profile), "-o", str(out), "-q"]) == 2
    assert "exists" in capsys.readouterr().err


def test_run_on_duckdb_writes_a_duckdb_database_with_its_keys(tmp_path, capsys) -> None:
    import duckdb

    data = write_duckdb(hospital(300), tmp_path / "hospital.duckdb")
    out = tmp_path / "release"
    assert main(["run", str(data), "--profile", str(write_profile(tmp_path / "p.toml")), "-o", str(out), "-q"]) == 0
    assert capsys.readouterr().out == ""  # -q: nothing but the seeded warning, on stderr
    _check_release(out, "synthetic.duckdb")
    connection = duckdb.connect(str(out / "synthetic.duckdb"), read_only=True)
    try:
        keys = connection.execute("SELECT table_name, constraint_type, constraint_column_names, referenced_table "
                                  "FROM duckdb_constraints() WHERE constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY')"
                                  ).fetchall()
        tables = {name: connection.execute(f"SELECT * FROM {name}").fetchdf() for name in ("patients", "visits")}
    finally:
        connection.close()
    assert ("visits", "FOREIGN KEY", ["patient_id"], "patients") in keys
    assert ("patients", "PRIMARY KEY", ["patient_id"], None) in keys
    _integrity(tables)


def test_run_on_a_folder_writes_a_folder(tmp_path) -> None:
    data = write_folder(hospital(200), tmp_path / "hospital")
    out = tmp_path / "release"
    result = api.run_database(data, out, write_profile(tmp_path / "p.toml"), report_to=None)
    assert sorted(p.name for p in (out / "synthetic").iterdir()) == ["patients.csv", "visits.csv"]
    _integrity({name: pd.read_csv(out / "synthetic" / f"{name}.csv") for name in ("patients", "visits")})
    assert result.synthetic.rows["patients"] > 0 and set(result.synthetic.rows) == {"patients", "visits"}


def test_run_without_a_profile_finds_domains_under_dp(tmp_path, capsys) -> None:
    data = write_sqlite(hospital(1500, rate_f=2.0, rate_m=2.0), tmp_path / "hospital.sqlite")
    out = tmp_path / "release"
    code = main(["run", str(data), "--epsilon", "20", "--engine", "mst", "--seed", "3", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "default bound" in err  # max_children was not given: the default, said on the console
    record = json.loads((out / "relational.json").read_text(encoding="utf-8"))
    assert next(t for t in record["tables"] if t["table"] == "visits")["max_children_source"] == "default"
    tables = read_sqlite(out / "synthetic.sqlite")
    assert tables["visits"]["patient_id"].isin(tables["patients"]["patient_id"]).all()
    assert set(tables["visits"]["ward"].dropna()) <= {"A", "B", "C", "<OTHER>"}


def test_without_a_profile_the_count_cap_is_chosen_under_dp_so_parents_keep_their_many_children(tmp_path, capsys):
    data = write_sqlite(hospital(800, rate_f=30.0, rate_m=30.0), tmp_path / "hospital.sqlite")  # about 30 visits each
    out = tmp_path / "release"
    code = main(["run", str(data), "--epsilon", "20", "--engine", "mst", "--seed", "3", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    record = json.loads((out / "relational.json").read_text(encoding="utf-8"))
    visits = next(t for t in record["tables"] if t["table"] == "visits")
    assert visits["max_children"] == 10 and visits["max_children_source"] == "default"  # measured rows: still 10
    assert visits["max_count_source"] == "dp" and 40 <= visits["max_count"] <= 64  # 99 % of 30 ± 5.5 is about 43
    choosing = [e for e in record["ledger"] if "max_count" in e["query"]]  # the bound was given: only the cap is chosen
    assert len(choosing) == 1 and choosing[0]["sensitivity"] == 1 and choosing[0]["query"].endswith("to choose max_count")
    tables = read_sqlite(out / "synthetic.sqlite")
    per_patient = tables["visits"].groupby("patient_id").size()
    assert 25 <= per_patient.mean() <= 35  # the old cap of 10 gave at most 10 each
    assert f"counts kept up to {visits['max_count']} (dp)" in "\n".join(summary_lines(read_release(out)))


def test_a_profiles_bound_without_max_count_is_the_cap_and_nothing_is_spent_to_choose_it(tmp_path) -> None:
    data = write_sqlite(hospital(300), tmp_path / "hospital.sqlite")
    profile = tmp_path / "p.toml"
    profile.write_text("""[release]\nepsilon = 5.0\ndelta = 1e-6\naccept_data_derived_domains = true\n
[tables.patients]\nprimary_key = "patient_id"\n
[tables.visits]\nprimary_key = "visit_id"\nforeign_key = "patient_id"\nreferences = "patients"\nmax_children = 4\n""")
    out = tmp_path / "release"
    assert main(["run", str(data), "--profile", str(profile), "--engine", "mst", "--seed", "1", "-q", "-o", str(out)]) == 0
    record = json.loads((out / "relational.json").read_text(encoding="utf-8"))
    visits = next(t for t in record["tables"] if t["table"] == "visits")
    assert (visits["max_count"], visits["max_count_source"]) == (4, "max_children")
    assert not [e for e in record["ledger"] if "max_count" in e["query"]]


def test_the_table_verb_refuses_a_database(tmp_path) -> None:
    data = write_sqlite(hospital(20), tmp_path / "h.sqlite")
    with pytest.raises(DataError, match="run_database"):
        api.run(data, tmp_path / "out", epsilon=1.0)


def _degree_distribution(patients: pd.DataFrame, visits: pd.DataFrame, bound: int) -> np.ndarray:
    degree = visits.groupby("patient_id").size().reindex(patients["patient_id"], fill_value=0).clip(upper=bound)
    return np.bincount(degree.to_numpy(), minlength=bound + 1) / len(patients)


def test_children_per_parent_and_across_the_relation_follow_the_original_at_a_large_budget(tmp_path) -> None:
    """Women have about 1 visit, men about 3; wards follow age. A model that ignored the parents (degree
    or attributes) would miss both the per-sex degrees and the ward given age."""
    original = hospital(3000, seed=5)
    data = write_sqlite(original, tmp_path / "hospital.sqlite")
    out = tmp_path / "release"
    result = api.run_database(data, out, write_profile(tmp_path / "p.toml", epsilon=50.0, engine="aim", seed=2),
                              report_to=None)
    assert all(p.description.fit_start is None for p in result.release.parts)  # aim's models let go of once fitted
    synthetic = read_sqlite(out / "synthetic.sqlite")
    tvd = 0.5 * np.abs(_degree_distribution(*original.values(), 5) - _degree_distribution(*synthetic.values(), 5)).sum()
    assert tvd < 0.05
    for tables in (original, synthetic):
        degree = tables["visits"].groupby("patient_id").size().clip(upper=5)
        per = tables["patients"].set_index("patient_id").assign(visits=degree).fillna({"visits": 0})
        tables["mean_visits"] = per.groupby("sex")["visits"].mean()
        joined = tables["visits"].merge(tables["patients"], on="patient_id")
        tables["ward_b_old"] = (joined[joined["age"] >= 60]["ward"] == "B").mean()  # the age bins split at 30 and 60
        tables["ward_a_young"] = (joined[joined["age"] < 30]["ward"] == "A").mean()
    assert synthetic["mean_visits"]["F"] == pytest.approx(original["mean_visits"]["F"], abs=0.15)
    assert synthetic["mean_visits"]["M"] == pytest.approx(original["mean_visits"]["M"], abs=0.15)
    assert synthetic["ward_b_old"] == pytest.approx(original["ward_b_old"], abs=0.06)
    assert synthetic["ward_a_young"] == pytest.approx(original["ward_a_young"], abs=0.06)


def test_two_child_tables_of_one_root_and_text_keys_in_parquet(tmp_path) -> None:
    frames = hospital(300, seed=2)
    frames["patients"]["patient_id"] = "P" + frames["patients"]["patient_id"].astype(str)  # text keys
    frames["visits"]["patient_id"] = "P" + frames["visits"]["patient_id"].astype(str)
    rng = np.random.default_rng(4)
    owners = np.repeat(frames["patients"]["patient_id"].to_numpy(), rng.integers(0, 3, 300))
    frames["prescriptions"] = pd.DataFrame({"prescription_id": np.arange(owners.size), "patient_id": owners,
                                            "drug": rng.choice(["x", "y"], owners.size)})
    folder = tmp_path / "hospital"
    folder.mkdir()
    for name, frame in frames.items():
        frame.to_parquet(folder / f"{name}.parquet")
    profile = write_profile(tmp_path / "p.toml")
    profile.write_text(profile.read_text(encoding="utf-8") + """
[tables.prescriptions]
primary_key = "prescription_id"
foreign_key = "patient_id"
references = "patients"
max_children = 2
[tables.prescriptions.columns.drug]
kind = "categorical"
categories = ["x", "y"]
""", encoding="utf-8")
    out = tmp_path / "release"
    result = api.run_database(folder, out, profile, report_to=None)
    assert sorted(p.name for p in (out / "synthetic").iterdir()) == ["patients.parquet", "prescriptions.parquet",
                                                                      "visits.parquet"]
    tables = {name: pd.read_parquet(out / "synthetic" / f"{name}.parquet") for name in frames}
    for child, bound in (("visits", 5), ("prescriptions", 2)):
        assert tables[child]["patient_id"].isin(tables["patients"]["patient_id"]).all()
        assert tables[child].groupby("patient_id").size().max() <= bound
    root = result.release.part("patients").description
    assert {"visits_count", "prescriptions_count"} <= set(root.schema.names)
    record = json.loads((out / "relational.json").read_text(encoding="utf-8"))
    assert [t["table"] for t in record["tables"]] == ["patients", "visits", "prescriptions"]
    assert sum(t["budget_limit"] for t in record["tables"]) <= record["budget"]["rho"]


def test_with_max_count_a_parent_is_generated_with_all_its_children_though_few_were_measured(tmp_path) -> None:
    """Men have about 8 visits; only 2 per patient are measured (sensitivity 2), but the count of
    visits, a patient's own attribute, is kept up to 20: the synthetic men have about 8 again."""
    original = hospital(3000, seed=6, rate_f=1.0, rate_m=8.0)
    data = write_sqlite(original, tmp_path / "hospital.sqlite")
    profile = write_profile(tmp_path / "p.toml", epsilon=20.0, max_children=2)
    profile.write_text(profile.read_text(encoding="utf-8").replace("max_children = 2\n", "max_children = 2\nmax_count = 20\n"),
                       encoding="utf-8")
    result = api.run_database(data, tmp_path / "release", profile, report_to=None)
    assert result.release.part("visits").rows_per_unit == 2 and result.release.part("visits").count_cap == 20
    synthetic = read_sqlite(tmp_path / "release" / "synthetic.sqlite")
    means = []
    for tables in (original, synthetic):
        degree = tables["visits"].groupby("patient_id").size()
        per = tables["patients"].set_index("patient_id").assign(visits=degree).fillna({"visits": 0})
        means.append(per.groupby("sex")["visits"].mean())
    assert means[1]["M"] == pytest.approx(means[0]["M"], rel=0.1) and means[0]["M"] > 7
    assert means[1]["F"] == pytest.approx(means[0]["F"], abs=0.2)

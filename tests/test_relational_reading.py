"""Reading a database for a relational release: tables and keys from SQLite's and DuckDB's declared
schema or from a profile, and the errors that say what is not supported and what to do."""

from __future__ import annotations

import json
import sqlite3
import tomllib

import pandas as pd
import pytest
from relational_cases import hospital, write_duckdb, write_folder, write_profile, write_sqlite

from synth import api
from synth.cli import main
from synth.errors import InputFileError, NoKeysError, ProfileError, RelationalError
from synth.relational.keys import ForeignKey, Structure, TableKeys
from synth.relational.profile import load_relational_profile
from synth.relational.release import structure_of
from synth.relational.source import database_kind, read_database

PATIENTS = TableKeys("patients", "patient_id")
VISITS = TableKeys("visits", "visit_id", (ForeignKey("patient_id", "patients", "patient_id"),))


def test_sqlite_keys_come_from_the_declared_schema(tmp_path) -> None:
    frames = hospital(50)
    database = read_database(write_sqlite(frames, tmp_path / "h.sqlite"))
    assert database.kind == "sqlite"
    assert set(database.declared) == {PATIENTS, VISITS}
    assert len(database.frames["visits"]) == len(frames["visits"])
    structure = Structure.of(database.declared, database.columns)
    assert structure.root == PATIENTS and structure.children == (VISITS,)


def test_duckdb_keys_come_from_its_constraints(tmp_path) -> None:
    database = read_database(write_duckdb(hospital(50), tmp_path / "h.duckdb"))
    assert database.kind == "duckdb"
    assert set(database.declared) == {PATIENTS, VISITS}


def test_a_folder_takes_its_keys_from_the_profile(tmp_path) -> None:
    folder = write_folder(hospital(50), tmp_path / "h")
    database = read_database(folder)
    assert database.kind == "folder" and database.file_format == "csv"
    profile = load_relational_profile(write_profile(tmp_path / "p.toml"))
    assert structure_of(database, profile).children == (VISITS,)
    assert profile.max_children == {"visits": 5}


def test_a_csv_file_is_not_a_database(tmp_path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n", encoding="utf-8")
    assert database_kind(path) is None
    assert database_kind(tmp_path / "missing.sqlite") is None


@pytest.mark.parametrize("kind", ["sqlite", "folder"])
def test_no_declared_keys_and_no_profile_says_how_to_declare_them(tmp_path, kind: str) -> None:
    frames = hospital(50)
    path = write_sqlite(frames, tmp_path / "h.sqlite", keys=False) if kind == "sqlite" else write_folder(frames, tmp_path / "h")
    with pytest.raises(NoKeysError) as error:
        api.run_database(path, tmp_path / "out", epsilon=1.0, report_to=None)
    message = str(error.value)
    assert "[tables.patients]" in message and "foreign_key" in message and "references" in message
    toml = message[message.index("[release]"):message.index("(or declare")]
    assert "tables" in tomllib.loads(toml)  # the example is TOML a person can paste
    assert not (tmp_path / "out" / "relational.json").exists()


def test_the_cli_prints_the_no_keys_error_without_a_traceback(tmp_path, capsys) -> None:
    path = write_sqlite(hospital(20), tmp_path / "h.sqlite", keys=False)
    assert main(["run", str(path), "--epsilon", "1", "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "declares no primary or foreign keys" in err and "Traceback" not in err


def test_a_grandchild_table_joins_the_tree_below_its_parent_and_cycles_are_refused(tmp_path) -> None:
    path = tmp_path / "g.sqlite"
    connection = sqlite3.connect(path)
    connection.executescript("""
        CREATE TABLE tests (test_id INTEGER PRIMARY KEY, visit_id INTEGER REFERENCES visits (visit_id), result TEXT);
        CREATE TABLE patients (patient_id INTEGER PRIMARY KEY, sex TEXT);
        CREATE TABLE visits (visit_id INTEGER PRIMARY KEY, patient_id INTEGER REFERENCES patients (patient_id));
    """)
    connection.close()
    database = read_database(path)
    structure = Structure.of(database.declared, database.columns)
    assert [t.name for t in structure.tables] == ["patients", "visits", "tests"]  # parents before children
    assert structure.parent(structure.table("tests")).name == "visits"
    assert [t.name for t in structure.path(structure.table("tests"))] == ["visits", "tests"]
    columns = {"a": ("id",), "b": ("id", "c_id"), "c": ("id", "b_id")}
    cycle = [TableKeys("a", "id"), TableKeys("b", "id", (ForeignKey("c_id", "c", "id"),)),
             TableKeys("c", "id", (ForeignKey("b_id", "b", "id"),))]
    with pytest.raises(RelationalError, match="do not lead to the root table 'a'"):
        Structure.of(cycle, columns)
    not_primary = [TableKeys("a", "id"), TableKeys("b", "id", (ForeignKey("c_id", "a", "c_id"),))]
    with pytest.raises(RelationalError, match="not 'a''s primary key"):
        Structure.of(not_primary, {"a": ("id", "c_id"), "b": ("id", "c_id")})


def test_two_roots_and_a_missing_key_column_are_refused() -> None:
    columns = {"a": ("id",), "b": ("id",)}
    with pytest.raises(RelationalError, match="exactly one root table"):
        Structure.of([TableKeys("a", "id"), TableKeys("b", "id")], columns)
    with pytest.raises(RelationalError, match="has no column 'pid'"):
        Structure.of([TableKeys("a", "id"), TableKeys("b", "id", (ForeignKey("pid", "a", "id"),))], columns)


def test_a_profile_may_not_list_a_key_as_a_column(tmp_path) -> None:
    path = write_profile(tmp_path / "p.toml")
    text = path.read_text(encoding="utf-8") + '[tables.visits.columns.patient_id]\nkind = "integer"\nlower = 0\nupper = 9\n'
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProfileError, match="keys are never modelled"):
        load_relational_profile(path)


def test_a_damaged_database_file_is_an_input_error(tmp_path) -> None:
    path = tmp_path / "bad.sqlite"
    path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 50)
    with pytest.raises(InputFileError):
        read_database(path)


def test_synth_profile_drafts_tables_keys_and_data_derived_domains(tmp_path) -> None:
    path = write_sqlite(hospital(60), tmp_path / "h.sqlite")
    out = tmp_path / "profile.toml"
    assert main(["profile", str(path), "-o", str(out), "-q"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "READ FROM THE DATA" in text
    drafted = tomllib.loads(text)
    assert drafted["tables"]["visits"]["foreign_key"] == "patient_id"
    assert drafted["tables"]["visits"]["references"] == "patients"
    assert "patient_id" not in drafted["tables"]["patients"]["columns"]  # keys are never modelled
    assert drafted["tables"]["patients"]["columns"]["sex"]["source"] == "data-derived"
    profile = load_relational_profile(out)  # the draft reads back as a relational profile
    assert {t.name for t in profile.keys} == {"patients", "visits"}


def test_a_drafted_profile_is_refused_until_reviewed_and_then_says_it_is_not_end_to_end_dp(tmp_path, capsys) -> None:
    path = write_sqlite(hospital(80), tmp_path / "h.sqlite")
    draft = tmp_path / "profile.toml"
    assert main(["profile", str(path), "-o", str(draft), "-q"]) == 0
    assert main(["run", str(path), "--profile", str(draft), "--seed", "1", "-q", "-o", str(tmp_path / "out")]) == 2
    assert "marked data-derived" in capsys.readouterr().err
    assert not (tmp_path / "out" / "manifest.json").exists()
    accepted = tmp_path / "accepted.toml"
    accepted.write_text(draft.read_text(encoding="utf-8").replace("accept_data_derived_domains = false",
                                                                  "accept_data_derived_domains = true"), encoding="utf-8")
    assert main(["run", str(path), "--profile", str(accepted), "--engine", "independent", "--seed", "1", "-q",
                 "-o", str(tmp_path / "out")]) == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["end_to_end_dp"] is False


def test_a_sqlite_cell_is_read_by_its_own_storage_class_whatever_its_column_holds(tmp_path) -> None:
    """One NULL must not turn a column's integers into floats: a 64-bit key would lose its low
    digits (two parents would merge) and every other cell of the column would change type."""
    path = tmp_path / "t.sqlite"
    big = 2**60 + 1  # not a float: 2**60 + 1 == float(2**60) would be false after a round trip
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, code INTEGER, label TEXT)")
        connection.executemany("INSERT INTO t VALUES (?, ?, ?)",
                               [(big, 1, "007"), (big + 1, None, None), (big + 2, 3, "x")])
    frame = read_database(path).frames["t"]
    assert frame["id"].tolist() == [big, big + 1, big + 2]
    codes = frame["code"].tolist()
    assert codes[0] == 1 and type(codes[0]) is int and pd.isna(codes[1]) and type(codes[2]) is int
    assert frame["label"].tolist()[0] == "007" and pd.isna(frame["label"].tolist()[1])

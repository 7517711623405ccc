"""Small relational databases for the relational tests: patients and their visits, written as a
SQLite file, a DuckDB file or a folder of CSV files, with or without declared keys."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd

PROFILE = """\
[release]
epsilon = {epsilon}
delta = 1e-9
engine = "{engine}"
seed = {seed}

[tables.patients]
primary_key = "patient_id"
[tables.patients.columns.sex]
kind = "categorical"
categories = ["F", "M"]
complete = true
missing = false
[tables.patients.columns.age]
kind = "integer"
lower = 0
upper = 89
bins = 3
missing = false

[tables.visits]
primary_key = "visit_id"
foreign_key = "patient_id"
references = "patients"
max_children = {max_children}
[tables.visits.columns.ward]
kind = "categorical"
categories = ["A", "B", "C"]
complete = true
missing = false
"""


def hospital(parents: int = 500, seed: int = 0, rate_f: float = 1.0, rate_m: float = 3.0) -> dict[str, pd.DataFrame]:
    """Patients (sex, age) and visits (ward): men have more visits, wards depend on age."""
    rng = np.random.default_rng(seed)
    sex = np.where(rng.random(parents) < 0.5, "F", "M")
    age = rng.integers(0, 90, parents)
    patients = pd.DataFrame({"patient_id": np.arange(1, parents + 1), "sex": sex, "age": age})
    visits_per = rng.poisson(np.where(sex == "F", rate_f, rate_m))
    owner = np.repeat(patients["patient_id"].to_numpy(), visits_per)
    old = np.repeat(age >= 45, visits_per)
    ward = np.where(rng.random(owner.size) < 0.8, np.where(old, "B", "A"), "C")
    visits = pd.DataFrame({"visit_id": np.arange(1, owner.size + 1), "patient_id": owner, "ward": ward})
    return {"patients": patients, "visits": visits}


def write_sqlite(frames: dict[str, pd.DataFrame], path: Path, keys: bool = True) -> Path:
    connection = sqlite3.connect(path)
    patients_key = " PRIMARY KEY" if keys else ""
    connection.execute(f"CREATE TABLE patients (patient_id INTEGER{patients_key}, sex TEXT, age INTEGER)")
    reference = ", FOREIGN KEY (patient_id) REFERENCES patients (patient_id)" if keys else ""
    connection.execute(f"CREATE TABLE visits (visit_id INTEGER{patients_key}, patient_id INTEGER, ward TEXT{reference})")
    for name, frame in frames.items():
        marks = ", ".join("?" for _ in frame.columns)
        rows = [tuple(v.item() if isinstance(v, np.generic) else v for v in row) for row in frame.itertuples(index=False)]
        connection.executemany(f"INSERT INTO {name} VALUES ({marks})", rows)
    connection.commit()
    connection.close()
    return path


def write_duckdb(frames: dict[str, pd.DataFrame], path: Path) -> Path:
    import duckdb

    connection = duckdb.connect(str(path))
    connection.execute("CREATE TABLE patients (patient_id BIGINT PRIMARY KEY, sex VARCHAR, age BIGINT)")
    connection.execute("CREATE TABLE visits (visit_id BIGINT PRIMARY KEY, patient_id BIGINT REFERENCES patients (patient_id), "
                       "ward VARCHAR)")
    for name, frame in frames.items():
        connection.register("rows", frame)
        connection.execute(f"INSERT INTO {name} SELECT * FROM rows")
        connection.unregister("rows")
    connection.close()
    return path


def write_folder(frames: dict[str, pd.DataFrame], path: Path) -> Path:
    path.mkdir()
    for name, frame in frames.items():
        frame.to_csv(path / f"{name}.csv", index=False)
    return path


def write_profile(path: Path, epsilon: float = 1.0, engine: str = "mst", seed: int = 1, max_children: int = 5) -> Path:
    path.write_text(PROFILE.format(epsilon=epsilon, engine=engine, seed=seed, max_children=max_children), encoding="utf-8")
    return path


def read_sqlite(path: Path) -> dict[str, pd.DataFrame]:
    connection = sqlite3.connect(path)
    try:
        return {name: pd.read_sql_query(f"SELECT * FROM {name}", connection) for name in ("patients", "visits")}
    finally:
        connection.close()


CLINIC_PROFILE = PROFILE + """
[tables.tests]
primary_key = "test_id"
foreign_key = "visit_id"
references = "visits"
max_children = {tests_bound}
[tables.tests.columns.result]
kind = "categorical"
categories = ["low", "high"]
complete = true
missing = false
"""


def clinic(parents: int = 500, seed: int = 0) -> dict[str, pd.DataFrame]:
    """``hospital`` with a third level: each visit's tests (ward C visits get 4 tests on average, the
    others 1; ward B's results are mostly high, the others' mostly low)."""
    frames = hospital(parents, seed)
    rng = np.random.default_rng(seed + 1)
    visits = frames["visits"]
    ward = visits["ward"].to_numpy()
    per_visit = rng.poisson(np.where(ward == "C", 4.0, 1.0))
    owner = np.repeat(visits["visit_id"].to_numpy(), per_visit)
    high = rng.random(owner.size) < np.where(np.repeat(ward, per_visit) == "B", 0.85, 0.15)
    frames["tests"] = pd.DataFrame({"test_id": np.arange(1, owner.size + 1), "visit_id": owner,
                                    "result": np.where(high, "high", "low")})
    return frames


def write_clinic_sqlite(frames: dict[str, pd.DataFrame], path: Path) -> Path:
    write_sqlite({k: v for k, v in frames.items() if k != "tests"}, path)
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE tests (test_id INTEGER PRIMARY KEY, visit_id INTEGER REFERENCES visits (visit_id), "
                       "result TEXT)")
    connection.executemany("INSERT INTO tests VALUES (?, ?, ?)",
                           [(int(a), int(b), str(c)) for a, b, c in frames["tests"].itertuples(index=False)])
    connection.commit()
    connection.close()
    return path


def write_clinic_profile(path: Path, epsilon: float = 1.0, seed: int = 1, max_children: int | str = 5,
                         tests_bound: int | str = 3) -> Path:
    def toml(value: int | str) -> str:
        return f'"{value}"' if isinstance(value, str) else str(value)
    text = CLINIC_PROFILE.replace("{tests_bound}", toml(tests_bound))
    path.write_text(text.format(epsilon=epsilon, engine="mst", seed=seed, max_children=toml(max_children)),
                    encoding="utf-8")
    return path

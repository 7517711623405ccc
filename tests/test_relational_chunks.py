"""A synthetic database drawn and written chunk by chunk of root rows: memory holds one chunk, however
many root rows (no chunk's frames are alive when the next is drawn; tracemalloc's peak for ten times
the rows stays near that of one); the chunked database has the structure, key integrity and
distribution of rows per table of the database drawn whole, is the same under one seed, and is
written in the same forms; a failure midway leaves no database and no temporary file."""

from __future__ import annotations

import gc
import sqlite3
import tracemalloc
import weakref
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from relational_cases import clinic, write_clinic_profile, write_clinic_sqlite

from synth import api
from synth.cli import main
from synth.errors import OutputError
from synth.relational import generation
from synth.relational.generation import DatabaseDraw, DatabaseModel
from synth.relational.release import generate_again
from synth.relational.stored import StoredRelease, read_release
from synth.relational.writing import write_database

TABLES = ("patients", "visits", "tests")
KINDS = {"sqlite": ("sqlite", None, "db.sqlite"), "duckdb": ("duckdb", None, "db.duckdb"),
         "csv": ("folder", "csv", "db"), "parquet": ("folder", "parquet", "db")}


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> StoredRelease:
    folder = tmp_path_factory.mktemp("clinic")
    data = write_clinic_sqlite(clinic(1500, seed=5), folder / "clinic.sqlite")
    api.run_database(data, folder / "release", write_clinic_profile(folder / "p.toml", epsilon=4.0), report_to=None)
    return read_release(folder / "release")


@pytest.fixture(scope="module")
def model(release: StoredRelease) -> DatabaseModel:
    return DatabaseModel(release.descriptions, release.structure, release.count_columns, release.columns)


def _read(kind: str, path: Path) -> dict[str, pd.DataFrame]:
    """Every table of a written database, rows in key order."""
    if kind == "sqlite":
        with sqlite3.connect(path) as connection:
            return {t: pd.read_sql_query(f"SELECT * FROM {t}", connection) for t in TABLES}
    if kind == "duckdb":
        import duckdb

        connection = duckdb.connect(str(path), read_only=True)
        try:
            return {t: connection.execute(f"SELECT * FROM {t} ORDER BY 1").fetchdf() for t in TABLES}
        finally:
            connection.close()
    suffix = "csv" if kind == "csv" else "parquet"
    return {t: pd.read_csv(path / f"{t}.csv") if suffix == "csv" else pd.read_parquet(path / f"{t}.parquet")
            for t in TABLES}


def _write(release: StoredRelease, kind: str, folder: Path, chunks: Iterable[Mapping[str, pd.DataFrame]]) -> Path:
    """Write ``chunks`` as a database of ``kind`` in ``folder``; its path."""
    output, file_format, name = KINDS[kind]
    folder.mkdir(parents=True, exist_ok=True)
    write_database(chunks, release.structure, output, folder / name, file_format)
    return folder / name


def _integrity(tables: Mapping[str, pd.DataFrame]) -> None:
    patients, visits, tests = (tables[t] for t in TABLES)
    for frame, key in ((patients, "patient_id"), (visits, "visit_id"), (tests, "test_id")):
        assert frame[key].tolist() == list(range(1, len(frame) + 1))  # fresh keys, running on across chunks
    assert visits["patient_id"].isin(patients["patient_id"]).all()  # referential integrity 100 %
    assert tests["visit_id"].isin(visits["visit_id"]).all()
    assert [list(tables[t].columns) for t in TABLES] == [["patient_id", "sex", "age"],
                                                         ["visit_id", "patient_id", "ward"],
                                                         ["test_id", "visit_id", "result"]]


def test_a_chunk_holds_about_chunk_rows_rows_across_the_tables(model: DatabaseModel) -> None:
    per_root = model.rows_per_root()
    assert 2 < per_root < 20  # a patient, about two visits and their tests
    assert model.roots_per_chunk(3000) == int(3000 // per_root) and model.roots_per_chunk(1) == 1
    draw = model.draw(4000, seed=1, chunk_rows=3000)
    sizes = [sum(len(frame) for frame in chunk.values()) for chunk in draw]
    assert len(sizes) == draw.chunks == -(-4000 // model.roots_per_chunk(3000)) > 5
    assert all(0.85 * 3000 < size < 1.15 * 3000 for size in sizes[:-1]), sizes  # the model's expectation holds
    assert draw.database().rows["patients"] == 4000
    with pytest.raises(ValueError, match="drawn once"):
        next(iter(draw))  # its keys would run on


class Watched:
    """The chunks of a draw, noting, each time a chunk starts being drawn, how many frames of the
    chunks drawn before are still alive (referenced anywhere)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.refs, self.alive = list[weakref.ref[pd.DataFrame]](), list[int]()
        chunk = DatabaseDraw._chunk

        def watched(inner: DatabaseDraw, *args: object) -> dict[str, pd.DataFrame]:
            gc.collect()
            self.alive.append(sum(ref() is not None for ref in self.refs))
            tables = chunk(inner, *args)
            self.refs += [weakref.ref(frame) for frame in tables.values()]
            return tables

        monkeypatch.setattr(DatabaseDraw, "_chunk", watched)


@pytest.mark.parametrize("kind", list(KINDS))
def test_no_chunk_is_alive_when_the_next_is_drawn(model: DatabaseModel, release: StoredRelease, kind: str,
                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    draw = model.draw(1200, seed=2, chunk_rows=1000)
    watched = Watched(monkeypatch)
    path = _write(release, kind, tmp_path, draw)
    assert draw.chunks >= 6 and watched.alive == [0] * draw.chunks
    assert {t: len(f) for t, f in _read(kind, path).items()} == draw.database().rows


def _peak_bytes(model: DatabaseModel, release: StoredRelease, roots: int, chunk_rows: int, folder: Path) -> int:
    """tracemalloc's peak while ``roots`` root rows and their descendants are drawn and written to
    SQLite (numpy's arrays are traced, so a held chunk or a gathered database shows)."""
    gc.collect()
    tracemalloc.start()
    try:
        _write(release, "sqlite", folder, model.draw(roots, seed=3, chunk_rows=chunk_rows))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_peak_memory_does_not_grow_with_the_root_rows(model: DatabaseModel, release: StoredRelease,
                                                       tmp_path: Path) -> None:
    list(model.draw(1000, seed=9, chunk_rows=2000))  # the models' caches filled before measuring
    small = _peak_bytes(model, release, 1500, 2000, tmp_path / "small")
    large = _peak_bytes(model, release, 15_000, 2000, tmp_path / "large")
    # ten times the root rows in chunks of about 2,000 rows: near the peak of one
    assert large < 1.5 * small, (small, large)
    assert len(_read("sqlite", tmp_path / "large" / "db.sqlite")["patients"]) == 15_000
    # the measure sees a database drawn whole (one chunk): it peaks several times higher
    whole = _peak_bytes(model, release, 15_000, 10**9, tmp_path / "whole")
    assert whole > 3 * small, (small, whole)


def _children_per_parent(children: pd.DataFrame, key: str, parents: pd.DataFrame, parent_key: str) -> np.ndarray:
    """The share of parents with 0, 1, ..., 7 and 8 or more children."""
    counts = children.groupby(key).size().reindex(parents[parent_key], fill_value=0).to_numpy()
    return np.bincount(np.minimum(counts, 8), minlength=9) / len(counts)


def test_the_chunked_database_is_the_whole_one_in_structure_keys_and_rows(model: DatabaseModel,
                                                                           release: StoredRelease,
                                                                           tmp_path: Path) -> None:
    whole = _read("sqlite", _write(release, "sqlite", tmp_path / "whole", model.draw(6000, seed=4, chunk_rows=10**9)))
    chunked = _read("sqlite", _write(release, "sqlite", tmp_path / "chunked", model.draw(6000, seed=4, chunk_rows=1500)))
    for tables in (whole, chunked):
        _integrity(tables)
    assert len(whole["patients"]) == len(chunked["patients"]) == 6000
    for table in TABLES:
        assert whole[table].dtypes.to_dict() == chunked[table].dtypes.to_dict()
    for table in ("visits", "tests"):  # rows per root row: the same up to sampling noise
        assert len(chunked[table]) == pytest.approx(len(whole[table]), rel=0.05)
    pairs = (("visits", "patient_id", "patients", "patient_id"), ("tests", "visit_id", "visits", "visit_id"))
    for child, key, parent, parent_key in pairs:
        shares = [_children_per_parent(t[child], key, t[parent], parent_key) for t in (whole, chunked)]
        assert 0.5 * np.abs(shares[0] - shares[1]).sum() < 0.04, shares
    for table, column in (("patients", "sex"), ("visits", "ward"), ("tests", "result")):
        shares = [t[table][column].value_counts(normalize=True) for t in (whole, chunked)]
        assert 0.5 * shares[0].sub(shares[1], fill_value=0).abs().sum() < 0.04


@pytest.mark.parametrize("kind", list(KINDS))
def test_chunks_are_written_in_the_forms_of_one_piece(model: DatabaseModel, release: StoredRelease, kind: str,
                                                      tmp_path: Path) -> None:
    chunks = list(model.draw(900, seed=5, chunk_rows=800))
    assert len(chunks) > 3
    one = {t: pd.concat([c[t] for c in chunks], ignore_index=True) for t in TABLES}
    pieces = _write(release, kind, tmp_path / "pieces", chunks)
    whole = _write(release, kind, tmp_path / "whole", [one])
    if kind == "csv":  # the same text, byte for byte: one header, the same written forms
        for t in TABLES:
            assert (pieces / f"{t}.csv").read_bytes() == (whole / f"{t}.csv").read_bytes()
    elif kind == "parquet":
        for t in TABLES:
            a, b = pq.read_table(pieces / f"{t}.parquet"), pq.read_table(whole / f"{t}.parquet")
            assert a.schema.equals(b.schema, check_metadata=True) and a.equals(b)
    elif kind == "sqlite":
        with sqlite3.connect(pieces) as p, sqlite3.connect(whole) as w:
            query = "SELECT name, sql FROM sqlite_master ORDER BY name"
            assert p.execute(query).fetchall() == w.execute(query).fetchall()  # keys and types declared alike
            for t in TABLES:
                assert p.execute(f"SELECT * FROM {t}").fetchall() == w.execute(f"SELECT * FROM {t}").fetchall()
            assert p.execute("PRAGMA foreign_key_check").fetchall() == []
    else:
        import duckdb

        p, w = duckdb.connect(str(pieces), read_only=True), duckdb.connect(str(whole), read_only=True)
        try:
            query = ("SELECT table_name, constraint_type, constraint_column_names FROM duckdb_constraints() "
                     "ORDER BY ALL")
            assert p.execute(query).fetchall() == w.execute(query).fetchall()
            for t in TABLES:
                assert p.execute(f"DESCRIBE {t}").fetchall() == w.execute(f"DESCRIBE {t}").fetchall()
                ordered = f"SELECT * FROM {t} ORDER BY 1"
                assert p.execute(ordered).fetchall() == w.execute(ordered).fetchall()
        finally:
            p.close()
            w.close()
    _integrity(_read(kind, pieces))


def test_the_same_seed_gives_the_same_chunked_database(model: DatabaseModel, release: StoredRelease,
                                                       tmp_path: Path) -> None:
    first = _write(release, "csv", tmp_path / "a", model.draw(2000, seed=6, chunk_rows=1000))
    again = _write(release, "csv", tmp_path / "b", model.draw(2000, seed=6, chunk_rows=1000))
    other = _write(release, "csv", tmp_path / "c", model.draw(2000, seed=7, chunk_rows=1000))
    for t in TABLES:
        assert (first / f"{t}.csv").read_bytes() == (again / f"{t}.csv").read_bytes()
    assert (first / "visits.csv").read_bytes() != (other / "visits.csv").read_bytes()


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_failure_midway_leaves_no_database(model: DatabaseModel, release: StoredRelease, kind: str,
                                             tmp_path: Path) -> None:
    def failing() -> Iterator[dict[str, pd.DataFrame]]:
        yield from model.draw(900, seed=1, chunk_rows=800)
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        _write(release, kind, tmp_path, failing())
    assert list(tmp_path.iterdir()) == []  # neither the database nor a temporary file or folder
    with pytest.raises(ValueError, match="no chunk"):
        _write(release, kind, tmp_path, [])
    assert list(tmp_path.iterdir()) == []
    (tmp_path / KINDS[kind][2]).mkdir()
    with pytest.raises(OutputError, match="exists"):
        _write(release, kind, tmp_path, model.draw(10, seed=0))


def test_synth_generate_draws_a_large_database_in_chunks_all_or_nothing(release: StoredRelease, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(generation, "CHUNK_ROWS", 1000)
    out = tmp_path / "again.duckdb"
    assert main(["generate", str(release.folder), "-o", str(out), "--rows", "1000", "--seed", "3"]) == 0
    captured = capsys.readouterr()
    assert "sampling 1,000 patients rows in" in captured.err and " chunks of up to " in captured.err
    assert "wrote a synthetic database (patients: 1,000 rows" in captured.out
    _integrity(_read("duckdb", out))
    chunk = DatabaseDraw._chunk
    drawn: list[int] = []

    def failing(draw: DatabaseDraw, *args: object) -> dict[str, pd.DataFrame]:
        drawn.append(1)
        if len(drawn) == 3:
            raise RuntimeError("interrupted")
        return chunk(draw, *args)

    monkeypatch.setattr(DatabaseDraw, "_chunk", failing)
    with pytest.raises(RuntimeError, match="interrupted"):
        generate_again(release.folder, tmp_path / "failed.sqlite", rows=1000, seed=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.duckdb"]  # no partial database, no staging folder

"""A PostgreSQL database given by its URL, read from a real server this module starts (initdb and
pg_ctl in a temporary folder, a Unix socket only, stopped at the end): the declared keys, the cells,
a release written as a SQLite file, its evaluation, and a password that never reaches a file or the
console. Skipped, with the reason, where PostgreSQL or psycopg is not installed."""

from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
import socket
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from relational_cases import hospital, write_profile

from synth.cli import main
from synth.errors import InputFileError
from synth.relational.keys import ForeignKey, TableKeys
from synth.relational.source import database_kind, read_database, shown


def _program(name: str) -> str | None:
    found = shutil.which(name) or sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found if isinstance(found, str) else (found[-1] if found else None)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """A running PostgreSQL server holding the hospital database; yields its URL (with a password,
    which the server's trust authentication ignores)."""
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'synth[postgres]')")
    import psycopg

    initdb, pg_ctl = _program("initdb"), _program("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("PostgreSQL's initdb and pg_ctl are not installed on this machine")
    as_user: list[str] = []
    folder = Path(tempfile.mkdtemp(prefix="synth-pg-"))
    if os.geteuid() == 0:  # the server refuses to run as root: run it as the postgres user
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run the server as")
        shutil.chown(folder, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    data = folder / "data"
    subprocess.run([*as_user, initdb, "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"],
                   check=True, capture_output=True)
    subprocess.run([*as_user, pg_ctl, "-D", str(data), "-l", str(folder / "log"), "-w", "-o",
                    f"-p {port} -k {folder} -c listen_addresses=''", "start"], check=True, capture_output=True)
    url = f"postgresql://postgres:s3cret-word@/postgres?host={folder}&port={port}"
    try:
        frames = hospital(400, seed=7)
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute("CREATE TABLE patients (patient_id BIGINT PRIMARY KEY, sex TEXT, age INTEGER)")
            connection.execute("CREATE TABLE visits (visit_id BIGINT PRIMARY KEY, patient_id BIGINT REFERENCES "
                               "patients (patient_id), ward TEXT)")
            for name, frame in frames.items():
                marks = ", ".join("%s" for _ in frame.columns)
                rows = [tuple(v.item() if hasattr(v, "item") else v for v in row) for row in frame.itertuples(index=False)]
                with connection.cursor() as cursor:
                    cursor.executemany(f"INSERT INTO {name} VALUES ({marks})", rows)
            connection.execute("INSERT INTO patients VALUES (9999, NULL, NULL)")  # a row of missing cells
        yield url
    finally:
        subprocess.run([*as_user, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_url_is_a_postgresql_database_and_its_password_is_never_shown() -> None:
    url = "postgresql://ann:pa55@db.example.org:5432/clinic?sslmode=require"
    assert database_kind(url) == "postgresql" and database_kind("postgres://x@h/db") == "postgresql"
    assert shown(url) == "postgresql://ann@db.example.org:5432/clinic?sslmode=require"
    assert "pa55" not in shown(url)


def test_the_declared_keys_and_every_cell_are_read_from_the_server(server: str) -> None:
    database = read_database(server)
    assert database.kind == "postgresql" and "s3cret" not in database.path
    assert set(database.declared) == {TableKeys("patients", "patient_id"),
                                      TableKeys("visits", "visit_id", (ForeignKey("patient_id", "patients", "patient_id"),))}
    original = hospital(400, seed=7)
    patients = database.frames["patients"].sort_values("patient_id").reset_index(drop=True)
    assert len(patients) == 401 and patients["age"].isna().sum() == 1
    kept = patients[patients["patient_id"] != 9999]
    assert [type(v) for v in kept["age"].head(3)] == [int, int, int]  # one NULL leaves the others integers
    assert kept["age"].tolist() == original["patients"]["age"].tolist()
    assert len(database.frames["visits"]) == len(original["visits"])


def test_synth_run_on_a_url_writes_a_sqlite_release_and_evaluates_it(server: str, tmp_path, capsys) -> None:
    profile = write_profile(tmp_path / "p.toml", epsilon=2.0)
    out = tmp_path / "release"
    assert main(["run", server, "--profile", str(profile), "-o", str(out)]) == 0
    assert main(["evaluate", server, str(out), "--json", str(tmp_path / "e.json"), "-q"]) == 0
    assert main(["profile", server, "-o", str(tmp_path / "draft.toml")]) == 0
    assert 'references = "patients"' in (tmp_path / "draft.toml").read_text(encoding="utf-8")
    printed = capsys.readouterr()
    with sqlite3.connect(out / "synthetic.sqlite") as connection:
        parents = {row[0] for row in connection.execute("SELECT patient_id FROM patients")}
        links = [row[0] for row in connection.execute("SELECT patient_id FROM visits")]
    assert links and all(link in parents for link in links)
    assert json.loads((tmp_path / "e.json").read_text(encoding="utf-8"))["referential_integrity"] == {"visits": 1.0}
    written = "".join(p.read_text(encoding="utf-8", errors="replace") for p in out.glob("*.json"))
    assert "s3cret" not in written + printed.out + printed.err


def test_a_server_that_does_not_answer_is_an_input_error_without_the_password(tmp_path) -> None:
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'synth[postgres]')")
    url = f"postgresql://ann:hunter2@/nothing?host={tmp_path}&port={_free_port()}&connect_timeout=2"
    with pytest.raises(InputFileError, match="cannot connect to") as caught:
        read_database(url)
    assert "hunter2" not in str(caught.value)

"""Reading a database: a SQLite file, a DuckDB file, a folder of CSV/Parquet files (one per table), or
a PostgreSQL server's database given by its URL (``postgresql://user@host:port/name``).

``database_kind`` tells a database from a single table by the file's own signature (SQLite's and
DuckDB's headers), by being a folder, or by a ``postgresql://`` URL: a file name's ending is never
trusted alone. ``read_database`` reads every table into pandas, through the database's own engine
(Python's ``sqlite3``, the ``duckdb`` package, ``psycopg`` for PostgreSQL, in a read-only session),
with the keys its schema declares (``PRAGMA table_info`` and ``PRAGMA foreign_key_list`` in SQLite,
``duckdb_constraints()`` in DuckDB, ``pg_constraint`` in PostgreSQL, the tables of the URL's
``options=-csearch_path=...`` schema or else ``public``; a folder declares none). A URL's password
never leaves this module: ``shown`` is the URL without it, for messages.
Schema metadata (table and column names, keys) is public; the rows are private and leave this
module only to the relational describer, which measures them under DP. Nothing here draws noise or
decides anything from a row.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from synth.errors import InputFileError, RelationalError
from synth.relational import is_url
from synth.relational.keys import ForeignKey, TableKeys
from synth.tables.tableio import mark_missing, read_frame

SQLITE_SIGNATURE = b"SQLite format 3\x00"
DUCKDB_SIGNATURE = b"DUCK"  # at byte 8 of a DuckDB file
TABLE_SUFFIXES = {".csv": "csv", ".parquet": "parquet"}


def shown(path: str | os.PathLike[str]) -> str:
    """``path`` for a message: a URL without its password."""
    if not is_url(path):
        return os.fspath(path)
    text = str(path)
    scheme, rest = text.split("://", 1)
    authority, slash, tail = rest.partition("/")
    if "@" in authority:
        user, host = authority.rsplit("@", 1)
        authority = f"{user.split(':', 1)[0]}@{host}"
    return f"{scheme}://{authority}{slash}{tail}"


def database_kind(path: str | os.PathLike[str]) -> str | None:
    """``"sqlite"``, ``"duckdb"``, ``"folder"`` (of CSV/Parquet files) or ``"postgresql"`` (a URL) for a
    database, None for anything else (a single table file, or nothing)."""
    if is_url(path):
        return "postgresql"
    p = Path(path)
    if p.is_dir():
        return "folder"
    if not p.is_file():
        return None
    with open(p, "rb") as handle:
        head = handle.read(16)
    if head.startswith(SQLITE_SIGNATURE):
        return "sqlite"
    if head[8:12] == DUCKDB_SIGNATURE:
        return "duckdb"
    return None


@dataclass(frozen=True)
class Database:
    """A database read whole: its kind (``database_kind``), each table's rows (private), each
    table's columns in order (public) and the keys its schema declares (public). ``file_format``
    is the files' format for a folder (csv or parquet), else None."""

    kind: str
    path: str  # the file or folder, or the URL without its password
    frames: dict[str, pd.DataFrame]
    columns: dict[str, tuple[str, ...]]
    declared: tuple[TableKeys, ...]
    file_format: str | None = None


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _single_key(table: str, columns: list[str]) -> str | None:
    if len(columns) > 1:
        raise RelationalError(f"table {table!r} has a primary key of {len(columns)} columns ({columns}); composite "
                              "keys are not supported yet. Add a single-column key (e.g. an integer id).")
    return columns[0] if columns else None


def _object_frame(cursor: Any) -> pd.DataFrame:
    """A query's rows with each cell as the database gave it (in SQLite its own storage class: int,
    float, str, bytes or None), in columns of Python objects: SQLite types cells, not columns, and a
    column-wide dtype would let one NULL turn every integer of its column into a float (and a 64-bit
    key lose digits)."""
    names = [d[0] for d in cursor.description]
    rows = cursor.fetchall()
    return pd.DataFrame({name: pd.Series([row[i] for row in rows], dtype=object)
                         for i, name in enumerate(names)}, columns=names)


def _table_keys(name: str, constraints: Sequence[Sequence[Any]]) -> TableKeys:
    """Table ``name``'s keys from a schema's key constraints, each (table, "p" or "f", its columns,
    the referenced table, the referenced columns)."""
    own = [c for c in constraints if c[0] == name]
    primary = next((list(c[2]) for c in own if c[1] == "p"), [])
    foreign = []
    for c in own:
        if c[1] == "f":
            if len(c[2]) != 1:
                raise RelationalError(f"table {name!r} has a foreign key of {len(c[2])} columns; composite keys are "
                                      "not supported yet.")
            foreign.append(ForeignKey(str(c[2][0]), str(c[3]), str(c[4][0])))
    return TableKeys(name, _single_key(name, primary), tuple(foreign))


def _read_sqlite(path: Path) -> tuple[dict[str, pd.DataFrame], list[TableKeys]]:
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise InputFileError(f"cannot open {path} as a SQLite database ({error}).") from None
    try:
        names = [row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid")]
        frames, declared = {}, []
        for name in names:
            info = connection.execute(f"PRAGMA table_info({_quoted(name)})").fetchall()  # cid, name, type, notnull, default, pk
            primary = [row[1] for row in sorted(info, key=lambda row: row[5]) if row[5] > 0]
            foreign = connection.execute(f"PRAGMA foreign_key_list({_quoted(name)})").fetchall()
            # id, seq, table, from, to, ...; "to" is None when the parent's primary key is meant
            keys = tuple(ForeignKey(str(row[3]), str(row[2]), str(row[4]) if row[4] is not None else "")
                         for row in foreign)
            declared.append(TableKeys(name, _single_key(name, primary), keys))
            frames[name] = _object_frame(connection.execute(f"SELECT * FROM {_quoted(name)}"))
    except sqlite3.Error as error:
        raise InputFileError(f"cannot read {path} as a SQLite database ({error}).") from None
    finally:
        connection.close()
    primaries = {t.name: t.primary_key for t in declared}
    declared = [TableKeys(t.name, t.primary_key, tuple(
        ForeignKey(fk.column, fk.parent, fk.parent_column or (primaries.get(fk.parent) or "")) for fk in t.foreign_keys))
        for t in declared]
    return frames, declared


def _read_duckdb(path: Path) -> tuple[dict[str, pd.DataFrame], list[TableKeys]]:
    try:
        import duckdb
    except ImportError:
        raise InputFileError(f"{path} is a DuckDB database; reading it needs the duckdb package "
                             "(pip install duckdb).") from None
    try:
        connection = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as error:
        raise InputFileError(f"cannot open {path} as a DuckDB database ({error}).") from None
    try:
        names = [row[0] for row in connection.execute(
            "SELECT table_name FROM duckdb_tables() WHERE NOT internal ORDER BY table_oid").fetchall()]
        constraints = connection.execute(
            "SELECT table_name, constraint_type, constraint_column_names, referenced_table, referenced_column_names "
            "FROM duckdb_constraints() WHERE constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY')").fetchall()
        kinds = {"PRIMARY KEY": "p", "FOREIGN KEY": "f"}
        constraints = [(c[0], kinds[c[1]], *c[2:]) for c in constraints]
        frames, declared = {}, []
        for name in names:
            declared.append(_table_keys(name, constraints))
            frames[name] = connection.execute(f"SELECT * FROM {_quoted(name)}").fetchdf()
    except duckdb.Error as error:
        raise InputFileError(f"cannot read {path} as a DuckDB database ({error}).") from None
    finally:
        connection.close()
    return frames, declared


KEYS_QUERY = """
SELECT src.relname, con.contype,
       ARRAY(SELECT a.attname::text FROM unnest(con.conkey) AS k(n)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n),
       ref.relname,
       ARRAY(SELECT a.attname::text FROM unnest(con.confkey) AS k(n)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n)
FROM pg_constraint con
JOIN pg_class src ON src.oid = con.conrelid
LEFT JOIN pg_class ref ON ref.oid = con.confrelid
WHERE con.contype IN ('p', 'f') AND src.relnamespace = current_schema()::regnamespace
"""


def _read_postgres(url: str) -> tuple[dict[str, pd.DataFrame], list[TableKeys]]:
    try:
        import psycopg
    except ImportError:
        raise InputFileError(f"{shown(url)} is a PostgreSQL database; reading it needs the psycopg package "
                             "(pip install 'synth[postgres]').") from None
    try:
        connection = psycopg.connect(url, autocommit=False)
    except psycopg.Error as error:
        raise InputFileError(f"cannot connect to {shown(url)} ({type(error).__name__}: "
                             f"{str(error).splitlines()[0] if str(error) else 'no detail'}); check the host, port, "
                             "user and database name.") from None
    try:
        connection.read_only = True
        with connection.cursor() as cursor:
            names = [row[0] for row in cursor.execute(
                "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema() "
                "AND table_type = 'BASE TABLE' ORDER BY table_name").fetchall()]
            constraints = cursor.execute(KEYS_QUERY).fetchall()
            frames, declared = {}, []
            for name in names:
                declared.append(_table_keys(name, constraints))
                frames[name] = _object_frame(cursor.execute(f"SELECT * FROM {_quoted(name)}"))
    except psycopg.Error as error:
        raise InputFileError(f"cannot read {shown(url)} ({type(error).__name__}); check that the user may read "
                             "its tables.") from None
    finally:
        connection.close()
    return frames, declared


def _read_folder(path: Path, missing_markers: Iterable[str]) -> tuple[dict[str, pd.DataFrame], str]:
    files = sorted(p for p in path.iterdir() if p.suffix.lower() in TABLE_SUFFIXES and p.is_file())
    if not files:
        raise InputFileError(f"the folder {path} holds no .csv or .parquet file; put one file per table there.")
    formats = {TABLE_SUFFIXES[p.suffix.lower()] for p in files}
    if len(formats) > 1:
        raise InputFileError(f"the folder {path} mixes CSV and Parquet files; keep one format for all tables.")
    stems = [p.stem for p in files]
    if len(set(stems)) != len(stems):
        raise InputFileError(f"two files of {path} have the same table name; name each table's file once.")
    return {p.stem: read_frame(p, missing_markers) for p in files}, formats.pop()


def read_database(path: str | os.PathLike[str], missing_markers: Iterable[str] = ("",)) -> Database:
    """Every table of the database at ``path`` with its declared keys. InputFileError when it is not
    a database synth reads or cannot be read; RelationalError for keys it cannot use."""
    kind = database_kind(path)
    p = Path(path)
    markers = tuple(missing_markers)
    file_format = None
    if kind == "postgresql":
        frames, declared = _read_postgres(str(path))
    elif kind == "sqlite":
        frames, declared = _read_sqlite(p)
    elif kind == "duckdb":
        frames, declared = _read_duckdb(p)
    elif kind == "folder":
        frames, file_format = _read_folder(p, markers)
        declared = [TableKeys(name, None) for name in frames]
    else:
        raise InputFileError(f"{p} is not a SQLite or DuckDB database file nor a folder of CSV/Parquet files.")
    if kind != "folder":
        frames = {name: mark_missing(frame, markers) for name, frame in frames.items()}
    if not frames:
        raise InputFileError(f"the database {shown(path)} holds no table.")
    columns = {name: tuple(str(c) for c in frame.columns) for name, frame in frames.items()}
    return Database(kind, shown(path), frames, columns, tuple(declared), file_format)

"""A release folder read for sharing: its manifest and the files it lists, its Description(s) and
relational record, whether the files on disk are still the files listed, and the synthetic files'
row counts.

It reads only what ``synth run`` wrote into the folder (the release, public), never the private
data, and it never changes a file. A file the manifest lists must lie inside the folder.
"""

from __future__ import annotations

import csv
import json
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from synth.errors import ReleaseFolderError, SynthError
from synth.relational.stored import StoredRelease, is_release, read_release
from synth.release.description import Description, load_description
from synth.release.manifest import sha256_of

MANIFEST = "manifest.json"
SIGNATURE = "signature.json"
CARD_MARK = "data-synth-release-card"  # an attribute of a release card's <main>: how signing knows a card
SINGLE_TABLE = "table"  # the name a single-table release's one table goes by


@dataclass(frozen=True)
class ListedFile:
    """A file of the release as its manifest lists it (``size`` None: the manifest does not state it)."""

    name: str
    sha256: str
    size: int | None


@dataclass(frozen=True)
class ReleaseFolder:
    """A release folder: the manifest (and its own SHA-256), the files it lists, each table's
    Description (one, named ``SINGLE_TABLE``, for a single table) and, for a database, the record."""

    path: Path
    manifest: dict[str, Any]
    manifest_sha256: str
    files: tuple[ListedFile, ...]
    descriptions: dict[str, Description]
    stored: StoredRelease | None

    @property
    def seeded(self) -> bool:
        return any(d.seeded for d in self.descriptions.values()) or bool(self.manifest.get("seeded"))


def inside(folder: Path, name: str) -> Path:
    """``folder / name`` for a relative name that stays inside ``folder``; ReleaseFolderError otherwise."""
    relative = PurePosixPath(name)
    if not name or relative.is_absolute() or ".." in relative.parts or "\\" in name:
        raise ReleaseFolderError(f"the file name {name!r} does not name a file inside the release folder {folder}; "
                                 "the list was altered. Do not trust this release.")
    return folder / relative


def read_folder(path: str | os.PathLike[str]) -> ReleaseFolder:
    """The release in ``path``, its files checked against its manifest; ReleaseFolderError when it is
    not a release folder synth wrote, or a file it lists is missing or changed (each one named)."""
    folder = Path(path)
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise ReleaseFolderError(f"{folder} holds no {MANIFEST}: pass the folder `synth run` wrote (or `synth demo`).")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        files = tuple(ListedFile(str(f.get("name", f.get("file"))), str(f["sha256"]),
                                 None if f.get("bytes") is None else int(f["bytes"])) for f in manifest["files"])
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ReleaseFolderError(f"{manifest_path} is not a manifest synth wrote ({type(exc).__name__}: {exc}); the "
                                 "release cannot be checked. Use the folder exactly as synth wrote it.") from exc
    check_files(folder, files)  # before anything reads them: a changed file is named, not misread
    stored = None
    try:
        if is_release(folder):
            stored = read_release(folder)
            descriptions = dict(stored.descriptions)
        else:
            named = [f.name for f in files if f.name.endswith("description.json")]
            if len(named) != 1:
                raise ReleaseFolderError(f"the manifest of {folder} lists {len(named)} Descriptions where a single-table "
                                         "release has one; pass the folder `synth run` wrote.")
            descriptions = {SINGLE_TABLE: load_description(folder / named[0])}
    except ReleaseFolderError:
        raise
    except SynthError as exc:
        raise ReleaseFolderError(f"the release in {folder} cannot be read: {exc}") from exc
    return ReleaseFolder(folder, manifest, sha256_of(manifest_path), files, descriptions, stored)


def file_problems(folder: Path, files: Sequence[ListedFile]) -> list[str]:
    """One line per listed file that is missing or whose size or SHA-256 differs from the manifest's."""
    problems = []
    for listed in files:
        path = inside(folder, listed.name)
        if not path.is_file():
            problems.append(f"{listed.name}: missing")
        elif (listed.size is not None and path.stat().st_size != listed.size) or sha256_of(path) != listed.sha256:
            problems.append(f"{listed.name}: changed (its SHA-256 or size differs from the manifest's)")
    return problems


def check_files(folder: Path, files: Sequence[ListedFile]) -> None:
    """ReleaseFolderError naming every listed file that is missing or changed."""
    problems = file_problems(folder, files)
    if problems:
        raise ReleaseFolderError(
            f"the files of the release in {folder} are not the files its manifest lists: {'; '.join(problems)}. "
            "A card or a signature must not vouch for changed files: restore them from the release as synth wrote "
            "it (or make the release again).")


def is_card(path: Path) -> bool:
    """Whether ``path`` is a release card (an HTML page carrying the card's mark)."""
    if path.suffix.lower() not in (".html", ".htm") or not path.is_file():
        return False
    return f'<main class="release-card" {CARD_MARK}=' in path.read_text(encoding="utf-8", errors="replace")


def folder_files(path: Path) -> list[str]:
    """Every file in the folder (below it too), as a name relative to it; hidden files left out."""
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*")
                  if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts))


def unlisted(folder: ReleaseFolder) -> list[str]:
    """Files in the folder that are neither listed, nor the manifest, the signature or a card."""
    known = {f.name for f in folder.files} | {MANIFEST, SIGNATURE}
    return [n for n in folder_files(folder.path) if n not in known and not is_card(folder.path / n)]


def synthetic_rows(folder: ReleaseFolder) -> list[tuple[str, str, int | None]]:
    """(file, table, rows) of each synthetic file (rows None when this file's format cannot be counted here)."""
    if folder.stored is None:
        return [(f.name, SINGLE_TABLE, _rows_of_file(folder.path / f.name)) for f in folder.files
                if Path(f.name).suffix.lower() in (".csv", ".parquet")]
    synthetic = folder.stored.synthetic
    tables = list(folder.stored.descriptions)
    if synthetic.is_dir():
        found = []
        for table in tables:
            path = next((p for p in sorted(synthetic.glob(f"{table}.*")) if p.suffix.lower() in (".csv", ".parquet")), None)
            found.append((path.relative_to(folder.path).as_posix() if path else synthetic.name, table,
                          _rows_of_file(path) if path else None))
        return found
    counts = _rows_of_database(synthetic, tables)
    return [(synthetic.name, table, counts.get(table)) for table in tables]


def _rows_of_file(path: Path) -> int | None:
    if path.suffix.lower() == ".csv":
        with open(path, newline="", encoding="utf-8", errors="replace") as handle:
            return max(sum(1 for _ in csv.reader(handle)) - 1, 0)  # less the header line
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return None
    return int(pq.ParquetFile(path).metadata.num_rows)


def _rows_of_database(path: Path, tables: list[str]) -> dict[str, int]:
    """Each table's rows in a synthetic SQLite (or, when duckdb is installed, DuckDB) file, opened read-only."""
    queries = {t: 'SELECT COUNT(*) FROM "' + t.replace('"', '""') + '"' for t in tables}
    if path.suffix.lower() == ".duckdb":
        try:
            import duckdb
        except ImportError:
            return {}
        with duckdb.connect(str(path), read_only=True) as connection:
            return {t: int((connection.execute(q).fetchone() or (0,))[0]) for t, q in queries.items()}
    database = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return {t: int(database.execute(q).fetchone()[0]) for t, q in queries.items()}
    finally:
        database.close()

"""A relational release folder read back: its record (``relational.json``), the structure its keys
give, each table's Description and each table's columns in order.

What ``synth run DATABASE`` wrote is public (the release); reading it back spends nothing. The
columns come from the record (releases since the record held them) or else from the synthetic
database's header. ``generate_again`` (``synth generate RELEASE``) and the evaluation read a release
through here.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth.errors import InputFileError
from synth.relational.bounding import parent_column
from synth.relational.keys import ForeignKey, Structure, TableKeys
from synth.release.description import Description, load_description

SYNTHETIC_NAMES = ("synthetic.sqlite", "synthetic.duckdb", "synthetic")
RECORD = "relational.json"


def is_release(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder holding a relational release's record."""
    return (Path(path) / RECORD).is_file()


@dataclass(frozen=True)
class StoredRelease:
    """A release folder's record, structure, Descriptions, each table's columns in order (keys
    included) and the synthetic database's path."""

    folder: Path
    record: dict[str, Any]
    structure: Structure
    descriptions: dict[str, Description]
    columns: dict[str, tuple[str, ...]]
    synthetic: Path

    @property
    def count_columns(self) -> dict[str, str]:
        """Each child table's count column in its parent's part."""
        return {t["table"]: t["count_column"] for t in self.record["tables"] if "count_column" in t}

    def modelled(self, table: str) -> list[str]:
        """The columns of ``table``'s part that are its own (its children counts included; a part's
        schema also holds its parent's columns, named ``PARENT.COLUMN``)."""
        names = self.descriptions[table].schema.names
        keys = self.structure.table(table)
        if not keys.foreign_keys:
            return list(names)
        parent = keys.foreign_keys[0].parent
        inherited = {parent_column(parent, n) for n in self.modelled(parent)}
        return [n for n in names if n not in inherited]

    def own_columns(self, table: str) -> list[str]:
        """The modelled columns of ``table`` itself: its part's own columns without its children counts."""
        counts = {self.count_columns[child.name] for child in self.structure.children_of(table)}
        return [n for n in self.modelled(table) if n not in counts]


def read_release(folder: str | os.PathLike[str]) -> StoredRelease:
    """Read the release in ``folder``. InputFileError when it is not a complete relational release."""
    path = Path(folder)
    record_path = path / RECORD
    if not record_path.is_file():
        raise InputFileError(f"{path} holds no {RECORD}: pass the folder `synth run DATABASE -o FOLDER` wrote.")
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        record = None
    if not isinstance(record, dict) or record.get("format") != "synth relational release":
        raise InputFileError(f"{record_path} is not a synth relational release record.")
    synthetic = next((path / name for name in SYNTHETIC_NAMES if (path / name).exists()), None)
    if synthetic is None:
        raise InputFileError(f"{path} holds no synthetic database (one of {', '.join(SYNTHETIC_NAMES)}); it is not "
                             "a complete release.")
    tables = []
    for entry in record["tables"]:
        fks: tuple[ForeignKey, ...] = ()
        if entry.get("foreign_key"):
            parent, parent_key = str(entry["references"]).split(".", 1)
            fks = (ForeignKey(entry["foreign_key"], parent, parent_key),)
        tables.append(TableKeys(entry["table"], entry.get("primary_key"), fks))
    descriptions = {entry["table"]: load_description(path / entry["description"]) for entry in record["tables"]}
    if all("columns" in entry for entry in record["tables"]):
        columns = {entry["table"]: tuple(entry["columns"]) for entry in record["tables"]}
    else:
        from synth.relational.source import read_database

        columns = read_database(synthetic).columns
    return StoredRelease(path, record, Structure.of(tables, columns), descriptions, columns, synthetic)


def summary_lines(stored: StoredRelease) -> list[str]:
    """What the release holds, for ``synth inspect RELEASE``: the guarantee, and per table its keys,
    bound, rows per person, share of the budget and spending (all public: the record)."""
    record = stored.record
    spent, budget = record["spent"], record["budget"]
    lines = [f"relational release of {len(record['tables'])} tables, root {record['root']!r}",
             f"privacy unit: {record['privacy_unit']}",
             f"spent epsilon={spent['epsilon']:.6g}, delta={spent['delta']:.3g} per person (budget epsilon="
             f"{budget['epsilon']:.6g}, delta={budget['delta']:.3g}; {spent.get('notion', '')})"
             + ("; SEEDED: no privacy guarantee" if record.get("noise", {}).get("seeded") else ""),
             f"row counts: {record['row_counts']}"]
    weights = record.get("budget_split", {}).get("weights", {})
    for entry in record["tables"]:
        text = (f"- {entry['table']}: primary key {entry.get('primary_key')!r}, {entry['measurements']} measurements, "
                f"spent epsilon={entry['spent']['epsilon']:.6g} on its own, budget weight "
                f"{weights.get(entry['table'], 1.0):g}, up to {entry.get('rows_per_unit', 1)} row(s) per person")
        if entry.get("foreign_key"):
            over = entry.get("parents_over_bound") or {}
            text += (f"; references {entry['references']} through {entry['foreign_key']!r}, at most "
                     f"{entry['max_children']} rows measured per parent ({entry['max_children_source']}), counts "
                     f"kept up to {entry.get('max_count', entry['max_children'])}"
                     f"{' (' + entry['max_count_source'] + ')' if entry.get('max_count_source') else ''}; about {max(over.get('noisy', 0), 0):.0f}"
                     f" parents had more (noise deviation {over.get('std', 0):.1f})")
            if entry.get("count_share_budget"):
                share = record.get("budget_split", {}).get("count_share_of_child_part", 0.0)
                text += (f"; {share:.0%} of its part measured its number of rows per {entry['references'].split('.')[0]}"
                         " row once more, in that part")
        lines.append(text)
    lines.append(f"each table's Description: {', '.join(str(stored.folder / e['description']) for e in record['tables'])} "
                 "(synth inspect DESCRIPTION shows one)")
    return lines

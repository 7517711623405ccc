"""A relational run: read the database, release it under DP per person, write the synthetic database.

``run_database`` is what ``synth run DATABASE`` does: read the tables and the keys (the profile's,
else the database's declared ones), check the structure and the outputs before anything is
spent, describe (``synth.relational.describer``), generate (``synth.relational.generation``) and
write (``synth.relational.writing``) chunk by chunk of root rows, all or nothing, into the release
folder:

* ``synthetic.sqlite`` / ``synthetic.duckdb`` / ``synthetic/`` (one file per table): the synthetic
  database, keys declared where the format can hold them;
* ``TABLE.description.json`` per table: each part's Description (its measurements and ledger);
* ``relational.json``: the release's record (privacy unit, bounds, each part's costs, the ledger);
* ``manifest.json``: the files with their SHA-256 and the guarantee in words.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from synth.columns.kinds import DomainSource
from synth.defaults import VERSION
from synth.errors import RelationalError
from synth.files import atomic_write_text, check_writable, staged_release
from synth.progress import SILENT, Progress
from synth.relational.describer import RelationalRelease, describe_database
from synth.relational.generation import DatabaseModel, SyntheticDatabase
from synth.relational.keys import Structure
from synth.relational.profile import RelationalProfile
from synth.relational.source import Database, read_database, shown
from synth.relational.stored import read_release
from synth.relational.writing import output_kind, output_name, write_database
from synth.release.description import save_description
from synth.release.manifest import sha256_of


@dataclass(frozen=True)
class DatabaseRunResult:
    """What ``run_database`` released and wrote."""

    release: RelationalRelease
    synthetic: SyntheticDatabase
    files: dict[str, Path]

    def __repr__(self) -> str:
        rows = ", ".join(f"{name} {count:,}" for name, count in self.synthetic.rows.items())
        spent = self.release.spent
        return (f"<DatabaseRunResult: synthetic rows {rows}; spent epsilon={spent['epsilon']:.6g}, "
                f"delta={spent['delta']:.3g} per person; wrote {', '.join(p.name for p in self.files.values())}>")


def structure_of(database: Database, profile: RelationalProfile) -> Structure:
    """The keys the profile declares (only its tables are released), else the database's own."""
    declared = profile.keys or database.declared
    missing = [t.name for t in declared if t.name not in database.frames]
    if missing:
        raise RelationalError(f"the profile names table(s) {missing} that the database lacks (its tables: "
                              f"{list(database.frames)}). Fix the names under [tables] in the profile.")
    return Structure.of(declared, database.columns)


def guarantee(release: RelationalRelease, seeded: bool) -> str:
    """The guarantee in words, for the manifest."""
    if seeded:
        return ("This release was made with seeded (reproducible) noise for tests and benchmarks: it carries NO "
                "privacy guarantee and must not be shared.")
    spent = release.spent
    structure = release.structure
    bounds = ", ".join(f"{p.table}: at most {p.max_children} rows per {structure.parent(structure.table(p.table)).name} "
                       f"row ({p.rows_per_unit} per person)" for p in release.parts if p.max_children is not None)
    text = (f"({spent['epsilon']:.6g}, {spent['delta']:.3g})-differential privacy per person: one row of "
            f"{release.structure.root.name!r} with every row that references it can be added or removed and every "
            f"released file changes in distribution by at most that. Each person's rows were bounded before "
            f"measuring ({bounds}); rows beyond the bound were dropped.")
    derived = [f"{p.table}.{name}" for p in release.parts if not p.description.end_to_end_dp
               for name, source in p.description.domain_sources.items() if source == DomainSource.DATA_DERIVED.value]
    if any(not p.description.end_to_end_dp for p in release.parts):
        text += (f" NOT end-to-end DP: the domains (or written shapes) of {derived or 'some columns'} were read from "
                 "the private data without noise.")
    return text


def run_database(path: str | os.PathLike[str], out_dir: str | os.PathLike[str], profile: RelationalProfile, *,
                 force: bool = False, sampling: str = "rounded", progress: Progress = SILENT,
                 report_to: TextIO | None = None) -> DatabaseRunResult:
    """Release the database at ``path`` under ``profile`` and write it all to ``out_dir`` (module docstring)."""
    out = Path(out_dir)
    progress.message(f"reading the database {shown(path)}")
    database = read_database(path, profile.base.missing_markers)
    structure = structure_of(database, profile)
    synthetic_name = output_name(database.kind)
    descriptions = {t.name: f"{t.name}.description.json" for t in structure.tables}
    names = [synthetic_name, *descriptions.values(), "relational.json", "manifest.json"]
    out.mkdir(parents=True, exist_ok=True)
    with staged_release(out, names, force) as stage:  # refuses existing outputs before anything is spent
        release = describe_database(database, profile, structure, progress, report_to)
        model = DatabaseModel({p.table: p.description for p in release.parts}, structure, release.count_columns,
                              database.columns, progress)
        # the same parts, without the models aim's fits started from (fit keeps none): memory no longer needed
        release = replace(release, parts=tuple(replace(p, description=model.fitted[p.table].description)
                                               for p in release.parts))
        draw = model.draw(seed=profile.base.seed, sampling=sampling, progress=progress)
        write_database(draw, structure, output_kind(database.kind), stage / synthetic_name, database.file_format)
        synthetic = draw.database()
        if report_to is not None:
            for child, missed in synthetic.unconditioned.items():
                if missed:
                    print(f"note: {missed} group(s) of parents had {child} rows drawn without their parents' columns "
                          "(the child model gave those columns no probability).", file=report_to)
        for part in release.parts:
            save_description(part.description, stage / descriptions[part.table])
        record = release.record(descriptions, database.columns)
        atomic_write_text(stage / "relational.json", json.dumps(record, indent=2, allow_nan=False) + "\n")
        seeded = bool(release.noise.get("seeded"))
        manifest = _manifest(stage, [synthetic_name, *descriptions.values(), "relational.json"], release, seeded)
        atomic_write_text(stage / "manifest.json", json.dumps(manifest, indent=2, allow_nan=False) + "\n")
    files = {"synthetic": out / synthetic_name, "relational": out / "relational.json", "manifest": out / "manifest.json",
             **{f"description:{t}": out / name for t, name in descriptions.items()}}
    return DatabaseRunResult(release, synthetic, files)


def _manifest(stage: Path, names: list[str], release: RelationalRelease, seeded: bool) -> dict[str, Any]:
    files = []
    for name in names:
        path = stage / name
        inside = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        files += [{"file": str(p.relative_to(stage)), "sha256": sha256_of(p)} for p in inside]
    return {
        "software": VERSION, "kind": "relational release", "files": files,
        "guarantee": guarantee(release, seeded), "seeded": seeded,
        "end_to_end_dp": all(p.description.end_to_end_dp for p in release.parts),
        "privacy_unit": release.record({p.table: "" for p in release.parts})["privacy_unit"],
        "budget": release.budget, "spent": release.spent,
        "bounds": {p.table: {"max_children": p.max_children, "source": p.bound_source,
                             "parents_over_bound": release.over_bound[p.table]}
                   for p in release.parts if p.max_children is not None},
        "parts": {p.table: {"budget_limit": p.limit, "spent": p.description.privacy["spent"]} for p in release.parts},
        "row_counts": "not published: estimated from noisy measurements",
    }


def output_kind_of(path: Path) -> str:
    """The kind of database ``generate_again`` writes at ``path``, by its name: a SQLite or DuckDB
    file, else a folder of CSV files."""
    suffix = path.suffix.lower()
    return {".sqlite": "sqlite", ".sqlite3": "sqlite", ".db": "sqlite", ".duckdb": "duckdb"}.get(suffix, "folder")


def generate_again(folder: str | os.PathLike[str], out: str | os.PathLike[str], rows: int | None = None,
                   seed: int | None = None, sampling: str = "rounded", force: bool = False,
                   progress: Progress = SILENT) -> SyntheticDatabase:
    """Draw a new synthetic database from the release in ``folder`` (no privacy cost: it reads the
    release only) and write it to ``out``: a ``.sqlite``/``.db`` or ``.duckdb`` file, else a folder of
    CSV files, keys declared where the format holds them. ``rows``: the root table's rows (default:
    its noisy total); each parent's children are drawn from the model as in the release. The database
    is drawn and written chunk by chunk of root rows, all or nothing."""
    stored = read_release(folder)
    target = Path(out)
    check_writable(target, force)  # before any work
    model = DatabaseModel(stored.descriptions, stored.structure, stored.count_columns, stored.columns, progress)
    draw = model.draw(rows, seed, sampling, progress)
    kind = output_kind_of(target)
    progress.message(f"writing the synthetic database to {target}")
    with staged_release(target.parent, [target.name], force) as stage:
        write_database(draw, stored.structure, kind, stage / target.name, "csv" if kind == "folder" else None)
    return draw.database()

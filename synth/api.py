"""The Python API: the verbs a user calls (describe, generate, run, evaluate, draft_profile, ...).

Each verb composes the modules below it and mirrors a CLI command. Nothing in the package imports
this module except ``synth.cli`` and the package's ``__init__``. The evaluation stack (scikit-learn,
scipy.stats, matplotlib) is imported only by ``evaluate``, when it is called.

A Description's fitted model is kept beside it (``description.json`` → ``description.model.npz``,
see ``model_path``): ``run`` writes it with the release, and ``kept_model`` reuses it while it
matches the Description and the fitting iterations, and otherwise fits again and replaces it.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeAlias, cast

import numpy as np
import pandas as pd

from synth.defaults import DEFAULT_DELTA_WITHOUT_PROFILE, FIT_ITERATIONS
from synth.domains.drafting import PROFILE_SHARE, draft_profile_under_dp
from synth.domains.drafting import draft_profile as _draft_from_data
from synth.domains.finding import check_draft_data, make_accountant, stopped_after_spending
from synth.domains.profile import Profile, load_profile
from synth.errors import AttackError, BudgetError, DataError, ModelFileError, ProfileError, SynthError
from synth.files import atomic_write_text, check_writable, staged_release
from synth.generation.generate import FittedModel, description_digest, fit, generate  # noqa: F401 (generate: an API verb)
from synth.model.interface import Model
from synth.model.sampling import DEFAULT_SAMPLING, check_sampling
from synth.model.store import read_model
from synth.progress import SILENT, Progress
from synth.relational.profile import (
    RelationalProfile,
    draft_relational_profile,
    is_relational_profile,
    load_relational_profile,
)
from synth.relational.release import DatabaseRunResult, structure_of
from synth.relational.release import run_database as _run_database
from synth.relational.source import database_kind, read_database
from synth.release.describer import describe as _describe
from synth.release.description import Description, load_description, save_description
from synth.release.holdout import check_holdout_place, holdout_statement, parse_share, set_aside
from synth.release.manifest import build_manifest, save_manifest
from synth.tables.source import TableSource, read_table
from synth.tables.tableio import (
    check_table_output,
    parquet_available,
    read_table_chunks,
    write_chunks,
    write_table,
)

if TYPE_CHECKING:
    from synth.evaluate import Evaluation
    from synth.evaluate.relational import DatabaseEvaluation
    from synth.sharing.signing import Verified

DataLike: TypeAlias = pd.DataFrame | str | os.PathLike[str]
ProfileLike = Profile | str | os.PathLike[str] | None
KindsLike = Mapping[str, str] | None


@dataclass(frozen=True, repr=False)
class RunResult:
    """What ``run`` wrote: the synthetic table (None when it had more than ``CHUNK_ROWS`` rows: it
    was then written a chunk at a time and never held whole; read it from ``files``), its number of
    rows, the Description, its fitted model and the manifest."""

    synthetic: pd.DataFrame | None
    rows: int
    description: Description
    files: dict[str, Path]
    holdout: Path | None = None  # the held-out rows, beside the data (never in the release folder)

    def __repr__(self) -> str:
        rows, columns = self.rows, len(self.description.schema.output_names)
        folder = self.files["description"].parent
        names = ", ".join(path.name for path in self.files.values())
        spent = self.description.privacy["spent"]
        return (f"<RunResult: {rows:,} synthetic rows × {columns} columns; {self.description.engine}, spent "
                f"epsilon={spent['epsilon']:.6g}, delta={spent['delta']:.3g}; wrote {names} to {folder}>")


def model_path(description_path: str | os.PathLike[str]) -> Path:
    """Where the fitted model of a Description file is kept: beside it, ``NAME.model.npz``."""
    return Path(description_path).with_suffix(".model.npz")


class _StandardError(io.TextIOBase):
    """The default ``report_to``: what is written goes to ``sys.stderr`` as it is at the moment of the
    write, not as it was when this module was imported (a caller or a test runner may have replaced,
    or closed, that one since)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


STDERR = cast(TextIO, _StandardError())


def _note(report_to: TextIO | None, text: str) -> None:
    if report_to is not None:
        print(f"note: {text}", file=report_to)


def _saved_model(path: Path, digest: str, iterations: int | None) -> tuple[Model | None, str]:
    """The model saved at ``path`` if it was fitted to the Description of ``digest`` with
    ``iterations`` (None: with any); otherwise None and why not."""
    try:
        model, metadata, _ = read_model(path)
    except ModelFileError as error:
        return None, str(error)
    if metadata.get("description_sha256") != digest:
        return None, "it was fitted to another Description (this one was edited or replaced since)"
    if iterations is not None and metadata.get("iterations") != iterations:
        return None, f"it was fitted with {metadata.get('iterations')} iterations, not {iterations}"
    return model, ""


def saved_model(description: Description, description_path: str | os.PathLike[str]) -> Model | None:
    """The model kept beside the Description at ``description_path`` when it was fitted to this very
    Description (with any number of iterations), else None: nothing is fitted or written."""
    path = model_path(description_path)
    return _saved_model(path, description_digest(description), None)[0] if path.exists() else None


def kept_model(description: Description, description_path: str | os.PathLike[str],
               iterations: int = FIT_ITERATIONS, *, progress: Progress = SILENT,
               report_to: TextIO | None = STDERR) -> FittedModel:
    """The fitted model of ``description`` (read from ``description_path``): the one saved beside it
    when it was fitted to this very Description with these ``iterations``; otherwise fitted now
    and saved there (replacing a stale or damaged one, with a note to ``report_to``). A model that
    cannot be saved (a read-only folder) is used all the same, with a note."""
    path, digest = model_path(description_path), description_digest(description)
    if path.exists():
        model, reason = _saved_model(path, digest, iterations)
        if model is not None:
            progress.message(f"using the fitted model saved in {path}")
            return FittedModel(description, model, iterations, digest)
        _note(report_to, f"the saved model {path} is not used: {reason}. Fitting the model again.")
    fitted = fit(description, iterations, progress)
    try:
        fitted.save(path, force=True)
    except (OSError, SynthError) as error:
        _note(report_to, f"the fitted model could not be saved to {path} ({error}); the next `synth generate` will fit it again.")
    else:
        progress.message(f"saved the fitted model to {path}")
    return fitted


def resolve_profile(profile: ProfileLike = None, *, epsilon: float | None = None, delta: float | None = None,
                    engine: str | None = None, rows: int | None = None, seed: int | None = None,
                    accept_rough_domains: bool | None = None) -> Profile:
    """Load ``profile`` (or start an empty one) and apply the options given explicitly (None:
    not given)."""
    if profile is None:
        if epsilon is None:
            raise BudgetError(
                "no privacy budget: pass --epsilon (e.g. --epsilon 1) or a profile that sets one "
                "(`synth profile DATA --epsilon 1 -o profile.toml` drafts one under DP)."
            )
        base = Profile(schema=None, epsilon=epsilon,
                       delta=DEFAULT_DELTA_WITHOUT_PROFILE if delta is None else delta)
    else:
        base = profile if isinstance(profile, Profile) else load_profile(profile)
    return base.with_overrides(epsilon=epsilon, delta=delta, engine=engine, rows=rows, seed=seed,
                               accept_rough_domains=accept_rough_domains)


def check_before_reading(data: DataLike, profile: Profile) -> None:
    """The checks a release with a profile drafted under DP makes before reading the data: its
    budget covers what the draft spent and leaves some (``make_accountant``), and a local data file
    has the name and header (read from its first line alone) of the one the draft read. A DataFrame,
    or a table elsewhere, has its header checked when it is opened."""
    draft = profile.dp_draft
    if draft is None:
        return
    make_accountant(profile, False)
    if isinstance(data, (str, os.PathLike)):
        path = Path(os.fspath(data))
        header = draft.data_columns
        if path.is_file():
            chunks = read_table_chunks(path, 1, profile.missing_markers)
            try:
                header = tuple(str(c) for c in next(chunks).columns)
            finally:
                chunks.close()
        check_draft_data(draft, header, path.name)


def load_data(data: DataLike, profile: Profile) -> pd.DataFrame:
    """A DataFrame as it is, or a CSV/Parquet file read with the profile's missing-value markers."""
    if isinstance(data, pd.DataFrame):
        return data
    return read_table(data, profile.missing_markers)


def describe(data: DataLike, profile: ProfileLike = None, *, epsilon: float | None = None,
             delta: float | None = None, engine: str | None = None, rows: int | None = None,
             seed: int | None = None, kinds: KindsLike = None, accept_rough_domains: bool | None = None,
             progress: Progress = SILENT, report_to: TextIO | None = STDERR) -> Description:
    """Measure a private table under DP and return the release (a Description).

    Without profile columns, each column's kind is decided under DP from what its cells read as
    (a DataFrame's or Parquet file's dtypes were inferred from the private cells, so they are
    never trusted); ``kinds`` (column name → "integer", "categorical", ...) declares kinds that
    are public knowledge instead, and the Description records them as public. When a domain
    cannot be found under DP (a column *lost*), nothing more is spent and the run stops with a
    DiscoveryError saying what it would take, unless ``accept_rough_domains`` (or the profile's
    setting): lost columns are then left out of the release.

    Values clipped or mapped to "other" are counted and the counts written to ``report_to`` (the
    data owner's console); they are exact statistics of the private data and never part of the
    release. ``rows`` is recorded as the number of rows to generate by default.
    """
    resolved = resolve_profile(profile, epsilon=epsilon, delta=delta, engine=engine, rows=rows, seed=seed,
                               accept_rough_domains=accept_rough_domains)
    check_before_reading(data, resolved)
    try:
        result = _describe(load_data(data, resolved), resolved, progress, kinds)
    finally:
        if isinstance(data, TableSource):  # describing is its only reader: let go of the backend's memory
            data.close()                   # (DuckDB's buffers) before a model is fitted and sampled
    if report_to is not None:
        for line in result.notes:
            print(f"note: {line}", file=report_to)
        for line in result.encoding_report.lines():
            print(f"note (private, not released): {line}", file=report_to)
    return result.description


def run(data: DataLike, out_dir: str | os.PathLike[str], profile: ProfileLike = None, *,
        epsilon: float | None = None, delta: float | None = None, engine: str | None = None,
        rows: int | None = None, seed: int | None = None, kinds: KindsLike = None,
        accept_rough_domains: bool | None = None, force: bool = False, sampling: str = DEFAULT_SAMPLING,
        holdout: float | str | None = None, progress: Progress = SILENT,
        report_to: TextIO | None = STDERR) -> RunResult:
    """Describe, generate and write synthetic.csv (and .parquet with pyarrow), description.json,
    its fitted model description.model.npz (which a later ``synth generate`` reuses) and
    manifest.json to ``out_dir``: all of them, or (on any error) none. ``kinds`` as in
    ``describe``, ``sampling`` as in ``FittedModel.sample``. ``holdout`` (a share: 0.1 or "10%")
    sets that share of the rows aside at random before anything is described, and writes them
    beside the data file (``synth.release.holdout``) once the release is written: the control set
    of ``evaluate(..., attacks=True)``."""
    check_sampling(sampling)  # a bad scheme is refused before any budget is spent
    if is_database(data):
        raise DataError(f"{os.fspath(data)} is a database, not a table: release it with synth.run_database (the "
                        "command line's `synth run` does so by itself).")
    out = Path(out_dir)
    share = None if holdout is None else parse_share(holdout)
    held_path = None
    if share is not None:
        if not isinstance(data, (str, os.PathLike)):
            raise AttackError("a holdout is written beside the data file, but the data is not a file: split the "
                               "DataFrame yourself (synth.release.holdout.set_aside) and release the rows kept.")
        held_path = check_holdout_place(data, out)
        check_table_output(held_path, force)
    # a bad budget or profile is refused before the output folder is made
    resolved = resolve_profile(profile, epsilon=epsilon, delta=delta, engine=engine, rows=rows, seed=seed,
                               accept_rough_domains=accept_rough_domains)
    check_before_reading(data, resolved)
    out.mkdir(parents=True, exist_ok=True)
    kept = model_path("description.json").name
    names = ["synthetic.csv", "description.json", kept, "manifest.json"]
    if parquet_available():
        names.insert(1, "synthetic.parquet")
    for name in names:
        check_writable(out / name, force)  # refuse before spending any budget
    held = None
    if share is not None:  # the describer sees only the rows kept
        progress.message(f"setting {share:.0%} of the rows aside as a holdout")
        data, held = set_aside(load_data(data, resolved), share, np.random.default_rng(None if seed is None else [seed, 34]))
    description = describe(data, resolved, kinds=kinds, progress=progress, report_to=report_to)
    try:
        fitted = fit(description, progress=progress)
        description = fitted.description  # the same release, without aim's model the fit started from
        progress.message("sampling synthetic rows")
        count = fitted.rows_to_sample(None)
        synthetic = fitted.sample(seed=seed, sampling=sampling, progress=progress) if fitted.in_one_chunk() else None
        # a larger table is sampled once, a chunk at a time, each chunk written to every file before the next
        chunks = [synthetic] if synthetic is not None else fitted.sample_chunks(seed=seed, sampling=sampling,
                                                                                  progress=progress)
        with staged_release(out, names, force) as stage:
            save_description(description, stage / "description.json")
            outputs = [stage / n for n in names if n.startswith("synthetic.")]
            write_chunks(chunks, outputs, missing_text=description.schema.missing_text)
            outputs.append(fitted.save(stage / kept))
            manifest = build_manifest(description, stage / "description.json", outputs)
            if share is not None:
                manifest["holdout"] = holdout_statement(share)
            save_manifest(manifest, stage / "manifest.json")
    except SynthError as error:
        error.args = (f"{error} {stopped_after_spending(description.privacy['spent'], len(description.ledger))}",)
        raise
    files = {"synthetic": out / "synthetic.csv", "description": out / "description.json", "model": out / kept,
             "manifest": out / "manifest.json"}
    if "synthetic.parquet" in names:
        files["parquet"] = out / "synthetic.parquet"
    if held is not None and held_path is not None:
        write_table(held, held_path, force=force)
    return RunResult(synthetic, count, description, files, held_path)


def is_database(data: object, backend: str = "auto") -> bool:
    """Whether ``data`` is the path of a database (a SQLite or DuckDB file, or a folder of table files) or
    a PostgreSQL URL. A folder counted by Spark (``backend``, or a TableSource's) is one table in parts."""
    backend = data.backend if isinstance(data, TableSource) else backend
    kind = database_kind(os.fspath(data)) if isinstance(data, (str, os.PathLike)) else None
    return kind is not None and not (kind == "folder" and backend == "spark")


def relational_profile(profile: ProfileLike = None, *, epsilon: float | None = None, delta: float | None = None,
                       engine: str | None = None, seed: int | None = None) -> RelationalProfile:
    """A relational profile (``synth.relational.profile``) with the options given explicitly applied to
    every table; a profile file without [tables] (or none) gives the settings, keys then come from the
    database's schema. A single-table profile that lists columns is refused: its columns name no table."""
    overrides: dict[str, Any] = {"epsilon": epsilon, "delta": delta, "engine": engine, "seed": seed}
    if isinstance(profile, (str, os.PathLike)) and is_relational_profile(profile):
        loaded = load_relational_profile(profile)
        return replace(loaded, base=loaded.base.with_overrides(**overrides),
                       tables={n: p.with_overrides(**overrides) for n, p in loaded.tables.items()})
    base = resolve_profile(profile, epsilon=epsilon, delta=delta, engine=engine, seed=seed)
    if base.lists_columns:
        raise ProfileError("this profile lists [columns] of one table, but the data is a database: list each table's "
                           "columns under [tables.NAME.columns] (`synth profile DATABASE -o profile.toml` drafts one).")
    return RelationalProfile(base, {}, (), {})


def run_database(data: str | os.PathLike[str], out_dir: str | os.PathLike[str], profile: ProfileLike = None, *,
                 epsilon: float | None = None, delta: float | None = None, engine: str | None = None,
                 seed: int | None = None, force: bool = False, sampling: str = DEFAULT_SAMPLING,
                 progress: Progress = SILENT, report_to: TextIO | None = STDERR) -> DatabaseRunResult:
    """Release a database (a SQLite or DuckDB file, or a folder of CSV/Parquet files, one per table) under
    DP per person, a root row with every row that references it, and write the synthetic database
    of the same kind, its Descriptions, ``relational.json`` and ``manifest.json`` to ``out_dir``
    (``synth.relational.release``). Keys come from the profile's [tables], else from the database's
    declared primary and foreign keys."""
    check_sampling(sampling)
    resolved = relational_profile(profile, epsilon=epsilon, delta=delta, engine=engine, seed=seed)
    return _run_database(data, out_dir, resolved, force=force, sampling=sampling, progress=progress,
                         report_to=report_to)


def _check_outputs(force: bool, *paths: str | os.PathLike[str] | None) -> None:
    """Refuse, before any work, an output that exists (unless ``force``) or whose folder is missing."""
    for path in paths:
        if path is not None:
            check_writable(Path(path), force)


def evaluate_database(original: str | os.PathLike[str], release: str | os.PathLike[str], *, seed: int = 0,
                      report: str | os.PathLike[str] | None = None, json_path: str | os.PathLike[str] | None = None,
                      force: bool = False, progress: Progress = SILENT) -> DatabaseEvaluation:
    """Compare a relational release (the folder ``synth run DATABASE`` wrote) with the original database
    (NOT a DP output: it reads the original): each table, children per parent, the marginals across
    the relation and referential integrity, beside the naive release (``synth.evaluate.relational``).
    ``report`` and ``json_path`` are written atomically when given (refused if they exist, unless
    ``force``), both checked before any work."""
    from synth.evaluate.relational import evaluate_database as _evaluate_database
    from synth.evaluate.relational_report import write_database_report

    _check_outputs(force, report, json_path)
    evaluation = _evaluate_database(original, release, seed=seed, progress=progress)
    if json_path is not None:
        atomic_write_text(json_path, json.dumps(evaluation.to_dict(), indent=2) + "\n", force=force)
    if report is not None:
        progress.message(f"writing the report to {report}")
        write_database_report(evaluation, report, force)
    return evaluation


def draft_database_profile(data: str | os.PathLike[str], out: str | os.PathLike[str], force: bool = False) -> Path:
    """Write a relational profile for the database ``data`` to ``out``: its tables and declared keys,
    a default ``max_children`` per child, and every column's domain read from the data (marked
    data-derived: not DP, to review)."""
    database = read_database(data)
    structure = structure_of(database, RelationalProfile(Profile(schema=None, epsilon=1.0), {}, (), {}))
    return atomic_write_text(out, draft_relational_profile(database, structure), force=force)


def draft_profile(data: DataLike, missing_markers: tuple[str, ...] = ("",), *, epsilon: float | None = None,
                  delta: float | None = None, share: float = PROFILE_SHARE, seed: int | None = None,
                  kinds: KindsLike = None, progress: Progress = SILENT,
                  report_to: TextIO | None = STDERR) -> Profile:
    """A release profile for a person to review, for the table ``data`` (a DataFrame or a file).

    With ``epsilon``: drafted **under DP** (``synth.domains.drafting.draft_profile_under_dp``): kinds,
    domains and shapes found from noisy counts with at most ``share`` of the budget (``epsilon``,
    ``delta``; default delta 1e-9), written as dp-estimated with the domains found, and a record of
    what was spent, which ``run`` or ``describe`` with the profile charges first (they spend the
    rest, so the two steps stay within the budget). The findings per column and notes go to
    ``report_to``. Without ``epsilon``: every domain is read from the data (``synth.domains.drafting.
    draft_profile``), marked data-derived: not DP, to be replaced with public knowledge.
    """
    if epsilon is None:
        if delta is not None or seed is not None or kinds:
            raise BudgetError("delta, seed and kinds apply to a profile drafted under DP; give epsilon too (e.g. "
                              "epsilon=1.0), or leave them out for a draft read from the data (not DP).")
        frame = data if isinstance(data, pd.DataFrame) else read_table(os.fspath(data), missing_markers)
        assert isinstance(frame, pd.DataFrame)  # a plain path is read into memory
        return _draft_from_data(frame, missing_markers)
    base = Profile(schema=None, epsilon=epsilon, delta=DEFAULT_DELTA_WITHOUT_PROFILE if delta is None else delta,
                   missing_markers=tuple(missing_markers))  # a bad budget is refused before reading
    data_file = Path(os.fspath(data)).name if isinstance(data, (str, os.PathLike)) else None
    result = draft_profile_under_dp(load_data(data, base), base.epsilon, base.delta, share=share, seed=seed,
                                    missing_markers=missing_markers, kinds=kinds, data_file=data_file,
                                    progress=progress)
    if report_to is not None:
        print(f"domains found under DP, per column:\n{result.findings}", file=report_to)
        for line in (*result.notes, result.verdict):
            print(f"note: {line}", file=report_to)
    return result.profile


def evaluate(original: DataLike, synthetic: DataLike, description: Description | str | os.PathLike[str] | None = None,
             missing_markers: tuple[str, ...] = ("",), *, target: str | None = None, seed: int = 0,
             report: str | os.PathLike[str] | None = None, json_path: str | os.PathLike[str] | None = None,
             force: bool = False, attacks: bool = False, holdout: DataLike | None = None,
             progress: Progress = SILENT) -> Evaluation:
    """Compare a synthetic table with the original (NOT a DP output: it reads the original).

    Tables are DataFrames or CSV/Parquet paths (large files are read in chunks). Every score is on a
    discretisation drafted from the original, so that what a release lost shows; the Description, when
    given, names the columns to compare (the original may hold more), its schema is scored beside
    (column and marginal TVDs) and its ledger is shown in the report. ``target`` names the
    column ML utility predicts. ``report`` and ``json_path`` are written atomically when given
    (refused if they exist, unless ``force``), both checked before any work. ``attacks`` runs attacks
    on the synthetic table (``synth.evaluate.attacks``) with ``holdout``, real rows of the same
    population that were not given to the release, as the control (AttackError without one).
    """
    from synth.evaluate import evaluate as _evaluate  # the evaluation stack: only when used
    from synth.evaluate import write_report

    if attacks != (holdout is not None):
        raise AttackError(
            "attacks need a control set: real rows of the same population that were NOT given to synth run, "
            "so that what an attack finds on the training rows can be told from what it finds on anyone. Pass "
            "--holdout FILE (holdout=...) with --attacks; `synth run DATA --holdout 10%` sets one aside when "
            "releasing." if attacks else "--holdout (holdout=...) is the control set of the attacks: pass "
            "--attacks (attacks=True) with it, or leave it out.")
    _check_outputs(force, report, json_path)
    if description is not None and not isinstance(description, Description):
        description = load_description(description)
    evaluation = _evaluate(original, synthetic, None, missing_markers, target, seed, progress, description,
                           holdout)
    if json_path is not None:
        atomic_write_text(json_path, json.dumps(evaluation.to_dict(), indent=2) + "\n", force=force)
    if report is not None:
        sources = {which: ("a DataFrame" if isinstance(table, pd.DataFrame) else os.fspath(table))
                   for which, table in (("original", original), ("synthetic", synthetic))}
        progress.message(f"writing the report to {report}")
        write_report(evaluation, report, description, sources, force, progress)
    return evaluation


def card(release: str | os.PathLike[str], out: str | os.PathLike[str], evaluation: str | os.PathLike[str] | None = None,
         force: bool = False) -> Path:
    """Write the release card of the folder ``release`` to ``out`` (see ``synth.sharing.card``)."""
    from synth.sharing.card import write_card

    return write_card(release, out, evaluation, force=force)


def sign(release: str | os.PathLike[str], key: str | os.PathLike[str], force: bool = False) -> Path:
    """Sign the release folder's files with the Ed25519 private key at ``key``; the signature.json written."""
    from synth.sharing.signing import sign_release

    return sign_release(release, key, force=force)


def verify(release: str | os.PathLike[str], public_key: str | os.PathLike[str]) -> Verified:
    """Check a signed release with the signer's public key; VerificationError naming what fails."""
    from synth.sharing.signing import verify_release

    return verify_release(release, public_key)

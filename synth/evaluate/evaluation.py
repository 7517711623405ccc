"""The evaluation of a synthetic table against its original: every metric, run in order, in one result.

``evaluate`` reads both tables onto a discretisation drafted from the original (``tables``,
``discretisation``), then computes fidelity (per-column TVD and KS, mean/max TVD of 1-, 2- and 3-way
marginals, SDNist's k-marginal score), pairwise associations, a PCA projection, a random query
workload, ML utility for a target column, and privacy diagnostics. Given the release's schema, it
also scores column and marginal TVDs on that schema (``SchemaFidelity``), labelled as such: there a
value the release cannot represent is OTHER in both tables, so a loss does not show. ``Evaluation.to_dict``
is the machine-readable form (every number of the report, with a schema version); ``lines`` is the
console summary. It reads the original data: the result is NOT differentially private and is for
the data owner.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from synth.columns.schema import Schema
from synth.evaluate.anonymeter_attacks import check_anonymeter
from synth.evaluate.association import AssociationComparison, compare_associations
from synth.evaluate.attacks import Attacks, run_attacks
from synth.evaluate.discretisation import DRAFTED, RELEASE
from synth.evaluate.fidelity import MarginalErrors, count_cells, kmarginal_score, ks_statistic, marginal_errors
from synth.evaluate.privacy import PrivacyDiagnostics, privacy_diagnostics
from synth.evaluate.projection import Projection, project
from synth.evaluate.queries import QueryErrors, query_errors
from synth.evaluate.tables import TableLike, Tables, holdout_split, load_tables, read_alike
from synth.evaluate.utility import Utility, check_target, ml_utility
from synth.progress import SILENT, Progress
from synth.release.description import Description

SCHEMA_VERSION = 3
NOT_DP_NOTICE = ("This evaluation reads the original data; its numbers are not differentially "
                 "private. Keep them with the data owner.")


@dataclass(frozen=True)
class ColumnFidelity:
    """One column's 1-way TVD (on its codes) and, for numeric columns, the KS statistic of its values."""

    name: str
    kind: str
    tvd: float
    ks: float | None
    labels: tuple[str, ...]
    original: np.ndarray  # shares of rows per code
    synthetic: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "tvd": self.tvd, "ks": self.ks,
                "shares": {"codes": list(self.labels), "original": self.original.tolist(),
                           "synthetic": self.synthetic.tolist()}}


@dataclass(frozen=True)
class SchemaFidelity:
    """Column and k-way marginal TVDs on the release's own schema (its Description's codes)."""

    columns: tuple[ColumnFidelity, ...]
    marginals: tuple[MarginalErrors, ...]

    @property
    def mean_column_tvd(self) -> float:
        return float(np.mean([c.tvd for c in self.columns]))

    def column(self, name: str) -> ColumnFidelity | None:
        return next((c for c in self.columns if c.name == name), None)

    def summary(self) -> dict[str, float]:
        return {"mean_column_tvd": self.mean_column_tvd,
                **{f"{m.k}_way_mean_tvd": float(m.tvds.mean()) for m in self.marginals}}

    def to_dict(self) -> dict[str, Any]:
        return {"columns": {c.name: c.to_dict() for c in self.columns},
                "marginals": {str(m.k): m.to_dict() for m in self.marginals}}


@dataclass(frozen=True)
class Evaluation:
    """Everything measured about a synthetic table against its original, on the discretisation
    drafted from the original; ``release_schema`` holds the TVDs on the release's own schema."""

    columns: tuple[ColumnFidelity, ...]
    marginals: tuple[MarginalErrors, ...]  # k = 1, 2, 3 (as many as the table has columns)
    associations: AssociationComparison
    projection: Projection
    queries: QueryErrors
    utility: Utility | None
    privacy: PrivacyDiagnostics
    original_rows: int
    synthetic_rows: int
    notes: tuple[str, ...]
    seed: int
    release: dict[str, Any] | None = None  # the Description's budget and ledger, when one was given
    drafted_from: str = ""  # the rows the discretisation was drafted from
    not_scored: Mapping[str, str] = field(default_factory=dict)  # the original's other columns → why
    release_schema: SchemaFidelity | None = None
    attacks: Attacks | None = None  # attacks on the synthetic table, when a holdout was given

    def marginal(self, k: int) -> MarginalErrors | None:
        return next((m for m in self.marginals if m.k == k), None)

    @property
    def mean_column_tvd(self) -> float:
        return float(np.mean([c.tvd for c in self.columns]))

    @property
    def scored_share(self) -> str:
        """How many of the original's columns the scores cover, for the headline ("" when all are)."""
        if not self.not_scored:
            return ""
        return f"{len(self.columns)} of the original's {len(self.columns) + len(self.not_scored)} columns scored"

    @property
    def kmarginal_score(self) -> float | None:
        two_way = self.marginal(2)
        return None if two_way is None else kmarginal_score(two_way.tvds)

    def summary(self) -> dict[str, Any]:
        """The headline numbers (the report's top)."""
        out: dict[str, Any] = {"mean_column_tvd": self.mean_column_tvd, "kmarginal_score": self.kmarginal_score,
                               "columns_scored": len(self.columns),
                               "columns_of_original": len(self.columns) + len(self.not_scored)}
        for m in self.marginals:
            out[f"{m.k}_way_mean_tvd"] = float(m.tvds.mean())
        out["association_mean_abs_difference"] = _finite_or_none(self.associations.mean_abs_difference)
        out["query_mean_abs_error"] = float(self.queries.errors.mean())
        if self.utility is not None:
            main = "accuracy" if self.utility.task == "classification" else "r2"
            out["utility"] = {"target": self.utility.target, "metric": main, "model": "gradient-boosted trees",
                              "train_on_original": self.utility.score("gradient-boosted trees", "original")[main],
                              "train_on_synthetic": self.utility.score("gradient-boosted trees", "synthetic")[main]}
        out["exact_match_rate"] = self.privacy.exact_match
        if self.release_schema is not None:
            out["release_schema"] = self.release_schema.summary()
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "notice": NOT_DP_NOTICE,
            "seed": self.seed,
            "rows": {"original": self.original_rows, "synthetic": self.synthetic_rows},
            "summary": self.summary(),
            "notes": list(self.notes),
            "discretisations": {
                "drafted": {"what": DRAFTED, "drafted_from": self.drafted_from,
                            "scores": "summary, fidelity (but fidelity.release_schema), utility, privacy"},
                "release": None if self.release_schema is None else {
                    "what": RELEASE, "scores": "summary.release_schema, fidelity.release_schema"}},
            "fidelity": {
                "columns": {c.name: c.to_dict() for c in self.columns},
                "not_scored": dict(self.not_scored),
                "release_schema": None if self.release_schema is None else self.release_schema.to_dict(),
                "marginals": {str(m.k): m.to_dict() for m in self.marginals},
                "kmarginal": None if self.kmarginal_score is None else {
                    "score": self.kmarginal_score, "scale": "0 (disjoint) to 1000 (identical)",
                    "definition": "NIST SDNist: (2 - mean over 2-way marginals of the L1 distance between "
                                  "the two tables' marginal densities) * 500"},
                "associations": self.associations.to_dict(),
                "pca": self.projection.to_dict(),
            },
            "utility": {"queries": self.queries.to_dict(),
                        "ml": None if self.utility is None else self.utility.to_dict()},
            "privacy": self.privacy.to_dict(),
            "release": self.release,
            **({} if self.attacks is None else {"attacks": self.attacks.to_dict()}),
        }

    def lines(self) -> list[str]:
        """A short text report for the console."""
        on_release = self.release_schema
        out = [f"Scores on a discretisation {DRAFTED}."]
        if on_release is not None:
            out.append(f"'TVD release': on {RELEASE}.")
        out.append(f"{'column':<24} {'kind':<12} {'TVD':>7} {'KS':>7}" + (f" {'TVD release':>12}" if on_release else ""))
        for c in self.columns:
            ks = "" if c.ks is None else f"{c.ks:.3f}"
            line = f"{c.name[:24]:<24} {c.kind:<12} {c.tvd:>7.3f} {ks:>7}"
            same = None if on_release is None else on_release.column(c.name)
            out.append(line + ("" if same is None else f" {same.tvd:>12.3f}"))
        for name, reason in self.not_scored.items():
            out.append(f"{name[:24]:<24} not scored: {reason}")
        for m in self.marginals:
            out.append(_marginal_line(m, scored=self.scored_share))
        for m in () if on_release is None else on_release.marginals:
            out.append(_marginal_line(m, " on the release's schema", self.scored_share))
        if self.kmarginal_score is not None:
            out.append(f"SDNist k-marginal score: {self.kmarginal_score:.0f} / 1000")
        out.append(f"association difference (mean |synthetic - original|): "
                   f"{self.associations.mean_abs_difference:.3f}")
        q = self.queries.to_dict()
        out.append(f"{q['queries']} random queries: mean absolute error {q['mean_abs_error']:.4f} "
                   f"(90% below {q['p90_abs_error']:.4f})")
        if self.utility is not None:
            u = self.utility
            main = "accuracy" if u.task == "classification" else "r2"
            for model in ("linear", "gradient-boosted trees"):
                out.append(f"{u.target} ({u.task}), {model}: {main} {u.score(model, 'original')[main]:.3f} "
                           f"trained on original, {u.score(model, 'synthetic')[main]:.3f} on synthetic")
        p = self.privacy
        out.append(f"exact matches with original rows: synthetic {p.exact_match['synthetic']:.2%}, "
                   f"held-out original rows {p.exact_match['holdout']:.2%} (diagnostic, not the guarantee)")
        out.extend(self.attacks.lines() if self.attacks is not None else ())
        out.extend(self.notes)
        out.append(NOT_DP_NOTICE)
        return out


def _marginal_line(m: MarginalErrors, where: str = "", scored: str = "") -> str:
    """One headline line; ``scored`` says how many of the original's columns it covers when not all."""
    scope = f"{m.tvds.size} of {m.total} sampled" if m.sampled else f"all {m.total}"
    scope += f"; {scored}" if scored else ""
    return f"{m.k}-way marginals{where}: mean TVD {m.tvds.mean():.3f}, max {m.tvds.max():.3f} ({scope})"


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _columns(tables: Tables, ks_of_values: bool = True) -> tuple[ColumnFidelity, ...]:
    schema, out = tables.schema, []
    counted = (tables.original.counted, tables.synthetic.counted)
    for j, column in enumerate(schema.columns):
        shares = [count_cells(c.codes[:, j], c.weights, column.size) / c.rows for c in counted]
        ks = None
        if ks_of_values and j in tables.original.values:
            a, b = (t.values[j] for t in (tables.original, tables.synthetic))
            a, b = a[np.isfinite(a)], b[np.isfinite(b)]
            ks = ks_statistic(a, b) if a.size and b.size else math.nan
        out.append(ColumnFidelity(column.name, column.kind.value, 0.5 * float(np.abs(shares[0] - shares[1]).sum()),
                                  ks, column.labels(schema.other_label), shares[0], shares[1]))
    return tuple(out)


def evaluate_tables(tables: Tables, target: str | None = None, seed: int = 0,
                    progress: Progress = SILENT) -> Evaluation:
    """Every metric on two tables already read onto one schema.

    Native thread pools (BLAS, OpenMP in scikit-learn) run one thread each: on a shared machine the
    models spent ten times more processor time waiting for threads than computing (Adult, 20,000
    training rows: 32 s of CPU with the default pools, 3 s with one thread, same scores).
    """
    if target is not None:
        check_target(tables, target)
    with threadpool_limits(limits=1):
        return _evaluate_tables(tables, target, seed, progress)


def _marginals(tables: Tables, rng: np.random.Generator, progress: Progress) -> tuple[MarginalErrors, ...]:
    """The 1-, 2- and 3-way marginal TVDs (as many ways as the table has columns)."""
    original, synthetic = tables.original.counted, tables.synthetic.counted
    return tuple(marginal_errors(original.codes, synthetic.codes, tables.schema.sizes, k, rng,
                                 (original.weights, synthetic.weights))
                 for k in progress.track(range(1, min(3, len(tables.schema.columns)) + 1), "k-way marginals"))


def _evaluate_tables(tables: Tables, target: str | None, seed: int, progress: Progress) -> Evaluation:
    rng = np.random.default_rng(seed)
    progress.message("fidelity: columns and marginals")
    columns = _columns(tables)
    marginals = _marginals(tables, rng, progress)
    release_schema = None
    if tables.release is not None:  # its own stream, so the other scores do not depend on it
        progress.message("fidelity on the release's own schema")
        release_schema = SchemaFidelity(_columns(tables.release, ks_of_values=False),
                                        _marginals(tables.release, np.random.default_rng([seed, 1]), progress))
    progress.message("pairwise associations")
    associations = compare_associations(tables)
    progress.message("PCA projection")
    projection = project(tables, rng)
    progress.message("query workload")
    queries = query_errors(tables, rng)
    split = holdout_split(tables.original.rows, rng)
    utility = None
    if target is not None:
        progress.message(f"ML utility for target {target!r}")
        utility = ml_utility(tables, split, target, rng, seed)
    progress.message("privacy diagnostics")
    privacy = privacy_diagnostics(tables, split, rng)
    notes = list(tables.notes)
    notes.extend(f"{m.k}-way marginals: {m.tvds.size} of {m.total} scored, a uniform sample (the cap for "
                 f"{tables.original.total_rows + tables.synthetic.total_rows:,} rows in all is {m.cap})." for m in marginals if m.sampled)
    if target is None:
        notes.append("No --target given: ML utility was not measured.")
    return Evaluation(columns, marginals, associations, projection, queries, utility, privacy,
                      tables.original.total_rows, tables.synthetic.total_rows, tuple(notes), seed,
                      drafted_from=tables.drafted_from, not_scored=dict(tables.not_scored),
                      release_schema=release_schema)


def _release(description: Description) -> dict[str, Any]:
    privacy = description.privacy
    return {"engine": description.engine, "budget": privacy["budget"], "spent": privacy["spent"],
            "neighbouring": description.neighbouring, "end_to_end_dp": description.end_to_end_dp,
            "seeded": description.seeded, "ledger_totals": description.ledger_totals(),
            "ledger": [e.to_dict() for e in description.ledger]}


def evaluate(original: TableLike, synthetic: TableLike, schema: Schema | None = None,
             missing_markers: tuple[str, ...] = ("",), target: str | None = None, seed: int = 0,
             progress: Progress = SILENT, description: Description | None = None,
             holdout: TableLike | None = None) -> Evaluation:
    """Compare ``synthetic`` with ``original`` (DataFrames or CSV/Parquet paths) on a discretisation
    drafted from the original and, when the release's ``schema`` is given (the ``description``'s when
    one is given), on that schema too; a Description's budget and ledger are kept in the result.
    With ``holdout`` (real rows not given to the release), attacks are run on the synthetic table
    (``attacks``), read against the Description's epsilon when given.
    DataError on different columns or kinds, an empty table, or a target that is absent or constant."""
    if description is not None:
        schema, missing_markers = description.schema, description.schema.missing_markers
    if holdout is not None:
        check_anonymeter()
    tables = load_tables(original, synthetic, schema, missing_markers, target, seed, progress)
    held = None if holdout is None else read_alike(holdout, original, tables, "holdout", progress)
    evaluation = evaluate_tables(tables, target, seed, progress)
    if held is not None:
        spent = {} if description is None else description.privacy["spent"]
        with threadpool_limits(limits=1):
            attacks = run_attacks(tables, held, spent.get("epsilon"), float(spent.get("delta") or 0.0), target, seed,
                                  progress=progress)
        evaluation = replace(evaluation, attacks=attacks)
    return evaluation if description is None else replace(evaluation, release=_release(description))

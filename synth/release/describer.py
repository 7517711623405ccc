"""The describer: turns a private table and a profile into a Description (the DP release).

This is the privacy boundary's front door. It is the only code that takes the private table (a
DataFrame, or a table held by a counting backend, ``synth.tables``): it estimates missing
domains under DP (``discovery``, set up by ``synth.domains.finding``), encodes the rows, hands
them to a ``Curator`` and lets the engine spend the budget through it. What leaves is the
Description (noisy, charged, ledgered) and an ``EncodingReport`` of exact clipping counts that is
for the data owner's console only and must never be written into a release.

A release made with a profile drafted under DP charges what the draft spent first
(``synth.domains.finding.make_accountant``), and its Description lists the two steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, cast

import pandas as pd

from synth.columns.column import DEFAULT_OTHER_LABEL, Column
from synth.columns.domain import Domain
from synth.columns.encoding import EncodingReport
from synth.columns.kinds import UNMODELLED_KINDS, DomainSource, Kind
from synth.columns.schema import Schema
from synth.columns.unmodelled import UnmodelledColumn
from synth.domains.discovery import ALLOCATION, Discovery, needs_delta
from synth.domains.feasibility import check_feasible
from synth.domains.finding import (
    charge_ledger,
    check_draft_data,
    columns_to_discover,
    discover_domains,
    make_accountant,
    noise_source,
    public_kinds,
    stopped_after_spending,
)
from synth.domains.profile import READ_KEYS, Profile
from synth.engines import make_engine
from synth.engines.base import Engine, EngineResult, SchemaAware
from synth.errors import DataError, DiscoveryError, EngineError, ProfileError, SynthError
from synth.privacy import LedgerEntry
from synth.privacy.curator import CountRelease, Curator
from synth.privacy.held_back import HeldBack
from synth.privacy.neighbours import Neighbouring, Relation
from synth.progress import SILENT, Progress
from synth.release.description import DEFAULT_SHAPE, Description, shape_keys_set
from synth.tables.counting import CountingTable, as_table


@dataclass(frozen=True)
class DescribeResult:
    """The release, the exact encoding report that only the data owner may see, and public notes.

    ``notes`` are derived from noisy outputs only (e.g. a domain that could not be located).
    """

    description: Description
    encoding_report: EncodingReport
    notes: tuple[str, ...] = ()


def _kind_sources(schema: Schema, to_discover: Mapping[str, Kind | None]) -> dict[str, str]:
    """Where each column's kind came from: declared in public (profile or ``kinds=``), decided
    under DP (a noisy vote), or read from the data by a drafted profile."""
    sources = {}
    for column in schema.output_columns:
        if column.name in to_discover:
            sources[column.name] = "public" if to_discover[column.name] is not None else "dp-estimated"
        else:
            sources[column.name] = "data-derived" if column.source == DomainSource.DATA_DERIVED else "public"
    return sources


def _shape_sources(schema: Schema, to_discover: Mapping[str, Kind | None]) -> dict[str, dict[str, str]]:
    """Where each column's written shape came from, per key its kind takes (an id's ``template``
    too): "default" when unset (the public rule of ``synth.columns.textshape``), else "dp-estimated" when
    discovery's noisy vote set it, else the column's source in the profile (public, dp-estimated
    by an earlier release, or data-derived)."""
    sources = {}
    for column in schema.output_columns:
        found = DomainSource.DP_ESTIMATED.value if column.name in to_discover else DomainSource(column.source).value
        sources[column.name] = {key: found if given else DEFAULT_SHAPE for key, given in shape_keys_set(column).items()}
    return sources


def check_discovery(discovery: Discovery, accept_rough: bool, notes: list[str], others: bool = False) -> None:
    """The health check after discovery, before anything else is spent: DiscoveryError when a
    column was lost (its values exist but no domain cleared the noise), unless rough domains are
    accepted, in which case lost columns are left out of the release (refused still when none
    was found and there are no ``others``: columns whose domain is given). Notes name the rough ones
    and end with a one-line verdict. Findings hold noisy facts only."""
    # leaving the lost columns out releases something only when a column to model is left (or given)
    kept = others or any(f.verdict != "lost" and f.kind not in UNMODELLED_KINDS for f in discovery.findings)
    if discovery.lost and not accept_rough:
        leave_out = (", or pass --accept-rough-domains (accept_rough_domains = true in [release]) to release "
                     "without them" if kept else
                     "; leaving them out (--accept-rough-domains) would leave no column to model, so it would be "
                     "refused too")
        raise DiscoveryError(
            f"the domain of {len(discovery.lost)} column(s) could not be found under DP with this budget, so "
            f"nothing more was measured and nothing was released:\n{discovery.table()}\nGive these columns' "
            "domains in a profile (`synth profile DATA -o profile.toml`, review it, mark them source = "
            f"\"public\"), or spend more (--epsilon, or discovery_share in the profile){leave_out}."
        )
    if len(discovery.lost) == len(discovery.findings) and not others:
        raise DiscoveryError(f"no column's domain could be found under DP with this budget:\n{discovery.table()}\n"
                             "Give the columns' domains in a profile (`synth profile DATA -o profile.toml`, review "
                             "it, mark them source = \"public\"), or spend more (--epsilon).")
    for finding in discovery.findings:
        if finding.verdict == "rough":
            notes.append(f"column {finding.name!r}: rough domain: {finding.detail}")
        elif finding.kind in UNMODELLED_KINDS:  # an identifier, or a column written empty
            notes.append(f"column {finding.name!r}: {finding.detail}")
        elif finding.verdict == "lost":
            notes.append(f"column {finding.name!r}: lost ({finding.detail}); left out of the release, as "
                         "rough domains were accepted")
    notes.append(discovery.verdict_line())


def check_domain_sources(schema: Schema, profile: Profile) -> None:
    """ProfileError when ``schema`` has domains read from the data and ``profile`` does not accept them."""
    derived = [c.name for c in schema.output_columns if c.source == DomainSource.DATA_DERIVED]
    if derived and not profile.accept_data_derived_domains:
        raise ProfileError(
            f"the domains of column(s) {derived} are marked data-derived: they were read from the "
            "private data, so releasing them is not differentially private. Replace them with public "
            "knowledge and set source = \"public\", or keep only each one's kind and set source = "
            f"\"dp-estimated\" (removing its domain keys and any {', '.join(READ_KEYS)}), to have the rest "
            "estimated under DP, or set accept_data_derived_domains = true in [release] to release anyway "
            "(the release will then say it is not end-to-end DP)."
        )


def _release_schema(profile: Profile, discovered: Mapping[str, Column | UnmodelledColumn], order: Sequence[str]) -> Schema:
    """The profile's columns with a given domain and the ``discovered`` ones (lost ones are left
    out), in ``order``. A discovered category spelled like the profile's other label is dropped:
    its cells are written back as that label anyway (discovery does the same for the default)."""
    given = {c.name: c for c in profile.schema.output_columns} if profile.schema is not None else {}
    other_label = profile.schema.other_label if profile.schema is not None else DEFAULT_OTHER_LABEL
    columns = {**given, **{name: _leave_to_other(c, other_label) for name, c in discovered.items()}}
    return Schema.ordered([columns[n] for n in order if n in columns], profile.missing_markers, other_label)


def _leave_to_other(column: Column | UnmodelledColumn, other_label: str) -> Column | UnmodelledColumn:
    """``column`` without a category spelled ``other_label``, unless that is its only one (the
    Schema then refuses it, saying to choose another label)."""
    categories = getattr(column, "categories", None) or ()
    kept = tuple(c for c in categories if c != other_label)
    if not kept or len(kept) == len(categories):
        return column
    return replace(cast(Column, column), categories=kept)  # only a categorical column has categories


def describe(df: pd.DataFrame | CountingTable, profile: Profile, progress: Progress = SILENT,
             kinds: Mapping[str, Kind | str] | None = None) -> DescribeResult:
    """Measure the private table ``df`` as ``profile`` says, under its privacy budget.

    ``df`` is a DataFrame or a counting backend's table (the same seed gives the same release).
    ``kinds`` declares some columns' kinds as public knowledge (only without profile columns);
    every other kind is decided under DP. Every check that needs no noisy value runs before the
    first charge; an error after it says on the console what had been spent.
    """
    table = as_table(df)
    if not table.columns:  # the header is public; whether there are rows is not, so it is never asked
        raise DataError("the table has no columns; pass a table with a header line.")
    engine = make_engine(profile.engine_name, profile.engine_options)  # fail on bad options before spending
    neighbouring = Neighbouring(Relation(profile.neighbouring))
    to_discover = columns_to_discover(table.columns, profile, public_kinds(kinds, table.columns, profile))
    if profile.schema is not None:
        check_domain_sources(profile.schema, profile)
    check_draft_data(profile.dp_draft, table.columns)
    accountant, discovery_delta = make_accountant(profile, needs_delta(to_discover))
    drafted = len(accountant.ledger)  # the profile's DP draft, charged first
    counts = CountRelease(accountant, noise_source(profile.seed), neighbouring)
    engine.check(profile.column_names or tuple(to_discover), counts.notion)
    try:
        result = _measure(table, profile, engine, counts, to_discover, discovery_delta, progress)
    except SynthError as error:
        if len(accountant.ledger) > drafted:
            own = spent_alone(profile, needs_delta(to_discover), accountant.ledger[drafted:])
            error.args = (f"{error} {stopped_after_spending(own, len(accountant.ledger) - drafted)}",)
        raise
    if profile.dp_draft is None:
        return result
    return replace(result, description=_with_draft(result.description, profile, needs_delta(to_discover)))


def spent_alone(profile: Profile, discovers_categories: bool, entries: Sequence[LedgerEntry]) -> dict[str, Any]:
    """What ``entries`` spend on their own, on the accountant a release with ``profile`` makes
    (``make_accountant``) without its DP draft charged: a step's share of a release of two steps."""
    accountant, _ = make_accountant(profile, discovers_categories, charge_draft=False)
    charge_ledger(accountant, entries)
    return accountant.spent()


def _with_draft(description: Description, profile: Profile, discovers_categories: bool) -> Description:
    """The Description of a release made with a profile drafted under DP: its privacy record lists
    the two steps (the draft, whose ledger entries come first, and the release), each with what it
    spent on its own (``spent`` is their total), and the kinds the draft voted as dp-estimated."""
    draft = profile.dp_draft
    assert draft is not None
    count = len(draft.ledger)
    steps = [
        {"step": "profile draft", "command": "synth profile --epsilon", "share": draft.share,
         "budget": draft.budget, "spent": draft.spent, "ledger_entries": {"first": 0, "count": count},
         "data_file": draft.data_file, "columns": list(draft.columns), "domain_verdicts": dict(draft.verdicts)},
        {"step": "release", "spent": spent_alone(profile, discovers_categories, description.ledger[count:]),
         "ledger_entries": {"first": count, "count": len(description.ledger) - count}},
    ]
    kinds = dict(description.privacy.get("kind_sources") or {})
    for column in description.schema.output_columns:  # the draft voted their kinds, unless the person changed the source
        if column.name in draft.columns and column.source == DomainSource.DP_ESTIMATED and column.name in kinds:
            kinds[column.name] = DomainSource.DP_ESTIMATED.value
    return replace(description, privacy={**description.privacy, "kind_sources": kinds, "steps": steps})


def _measure(table: CountingTable, profile: Profile, engine: Engine, counts: CountRelease,
             to_discover: Mapping[str, Kind | None], discovery_delta: float, progress: Progress) -> DescribeResult:
    """Discovery (when domains are missing: after a cheap check that it can find them,
    ``synth.domains.feasibility``), encoding and the engine's measurements: the spending."""
    notes: list[str] = []
    schema, discovery_record = find_schema(table, profile, counts, to_discover, discovery_delta, progress, notes)
    return measure_table(table, schema, profile, engine, counts, to_discover, discovery_record, notes, progress)


def find_schema(table: CountingTable, profile: Profile, counts: CountRelease, to_discover: Mapping[str, Kind | None],
                discovery_delta: float, progress: Progress, notes: list[str]) -> tuple[Schema, dict[str, Any]]:
    """The release's schema: the profile's, with the domains of ``to_discover`` found under DP
    (after a cheap check that they can be found), and the record of that discovery (empty when
    nothing was discovered). Public notes are appended to ``notes``."""
    accountant = counts.accountant
    if not to_discover:
        assert profile.schema is not None  # nothing to discover: the profile's schema has every column
        if not profile.schema.columns:
            raise ProfileError("every column of the profile is an id or text column, so there is nothing to model; "
                               "list at least one column of another kind.")
        return profile.schema, {}
    whole = accountant.notion.unit_of(accountant.remaining())  # before the check spends its share
    feasibility = check_feasible(table, to_discover, counts, whole, whole * profile.discovery_share,
                                 discovery_delta, whole * profile.discovery_reserve, profile.missing_markers,
                                 profile.accept_rough_domains, others=profile.schema is not None,
                                 progress=progress)
    discovery = discover_domains(table, profile, counts, to_discover, discovery_delta, progress, notes, whole)
    check_discovery(discovery, profile.accept_rough_domains, notes, others=profile.schema is not None)
    schema = _release_schema(profile, discovery.columns, profile.column_names or tuple(to_discover))
    if not schema.columns:
        raise DiscoveryError(f"every column left is an identifier or free text, so there is nothing to model:\n"
                             f"{discovery.table()}\nDeclare the kinds of the columns to model in a profile.")
    discovery_record: dict[str, Any] = {
        "discovery_weights": dict(ALLOCATION), "discovery_reserve": profile.discovery_reserve,
        "second_pass": list(discovery.second_pass),
        "domain_verdicts": {f.name: f.verdict for f in discovery.findings}}
    if feasibility is not None:
        discovery_record["feasibility"] = feasibility.to_dict()
    return schema, discovery_record


class AfterEngine(Protocol):
    """Measurements a caller adds to the engine's (``measure_table``): ``budget`` is held back from
    the engine (``synth.privacy.held_back``), then ``measure`` spends it on the curator, the engine's
    result in hand (its compression), and returns that result with its own measurements added. Only
    for an engine whose model is the fit of every measurement (``Engine.fits_added_measurements``)."""

    @property
    def budget(self) -> float:
        """What is held back from the engine, in the notion's unit."""

    def measure(self, curator: Curator, result: EngineResult, progress: Progress) -> EngineResult:
        """Spend what was held back on ``curator``; ``result`` with the new measurements added."""


def measure_table(table: CountingTable, schema: Schema, profile: Profile, engine: Engine, counts: CountRelease,
                  to_discover: Mapping[str, Kind | None], discovery_record: Mapping[str, Any], notes: list[str],
                  progress: Progress, after: AfterEngine | None = None) -> DescribeResult:
    """Encode ``table`` by ``schema`` and run the engine on a curator of its codes (the engine's
    measurements, charged through ``counts``), then ``after``'s measurements on what it held back
    from the engine: the Description of one table."""
    accountant = counts.accountant
    if table.backend != "memory":
        progress.message(f"encoding and counting the rows on {table.backend}")
    rows, report = table.encode(schema)
    curator = Curator(rows.codes, Domain(schema.names, schema.sizes), counts, rows.weights)
    if isinstance(engine, SchemaAware):
        engine = engine.with_schema(schema)
    if after is None:
        result = engine.describe(curator, progress)
    else:
        if not engine.fits_added_measurements():
            raise EngineError(f"engine {profile.engine_name!r} does not fit measurements added to its own; "
                              "nothing may be held back from it.")
        result = after.measure(curator, engine.describe(HeldBack(curator, after.budget), progress), progress)
    notes.extend(result.notes)
    description = Description(
        schema=schema,
        measurements=result.measurements,
        engine=profile.engine_name,
        engine_options=engine.options,
        engine_output=result.output,
        neighbouring=counts.neighbouring.relation.value,
        privacy={"budget": accountant.budget_dict(), "spent": accountant.spent(),
                 "discovery_share": profile.discovery_share if to_discover else 0.0,
                 "kind_sources": _kind_sources(schema, to_discover),
                 "shape_sources": _shape_sources(schema, to_discover), **discovery_record},
        ledger=accountant.ledger,
        noise=counts.noise.description(),
        rows=profile.rows,
        compression=result.compression,
        fit_start=result.fit_start,
    )
    return DescribeResult(description, report, tuple(notes))

"""The describer: turns a private table and a profile into a Description (the DP release).

This is the privacy boundary's front door. It is the only code that takes the private table (a
DataFrame, or a table held by a counting backend, ``synth.tables``): it estimates missing
domains under DP (``discovery``), encodes the rows, hands them to a ``Curator`` and lets the
engine spend the budget through it. What leaves is the Description
(noisy, charged, ledgered) and an ``EncodingReport`` of exact clipping counts that is for the data
owner's console only and must never be written into a release.

It also drafts a profile's domains under DP (``draft_domains``: the same discovery, with a stated
share of the budget, and nothing else), and a release made with such a profile charges what the
draft spent first (``make_accountant``), so that the two steps compose in one ledger.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import pandas as pd

from synth.columns.column import DEFAULT_OTHER_LABEL, Column
from synth.columns.domain import Domain
from synth.columns.encoding import EncodingReport
from synth.columns.kinds import UNMODELLED_KINDS, DomainSource, Kind
from synth.columns.schema import Schema
from synth.columns.unmodelled import UnmodelledColumn
from synth.domains.discovery import ALLOCATION, Discovery, discover_columns, needs_delta
from synth.domains.dp_draft import DpDraft
from synth.domains.feasibility import check_feasible
from synth.domains.profile import READ_KEYS, Profile
from synth.engines import make_engine
from synth.engines.base import Engine, SchemaAware
from synth.errors import (
    BudgetError,
    BudgetExhaustedError,
    DataError,
    DiscoveryError,
    ProfileError,
    SchemaError,
    SynthError,
)
from synth.privacy import Accountant, Budget, LedgerEntry, NoiseSource, Notion, SecureNoise, SeededNoise
from synth.privacy.curator import CountRelease, Curator
from synth.privacy.neighbours import Neighbouring, Relation
from synth.progress import SILENT, Progress
from synth.release.description import DEFAULT_SHAPE, Description, shape_keys_set
from synth.tables.counting import CountingTable, as_table

DELTA_SHARE_FOR_DISCOVERY = 0.5  # share of δ reserved for thresholded category discovery
DRAFT_NOTE = "charged by the profile's draft under DP (synth profile --epsilon)"


@dataclass(frozen=True)
class DescribeResult:
    """The release, the exact encoding report that only the data owner may see, and public notes.

    ``notes`` are derived from noisy outputs only (e.g. a domain that could not be located).
    """

    description: Description
    encoding_report: EncodingReport
    notes: tuple[str, ...] = ()


def noise_source(seed: int | None) -> NoiseSource:
    """OpenDP's floating-point-safe samplers, or the seeded numpy twin for tests and benchmarks."""
    return SecureNoise() if seed is None else SeededNoise(seed)


def make_accountant(profile: Profile, discovers_categories: bool,
                    charge_draft: bool = True) -> tuple[Accountant, float]:
    """The accountant for the profile's budget, and the δ set aside for category discovery.

    Notion: the profile's ``accounting``, else pure DP when δ = 0 and zCDP otherwise. Under zCDP
    the δ for discovery is reserved in the accountant (it adds to δ, not to ρ); under approximate
    DP it is simply charged from the δ budget.

    A profile drafted under DP (``profile.dp_draft``) keeps its draft's δ reserve, and the draft's
    recorded ledger is charged first (unless ``charge_draft`` is False): what drafting the profile
    spent counts against this budget, so the draft and the release together stay within it. Its
    record is checked first (``check_draft``); a budget that cannot cover the draft and leave
    something is a BudgetError. Nothing is read or spent here.
    """
    budget = Budget(profile.epsilon, profile.delta)
    notion = Notion(profile.accounting) if profile.accounting else None
    draft = profile.dp_draft
    reserves = discovers_categories or (draft is not None and float(draft.budget.get("delta_reserve") or 0.0) > 0)
    share = profile.delta * DELTA_SHARE_FOR_DISCOVERY if reserves else 0.0
    if notion == Notion.APPROX or (notion is None and profile.delta == 0):
        accountant = Accountant(budget, notion, composition=profile.composition)
    else:
        accountant = Accountant(budget, notion, composition=profile.composition, delta_reserve=share)
    if draft is not None and charge_draft:
        check_draft(draft, profile, accountant)
        charge_ledger(accountant, draft.ledger, DRAFT_NOTE, _draft_overspent(draft, profile))
        if not accountant.notion.unit_of(accountant.remaining()) > 0:
            raise BudgetError(f"{_drafted(draft)}: all of this release's budget (epsilon = {profile.epsilon:g}, delta = "
                              f"{profile.delta:g}), so nothing is left to measure the data. Raise epsilon in [release] "
                              "or with --epsilon; nothing was read or spent.")
        share = min(share, accountant.remaining().delta)
    return accountant, share


def _drafted(draft: DpDraft) -> str:
    spent = draft.spent
    amount = f"epsilon = {spent['epsilon']:.6g}, delta = {spent['delta']:.3g}"
    if spent.get("rho") is not None:
        amount = f"rho = {spent['rho']:.6g} ({amount} on its own)"
    return f"this profile was drafted under DP (`synth profile --epsilon`), which spent {amount} of the data's budget"


def _draft_overspent(draft: DpDraft, profile: Profile) -> str:
    return (f"{_drafted(draft)}; this release's budget (epsilon = {profile.epsilon:g}, delta = {profile.delta:g}) "
            f"cannot cover that. Give it at least the budget the profile was drafted with (epsilon = "
            f"{draft.budget['epsilon']:g}, delta = {draft.budget['delta']:g} in [release]); nothing was read or spent.")


def charge_ledger(accountant: Accountant, entries: Sequence[LedgerEntry], note: str = "", refused: str = "") -> None:
    """Charge recorded ledger ``entries`` again, in order, on ``accountant`` (``note`` prefixed to
    each entry's note). BudgetError saying ``refused`` (when given) if they do not fit."""
    try:
        for e in entries:
            accountant.charge(e.cost, mechanism=e.mechanism, query=e.query, sensitivity=e.sensitivity,
                              noise_scale=e.noise_scale, note="; ".join(p for p in (note, e.note) if p))
    except BudgetExhaustedError as error:
        raise BudgetError(refused or str(error)) from None


def check_draft(draft: DpDraft, profile: Profile, accountant: Accountant) -> None:
    """BudgetError when a release with ``profile`` (accounted by ``accountant``) cannot charge its
    DP draft: another notion or composition, another neighbouring relation, or seeded draft noise
    for an unseeded release (a test draft carries no guarantee). ProfileError when the draft's
    ledger, charged on its own recorded budget, does not give what it states was spent (the
    record was altered)."""
    accounted = (accountant.notion.value, accountant.composition)
    if (draft.budget["notion"], draft.budget["composition"]) != accounted:
        raise BudgetError(
            f"{_drafted(draft)}, accounted as {draft.budget['notion']} with {draft.budget['composition']} composition; "
            f"this release accounts as {accounted[0]} with {accounted[1]} composition, so the two cannot be added up. "
            "Keep the profile's delta and accounting (delta > 0: zcdp by default; delta = 0: pure), or draft it again.")
    if draft.neighbouring != profile.neighbouring:
        raise BudgetError(f"{_drafted(draft)} under the {draft.neighbouring} relation; this release is under "
                          f"{profile.neighbouring}. Keep the profile's neighbouring, or draft it again.")
    if draft.seeded and profile.seed is None:
        raise BudgetError(f"{_drafted(draft)} with seeded noise (test mode), which carries no privacy guarantee, so "
                          "neither would the release. Draft the profile again without --seed, or give the release "
                          "a seed too (tests and benchmarks only).")
    try:
        recorded = Accountant(Budget(draft.budget["epsilon"], draft.budget["delta"]), Notion(draft.budget["notion"]),
                              composition=draft.budget["composition"], delta_reserve=draft.budget["delta_reserve"],
                              delta_slack=draft.budget.get("delta_slack"))
        charge_ledger(recorded, draft.ledger)
    except (SynthError, ValueError, TypeError) as error:
        raise ProfileError(f"the profile's [dp_draft] ledger cannot be charged on its own budget ({error}); the "
                           "record was altered. Draft the profile again.") from None
    stated = {k: draft.spent.get(k) for k in ("epsilon", "delta", "rho")}
    actual = {k: recorded.spent()[k] for k in stated}

    def agree(a: Any, b: Any) -> bool:
        numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15) if numbers else a == b

    if not all(agree(stated[k], actual[k]) for k in stated):
        raise ProfileError(f"the profile's [dp_draft] states {stated} spent, but its ledger gives {actual}; the "
                           "record was altered. Draft the profile again.")


def check_draft_data(draft: DpDraft | None, columns: Sequence[str], file_name: str | None = None) -> None:
    """DataError when the data differs from what the profile's DP draft read: other columns (its
    header), or, when both are known, another file name. The draft's spending counts for the data
    it read, so a release with its profile must measure that data."""
    if draft is None:
        return
    absent = [n for n in draft.data_columns if n not in columns]
    extra = [n for n in columns if n not in draft.data_columns]
    if absent or extra:
        raise DataError(
            f"this profile was drafted under DP from a table with other columns ({'lacking ' + str(absent) if absent else ''}"
            f"{'; ' if absent and extra else ''}{'with ' + str(extra) if extra else ''} here): what the draft spent "
            "counts for the data it read. Pass the table it was drafted from, or draft a profile from this one "
            "(`synth profile DATA --epsilon E -o FILE`).")
    if file_name is not None and draft.data_file is not None and file_name != draft.data_file:
        raise DataError(
            f"this profile was drafted under DP from {draft.data_file!r}, not {file_name!r}: what the draft spent counts "
            "for the data it read. Pass that file, or draft a profile from this one (`synth profile DATA --epsilon E "
            f"-o FILE`). If it is the same table renamed, set data_file = {file_name!r} in [dp_draft].")


def public_kinds(kinds: Mapping[str, Kind | str] | None, columns: Sequence[str], profile: Profile) -> dict[str, Kind]:
    """The kinds a data owner declared as public knowledge (Python's ``kinds=``), checked.

    They apply only without profile columns (a profile gives each column's kind in its [columns]).
    """
    if not kinds:
        return {}
    if profile.lists_columns:
        raise ProfileError(
            "kinds= declares column kinds, but the profile lists [columns] with kinds of their own; give "
            "each kind in the profile's [columns.NAME] table instead."
        )
    unknown = [name for name in kinds if name not in columns]
    if unknown:
        raise DataError(f"kinds= names column(s) {unknown} that the data lacks (its columns: {list(columns)}).")
    declared: dict[str, Kind] = {}
    for name, kind in kinds.items():
        try:
            declared[name] = Kind(kind)
        except ValueError:
            raise SchemaError(
                f"kinds= gives column {name!r} the kind {kind!r}; a kind is one of "
                f"{', '.join(k.value for k in Kind)}."
            ) from None
    return declared


def _columns_to_discover(columns: Sequence[str], profile: Profile, declared: Mapping[str, Kind]) -> dict[str, Kind | None]:
    """Columns whose domain is to be estimated under DP, with their public kinds: the profile's
    columns to estimate (kinds declared there), or every column of the data when it lists none.

    Without profile columns a kind is public only when the data owner declared it (``declared``);
    every other column's kind is None and is decided under DP during discovery. A column's dtype
    is never taken as its kind: pandas (or whoever wrote a Parquet file) inferred it from the
    private cells, so one person's blank or odd cell could flip it.
    """
    if not profile.lists_columns:
        return {name: declared.get(name) for name in columns}
    missing = [name for name in profile.column_names if name not in columns]
    if missing:
        raise DataError(
            f"the profile names column(s) {missing} that the data lacks (its columns: "
            f"{list(columns)}). Fix the names in the profile or pass the right file."
        )
    return dict(profile.to_estimate)


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


def stopped_after_spending(spent: Mapping[str, Any], queries: int) -> str:
    """What a run that stops now had spent (an accountant's ``spent()``, over ``queries`` charged
    queries), for the console: running it again spends again, so a retry loop is a visible choice."""
    amount = f"epsilon = {spent['epsilon']:.6g}, delta = {spent['delta']:.3g}"
    if spent.get("rho") is not None:
        amount = f"rho = {spent['rho']:.6g} ({amount})"
    return (f"This run had already spent {amount} on {queries} noisy queries of the private data before "
            "it stopped, and released nothing; running it again spends that budget again.")


def _check_domain_sources(schema: Schema, profile: Profile) -> None:
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
    to_discover = _columns_to_discover(table.columns, profile, public_kinds(kinds, table.columns, profile))
    if profile.schema is not None:
        _check_domain_sources(profile.schema, profile)
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


@dataclass(frozen=True)
class DraftedDomains:
    """What drafting a profile's domains under DP found and spent: discovery's columns and findings
    (noisy facts only), the accountant (budget, spent, ledger), how the noise was drawn, the data's
    header, and public notes."""

    discovery: Discovery
    accountant: Accountant
    noise: dict[str, Any]
    columns: tuple[str, ...]
    notes: tuple[str, ...]


def discover_domains(table: CountingTable, profile: Profile, counts: CountRelease, to_discover: Mapping[str, Kind | None],
                     discovery_delta: float, progress: Progress, notes: list[str], whole: float) -> Discovery:
    """The domains of ``to_discover`` found under DP as a release finds them: ``discovery_share`` of
    ``whole`` (what the accountant had left before discovery began) for the first look,
    ``discovery_reserve`` of it for a second look at text columns."""
    return discover_columns(table, to_discover, counts, whole * profile.discovery_share, discovery_delta, progress,
                            profile.missing_markers, notes, reserve=whole * profile.discovery_reserve)


def draft_domains(df: pd.DataFrame | CountingTable, profile: Profile, progress: Progress = SILENT,
                  kinds: Mapping[str, Kind | str] | None = None) -> DraftedDomains:
    """Find the kinds, domains and shapes of ``df``'s columns under DP for a profile to be drafted,
    spending at most ``discovery_share + discovery_reserve`` of ``profile``'s budget, as a release
    without a profile would (``kinds`` as in ``describe``), and nothing else. Unlike a release, a
    column found rough or lost does not stop it: the draft is for a person to review. DiscoveryError
    when no column's domain was found (saying what was spent)."""
    table = as_table(df)
    if not table.columns:
        raise DataError("the table has no columns; pass a table with a header line.")
    neighbouring = Neighbouring(Relation(profile.neighbouring))
    to_discover = _columns_to_discover(table.columns, profile, public_kinds(kinds, table.columns, profile))
    accountant, discovery_delta = make_accountant(profile, needs_delta(to_discover))
    counts = CountRelease(accountant, noise_source(profile.seed), neighbouring)
    notes: list[str] = []
    try:
        whole = accountant.notion.unit_of(accountant.remaining())
        discovery = discover_domains(table, profile, counts, to_discover, discovery_delta, progress, notes, whole)
        if not discovery.columns:
            raise DiscoveryError(f"no column's domain could be found under DP with this budget:\n{discovery.table()}\n"
                                 "Spend more (--epsilon, or --share), or give the domains in a profile as public knowledge.")
    except SynthError as error:
        if accountant.ledger:
            error.args = (f"{error} {stopped_after_spending(accountant.spent(), len(accountant.ledger))}",)
        raise
    return DraftedDomains(discovery, accountant, counts.noise.description(), tuple(table.columns), tuple(notes))


def _measure(table: CountingTable, profile: Profile, engine: Engine, counts: CountRelease,
             to_discover: Mapping[str, Kind | None], discovery_delta: float, progress: Progress) -> DescribeResult:
    """Discovery (when domains are missing: after a cheap check that it can find them,
    ``synth.domains.feasibility``), encoding and the engine's measurements: the spending."""
    accountant = counts.accountant
    notes: list[str] = []
    discovery_record: dict[str, Any] = {}
    if to_discover:
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
        discovery_record = {"discovery_weights": dict(ALLOCATION), "discovery_reserve": profile.discovery_reserve,
                            "second_pass": list(discovery.second_pass),
                            "domain_verdicts": {f.name: f.verdict for f in discovery.findings}}
        if feasibility is not None:
            discovery_record["feasibility"] = feasibility.to_dict()
    else:
        assert profile.schema is not None  # nothing to discover: the profile's schema has every column
        schema = profile.schema
        if not schema.columns:
            raise ProfileError("every column of the profile is an id or text column, so there is nothing to model; "
                               "list at least one column of another kind.")
    if table.backend != "memory":
        progress.message(f"encoding and counting the rows on {table.backend}")
    rows, report = table.encode(schema)
    curator = Curator(rows.codes, Domain(schema.names, schema.sizes), counts, rows.weights)
    if isinstance(engine, SchemaAware):
        engine = engine.with_schema(schema)
    result = engine.describe(curator, progress)
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
    )
    return DescribeResult(description, report, tuple(notes))

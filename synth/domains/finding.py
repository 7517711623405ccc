"""Finding a table's domains under DP as a release finds them, and the budget that pays for it.

``make_accountant`` sets up the accountant a profile's budget gives (a profile drafted under DP
has its draft's ledger charged first, so the draft and the release compose in one ledger);
``columns_to_discover`` says which columns' domains are to be found, and ``discover_domains``
runs discovery within the profile's shares. The describer uses all three for a release;
``draft_domains`` uses them to draft a profile's domains (``synth.domains.drafting``) and spends
nothing else. Nothing here encodes rows or runs an engine; what leaves is noisy and charged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from synth.columns.kinds import Kind
from synth.domains.discovery import Discovery, discover_columns, needs_delta
from synth.domains.dp_draft import DpDraft
from synth.domains.profile import Profile
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
from synth.privacy.curator import CountRelease
from synth.privacy.neighbours import Neighbouring, Relation
from synth.progress import SILENT, Progress
from synth.tables.counting import CountingTable, as_table

DELTA_SHARE_FOR_DISCOVERY = 0.5  # share of δ reserved for thresholded category discovery
DRAFT_NOTE = "charged by the profile's draft under DP (synth profile --epsilon)"


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


def columns_to_discover(columns: Sequence[str], profile: Profile, declared: Mapping[str, Kind]) -> dict[str, Kind | None]:
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


def stopped_after_spending(spent: Mapping[str, Any], queries: int) -> str:
    """What a run that stops now had spent (an accountant's ``spent()``, over ``queries`` charged
    queries), for the console: running it again spends again, so a retry loop is a visible choice."""
    amount = f"epsilon = {spent['epsilon']:.6g}, delta = {spent['delta']:.3g}"
    if spent.get("rho") is not None:
        amount = f"rho = {spent['rho']:.6g} ({amount})"
    return (f"This run had already spent {amount} on {queries} noisy queries of the private data before "
            "it stopped, and released nothing; running it again spends that budget again.")


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
    to_discover = columns_to_discover(table.columns, profile, public_kinds(kinds, table.columns, profile))
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

"""Drafting a profile for a person to review: under DP (first choice), or read from the data.

``draft_profile_under_dp`` finds each column's kind, domain and shape with the discovery a release
without a profile uses (``synth.domains.finding.draft_domains``), spending a stated share of the budget
(``PROFILE_SHARE`` by default: a release's ``discovery_share`` plus its ``discovery_reserve``), and
writes them as ``dp-estimated`` with the domains found, beside a ``[dp_draft]`` record of what it
spent (``synth.domains.dp_draft.DpDraft``). A release made with that profile charges the record first and
spends the rest: the two steps are one end-to-end DP release.

``draft_profile`` (second choice) reads everything from the rows: kinds read from the cells,
category lists and bounds read from the values (an integer column of at most ``DRAFT_BINS``
values gets one bin per value; other numbers get cuts at their quantiles, a value holding more
than one bin's share a bin of its own), how values are written (decimals, boolean words, date only,
day order), id and text columns where a column holds (nearly) one value per row. Its domains are
marked ``data-derived``: they were read from private rows, and the saved file says so in comments
(``synth.domains.profile``). Publishing them is not differentially private, so a person must replace them
with public knowledge (or knowingly set ``accept_data_derived_domains = true``). A draft never
fails because of a value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from synth.columns.cells import (
    FIRST_SECOND,
    LAST_SECOND,
    SHAPE_CELLS,
    classify_shapes,
    count_missing,
    infer_kinds,
    parse_values,
    shape_from_counts,
    text_counts,
)
from synth.columns.column import DEFAULT_OTHER_LABEL, MAX_EXACT_INTEGER, Column
from synth.columns.kinds import DomainSource, Kind
from synth.columns.schema import Schema
from synth.columns.textshape import TextShape
from synth.columns.unmodelled import UnmodelledColumn, judge_unique, looks_like_identifier, template_counts
from synth.defaults import DEFAULT_DELTA_WITHOUT_PROFILE
from synth.domains.dp_draft import DpDraft
from synth.domains.finding import draft_domains
from synth.domains.profile import DRAFT_MAX_CATEGORIES, Profile
from synth.errors import ProfileError, SchemaError
from synth.progress import SILENT, Progress
from synth.tables.counting import CountingTable

DRAFT_BINS = 32  # bins of a drafted number column: one per value up to this many values, else quantile cuts
PROFILE_SHARE = Profile.discovery_share + Profile.discovery_reserve  # of the budget, for a draft under DP: what a release spends on discovery
DAY = 86_400  # seconds
DRAFT_MIN_KEYS = 20  # fewer present cells are too few to call a column unique per row
DRAFT_EPSILON = 1.0
DRAFT_DELTA = 1e-9
MAX_DRAFT_FLOAT = 1e300  # larger magnitudes are left out of drafted bounds (they are clipped)
EMPTY_CATEGORY = "<none seen>"  # placeholder category of a drafted column with no values
COMMON_MISSING_MARKERS = ("NA", "N/A", "n/a", "na", "NULL", "null", "None", "none", "NaN", "nan", "?", "-", "--", ".")


def _draft_unique(name: str, series: pd.Series, kind: Kind, markers: tuple[str, ...]) -> UnmodelledColumn | None:
    """An id or text column when a text column, or whole numbers under a key-like name, hold
    (nearly) one value per row; its key template is a shape, never a value."""
    if not (kind == Kind.CATEGORICAL or (kind == Kind.INTEGER and looks_like_identifier(name))):
        return None
    exact = text_counts(series, markers)
    cells = float(exact.sum())
    if cells < DRAFT_MIN_KEYS:
        return None
    return judge_unique(name, float(exact.size), cells, template_counts(exact).to_dict(), kind == Kind.CATEGORICAL,
                        DomainSource.DATA_DERIVED)


def _draft_column(name: str, series: pd.Series, kind: Kind, markers: tuple[str, ...]) -> Column | UnmodelledColumn:
    derived = DomainSource.DATA_DERIVED
    unique = _draft_unique(name, series, kind, markers)
    if unique is not None:
        return unique
    has_missing = count_missing(series, markers) > 0
    shape = TextShape()
    if kind in SHAPE_CELLS:  # how the values are written, read from the cells like the rest
        shapes = classify_shapes(series, kind, markers)
        shape = shape_from_counts(kind, np.bincount(shapes[shapes >= 0], minlength=SHAPE_CELLS[kind]), 0.0, 0.0, 0.0)
    if kind == Kind.BOOLEAN:  # the domain False/True is fixed, but the kind was read from the data
        return Column(name, kind, missing=has_missing, source=derived, shape=shape)
    if kind == Kind.CATEGORICAL:
        counts = text_counts(series, markers).drop(DEFAULT_OTHER_LABEL, errors="ignore")
        counts = counts.sort_values(ascending=False, kind="stable").iloc[:DRAFT_MAX_CATEGORIES]
        categories = tuple(sorted(str(c) for c in counts.index)) or (EMPTY_CATEGORY,)
        listed_all = counts.size < DRAFT_MAX_CATEGORIES and categories != (EMPTY_CATEGORY,)
        return Column(name, kind, categories=categories, complete=listed_all, missing=has_missing, source=derived)
    values, _ = parse_values(series, kind, markers, shape)
    values = values[np.isfinite(values)]
    if kind == Kind.INTEGER:
        values = np.floor(values + 0.5)
        values = values[np.abs(values) <= MAX_EXACT_INTEGER]
    elif kind == Kind.DATETIME:
        values = values[(values >= FIRST_SECOND) & (values <= LAST_SECOND - 86400.0)]
    else:
        values = values[np.abs(values) <= MAX_DRAFT_FLOAT]
    if values.size == 0:  # nothing to read a range from: a placeholder to be replaced
        lower, upper = (0.0, 86400.0) if kind == Kind.DATETIME else (0.0, 1.0)
    else:
        lower, upper = float(values.min()), float(values.max())
    if upper <= lower:  # every value the same: a column of one value
        return Column(name, kind, lower=lower, upper=upper, bins=1, missing=has_missing, source=derived, shape=shape)
    cuts = drafted_cuts(values, kind, lower, upper, whole_days=bool(shape.date_only))
    try:
        return Column(name, kind, lower=lower, upper=upper, cuts=tuple(cuts) or None, bins=None if cuts else 1,
                      missing=has_missing, source=derived, shape=shape)
    except SchemaError:  # bins too close together in floating point
        return Column(name, kind, lower=lower, upper=upper, bins=1, missing=has_missing, source=derived, shape=shape)


def drafted_cuts(values: np.ndarray, kind: Kind, lower: float, upper: float, whole_days: bool = False) -> list[float]:
    """Inner bin edges for a drafted number or date column of ``values`` in [lower, upper].

    An integer column of at most ``DRAFT_BINS`` distinct values gets one bin per value (cuts at v
    and v + 1; the integers between two values, if any, share a bin), so no value the column
    never holds is drawn in place of one it does. Otherwise the cuts are the ``DRAFT_BINS``-quantiles
    (whole numbers for integers, whole seconds for dates, whole days for dates without a time),
    so bins are narrow where the values are (a skewed column is not 32 equal-width bins), and a
    value holding more than one bin's share of the values gets a bin of its own.
    """
    if values.size == 0:  # a placeholder range: one bin
        return []
    distinct, counts = np.unique(values, return_counts=True)
    if kind == Kind.INTEGER and distinct.size <= DRAFT_BINS:
        cuts = set(distinct.tolist()) | set((distinct + 1).tolist())
        return sorted(c for c in cuts if lower < c <= upper)
    cuts = set(np.quantile(values, np.arange(1, DRAFT_BINS) / DRAFT_BINS, method="inverted_cdf").tolist())
    heavy = distinct[counts > values.size / DRAFT_BINS]
    if kind == Kind.INTEGER:  # [v, v + 1): v alone
        following = heavy + 1
    else:  # [v, the next value): v alone
        following = distinct[np.minimum(np.searchsorted(distinct, heavy) + 1, distinct.size - 1)]
    cuts |= set(heavy.tolist()) | set(following.tolist())
    unit = DAY if kind == Kind.DATETIME and whole_days else 1.0
    if kind != Kind.FLOAT:  # whole numbers, seconds or days: a value v is at or above a cut q when v >= ceil(q)
        cuts = {float(np.ceil(c / unit) * unit) for c in cuts}
    if kind == Kind.DATETIME:
        return sorted(c for c in cuts if lower < c < upper)
    return sorted(c for c in cuts if lower < c <= upper)


def propose_missing_markers(df: pd.DataFrame, missing_markers: Sequence[str] = ("",)) -> tuple[str, ...]:
    """Common missing-value markers (``COMMON_MISSING_MARKERS``) found in columns that otherwise
    hold numbers (at least half of their cells), in the order of that list. A drafted profile adds
    them to its markers, so such a column is drafted as a number column, not as text."""
    found: set[str] = set()
    for name in df.columns:
        counts = text_counts(df[name], missing_markers)
        if counts.empty:
            continue
        texts = counts.index.to_numpy(dtype=object)
        numeric = ~np.isnan(pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=float))
        others = set(texts[~numeric])
        if others and others <= set(COMMON_MISSING_MARKERS) and counts[numeric].sum() >= counts.sum() / 2:
            found |= others
    return tuple(m for m in COMMON_MISSING_MARKERS if m in found)


def draft_profile(df: pd.DataFrame, missing_markers: Sequence[str] = ("",)) -> Profile:
    """A profile for a person to review, with every domain read from ``df`` (marked data-derived).

    Kinds come from ``infer_kinds``; categories are the distinct values (at most the 1000 most
    frequent, sorted); numeric bounds are the observed minimum and maximum, with bins from
    ``drafted_cuts`` (one per value for integers of at most 32 values, else cut at quantiles).
    A column of (nearly) one value per row is drafted as ``id`` (with its keys' shape) or ``text``,
    and none of its values is written.
    A column with no values gets a placeholder domain. The draft budget is epsilon = 1, delta = 1e-9.
    Every column is marked data-derived, booleans too: their domain is fixed, but their kind was
    read from the data. Markers such as NA or ? in columns of numbers are added to the missing
    markers (``propose_missing_markers``). The draft never fails because of a value.
    """
    markers = tuple(missing_markers) + propose_missing_markers(df, missing_markers)
    kinds = infer_kinds(df, markers)
    columns = [_draft_column(str(name), df[name], kind, markers) for name, kind in kinds.items()]
    return Profile(schema=Schema.ordered(columns, markers), epsilon=DRAFT_EPSILON, delta=DRAFT_DELTA)


@dataclass(frozen=True)
class DpDraftResult:
    """A profile drafted under DP, the findings per column (noisy facts: safe to print), the
    verdict line and public notes."""

    profile: Profile
    findings: str
    verdict: str
    notes: tuple[str, ...]


def draft_profile_under_dp(data: pd.DataFrame | CountingTable, epsilon: float,
                           delta: float = DEFAULT_DELTA_WITHOUT_PROFILE, *, share: float = PROFILE_SHARE,
                           seed: int | None = None, missing_markers: Sequence[str] = ("",),
                           kinds: Mapping[str, Kind | str] | None = None, data_file: str | None = None,
                           neighbouring: str = "add-remove", accounting: str | None = None,
                           progress: Progress = SILENT) -> DpDraftResult:
    """A profile for a person to review, its kinds, domains and shapes found under DP.

    The budget is (``epsilon``, ``delta``) (accounted as a release would: zCDP when delta > 0,
    unless ``accounting`` says otherwise); the draft spends at most ``share`` of it, half on a first
    look at every column and half, only if needed, on a second look at text columns (the profile's
    ``discovery_share`` and ``discovery_reserve``), with the discovery a release without a profile
    uses. Every column found is written ``dp-estimated`` with its domain; a column found lost is
    left out (named in the file's comments). The profile's ``[dp_draft]`` records the budget, what
    was spent, the ledger, the data's header and ``data_file`` (its name) and each column's verdict:
    a release with the profile charges that ledger first and spends the rest. ``seed``: seeded
    noise (test mode), recorded as such and not written into the profile.
    """
    if not isinstance(share, (int, float)) or isinstance(share, bool) or not 0 < share < 1:
        raise ProfileError(f"the share of the budget a draft under DP may spend (--share) must be a number strictly "
                           f"between 0 and 1, e.g. 0.2; got {share!r}.")
    base = Profile(schema=None, epsilon=epsilon, delta=delta, seed=seed, neighbouring=neighbouring,
                   accounting=accounting, discovery_share=share / 2, discovery_reserve=share / 2,
                   missing_markers=tuple(missing_markers))
    found = draft_domains(data, base, progress, kinds)
    discovery = found.discovery
    columns = [c if isinstance(c, UnmodelledColumn) else replace(c, source=DomainSource.DP_ESTIMATED)
               for c in discovery.columns.values()]  # a boolean's kind and labels were voted too
    draft = DpDraft(
        budget=found.accountant.budget_dict(), spent=found.accountant.spent(), ledger=found.accountant.ledger,
        share=share, columns=tuple(c.name for c in columns if c.source == DomainSource.DP_ESTIMATED),
        data_columns=found.columns, data_file=data_file, neighbouring=neighbouring, noise=found.noise,
        verdicts={f.name: f.verdict for f in discovery.findings}, details={f.name: f.detail for f in discovery.findings},
    )
    profile = replace(base, schema=Schema.ordered(columns, base.missing_markers), seed=None, dp_draft=draft)
    return DpDraftResult(profile, discovery.table(), discovery.verdict_line(), found.notes)

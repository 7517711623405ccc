"""Release profiles: the schema, public domains, budget and engine of one release, as a TOML file.

A profile says what a release may spend and what is publicly known about the columns. Format
(every key but ``epsilon`` is optional; column order in the file is the release's order)::

    [release]
    epsilon = 1.0                        # privacy budget: a number > 0
    delta = 1e-9                         # 0 <= delta <= 1e-4 (default 0: pure DP)
    accept_large_delta = false           # true: allow 1e-4 < delta < 1 (see MAX_DELTA)
    neighbouring = "add-remove"          # or "replace"
    engine = "aim"                       # default: aim when delta > 0 (zCDP), else independent
    rows = 30162                         # rows to generate (default: the noisy row count)
    seed = 42                            # seeded, reproducible noise: tests and benchmarks only
    missing_markers = ["", "<NULL>"]     # cells read as missing (blank cells always are)
    other_label = "<OTHER>"              # how values outside a category list are written back
    accept_data_derived_domains = false  # true: allow domains read from the data (not end-to-end DP)
    discovery_share = 0.1                # share of the budget spent estimating domains (when any are):
                                         # of rho under zcdp (at epsilon 1, delta 1e-9: about epsilon 0.3)
    discovery_reserve = 0.1              # more, spent only on text columns the first look found too
                                         # few values of (a second look at a lower threshold)
    accept_rough_domains = false         # true: release even when a column's domain was not found
                                         # under DP (lost columns are then left out, with a note)
    accounting = "zcdp"                  # pure | approx | zcdp (default: pure if delta = 0, else zcdp)
    composition = "basic"                # basic | advanced (advanced composition, approx only)

    [engine_options]                     # engine-specific, checked by the engine

    [columns.age]
    kind = "integer"                     # categorical | integer | float | datetime | boolean | id | text
    lower = 17                           # numeric bounds (datetime: "2020-01-31" ISO strings)
    upper = 90
    bins = 74                            # equal-width bins over [lower, upper]
    source = "public"                    # public (default) | dp-estimated | data-derived

    [columns.capital_gain]               # a skewed column: bins split at chosen cut points
    kind = "integer"
    lower = 0
    upper = 99999
    cuts = [1, 1000, 5000, 99999]        # inner bin edges; here the 5 bins {0}, 1-999, 1000-4999,
                                         # 5000-99998 and {99999}

    [columns.workclass]
    kind = "categorical"
    categories = ["Private", "Self-emp-not-inc"]
    complete = true                      # the list holds every value: no OTHER code
    missing = false                      # no cell is missing: no MISSING code (any kind)

    [columns.income]                     # public kind, domain estimated under DP (no domain keys)
    kind = "integer"
    source = "dp-estimated"

A numeric or datetime column has either ``bins`` (equal-width) or ``cuts``: its inner bin edges,
strictly increasing, with lower < cut <= upper for numbers (a cut at upper leaves a last bin for
upper alone) and strictly inside (lower, upper) for datetimes, for len(cuts) + 1 bins; ``bins``
given alongside must equal that. Integer cuts are whole numbers (bin k holds
the integers edges[k] .. edges[k+1] - 1, with edges [lower, *cuts, upper + 1]); datetime cuts are
whole seconds, written as ISO strings like the bounds.

An ``id`` column (a key; optional ``template = "A99999"``, the keys' shape) and a ``text`` column
(free text) are left out of the model: the output holds fresh keys, or empty cells
(``synth.columns.unmodelled``).

A closed domain (``complete``, ``missing = false``) gives the model no codes for what cannot occur,
so synthetic rows never hold them. A cell that still has no code (an unlisted value, a missing
cell) is written by a fixed per-cell rule (see ``synth.columns.encoding``) and counted on the console.

``delta`` is the probability that the guarantee fails outright, so it must be far below 1/rows;
above ``MAX_DELTA`` (1e-4) a profile is refused unless it sets ``accept_large_delta = true``.

A column with ``source = "dp-estimated"``, a kind and no domain keys (categories, lower, upper,
bins, cuts) keeps that kind as public and has everything else estimated under DP when the data is
described, with ``discovery_share`` of the budget: its domain, and how its values are written (a
boolean's labels too: its domain False/True is fixed, its words are not). Such a column takes none
of the keys a drafted profile reads from the rows besides the domain (``READ_KEYS``: ``complete``,
``missing``, ``template`` and the shape keys ``decimals``, ``labels``, ``format``, ``dayfirst``,
``date_only``): they are refused, naming them, since no noise would cover them while the release
claimed end-to-end DP. Remove them to have them estimated under DP (it keeps its OTHER and missing
codes; an id column's fresh keys are then 1, 2, 3, ...), or give the column as ``public`` if they are
public knowledge. A boolean, id or text column has no domain keys, so ``dp-estimated`` always means
this for it. With its domain written out, ``dp-estimated`` only records that an earlier release
found that domain (and the keys beside it) under DP. Without a ``[columns]`` table every column of
the data is released, its kind and domain estimated under DP.

A profile drafted from the data (``synth.domains.drafting.draft_profile``) has domains marked
``data-derived``: they were read from private rows, and the saved file says so in comments.
Publishing them is not differentially private, so a person must replace them with public knowledge
(or knowingly set ``accept_data_derived_domains = true``).

A profile drafted under DP (``synth profile --epsilon``, ``synth.domains.drafting.draft_profile_under_dp``)
has its columns' kinds, domains and shapes found from noisy counts, marked ``dp-estimated`` with
the domains written out, and a ``[dp_draft]`` table recording what finding them spent (``synth.domains.dp_draft``:
the budget, what was spent, the ledger, the data's file name and header, the columns it found;
noisy or public facts only). A column named in ``[dp_draft].columns`` keeps every key the draft
wrote (a boolean's ``labels``, an id's ``template``, ``complete``, ``missing``, ...) even without
domain keys: they came from the recorded draft, whose ledger names that column, and a release made
with the profile charges that ledger first (``synth.domains.finding.make_accountant``), so the two steps
together stay within the budget of ``[release]``. A person may edit the domains (narrow a category
list, move a bound): an edit is public knowledge, and a domain left as found is dp-estimated.

This module never sends anything anywhere and its error messages never quote a data value.
"""

from __future__ import annotations

import math
import numbers
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import tomli_w

from synth.columns.column import DEFAULT_OTHER_LABEL, Column, column_from_dict
from synth.columns.kinds import UNMODELLED_KINDS, DomainSource, Kind
from synth.columns.schema import Schema
from synth.columns.textshape import SHAPE_KEYS
from synth.columns.unmodelled import UnmodelledColumn
from synth.defaults import MAX_DELTA
from synth.domains.dp_draft import DpDraft, dp_draft_header, dp_draft_toml, drafted_column_comments
from synth.domains.toml_tables import reject_unknown_keys, toml_table
from synth.errors import BudgetError, InputFileError, ProfileError, SchemaError
from synth.files import atomic_write_text
from synth.privacy.neighbours import RELATIONS

TOP_KEYS = ("release", "engine_options", "columns", "dp_draft")
RELEASE_KEYS = (
    "epsilon", "delta", "neighbouring", "engine", "rows", "seed", "missing_markers", "other_label",
    "accept_data_derived_domains", "accept_large_delta", "accept_rough_domains", "discovery_share",
    "discovery_reserve", "accounting", "composition",
)
ACCOUNTING = ("pure", "approx", "zcdp")
COMPOSITION = ("basic", "advanced")
COLUMN_KEYS = ("kind", "categories", "lower", "upper", "bins", "cuts", "complete", "missing", "template", "source",
               *SHAPE_KEYS)
DOMAIN_KEYS = ("categories", "lower", "upper", "bins", "cuts")
# keys besides the domain that `synth profile` drafts from the rows: a column whose domain is estimated under DP refuses them
READ_KEYS = ("complete", "missing", "template", *SHAPE_KEYS)
DRAFT_MAX_CATEGORIES = 1000  # the most categories a drafted column lists (synth.domains.drafting)

_DRAFT_HEADER = """\
# DRAFT release profile, written by `synth profile` from the data itself (without --epsilon).
# Prefer a draft under DP: `synth profile DATA --epsilon E -o FILE` finds the same under a stated
# share of the budget, and a release with it stays end-to-end DP.
#
# Columns marked "data-derived" had their domain (categories, bounds) READ FROM THE PRIVATE DATA.
# Publishing such a domain is NOT differentially private: a category list or a minimum can reveal
# one person. Before a release, for each such column either
#   * replace the domain with public knowledge (published code lists, legal or physical ranges)
#     and set source = "public", or
#   * keep only its kind and set source = "dp-estimated": remove its domain (categories, lower,
#     upper, bins or cuts) and any complete, missing, template, decimals, labels, format, dayfirst
#     or date_only, which were read from the data too, to have them estimated under DP (this
#     spends discovery_share of the budget), or
#   * knowingly set accept_data_derived_domains = true in [release]: the release will then state
#     that it is not end-to-end differentially private.
# Check each column's kind as well. Integer bins must not exceed the integers in [lower, upper].
# missing_markers may list markers such as NA, ? or - that stood in columns of numbers: check them.
"""


def _check_epsilon(value: Any) -> float:
    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
        raise BudgetError(
            f"epsilon must be a number greater than 0 (e.g. 1.0); got a {type(value).__name__}. "
            "Set epsilon in [release] or pass --epsilon."
        )
    if not (math.isfinite(value) and float(value) > 0):
        raise BudgetError(
            f"epsilon must be a finite number greater than 0 (e.g. 1.0); got {value!r}. "
            "Set epsilon in [release] or pass --epsilon."
        )
    return float(value)


def _check_delta(value: Any) -> float:
    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)) or not 0 <= float(value) < 1:
        raise BudgetError(
            f"delta must be a number with 0 <= delta < 1, typically far below 1/rows (e.g. 1e-9); "
            f"got {value!r}. Set delta in [release] or pass --delta."
        )
    return float(value)


def _check_delta_ceiling(delta: float, accept_large_delta: Any) -> None:
    if not isinstance(accept_large_delta, bool):
        raise ProfileError("accept_large_delta must be true or false.")
    if delta > MAX_DELTA and not accept_large_delta:
        raise BudgetError(
            f"delta = {delta:g} is above the ceiling of {MAX_DELTA:g}. delta is the probability that the "
            "privacy guarantee fails outright (a release may then reveal a person's row as it is), so it must "
            "be far below 1/rows; typical values are 1e-9 or smaller. Lower delta (in [release] or with "
            "--delta); to go above the ceiling anyway, set accept_large_delta = true in the profile's [release]."
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class Profile:
    """One release: its columns, budget, engine and settings.

    ``schema`` holds the columns whose domain is given (None: there are none); ``to_estimate``
    the columns whose kind is given and whose domain and shape are estimated under DP (name ->
    kind; a boolean's domain is fixed, its labels are estimated). ``dp_draft``: what drafting the
    profile under DP spent, which a release with it charges first (None: not drafted under DP). ``column_order`` names every
    listed column in the release's order; it is empty when no column is estimated (the schema's
    order) and, when left empty, filled in as the schema's columns then those to estimate. A
    profile listing no column at all releases every column of the data, kinds and domains
    estimated under DP.

    Invalid epsilon/delta (and delta above ``MAX_DELTA`` without ``accept_large_delta``) raise
    BudgetError; other invalid settings ProfileError.
    ``missing_markers`` defaults to the schema's markers (or ``("",)`` without a schema) and must
    agree with them.
    """

    schema: Schema | None
    epsilon: float
    delta: float = 0.0
    neighbouring: str = "add-remove"
    engine: str | None = None  # None: ``default_engine``
    engine_options: dict[str, Any] = field(default_factory=dict)
    rows: int | None = None
    seed: int | None = None
    accept_data_derived_domains: bool = False
    accept_large_delta: bool = False
    accept_rough_domains: bool = False
    discovery_share: float = 0.1
    discovery_reserve: float = 0.1
    # None (the default): the schema's markers; __post_init__ sets the checked tuple, so it is never None after
    missing_markers: tuple[str, ...] = None  # type: ignore[assignment]
    accounting: str | None = None
    composition: str = "basic"
    to_estimate: dict[str, Kind] = field(default_factory=dict)
    column_order: tuple[str, ...] = ()
    dp_draft: DpDraft | None = None  # what drafting the profile under DP spent and found (``[dp_draft]``)
    path: str | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self.schema is not None and not isinstance(self.schema, Schema):
            raise ProfileError("a profile's schema must be a Schema or None.")
        set_(self, "epsilon", _check_epsilon(self.epsilon))
        set_(self, "delta", _check_delta(self.delta))
        _check_delta_ceiling(self.delta, self.accept_large_delta)
        if self.neighbouring not in RELATIONS:
            raise ProfileError(
                f"neighbouring is {self.neighbouring!r}; it must be one of {', '.join(map(repr, RELATIONS))}."
            )
        if self.accounting is not None and self.accounting not in ACCOUNTING:
            raise ProfileError(
                f"accounting is {self.accounting!r}; it must be one of {', '.join(map(repr, ACCOUNTING))} "
                "(or left out: pure when delta = 0, zcdp otherwise)."
            )
        if self.composition not in COMPOSITION:
            raise ProfileError(
                f"composition is {self.composition!r}; it must be one of {', '.join(map(repr, COMPOSITION))}."
            )
        if self.engine is not None and (not isinstance(self.engine, str) or not self.engine):
            raise ProfileError("engine must be the name of an engine, e.g. \"aim\", or left out.")
        if not isinstance(self.engine_options, Mapping):
            raise ProfileError("engine_options must be a table of engine settings.")
        set_(self, "engine_options", dict(self.engine_options))
        if self.rows is not None and (not _is_int(self.rows) or self.rows < 1):
            raise ProfileError(f"rows must be a whole number of at least 1, or left out; got {self.rows!r}.")
        if self.seed is not None and (not _is_int(self.seed) or self.seed < 0):
            raise ProfileError(f"seed must be a whole number of at least 0, or left out; got {self.seed!r}.")
        if not isinstance(self.accept_data_derived_domains, bool):
            raise ProfileError("accept_data_derived_domains must be true or false.")
        if not isinstance(self.accept_rough_domains, bool):
            raise ProfileError("accept_rough_domains must be true or false.")
        share = self.discovery_share
        if not isinstance(share, numbers.Real) or isinstance(share, bool) or not 0 < share < 1:
            raise ProfileError(f"discovery_share must be a number strictly between 0 and 1; got {share!r}.")
        set_(self, "discovery_share", float(share))
        reserve = self.discovery_reserve
        if not isinstance(reserve, numbers.Real) or isinstance(reserve, bool) or not 0 <= reserve < 1 - share:
            raise ProfileError(f"discovery_reserve must be a number from 0 up to (not including) 1 - discovery_share "
                               f"= {1 - share:g}; got {reserve!r}.")
        set_(self, "discovery_reserve", float(reserve))
        set_(self, "missing_markers", self._checked_markers())
        set_(self, "to_estimate", self._checked_to_estimate())
        set_(self, "column_order", self._checked_order())
        if self.dp_draft is not None and not isinstance(self.dp_draft, DpDraft):
            raise ProfileError("a profile's dp_draft must be a DpDraft or None.")
        if self.path is not None:
            set_(self, "path", os.fspath(self.path))

    def _checked_markers(self) -> tuple[str, ...]:
        markers = self.missing_markers
        if markers is None:
            return self.schema.missing_markers if self.schema is not None else ("",)
        if isinstance(markers, str) or not all(isinstance(m, str) for m in markers):
            raise ProfileError("missing_markers must be a list of strings, e.g. [\"\", \"NA\"].")
        markers = tuple(markers)
        if self.schema is not None and markers != self.schema.missing_markers:
            raise ProfileError(
                "the profile's missing_markers differ from its schema's; give them once, in [release]."
            )
        return markers

    def _checked_to_estimate(self) -> dict[str, Kind]:
        if not isinstance(self.to_estimate, Mapping):
            raise ProfileError("to_estimate must map column names to their kinds.")
        checked: dict[str, Kind] = {}
        for name, kind in self.to_estimate.items():
            if not isinstance(name, str) or not name:
                raise ProfileError("every column to estimate needs a non-empty name (a string).")
            try:
                checked[name] = Kind(kind)
            except ValueError:
                raise ProfileError(
                    f"column {name!r}: kind is {kind!r}; it must be one of {', '.join(k.value for k in Kind)}."
                ) from None
        doubled = sorted(set(checked) & set(self.schema.output_names if self.schema is not None else ()))
        if doubled:
            raise ProfileError(f"column(s) {doubled} are listed both with a domain and to be estimated; list each once.")
        return checked

    def _checked_order(self) -> tuple[str, ...]:
        order = self.column_order
        if isinstance(order, str) or not all(isinstance(name, str) for name in order):
            raise ProfileError("column_order must be a list of column names.")
        listed = (*(self.schema.output_names if self.schema is not None else ()), *self.to_estimate)
        order = tuple(order) or listed
        if sorted(order) != sorted(listed):
            raise ProfileError(
                "column_order must name each listed column once: those with a domain and those to estimate."
            )
        if self.to_estimate:
            return order
        if order != listed:
            raise ProfileError("with no column to estimate the release keeps the schema's order; leave column_order out.")
        return ()

    @property
    def lists_columns(self) -> bool:
        """Whether the profile lists columns (with a domain or to estimate); if not, every column
        of the data is released, its kind and domain estimated under DP."""
        return self.schema is not None or bool(self.to_estimate)

    @property
    def column_names(self) -> tuple[str, ...]:
        """Every column the profile lists, in the release's order (empty when it lists none)."""
        return self.column_order or (self.schema.output_names if self.schema is not None else ())

    @property
    def engine_name(self) -> str:
        """The engine that runs: the one named, else ``aim`` (the most accurate, see
        benchmarks/RESULTS.md) when the budget is accounted in zCDP (delta > 0), else
        ``independent`` (pure DP)."""
        if self.engine is not None:
            return self.engine
        zcdp = self.delta > 0 and self.accounting in (None, "zcdp")
        return "aim" if zcdp else "independent"

    def with_overrides(self, **overrides: Any) -> Profile:
        """A copy with the given settings replaced; a value of None means "not given".

        New ``missing_markers`` are applied to the schema too.
        """
        known = {f.name for f in fields(self)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise TypeError(f"Profile has no setting(s) {unknown}; settings are {sorted(known)}.")
        given = {k: v for k, v in overrides.items() if v is not None}
        if "missing_markers" in given and self.schema is not None and "schema" not in given:
            given["schema"] = replace(self.schema, missing_markers=tuple(given["missing_markers"]))
        return replace(self, **given)


# --- reading -----------------------------------------------------------------------------------


def _estimated_kind(where: str, entry: Mapping[str, Any], drafted: bool = False) -> Kind | None:
    """The kind of a column whose domain is to be estimated under DP (``source = "dp-estimated"``,
    no domain keys; not id or text, which have nothing to estimate), or None for a column given in
    full. Such a column takes none of ``READ_KEYS``: they are estimated under DP too, or left out.
    A boolean, id or text column that the profile's DP draft found (``drafted``) is given in full:
    its keys came from that draft's noisy counts, charged in its recorded ledger."""
    if entry.get("source") != DomainSource.DP_ESTIMATED.value or any(k in entry for k in DOMAIN_KEYS):
        return None
    if "kind" not in entry:
        raise ProfileError(
            f"{where} needs a kind: one of {', '.join(k.value for k in Kind)}. With source = \"dp-estimated\" "
            "and no domain, the kind is public and only the domain is estimated under DP."
        )
    try:
        kind = Kind(entry["kind"])
    except ValueError:
        raise ProfileError(
            f"{where}: kind is {entry['kind']!r}; it must be one of {', '.join(k.value for k in Kind)}."
        ) from None
    if drafted and kind in (Kind.BOOLEAN, *UNMODELLED_KINDS):  # no domain keys to find: the draft found the rest
        return None
    read = [k for k in entry if k in READ_KEYS]
    if read:
        raise ProfileError(
            f"{where} has {', '.join(read)}, but it is marked source = \"dp-estimated\" with no categories or "
            "bounds: all but its kind is estimated under DP (its domain, its missing code, how its values are "
            "written), and these keys may have been read from the private data (`synth profile` drafts them so), "
            f"which no noise would cover. Remove {', '.join(read)} to have them estimated under DP (an id column's "
            "keys are then 1, 2, 3, ...), or, if they are public knowledge, give the column as source = \"public\" "
            "with its full domain (a boolean, id or text column needs none)."
        )
    return None if kind in UNMODELLED_KINDS else kind  # an id or text column: nothing to estimate


def _column_from_toml(name: str, table: Any, drafted: bool = False) -> Column | UnmodelledColumn | Kind:
    """The column of a [columns.NAME] table, or only its kind when its domain is to be estimated
    (``drafted``: the profile's DP draft found it, see ``_estimated_kind``)."""
    where = f"[columns.{name}]"
    entry = toml_table(table, where)
    reject_unknown_keys(entry, COLUMN_KEYS, where)
    for key, kinds in (("categories", list), ("cuts", list), ("kind", str), ("source", str),
                       ("complete", bool), ("missing", bool), ("template", str)):
        if key in entry and not isinstance(entry[key], kinds):
            raise ProfileError(f"{where}: {key} has the wrong type ({type(entry[key]).__name__}).")
    kind = _estimated_kind(where, entry, drafted)
    if kind is not None:
        return kind
    try:
        return column_from_dict({"name": name, **entry})
    except SchemaError as exc:
        raise ProfileError(f"{where}: {exc}") from None


def _profile_from_tables(data: Mapping[str, Any], path: str | None) -> Profile:
    reject_unknown_keys(data, TOP_KEYS, "the file")
    if "release" not in data:
        raise ProfileError("there is no [release] table; add one with at least epsilon = <budget>.")
    release = toml_table(data["release"], "[release]")
    reject_unknown_keys(release, RELEASE_KEYS, "[release]")
    if "epsilon" not in release:
        raise ProfileError("[release] has no epsilon; add e.g. epsilon = 1.0 (or pass --epsilon).")
    settings = dict(release)
    markers = settings.pop("missing_markers", [""])
    if not isinstance(markers, list) or not all(isinstance(m, str) for m in markers):
        raise ProfileError("[release]: missing_markers must be a list of strings, e.g. [\"\", \"NA\"].")
    other_label = settings.pop("other_label", DEFAULT_OTHER_LABEL)
    columns = toml_table(data.get("columns", {}), "[columns]")
    draft = DpDraft.from_dict(data["dp_draft"]) if "dp_draft" in data else None
    drafted = set(draft.columns) if draft is not None else set()
    parsed = {str(n): _column_from_toml(str(n), t, str(n) in drafted) for n, t in columns.items()}
    given = [c for c in parsed.values() if not isinstance(c, Kind)]
    if not given and "other_label" in release:
        raise ProfileError("other_label only applies to [columns] with a given domain; remove it or add such columns.")
    return Profile(
        schema=Schema.ordered(given, tuple(markers), other_label) if given else None,
        to_estimate={n: k for n, k in parsed.items() if isinstance(k, Kind)},
        column_order=tuple(parsed),
        engine_options=toml_table(data.get("engine_options", {}), "[engine_options]"),
        missing_markers=tuple(markers),
        dp_draft=draft,
        path=path,
        **settings,
    )


def profile_from_dict(data: Mapping[str, Any], path: str | None = None) -> Profile:
    """A Profile from parsed TOML; ProfileError (naming ``path`` and the key at fault) if invalid.

    Invalid budgets and domains, which the Profile and Column constructors report as BudgetError
    and SchemaError, are reported here as ProfileError too.
    """
    try:
        return _profile_from_tables(data, path)
    except (BudgetError, SchemaError, ProfileError) as exc:
        raise ProfileError(f"{path or 'the profile'}: {exc}") from None


def load_profile(path: str | os.PathLike[str]) -> Profile:
    """Read and validate a TOML release profile.

    InputFileError if the file is missing or unreadable; ProfileError for bad TOML (with the
    line), unknown keys, wrong types or an invalid domain or budget.
    """
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"no profile at {p}; check the path (`synth profile DATA --epsilon E -o FILE` drafts one under DP).")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(f"cannot read {p} ({type(exc).__name__}); it must be a UTF-8 text file.") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{p} is not valid TOML: {exc}. Fix the syntax there.") from None
    return profile_from_dict(data, str(p))


# --- writing -----------------------------------------------------------------------------------


def _column_comments(column: Column | UnmodelledColumn) -> list[str]:
    if column.source != DomainSource.DATA_DERIVED:
        return []
    if isinstance(column, UnmodelledColumn):
        what = "a key: written as fresh keys of this template (a shape, no value)" if column.kind == Kind.ID else \
            "free text: left out of the model, its output column is empty"
        return [f"# data-derived: the data read as {what}; if that is public knowledge, set source = \"public\""]
    if column.kind == Kind.BOOLEAN:
        return ["# data-derived: the kind was read from the data; if it is public knowledge, set source = \"public\""]
    lines = ["# data-derived: read from the data; replace with public knowledge before a release"]
    if column.categories is not None and len(column.categories) >= DRAFT_MAX_CATEGORIES:
        lines.append(f"# only the {DRAFT_MAX_CATEGORIES} most frequent values are listed; others "
                     "will be encoded as OTHER")
    return lines


def profile_to_toml(profile: Profile) -> str:
    """The profile as TOML text, columns in the release's order, with comments on data-derived domains."""
    schema, draft = profile.schema, profile.dp_draft
    parts: list[str] = []
    if schema is not None and any(c.source == DomainSource.DATA_DERIVED for c in schema.output_columns):
        parts.append(_DRAFT_HEADER)
    if draft is not None:
        parts.append(dp_draft_header(draft, profile.column_names))
    release: dict[str, Any] = {
        "epsilon": profile.epsilon, "delta": profile.delta, "neighbouring": profile.neighbouring,
    }
    if profile.engine is not None:
        release["engine"] = profile.engine
    release.update({k: v for k, v in (("rows", profile.rows), ("seed", profile.seed)) if v is not None})
    release["missing_markers"] = list(profile.missing_markers or ("",))
    if schema is not None and schema.other_label != DEFAULT_OTHER_LABEL:
        release["other_label"] = schema.other_label
    if profile.accounting is not None:
        release["accounting"] = profile.accounting
    if profile.composition != "basic":
        release["composition"] = profile.composition
    release["accept_data_derived_domains"] = profile.accept_data_derived_domains
    if profile.accept_large_delta:
        release["accept_large_delta"] = True
    if profile.accept_rough_domains:
        release["accept_rough_domains"] = True
    release["discovery_share"] = profile.discovery_share
    release["discovery_reserve"] = profile.discovery_reserve
    parts.append(tomli_w.dumps({"release": release}))
    if profile.engine_options:
        parts.append(tomli_w.dumps({"engine_options": profile.engine_options}))
    for name in profile.column_names:
        comments: list[str] = []
        if name in profile.to_estimate:
            table = {"kind": profile.to_estimate[name].value, "source": DomainSource.DP_ESTIMATED.value}
        else:
            assert schema is not None
            column = next(c for c in schema.output_columns if c.name == name)
            comments, table = _column_comments(column), {k: v for k, v in column.to_dict().items() if k != "name"}
            if draft is not None and name in draft.columns and column.source == DomainSource.DP_ESTIMATED:
                comments = drafted_column_comments(draft, name)
        parts.append("\n".join([*comments, tomli_w.dumps({"columns": {name: table}})]))
    if draft is not None:
        parts.append(dp_draft_toml(draft))
    return "\n".join(parts)


def save_profile(profile: Profile, path: str | os.PathLike[str], force: bool = False) -> Path:
    """Write the profile as TOML, atomically; OutputError if the file exists and not ``force``."""
    return atomic_write_text(path, profile_to_toml(profile), force=force)

"""The ``[dp_draft]`` record of a profile drafted under DP (``synth profile --epsilon``): ``DpDraft``,
what the draft spent and found, with its validation, reading and the TOML text ``synth.domains.profile``
writes for it (header, column comments, the table itself). Noisy or public facts only.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import tomli_w

from synth.domains.toml_tables import reject_unknown_keys, toml_table
from synth.errors import DescriptionError, ProfileError
from synth.privacy import LedgerEntry
from synth.privacy.neighbours import RELATIONS

DP_DRAFT_KEYS = ("share", "data_file", "data_columns", "columns", "neighbouring", "noise", "budget", "spent",
                 "verdicts", "ledger")


def _string_tuple(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise ProfileError(f"[dp_draft]: {what} must be a list of strings.")
    return tuple(value)


def _plain(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """A TOML-safe copy: None values left out (TOML has no null)."""
    return {k: v for k, v in mapping.items() if v is not None}


@dataclass(frozen=True)
class DpDraft:
    """What drafting a profile under DP spent and found (``synth profile --epsilon``), as its
    ``[dp_draft]`` table records it: noisy or public facts only, so the profile stays safe to publish.

    ``budget`` and ``spent`` are the draft accountant's (``Accountant.budget_dict`` and ``spent``)
    and ``ledger`` its charges, which a release made with the profile charges first; ``share`` is the
    share of the budget the draft could spend; ``columns`` the columns whose kind, domain and shape
    it found (each named in a query of the ledger); ``data_file`` and ``data_columns`` the data's
    file name (None for a DataFrame) and header, which a release with the profile checks;
    ``neighbouring`` the relation it was accounted under; ``noise`` how its noise was drawn
    (``seeded``: test mode); ``verdicts`` and ``details`` what it judged of each column (located,
    rough or lost, from noisy values only).

    Invalid records raise ProfileError.
    """

    budget: dict[str, Any]
    spent: dict[str, Any]
    ledger: tuple[LedgerEntry, ...]
    share: float
    columns: tuple[str, ...]
    data_columns: tuple[str, ...]
    data_file: str | None = None
    neighbouring: str = "add-remove"
    noise: dict[str, Any] = field(default_factory=dict)
    verdicts: dict[str, str] = field(default_factory=dict)
    details: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        for key in ("budget", "spent", "noise", "verdicts", "details"):
            if not isinstance(getattr(self, key), Mapping):
                raise ProfileError(f"[dp_draft]: {key} must be a table.")
            set_(self, key, dict(getattr(self, key)))
        if not isinstance(self.ledger, Sequence) or not all(isinstance(e, LedgerEntry) for e in self.ledger):
            raise ProfileError("[dp_draft]: ledger must be a list of ledger entries.")
        set_(self, "ledger", tuple(self.ledger))
        if not self.ledger or [e.index for e in self.ledger] != list(range(len(self.ledger))):
            raise ProfileError("[dp_draft]: its ledger must list the draft's charges, numbered from 0; the record was "
                               "altered. Draft the profile again (`synth profile DATA --epsilon E -o FILE`).")
        share = self.share
        if not isinstance(share, numbers.Real) or isinstance(share, bool) or not 0 < share < 1:
            raise ProfileError(f"[dp_draft]: share must be a number strictly between 0 and 1; got {share!r}.")
        set_(self, "share", float(share))
        set_(self, "columns", _string_tuple(self.columns, "columns"))
        set_(self, "data_columns", _string_tuple(self.data_columns, "data_columns"))
        if self.data_file is not None and (not isinstance(self.data_file, str) or not self.data_file):
            raise ProfileError("[dp_draft]: data_file must be the data file's name, or left out.")
        if self.neighbouring not in RELATIONS:
            raise ProfileError(f"[dp_draft]: neighbouring is {self.neighbouring!r}; it must be one of "
                               f"{', '.join(map(repr, RELATIONS))}.")
        absent = [f"budget.{k}" for k in ("epsilon", "delta", "notion", "composition", "delta_reserve")
                  if k not in self.budget] + [f"spent.{k}" for k in ("epsilon", "delta", "notion") if k not in self.spent]
        if absent:
            raise ProfileError(f"[dp_draft] lacks {', '.join(absent)}; the record was altered. Draft the profile again "
                               "(`synth profile DATA --epsilon E -o FILE`).")
        strays = [n for n in self.columns if n not in self.data_columns]
        unmeasured = [n for n in self.columns if not any(f"({n})" in e.query for e in self.ledger)]
        if strays or unmeasured:
            raise ProfileError(
                f"[dp_draft]: column(s) {strays or unmeasured} are listed as found by the draft, but "
                f"{'the data it read had no such column' if strays else 'no query of its ledger measured them'}; "
                "the record was altered. Draft the profile again, or give those columns as source = \"public\"."
            )

    @property
    def seeded(self) -> bool:
        """Whether the draft's noise was seeded (test mode: it carries no privacy guarantee)."""
        return bool(self.noise.get("seeded", False))

    def to_dict(self) -> dict[str, Any]:
        """TOML-safe data (None values left out)."""
        out: dict[str, Any] = {"share": self.share}
        if self.data_file is not None:
            out["data_file"] = self.data_file
        out.update({
            "data_columns": list(self.data_columns), "columns": list(self.columns), "neighbouring": self.neighbouring,
            "noise": _plain(self.noise), "budget": _plain(self.budget), "spent": _plain(self.spent),
            "verdicts": dict(self.verdicts), "details": dict(self.details),
            "ledger": [{**e.to_dict(), "cost": _plain(e.cost.to_dict())} for e in self.ledger],
        })
        return out

    @classmethod
    def from_dict(cls, data: Any) -> DpDraft:
        """Inverse of ``to_dict``; ProfileError on a malformed record."""
        table = toml_table(data, "[dp_draft]")
        reject_unknown_keys(table, (*DP_DRAFT_KEYS, "details"), "[dp_draft]")
        missing = [k for k in ("share", "data_columns", "columns", "budget", "spent", "ledger") if k not in table]
        if missing:
            raise ProfileError(f"[dp_draft] lacks {', '.join(missing)}; the record was altered. Draft the profile "
                               "again (`synth profile DATA --epsilon E -o FILE`), or remove [dp_draft] and give every "
                               "column as public knowledge.")
        if not isinstance(table["ledger"], list):
            raise ProfileError("[dp_draft]: ledger must be a list of ledger entries ([[dp_draft.ledger]]).")
        try:
            ledger = tuple(LedgerEntry.from_dict(entry) for entry in table["ledger"])
        except DescriptionError as error:
            raise ProfileError(f"[dp_draft]: {error}") from None
        budget, spent = toml_table(table["budget"], "[dp_draft.budget]"), toml_table(table["spent"], "[dp_draft.spent]")
        return cls(
            budget={"rho": None, "delta_slack": None, **budget}, spent={"rho": None, **spent}, ledger=ledger,
            share=table["share"], columns=table["columns"], data_columns=table["data_columns"],
            data_file=table.get("data_file"), neighbouring=table.get("neighbouring", "add-remove"),
            noise=toml_table(table.get("noise", {}), "[dp_draft.noise]"),
            verdicts=toml_table(table.get("verdicts", {}), "[dp_draft.verdicts]"),
            details=toml_table(table.get("details", {}), "[dp_draft.details]"),
        )


# --- writing -----------------------------------------------------------------------------------


_DP_DRAFT_HEADER = """\
# Release profile DRAFTED UNDER DP by `synth profile --epsilon`: each column's kind, domain
# (categories, bounds, cuts) and how its values are written were found from noisy counts, with at
# most a share of {share:g} of the budget in [release]. It spent {spent}.
# [dp_draft] at the end records it (noisy facts only: this file is safe to publish).
#
# Review it: remove columns not to release; correct or narrow a domain with public knowledge (an
# edit is public knowledge; a domain left as found stays dp-estimated). Then
#   synth run DATA --profile THIS_FILE -o release/
# charges what the draft spent first and spends the rest of the budget, in one ledger and one manifest.
# Do not edit [dp_draft], nor lower epsilon or delta below what it spent.
"""

_DP_DRAFT_NOTE = """\
# What drafting this profile under DP spent: its budget, what it spent, the data's file name and header,
# the columns it found, and its ledger (noisy or public facts only). `synth run --profile` charges this
# ledger first. Do not edit it (but data_file, if the table was renamed).
"""


def _spent_text(spent: Mapping[str, Any]) -> str:
    """What an accountant's ``spent()`` says, for people: ε and δ, and ρ when accounted in zCDP."""
    text = f"epsilon = {spent['epsilon']:.6g}, delta = {spent['delta']:.3g}"
    return f"rho = {spent['rho']:.6g} ({text} on its own)" if spent.get("rho") is not None else text


def dp_draft_header(draft: DpDraft, column_names: Sequence[str]) -> str:
    """The comment heading a profile drafted under DP, naming the data's columns it does not list."""
    header = _DP_DRAFT_HEADER.format(spent=_spent_text(draft.spent), share=draft.share)
    left_out = [n for n in draft.data_columns if n not in column_names]
    if left_out:
        header += "#\n# Not listed, so not released:\n" + "".join(
            f"#   {n}: {draft.verdicts.get(n, 'not found')}: {draft.details.get(n, '')}\n" for n in left_out)
        header += ("# To release one, add it as [columns.NAME] with its kind and its domain from public knowledge\n"
                   "# (source = \"public\"), or with its kind only and source = \"dp-estimated\" to look again.\n")
    return header


def drafted_column_comments(draft: DpDraft, name: str) -> list[str]:
    """The comment above a column the draft found: its verdict on the column."""
    verdict = draft.verdicts.get(name, "found")
    detail = draft.details.get(name, "")
    return [f"# dp-estimated by this profile's draft under DP: {verdict}{f': {detail}' if detail else ''}",
            "# (edit with public knowledge if needed; an edit is public knowledge)"]


def dp_draft_toml(draft: DpDraft) -> str:
    """The ``[dp_draft]`` table as TOML text, under a note saying not to edit it."""
    return _DP_DRAFT_NOTE + tomli_w.dumps({"dp_draft": draft.to_dict()})

"""What every engine is: options in, DP measurements (through the curator) out.

An engine validates its options when built, then in ``describe`` asks the curator for noisy
measurements within the budget left, and returns them with any public output of its own (e.g.
the cliques it selected). It never sees private rows, only the curator's noisy answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from synth.curator import Curator
from synth.errors import EngineError
from synth.measurement import Measurement
from synth.progress import Progress
from synth.schema import Schema

COUNT_SHARE = 0.02  # of the budget, for an engine's noisy row count under add/remove


@dataclass(frozen=True)
class EngineResult:
    """The measurements an engine made, its public engine-specific output, the compression maps
    (column → new code of each original code) of columns measured on a compressed domain, and
    notes for the console on choices the engine made for the user (from public facts only)."""

    measurements: tuple[Measurement, ...]
    output: dict[str, Any] = field(default_factory=dict)
    compression: dict[str, np.ndarray] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


class Engine(Protocol):
    name: ClassVar[str]

    @property
    def options(self) -> dict[str, Any]:
        """The resolved options (defaults filled in), recorded in the Description."""

    def check(self, names: tuple[str, ...], budget_unit: str) -> None:
        """Refuse a table or budget the engine cannot serve, from public facts alone (the column
        names, the budget's unit: ``rho`` under zCDP, else ``epsilon``). The describer calls it
        before anything is spent; ``describe`` calls it too."""

    def describe(self, curator: Curator, progress: Progress) -> EngineResult:
        """Spend the curator's remaining budget on measurements."""


class PublicChecks:
    """Base of engines: ``check`` accepts every table and budget unless an engine says otherwise."""

    def check(self, names: tuple[str, ...], budget_unit: str) -> None:
        """Nothing to refuse before spending: every table and budget unit can be served."""


def require_zcdp(engine: str, budget_unit: str) -> None:
    """The marginal-based engines measure with the Gaussian mechanism under zCDP."""
    if budget_unit != "rho":
        raise EngineError(
            f"engine {engine!r} accounts in zero-concentrated DP and needs delta > 0; pass --delta "
            "(e.g. 1e-9) or set delta in the profile (and no accounting other than zcdp)."
        )


@runtime_checkable
class SchemaAware(Protocol):
    """An engine whose options name values of columns (e.g. a workload of queries): the describer
    hands it the release's schema, once known, before it describes."""

    def with_schema(self, schema: Schema) -> Engine:
        """The same engine, able to turn the values in its options into codes of ``schema``."""


def whole_number(options: Mapping[str, Any], key: str, least: int) -> int:
    """The option ``key`` as a whole number of at least ``least``; EngineError otherwise."""
    value = options[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise EngineError(f"{key} must be a whole number of at least {least}; got {value!r}.")
    return value


def share(options: Mapping[str, Any], key: str, hint: str) -> float:
    """The option ``key`` as a number strictly between 0 and 1; EngineError (with ``hint``) otherwise."""
    value = options[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise EngineError(f"{key} must be a number strictly between 0 and 1 ({hint}); got {value!r}.")
    return value


def megabytes(options: Mapping[str, Any], key: str) -> float:
    """The option ``key`` as a positive number of megabytes; EngineError otherwise."""
    value = options[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise EngineError(f"{key} must be a positive number of megabytes; got {value!r}.")
    return value


def true_or_false(options: Mapping[str, Any], key: str) -> bool:
    """The option ``key`` as a boolean; EngineError otherwise."""
    if not isinstance(options[key], bool):
        raise EngineError(f"{key} must be true or false; got {options[key]!r}.")
    return options[key]


def reject_unknown_options(engine: str, options: Mapping[str, Any], known: set[str]) -> None:
    """Raise EngineError naming any option the engine does not have."""
    unknown = sorted(set(options) - known)
    if unknown:
        raise EngineError(
            f"engine {engine!r} has no option(s) {unknown}; its options are "
            f"{sorted(known) or 'none'}. Fix [engine_options] in the profile."
        )


class WithoutOptions(PublicChecks):
    """Base of engines that take no options: any option given is an error."""

    name: ClassVar[str]

    def __init__(self, options: Mapping[str, Any]) -> None:
        reject_unknown_options(self.name, options, set())

    @property
    def options(self) -> dict[str, Any]:
        return {}


def count_rows(curator: Curator) -> tuple[float, list[Measurement]]:
    """The number of rows the engines scale their answers to, and what measuring it released.

    Under replace-one the count is public (nothing is spent or measured); under add/remove it is
    a noisy count spending ``COUNT_SHARE`` of what is left (at least 1 row).
    """
    if curator.neighbouring.count_is_public:
        return float(curator.public_count()), []
    count = curator.noisy_count(curator.remaining() * COUNT_SHARE)
    return max(float(count.values[0]), 1.0), [count]

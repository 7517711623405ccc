"""What every engine is: options in, DP measurements (through the curator) out, and everything
that only the engine knows about what it released.

An engine reads its options (``options_type``, see ``synth.engines.options``) when built, then in
``describe`` asks the curator for noisy measurements within the budget left and returns them
with its public output (``output_type``, see ``synth.engines.output``). After the release, the
same engine, rebuilt from the options the Description records, builds the model the release
stands for (``build_model``) and says what structure it learnt (``structure``); the generator
and the inspector ask it, and know no engine by name. It never sees private rows, only the
curator's noisy answers.

``EngineBase`` gives the defaults: every table and budget accepted (unless ``needs_zcdp``), no
output, the model fitted to the measurements (so a measurement added after ``describe`` counts:
``fits_added_measurements``), the columns measured together as the structure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from synth.columns.domain import Domain
from synth.columns.schema import Schema
from synth.defaults import FIT_ITERATIONS
from synth.engines.options import EngineOptions
from synth.engines.output import EngineOutput, NoOutput, Structure, measured_together
from synth.errors import DescriptionError, EngineError
from synth.model.compression import check_expansion
from synth.model.fitting import Callback
from synth.model.graphical import GraphicalModel
from synth.model.interface import Model
from synth.model.measured import fit_measurements
from synth.privacy import Notion
from synth.privacy.boundary import Boundary
from synth.privacy.measurement import Measurement
from synth.progress import Progress


@dataclass(frozen=True)
class EngineResult:
    """The measurements an engine made, its public engine-specific output, the compression maps
    (column → new code of each original code) of columns measured on a compressed domain, and
    notes for the console on choices the engine made for the user (from public facts only)."""

    measurements: tuple[Measurement, ...]
    output: EngineOutput = field(default_factory=NoOutput)
    compression: dict[str, np.ndarray] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    # the model the engine last fitted while choosing (aim), on the measured codes: where the fit of
    # the release may start (post-processing of the measurements; never saved in a Description)
    fit_start: GraphicalModel | None = field(default=None, compare=False, repr=False)


class Engine(Protocol):
    """What the describer, the Description, the generator and the inspector ask of an engine."""

    name: ClassVar[str]

    @property
    def output_type(self) -> type[EngineOutput]:
        """The type of the engine's output (``EngineResult.output``), which reads it from a Description."""

    @property
    def options(self) -> dict[str, Any]:
        """The resolved options (defaults filled in), recorded in the Description."""

    def check(self, names: tuple[str, ...], notion: Notion) -> None:
        """Refuse a table or budget the engine cannot serve, from public facts alone (the column
        names, the privacy notion the budget is spent under). The describer calls it before
        anything is spent; ``describe`` calls it too."""

    def describe(self, curator: Boundary, progress: Progress) -> EngineResult:
        """Spend the curator's remaining budget on measurements."""

    def build_model(self, domain: Domain, result: EngineResult, iterations: int = FIT_ITERATIONS,
                    callback: Callback | None = None) -> Model:
        """The model ``result`` stands for, on the original codes (``domain``: the codes as
        measured, after compression); ``iterations`` and ``callback`` bound and follow a fit.
        Post-processing: DescriptionError when the result does not fit the domain."""

    def structure(self, names: Sequence[str], result: EngineResult) -> Structure:
        """What the engine learnt, for the inspector to draw (``names``: the release's columns)."""

    def fits_added_measurements(self) -> bool:
        """Whether ``build_model`` is the fit of every measurement in the result (pooled by inverse
        variance), so that a measurement a caller adds to the engine's after ``describe`` is used
        by the model (``synth.relational.count_share``). Decided from the options alone."""


class EngineBase:
    """Base of engines: options read by ``options_type``, and the defaults of the protocol."""

    name: ClassVar[str]
    options_type: ClassVar[type[EngineOptions]] = EngineOptions
    output_type: ClassVar[type[EngineOutput]] = NoOutput
    needs_zcdp: ClassVar[bool] = False  # True: measures with the Gaussian mechanism under zCDP only

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.config = self.options_type.read(self.name, options)

    @property
    def options(self) -> dict[str, Any]:
        return self.config.to_dict()

    def check(self, names: tuple[str, ...], notion: Notion) -> None:
        """Refuse a budget not in zCDP when the engine ``needs_zcdp``; accept every table."""
        if self.needs_zcdp and notion is not Notion.ZCDP:
            raise EngineError(
                f"engine {self.name!r} accounts in zero-concentrated DP and needs delta > 0; pass --delta "
                "(e.g. 1e-9) or set delta in the profile (and no accounting other than zcdp)."
            )

    def build_model(self, domain: Domain, result: EngineResult, iterations: int = FIT_ITERATIONS,
                    callback: Callback | None = None) -> Model:
        """The model fitted to the measurements (``synth.model.measured.fit_measurements``)."""
        return fit_measurements(domain, result.measurements, result.compression, iterations, callback,
                                fit_start=result.fit_start)

    def structure(self, names: Sequence[str], result: EngineResult) -> Structure:
        """The columns measured together."""
        return measured_together(names, result.measurements)

    def fits_added_measurements(self) -> bool:
        """True: the model is the fit of every measurement (``build_model`` above)."""
        return True


def fit_expanded(engine: str, domain: Domain, result: EngineResult, expansion: Mapping[str, Sequence[float]],
                 iterations: int = FIT_ITERATIONS, callback: Callback | None = None) -> Model:
    """The fit of ``result``'s measurements with merged codes spread by the ``expansion`` weights an
    engine's output recorded (evenly for a column without); DescriptionError when they are damaged."""
    try:
        weights = check_expansion(expansion, result.compression)
    except (TypeError, ValueError) as exc:
        raise DescriptionError(f"the {engine} output's expansion weights are damaged ({exc}); use the file exactly "
                               "as synth wrote it.") from exc
    return fit_measurements(domain, result.measurements, result.compression, iterations, callback, weights,
                            fit_start=result.fit_start)


@runtime_checkable
class SchemaAware(Protocol):
    """An engine whose options name values of columns (e.g. a workload of queries): the describer
    hands it the release's schema, once known, before it describes."""

    def with_schema(self, schema: Schema) -> Engine:
        """The same engine, able to turn the values in its options into codes of ``schema``."""

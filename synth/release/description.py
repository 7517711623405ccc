"""The Description: the differentially private release, as a JSON file that can be shared.

It holds the public domain (schema), any compression of it decided from noisy counts, the noisy
measurements with their noise scales, the engine
and its options, the noise sampler used (and whether it was seeded), the neighbouring relation,
the privacy budget, what was spent and the full ledger, and where each column's domain, kind
and written shape (``privacy.shape_sources``: per key, public, dp-estimated, data-derived or the
public default) came from. Everything derived from it is post-processing. It must never hold a
statistic of the private data that did not pass through a DP mechanism (no exact counts, no file
hashes).

``load_description`` validates a file before anything uses it: format, version, types, the engine's
options and output (read back by the engine that wrote them), measurement shapes against the
domain, that the stated totals equal the sum of the ledger, and the shape sources when recorded
(a file written before synth recorded them loads without).
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

from synth.columns.column import Column
from synth.columns.domain import Domain
from synth.columns.kinds import DomainSource, Kind
from synth.columns.schema import Schema
from synth.columns.textshape import KIND_SHAPE_KEYS
from synth.columns.unmodelled import UnmodelledColumn
from synth.defaults import VERSION
from synth.engines import released_by
from synth.engines.base import EngineResult
from synth.engines.output import EngineOutput
from synth.errors import DescriptionError, InputFileError, SynthError
from synth.files import atomic_write_text
from synth.model.compression import compressed_sizes
from synth.model.graphical import GraphicalModel
from synth.privacy import Accountant, Budget, LedgerEntry, Notion
from synth.privacy.measurement import Measurement

FORMAT = "synth-description"
FORMAT_VERSION = 1
DEFAULT_SHAPE = "default"  # a shape key left unset: the public rule of synth.columns.textshape writes the values
SHAPE_SOURCES = (*(s.value for s in DomainSource), DEFAULT_SHAPE)


def shape_keys_set(column: Column | UnmodelledColumn) -> dict[str, bool]:
    """The shape keys a column's kind takes (an id's ``template`` too), each with whether it is set."""
    if isinstance(column, UnmodelledColumn):
        return {"template": column.template is not None} if column.kind == Kind.ID else {}
    return {key: getattr(column.shape, key) not in (None, False) for key in KIND_SHAPE_KEYS.get(column.kind, ())}


def ledger_totals(ledger: Iterable[LedgerEntry]) -> dict[str, float]:
    """The plain sums of ``ledger``'s ε, δ and ρ (before any composition theorem)."""
    entries = list(ledger)
    return {key: math.fsum(getattr(e.cost, key) for e in entries) for key in ("epsilon", "delta", "rho")}


@dataclass(frozen=True)
class Description:
    """A DP release: public domain, noisy measurements, and a full account of what they cost."""

    schema: Schema
    measurements: tuple[Measurement, ...]
    engine: str
    engine_options: dict[str, Any]
    engine_output: EngineOutput
    neighbouring: str
    privacy: dict[str, Any]
    ledger: tuple[LedgerEntry, ...]
    noise: dict[str, Any]
    rows: int | None = None
    compression: dict[str, np.ndarray] = field(default_factory=dict)
    software: dict[str, str] = field(default_factory=lambda: {"name": "synth", "version": VERSION})
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    # where the engine left its own model (``EngineResult.fit_start``): held in memory only, never
    # written; a Description read from its file fits from the start
    fit_start: GraphicalModel | None = field(default=None, compare=False, repr=False)

    def __repr__(self) -> str:
        spent = self.privacy.get("spent", {})
        seeded = ", SEEDED (no privacy guarantee)" if self.seeded else ""
        return (f"<Description {self.engine}: {len(self.schema.output_names)} columns, {len(self.measurements)} "
                f"measurements; spent epsilon={spent.get('epsilon', float('nan')):.6g}, "
                f"delta={spent.get('delta', float('nan')):.3g} ({self.neighbouring}){seeded}; created {self.created}>")

    @property
    def domain_sources(self) -> dict[str, str]:
        """Where each column's domain came from: public, dp-estimated or data-derived."""
        return {c.name: DomainSource(c.source).value for c in self.schema.output_columns}

    @property
    def shape_sources(self) -> dict[str, dict[str, str]] | None:
        """Where each column's shape keys came from (column -> key -> one of ``SHAPE_SOURCES``);
        None for a release written before synth recorded them."""
        return self.privacy.get("shape_sources")

    @property
    def end_to_end_dp(self) -> bool:
        """False when any domain or shape key was read from the data without noise (allowed only
        on request)."""
        shapes = (self.shape_sources or {}).values()
        return (all(c.source != DomainSource.DATA_DERIVED for c in self.schema.output_columns)
                and not any(DomainSource.DATA_DERIVED.value in keys.values() for keys in shapes))

    @property
    def model_domain(self) -> Domain:
        """Columns and their numbers of codes as measured: after compression, where there was any."""
        return Domain(self.schema.names, compressed_sizes(self.schema.names, self.schema.sizes, self.compression))

    @property
    def result(self) -> EngineResult:
        """What the engine released: its measurements, output and compression maps (and the model the
        engine left, when this Description was made in this process)."""
        return EngineResult(self.measurements, self.engine_output, self.compression, fit_start=self.fit_start)

    @property
    def seeded(self) -> bool:
        return bool(self.noise.get("seeded", False))

    def ledger_totals(self) -> dict[str, float]:
        """The plain sums of the ledger's ε, δ and ρ (before any composition theorem)."""
        return ledger_totals(self.ledger)

    def to_dict(self) -> dict[str, Any]:
        """The Description as plain JSON data: a deep copy, so editing it leaves this object as it is
        (the compression maps and measurements are built afresh, the rest is copied)."""
        data: dict[str, Any] = copy.deepcopy({
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "software": dict(self.software),
            "created": self.created,
            "end_to_end_dp": self.end_to_end_dp,
            "domain_sources": self.domain_sources,
            "schema": self.schema.to_dict(),
            "engine": {"name": self.engine, "options": self.engine_options, "output": self.engine_output.to_dict()},
            "privacy": {
                **self.privacy,
                "neighbouring": self.neighbouring,
                "ledger_totals": self.ledger_totals(),
                "ledger": [e.to_dict() for e in self.ledger],
            },
            "noise": dict(self.noise),
            "rows": self.rows,
        })
        data["compression"] = {name: mapping.tolist() for name, mapping in self.compression.items()}
        data["measurements"] = [m.to_dict() for m in self.measurements]
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Description:
        """Build and validate a Description from parsed JSON."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DescriptionError(
                "this file is not a synth Description (its 'format' field is missing or wrong). "
                "Pass the description.json written by `synth describe` or `synth run`."
            )
        version = data.get("format_version")
        if version != FORMAT_VERSION:
            raise DescriptionError(
                f"this Description has format version {version!r}; this synth reads version "
                f"{FORMAT_VERSION}. Use the synth version that wrote it (see its 'software' field)."
            )
        try:
            schema = Schema.from_dict(data["schema"])
            privacy = dict(data["privacy"])
            ledger = tuple(LedgerEntry.from_dict(e) for e in privacy.pop("ledger"))
            stated_totals = privacy.pop("ledger_totals")
            neighbouring = str(privacy.pop("neighbouring"))
            engine = data["engine"]
            options = dict(engine.get("options") or {})
            output = released_by(str(engine["name"]), options).output_type.from_dict(dict(engine.get("output") or {}))
            description = cls(
                schema=schema,
                measurements=tuple(Measurement.from_dict(m) for m in data["measurements"]),
                engine=str(engine["name"]),
                engine_options=options,
                engine_output=output,
                neighbouring=neighbouring,
                privacy=privacy,
                ledger=ledger,
                noise=dict(data["noise"]),
                rows=None if data.get("rows") is None else int(data["rows"]),
                compression={str(k): np.asarray(v, dtype=np.int64)
                             for k, v in (data.get("compression") or {}).items()},
                software=dict(data["software"]),
                created=str(data["created"]),
            )
        except DescriptionError:
            raise
        except SynthError as exc:
            raise DescriptionError(f"the Description's domain is invalid: {exc}") from exc
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DescriptionError(
                f"the Description is malformed or was edited by hand ({type(exc).__name__}: {exc}). "
                "Use the file exactly as synth wrote it."
            ) from exc
        description.validate(stated_totals)
        return description

    def validate(self, stated_totals: dict[str, float] | None = None) -> None:
        """Check compression maps, measurements and any shape sources against the domain, and the
        stated totals and spent against the ledger (replayed on an accountant with the stated budget)."""
        self._check_shape_sources()
        schema_sizes = dict(zip(self.schema.names, self.schema.sizes))
        for name, mapping in self.compression.items():
            valid = (name in schema_sizes and mapping.shape == (schema_sizes[name],)
                     and np.array_equal(np.unique(mapping), np.arange(mapping.max() + 1)))
            if not valid:
                raise DescriptionError(
                    f"the compression map of column {name!r} does not fit its domain (one code per "
                    "original code, codes 0..k-1 all used); the file is inconsistent."
                )
        sizes = dict(zip(self.model_domain.names, self.model_domain.sizes))
        for m in self.measurements:
            unknown = [a for a in m.attrs if a not in sizes]
            if unknown:
                raise DescriptionError(
                    f"a measurement names columns {unknown} that the Description's domain lacks; "
                    "the file is inconsistent."
                )
            try:
                cells = int(np.prod(m.measured_shape([sizes[a] for a in m.attrs]), dtype=np.int64))
            except ValueError as exc:
                raise DescriptionError(f"{exc}; the file is inconsistent.") from exc
            if m.values.shape != (cells,) or not np.all(np.isfinite(m.values)):
                raise DescriptionError(
                    f"the measurement of {list(m.attrs)} has {m.values.size} values where its "
                    f"domain has {cells} cells (or holds non-finite values); the file is inconsistent."
                )
        if stated_totals is not None:
            actual = self.ledger_totals()
            for key, value in actual.items():
                stated = float(stated_totals.get(key, float("nan")))
                if not math.isclose(stated, value, rel_tol=1e-12, abs_tol=1e-15):
                    raise DescriptionError(
                        f"the Description states a total {key} of {stated} but its ledger adds up "
                        f"to {value}; the file was altered. Do not share it."
                    )
            self._check_spent()

    def _check_shape_sources(self) -> None:
        """Recorded shape sources must map the schema's columns to their shape keys' sources."""
        shapes = self.shape_sources
        if shapes is None:
            return
        columns = {c.name: shape_keys_set(c) for c in self.schema.output_columns}
        fits = isinstance(shapes, dict) and sorted(shapes) == sorted(columns) and all(
            isinstance(shapes[name], dict) and sorted(shapes[name]) == sorted(keys)
            and all(shapes[name][key] in SHAPE_SOURCES and (shapes[name][key] == DEFAULT_SHAPE) != given
                    for key, given in keys.items())
            for name, keys in columns.items())
        if not fits:
            raise DescriptionError(
                "the Description's privacy.shape_sources must give, for each of its columns, each shape key its "
                f"kind takes with one of {', '.join(SHAPE_SOURCES)} ({DEFAULT_SHAPE!r} exactly when the key is "
                "unset); the file is inconsistent. Use the file exactly as synth wrote it."
            )

    def _check_spent(self) -> None:
        """The stated budget must admit the ledger's charges, in order, and the stated spent must
        be what an accountant with that budget reports after them."""
        budget, spent = self.privacy.get("budget"), self.privacy.get("spent")
        if not isinstance(budget, dict) or not isinstance(spent, dict):
            raise DescriptionError("the Description lacks its privacy budget or what was spent; the file is "
                                   "inconsistent.")
        try:
            accountant = Accountant(Budget(budget["epsilon"], budget["delta"]), Notion(budget["notion"]),
                                    composition=budget["composition"], delta_reserve=budget["delta_reserve"],
                                    delta_slack=budget["delta_slack"])
            for e in self.ledger:
                accountant.charge(e.cost, mechanism=e.mechanism, query=e.query, sensitivity=e.sensitivity,
                                  noise_scale=e.noise_scale, note=e.note)
        except (KeyError, TypeError, ValueError, SynthError) as exc:
            raise DescriptionError(
                f"the Description's ledger cannot be replayed on its stated budget ({exc}); the file was altered. "
                "Do not share it."
            ) from exc
        for key, value in accountant.spent().items():
            stated = spent.get(key)
            if not (math.isclose(stated, value, rel_tol=1e-12, abs_tol=1e-15) if _is_number(stated) and _is_number(value)
                    else stated == value):
                raise DescriptionError(
                    f"the Description states {stated!r} spent as {key} but its ledger and budget give "
                    f"{value!r}; the file was altered. Do not share it."
                )


def _is_number(value: Any) -> TypeGuard[float]:
    """Whether ``value`` is an int or a float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def save_description(description: Description, path: str | os.PathLike[str], force: bool = False) -> Path:
    """Write the Description as indented JSON, atomically."""
    text = json.dumps(description.to_dict(), indent=2, allow_nan=False)
    return atomic_write_text(path, text + "\n", force=force, shared=True)


def load_description(path: str | os.PathLike[str]) -> Description:
    """Read and validate a Description file."""
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"no Description at {p}. Pass the description.json that `synth describe` wrote.")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(f"cannot read {p} ({exc}). Check the path and its permissions.") from exc
    except json.JSONDecodeError as exc:
        raise DescriptionError(
            f"{p} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "it is damaged or not a Description."
        ) from exc
    return Description.from_dict(data)

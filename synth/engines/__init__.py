"""The engines (MST, AIM, PrivBayes, MWEM, SmallDB, independent, uniform), one module each, by name.
They read nothing but the curator's noisy answers (typed against ``synth.privacy.boundary.Boundary``).
They hand on measurements and their own output for the Description, and the model they stand for.
Beside them: ``aim_plan`` (aim's budget plan), ``given`` (marginals an engine is given, not measured),
``workload``, ``options``, ``output``, ``base`` and ``rows``, shared.

Adding an engine is one module (its class: options, ``describe``, output, and, when the defaults
do not fit, ``build_model`` and ``structure``) and one entry in ``ENGINES``; the describer, the
Description, the generator and the inspector find it here by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from synth.engines.aim import AIMEngine
from synth.engines.base import Engine, EngineResult
from synth.engines.independent import IndependentEngine
from synth.engines.mst import MSTEngine
from synth.engines.mwem import MWEMEngine
from synth.engines.privbayes import PrivBayesEngine
from synth.engines.smalldb import SmallDBEngine
from synth.engines.uniform import UniformEngine
from synth.errors import DescriptionError, EngineError

ENGINES: dict[str, Callable[[Mapping[str, Any]], Engine]] = {engine.name: engine for engine in (
    IndependentEngine, MSTEngine, AIMEngine, PrivBayesEngine, UniformEngine, MWEMEngine, SmallDBEngine)}


def make_engine(name: str, options: Mapping[str, Any] | None = None) -> Engine:
    """Build the engine called ``name`` with ``options``; EngineError if unknown."""
    if name not in ENGINES:
        raise EngineError(
            f"unknown engine {name!r}; available engines: {', '.join(sorted(ENGINES))}. "
            "Set engine in the profile's [release] table or pass --engine."
        )
    return ENGINES[name](dict(options or {}))


def released_by(name: str, options: Mapping[str, Any]) -> Engine:
    """The engine that made a release, rebuilt from the options its Description records;
    DescriptionError when this synth has no such engine or the options do not fit it."""
    if name not in ENGINES:
        raise DescriptionError(
            f"this Description was made by engine {name!r}, which this synth does not have (it has "
            f"{', '.join(sorted(ENGINES))}). Use the synth version that wrote it (see its 'software' field)."
        )
    try:
        return make_engine(name, options)
    except EngineError as exc:
        raise DescriptionError(f"the Description's options of engine {name!r} are invalid ({exc}); use the file "
                               "exactly as synth wrote it.") from exc


__all__ = ["ENGINES", "Engine", "EngineResult", "make_engine", "released_by"]

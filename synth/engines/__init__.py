"""Engine registry: each engine by the name a profile or the CLI uses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synth.engines.base import Engine, EngineResult
from synth.engines.aim import AIMEngine
from synth.engines.independent import IndependentEngine
from synth.engines.mst import MSTEngine
from synth.engines.mwem import MWEMEngine
from synth.engines.privbayes import PrivBayesEngine
from synth.engines.smalldb import SmallDBEngine
from synth.engines.uniform import UniformEngine
from synth.errors import EngineError

ENGINES: dict[str, type] = {engine.name: engine for engine in (
    IndependentEngine, MSTEngine, AIMEngine, PrivBayesEngine, UniformEngine, MWEMEngine, SmallDBEngine)}


def make_engine(name: str, options: Mapping[str, Any] | None = None) -> Engine:
    """Build the engine called ``name`` with ``options``; EngineError if unknown."""
    if name not in ENGINES:
        raise EngineError(
            f"unknown engine {name!r}; available engines: {', '.join(sorted(ENGINES))}. "
            "Set engine in the profile's [release] table or pass --engine."
        )
    return ENGINES[name](dict(options or {}))


__all__ = ["ENGINES", "Engine", "EngineResult", "make_engine"]

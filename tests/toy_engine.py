"""A toy engine written as a new engine would be: this one module, plus one line in the registry.

Engine ``toy`` measures every 1-way marginal, then the 2-way marginal of the first two columns,
with ``pair_share`` of the budget for the pair. Its output names the pair. It keeps the defaults
of ``EngineBase`` for everything else: the model is the fit of its measurements, the inspector
draws the columns measured together. ``tests/audit/test_engine_contract.py`` registers it and
checks that describe, the Description file, generate and inspect work with no other edit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from synth.engines.base import EngineBase, EngineResult
from synth.engines.options import EngineOptions, share
from synth.engines.output import check_keys, read_names, reading_output
from synth.errors import EngineError
from synth.privacy import Notion, split_budget
from synth.privacy.boundary import Boundary
from synth.progress import Progress


@dataclass(frozen=True)
class ToyOptions(EngineOptions):
    """``pair_share``: the share of the budget for the 2-way marginal."""

    pair_share: float = 0.5

    def __post_init__(self) -> None:
        share("pair_share", self.pair_share, "e.g. 0.5")


@dataclass(frozen=True)
class ToyOutput:
    """The two columns measured together."""

    pair: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"pair": list(self.pair)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        check_keys("toy", data, ("pair",))
        with reading_output("toy"):
            return cls(read_names(data["pair"]))


class ToyEngine(EngineBase):
    """Every 1-way marginal, then the first two columns together."""

    name: ClassVar[str] = "toy"
    options_type = ToyOptions
    output_type = ToyOutput
    config: ToyOptions

    def check(self, names: tuple[str, ...], notion: Notion) -> None:
        if len(names) < 2:
            raise EngineError("engine 'toy' needs at least two columns.")

    def describe(self, curator: Boundary, progress: Progress) -> EngineResult:
        names = curator.domain.names
        self.check(names, curator.notion)
        singles, double = split_budget(curator.remaining(), [1 - self.config.pair_share, self.config.pair_share])
        measurements = [curator.measure_marginal((name,), budget)
                        for name, budget in zip(names, split_budget(singles, [1.0] * len(names)))]
        pair = names[:2]
        measurements.append(curator.measure_marginal(pair, double))
        return EngineResult(tuple(measurements), ToyOutput(pair))

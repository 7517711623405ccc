"""Engine ``independent``: every column's 1-way marginal and the row count, nothing joint.

The budget is split equally between the measurements (exactly: the parts add up to what is
left). Synthetic columns are then independent of each other; their 1-way distributions are
accurate. This is DataSynthesizer's "independent attribute mode".
"""

from __future__ import annotations

from typing import ClassVar

from synth.engines.base import EngineBase, EngineResult
from synth.privacy import split_budget
from synth.privacy.boundary import Boundary
from synth.progress import Progress


class IndependentEngine(EngineBase):
    """Measures each 1-way marginal (and, under add-remove, the row count)."""

    name: ClassVar[str] = "independent"

    def describe(self, curator: Boundary, progress: Progress) -> EngineResult:
        names = curator.domain.names
        measure_count = not curator.neighbouring.count_is_public
        parts = split_budget(curator.remaining(), [1.0] * (len(names) + int(measure_count)))
        measurements = [
            curator.measure_marginal((name,), budget)
            for name, budget in progress.track(zip(names, parts), "measuring 1-way marginals", len(names))
        ]
        if measure_count:
            measurements.append(curator.noisy_count(parts[-1]))
        return EngineResult(tuple(measurements))

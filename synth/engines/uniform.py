"""Engine ``random``: nothing is measured and nothing is spent; rows are uniform over the domain.

DataSynthesizer's "random mode": every column is drawn uniformly from its public domain,
independently. Only the schema (public) goes into the Description, whose ledger stays empty. As
there is no row count either, the number of rows to generate must be given (``--rows`` or
``rows`` in the profile). A baseline, and a way to share a table's shape with no statistics.
"""

from __future__ import annotations

from typing import ClassVar

from synth.engines.base import EngineBase, EngineResult
from synth.privacy.boundary import Boundary
from synth.progress import Progress


class UniformEngine(EngineBase):
    """Measures nothing: the generator draws every column uniformly from its domain."""

    name: ClassVar[str] = "random"

    def describe(self, curator: Boundary, progress: Progress) -> EngineResult:
        return EngineResult(())

    def fits_added_measurements(self) -> bool:
        """False: a release with this engine measures nothing and spends nothing, as asked."""
        return False

"""What discovery found for one column: its verdict (located, rough or lost) and a line saying why,
judged from noisy values only, so it is safe to print and to write in a release."""

from __future__ import annotations

from dataclasses import dataclass

from synth.columns.kinds import Kind


@dataclass(frozen=True)
class Finding:
    """What discovery found for one column, judged from noisy values only (safe to print)."""

    name: str
    kind: Kind
    verdict: str  # "located", "rough" or "lost"
    detail: str
